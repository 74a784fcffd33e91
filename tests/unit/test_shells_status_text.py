"""The text of ``status --epoch N`` says what the graph held then, not what the data root holds.

``status --epoch 0`` (the root before its first load) printed "no investigations in this data root
(load one: ...)" under "as it stood after epoch 0", on a root holding investigations: the
printer is given the status JSON the command prints with ``--json``."""

from __future__ import annotations

from memory_core.shell import report


def test_an_empty_past_epoch_is_not_an_empty_root(capsys):
    report.print_status({"nodes": [], "edges": [], "epoch": 0})
    said = capsys.readouterr().out
    assert "as it stood after epoch 0" in said and "no investigations then" in said, said
    assert "in this data root" not in said and "load one" not in said, said
    report.print_status({"nodes": [], "edges": [], "epoch": 3})  # a load undone at epoch 3
    said = capsys.readouterr().out
    assert "no investigations then" in said and "load one" not in said, said
    report.print_status({"nodes": [], "edges": []})  # now: the root holds nothing
    assert "no investigations in this data root (load one" in capsys.readouterr().out

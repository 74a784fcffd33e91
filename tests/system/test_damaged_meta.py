"""A damaged ``falsify.json`` (the root's metadata: embedder, epoch, default question) is one
line saying what to do, for every command and ``check --repair`` too; doing it (moving the
file aside) gives a root ``check`` accepts, with the data and the log unchanged. A graph
database file cut short is named as damage (one line, exit 1), not "retry later"."""

from __future__ import annotations

import json

import pytest

from backend_helpers import POSTGRES
from harness import copy_root, loaded_root, nodes_by_key, run_batch, run_cli

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("garbage", [b"{not json", b"[1, 2]", b"\xff\xfe"])
def test_a_damaged_meta_file_says_what_to_do(tmp_path_factory, garbage):
    work = tmp_path_factory.mktemp("meta")
    root = copy_root(loaded_root(tmp_path_factory), work / "root")
    log = (root / "revisions.jsonl").read_bytes()
    (root / "falsify.json").write_bytes(garbage)
    steps = [
        {"name": name, "op": "cli", "argv": argv}
        for name, argv in [("status", ["status", "--json"]), ("repair", ["check", "--repair"])]
    ]
    for r in run_batch(root, steps, work / "b1"):
        assert r["code"] == 1, r
        lines = [line for line in r["stderr"].splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: ") and "is damaged" in lines[0], r["stderr"]
        assert f"mv {root / 'falsify.json'} {root / 'falsify.json.damaged'}" in lines[0]
    (root / "falsify.json").rename(root / "falsify.json.damaged")  # what the message says
    after = {
        r["name"]: r
        for r in run_batch(
            root,
            [
                {"name": "repair", "op": "cli", "argv": ["check", "--repair", "--json"]},
                {"name": "status", "op": "cli", "argv": ["status", "--json"]},
            ],
            work / "b2",
        )
    }
    assert after["repair"]["code"] == 0, after["repair"]["stderr"][-2000:]
    assert json.loads(after["repair"]["stdout"])["clean"] is True
    assert {"Q", "A", "B", "C", "E_qa", "E_email", "K"} <= set(
        nodes_by_key(json.loads(after["status"]["stdout"]))
    )
    assert (root / "revisions.jsonl").read_bytes() == log
    assert "embedder" in json.loads((root / "falsify.json").read_text())


@pytest.mark.skipif(POSTGRES, reason="the graph is a file only on the embedded backend")
def test_a_truncated_graph_file_is_named_as_damage(tmp_path_factory):
    work = tmp_path_factory.mktemp("graph")
    root = copy_root(loaded_root(tmp_path_factory), work / "root")
    # the database file itself, not its write-ahead log or compaction record beside it
    graph = root / "cognee_system" / "databases" / "cognee_graph_ladybug"
    assert graph.is_file(), sorted(p.name for p in graph.parent.iterdir())
    with open(graph, "r+b") as f:
        f.truncate(graph.stat().st_size // 2)
    proc = run_cli(root, "status")
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 1 and "Traceback" not in err, err
    assert "error: the graph database file of this root is damaged" in err and "internal error" not in err, (
        err
    )

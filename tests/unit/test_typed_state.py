"""A revision's state is declared, typed values: what was asked is frozen, the batch and its
jobs take no attribute they do not declare, and the code below the shells reads our own
objects' attributes directly (no getattr/hasattr probing), so a renamed field fails loudly."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import memory_core
from memory_core.core.requests import requests_from
from memory_core.tasks.batch import FactJob, RevisionBatch, RevisionOptions, Stop

PACKAGE = Path(memory_core.__file__).parent
# probing other libraries' objects (cognee, LanceDB, litellm, argparse) is allowed here only:
# the store (the only code importing cognee), the LLM gateway, and the shells (argparse's
# Namespace, the MCP SDK's tool metadata), which other work reshapes
PROBING_ALLOWED = ("store/", "judging/llm.py", "shell/", "mcp/", "web/", "__init__.py")


def probes(path: Path) -> list[tuple[str, str]]:
    """(file, what is probed) for every getattr/hasattr call in ``path``."""
    tree = ast.parse(path.read_text(), str(path))
    return [
        (str(path.relative_to(PACKAGE)), ast.unparse(node.args[0]))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr")
    ]


def test_no_getattr_or_hasattr_below_the_shells():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if not str(path.relative_to(PACKAGE)).startswith(PROBING_ALLOWED):
            found += probes(path)
    # the one left reads cognee's pipeline context (which carries a run id or not), not an object of ours
    assert found == [("tasks/__init__.py", "ctx")], found


def test_the_batch_and_its_jobs_take_no_undeclared_attribute():
    requests = requests_from(["The valve passed its test."])
    batch = RevisionBatch(None, requests, RevisionOptions(preview=True))  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        batch.preview = True  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        batch.jobs[0].result = {}  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        batch.options.dry_run = True  # type: ignore[misc]
    assert not batch.options.writes and [type(j) for j in batch.jobs] == [FactJob]
    assert batch.new_keys == frozenset(j.new_key for j in batch.jobs)


def test_what_a_revisions_steps_pass_each_other_is_declared():
    """A plan's inputs (verdicts, decisions, the valid-time cases, what comes back until a date)
    are fields of one typed value: a step that names one wrongly fails at once."""
    from memory_core.core.plan import Plan, PlanInputs

    plan = Plan(epoch=1)
    assert (
        isinstance(plan.meta, PlanInputs)
        and plan.meta.returning_until == {}
        and plan.meta.validity_note == ""
    )
    with pytest.raises(AttributeError):
        plan.meta.returning = {}  # type: ignore[attr-defined]


def test_a_stop_is_one_value():
    requests = requests_from(["one fact", "another fact", "a third fact"])
    batch = RevisionBatch(None, requests)  # type: ignore[arg-type]
    assert [j.applies for j in batch.jobs] == [True, True, True]
    batch.stop = Stop(ValueError("judge down"), at=1)  # the judge failed on the second fact
    assert [j.applies for j in batch.jobs] == [True, False, False] and not batch.failed
    batch.fail(RuntimeError("write failed"))  # nothing of the batch is applied
    assert batch.failed and batch.stop.whole and [j.applies for j in batch.jobs] == [False, False, False]

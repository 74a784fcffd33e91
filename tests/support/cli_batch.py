"""Run many FALSIFY CLI invocations against ONE data root in ONE process.

    python tests/support/cli_batch.py PLAN.json RESULT.jsonl

A process serves one data root (cognee caches its config) and importing cognee
costs ~5 s, so the crash/hostile/undo tests batch their cases here instead of
paying a CLI start-up per case. Every ``cli`` step calls ``memory_core.shell.cli.main``
-- the same entry point as ``python main.py`` -- with the step's argv, and
records the exit code, stdout and stderr. Nothing is mocked: each command opens
the root (lock, embedder check, journal recovery) and uses the real stores.

PLAN = {"root": DIR, "steps": [STEP, ...]}; STEP is a dict with ``name`` and ``op``. With
``"serve": {"seeds": [FILE, ...]}`` in PLAN, once the steps are done the same process serves
the viewer on the root (``python -m memory_core.web.server --root DIR --seed FILE --port 0``:
it prints its ``FALSIFY viewer: URL`` line and runs until SIGINT), so a test that builds a root
and then looks at it pays one process start.

* ``{"op": "cli", "argv": [...], "env": {VAR: value-or-null}, "snapshot": true,
     "hold_lock": "purpose", "meta_patch": {...}}``
  ``snapshot``: record the root's observable state before and after (``status
  --json``, the bytes of ``revisions.jsonl``, ``falsify.json`` and
  ``journal/pending.json``), taken *outside* any ``hold_lock``/``meta_patch``.
  When the step just before took a snapshot (a ``cli`` or ``pipeline`` step), its "after"
  is this step's "before": nothing runs between the two (same process, same root), so
  the status is not read twice in a row.
  ``hold_lock``: the root's writer lock is held by another process (a small holder,
  named ``purpose`` in the lock file) while the command runs.
  ``meta_patch``: merge keys into ``falsify.json`` for the command, then restore it.
  ``root_files``: ``{relative path: text}`` written into the root just before the
  command (after the "before" snapshot), e.g. a damaged ``journal/pending.json``.
  ``argv_from``: ``{"step": NAME, "startswith": ..., "contains": ..., "drop": N}``: the command is
  the first line of step NAME's stdout that starts with / contains those words, split as a
  shell would and its first N words dropped, followed by ``argv`` (a printed command, pasted);
  the argv run is recorded as ``argv``.
* ``{"op": "search", "kind": "conclusion", "text": "...", "limit": 5}``: [key, distance]
  of the nearest rows of that kind's vector collection (cognee's LanceDB adapter).
* ``{"op": "vector_keys"}``: every vector row per collection, mapped to keys.
* ``{"op": "housekeeping"}``: this process's housekeeping counters
  (``memory_core.store.backends.base.stats()``: graph reopens and compactions, vector prunes, ...).
* ``{"op": "control", "url": ..., "json": {...}}``: POST to a test server (the
  LLM stub's ``/control``), e.g. to change what it answers next.
* ``{"op": "pipeline", "data": [...], "env": {...}, "snapshot": true}``: a host's own
  ``cognee.run_custom_pipeline(tasks=memory_core.revision_tasks(fx), data=...)`` on the
  opened root; records what it raised (class, message, exit code, ``error.applied`` as
  [new_evidence, epoch] pairs) or ``raised: null``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def _digest(path: Path):
    if not path.exists():
        return None
    data = path.read_bytes()
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def call(root: str, argv: list[str]) -> dict:
    from memory_core.shell import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(["--root", root, *argv])
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException as exc:  # an uncaught exception: what python main.py would exit with (1)
            import traceback

            traceback.print_exc()
            code = 1
            err.write(f"\nUNCAUGHT {type(exc).__name__}: {exc}\n")
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def snapshot(root: str) -> dict:
    r = Path(root)
    status = call(root, ["status", "--json"])
    try:
        parsed = json.loads(status["stdout"]) if status["code"] == 0 else None
    except ValueError:
        parsed = None
    return {
        "status": parsed,
        "status_code": status["code"],
        "log": _digest(r / "revisions.jsonl"),
        "meta": _digest(r / "falsify.json"),
        "pending": _digest(r / "journal" / "pending.json"),
    }


def _with_env(env: dict):
    saved = {k: os.environ.get(k) for k in env}

    def restore():
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    for k, v in env.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = str(v)
    return restore


async def _search(kind: str, text: str, limit: int) -> list[str]:
    from memory_core.store.models import collection
    from memory_core.store import backends, settings
    from memory_core.store.belief_store import BeliefStore

    store = await BeliefStore.open(backend=backends.choose(settings.current()))
    hits = await store.search(collection(kind), text, limit)
    found = await store.raw_nodes(str(h.id) for h in hits)
    return [
        [found[str(h.id)].get("key") if str(h.id) in found else f"<no graph node {h.id}>", float(h.score)]
        for h in hits
    ]


async def _vector_keys() -> dict:
    from memory_core.store.models import MODEL_BY_KIND, collection
    from memory_core.store import backends, settings
    from memory_core.store.belief_store import BeliefStore

    store = await BeliefStore.open(backend=backends.choose(settings.current()))
    result = {}
    for kind in MODEL_BY_KIND:
        ids = await store.vector_ids(collection(kind))
        found = await store.raw_nodes(ids)
        result[kind] = sorted(found[i].get("key") if i in found else f"<orphan {i}>" for i in ids)
    return result


async def _pipeline(root: str, data: list) -> dict:
    """FALSIFY's revision Tasks in a host's own cognee pipeline run, on the opened root."""
    import cognee

    import memory_core
    from memory_core.api import Falsify
    from memory_core.core.errors import FalsifyError

    app = await Falsify.open(root, purpose="tests/support/cli_batch.py")
    try:
        # the stub's endpoint fails on purpose: cognee's LLM connection test is skipped, as a host's may be
        await cognee.run_custom_pipeline(
            tasks=memory_core.revision_tasks(app),
            data=data,
            dataset="host",
            pipeline_name="host_revision",
            skip_connection_test=True,
        )
        return {"raised": None}
    except Exception as error:
        return {
            "raised": type(error).__name__,
            "message": str(error),
            "exit_code": error.exit_code if isinstance(error, FalsifyError) else None,
            "applied": [[r.get("new_evidence"), r.get("epoch")] for r in error.__dict__.get("applied", [])],
        }
    finally:
        await app.close()


def _locked(root: str, fn):
    """Run ``fn`` with the root open for reading through the facade (lock held)."""
    from memory_core.api import Falsify

    async def go():
        app = await Falsify.open(root, purpose="tests/support/cli_batch.py")
        try:
            return await fn()
        finally:
            await app.close()

    return asyncio.run(go())


HOLDER = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from memory_core.store.lock import WriterLock

lock = WriterLock(Path(sys.argv[2]) / "writer.lock", sys.argv[3]).acquire(timeout=5)
print("held", flush=True)
sys.stdin.read()  # until the batch closes our stdin
lock.release()
"""


def _hold_lock(root: str, purpose: str):
    """Another process holding the root's writer lock (its pid in the lock file, as a real
    second writer's would be), until its stdin is closed."""
    import subprocess

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(REPO), root, purpose],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    if holder.stdout.readline().strip() != "held":
        holder.kill()
        raise RuntimeError("the lock holder could not take the writer lock")
    return holder


def _pasted(step: dict, done: list[dict]) -> list[str]:
    """The argv of a step given ``argv_from``: a command printed by an earlier step."""
    import shlex

    spec = step["argv_from"]
    printed = next(r for r in done if r["name"] == spec["step"])["stdout"]
    line = next(
        line.strip()
        for line in printed.splitlines()
        if line.strip().startswith(spec["startswith"]) and spec["contains"] in line
    )
    return shlex.split(line)[int(spec["drop"]) :] + list(step.get("argv") or [])


def run_step(root: str, step: dict, last_after: dict | None = None) -> dict:
    """One step; ``last_after``: the previous step's "after" snapshot when it took one (a ``cli``
    or ``pipeline`` step: nothing has touched the root since), reused as this step's "before"."""
    op = step.get("op", "cli")
    result = {"name": step.get("name", op), "op": op}
    if op == "search":
        result["keys"] = _locked(root, lambda: _search(step["kind"], step["text"], int(step.get("limit", 5))))
        return result
    if op == "vector_keys":
        result["keys"] = _locked(root, _vector_keys)
        return result
    if op == "housekeeping":
        from memory_core.store.backends import housekeeping as memory

        result["stats"] = memory.stats()
        return result
    if op == "control":
        import urllib.request

        req = urllib.request.Request(
            step["url"],
            data=json.dumps(step["json"]).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
        with opener.open(req, timeout=10) as resp:
            result["code"] = resp.status
        return result
    if op == "pipeline":
        if step.get("snapshot"):
            result["before"] = last_after if last_after is not None else snapshot(root)
        restore_env = _with_env(step.get("env") or {})
        try:
            result.update(asyncio.run(_pipeline(root, step["data"])))
        finally:
            restore_env()
        if step.get("snapshot"):
            result["after"] = snapshot(root)
        return result
    if op != "cli":
        raise SystemExit(f"unknown op {op!r}")
    if step.get("snapshot"):
        result["before"] = last_after if last_after is not None else snapshot(root)
    restore_env = _with_env(step.get("env") or {})
    lock = None
    meta_path = Path(root) / "falsify.json"
    meta_saved = meta_path.read_bytes() if step.get("meta_patch") else None
    try:
        if step.get("hold_lock"):
            lock = _hold_lock(root, step["hold_lock"])
        for rel, text in (step.get("root_files") or {}).items():
            (Path(root) / rel).write_text(text, encoding="utf-8")
        if meta_saved is not None:
            meta = json.loads(meta_saved)
            meta.update(step["meta_patch"])
            meta_path.write_text(json.dumps(meta, indent=2), encoding="utf-8")
        result.update(call(root, [str(a) for a in step["argv"]]))
    finally:
        if meta_saved is not None:
            meta_path.write_bytes(meta_saved)
        if lock is not None:
            lock.stdin.close()  # the holder releases the lock and exits
            lock.wait(timeout=30)
        restore_env()
    if step.get("snapshot"):
        result["after"] = snapshot(root)
    return result


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    plan = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    root = plan["root"]
    results = []
    out = Path(argv[1])
    out.write_text("", encoding="utf-8")
    last_after = None
    for step in plan["steps"]:
        if step.get("argv_from"):
            step = dict(step, argv=_pasted(step, results))
        results.append(run_step(root, step, last_after))
        if step.get("argv_from"):
            results[-1]["argv"] = step["argv"]
        last_after = results[-1].get("after")
        # one JSON line per step, appended as it ends, so a hang or crash still leaves what ran
        with out.open("a", encoding="utf-8") as lines:
            lines.write(json.dumps(results[-1]) + "\n")  # ASCII: lone surrogates survive
    if plan.get("serve") is not None:
        import signal

        from memory_core.web.server import run_server

        # the server starts with Ctrl-C's default handler, as `python -m memory_core.web.server`
        # would: a CLI step that passed its commit point leaves its own handler installed (past that
        # point a Ctrl-C cancels nothing), which would let the SIGINT that stops the viewer pass,
        # and the test's stop_viewer would wait its 30 s and then kill it
        signal.signal(signal.SIGINT, signal.default_int_handler)
        return run_server(root, port=0, seeds=plan["serve"].get("seeds", []))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

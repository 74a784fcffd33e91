"""Shared helpers for the crash-safety, hostile-input, undo, lock and check tests.

Every test here runs FALSIFY in subprocesses against temporary data roots on
the real stores (Ladybug + LanceDB through cognee), forked from tests/support/forkserver.py
(cognee's third-party imports paid once per session). A process serves one root,
so a fresh root means a fresh process; to keep the suite fast, cases are
batched in one process per root (``tests/support/cli_batch.py``) and the loaded example
root is built once per session and copied (``shutil.copytree``) per test.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import forkserver

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "company_x.json"
DEMO_FACT = "Forensic audit: the March QA report was back-dated."


# what memory_core.store.data_root.configure() sets for the root it serves: a child serving another
# root must not inherit them from a test process that configured one (tests/conftest.py does)
ROOT_BOUND = (
    "SYSTEM_ROOT_DIRECTORY",
    "DATA_ROOT_DIRECTORY",
    "CACHE_ROOT_DIRECTORY",
    "COGNEE_LOGS_DIR",
    "FASTEMBED_CACHE_PATH",
    "HF_HUB_CACHE",
    "TIKTOKEN_CACHE_DIR",
    "COGNEE_ENV_FILE",
)


# kept from the test session's environment: no warm launcher, a private runtime directory (conftest.py)
KEPT = ("FALSIFY_LAUNCHER", "FALSIFY_RUNTIME_DIR")


def clean_env(**extra) -> dict:
    """The parent's environment without any LLM/embedding/FALSIFY settings: the
    offline embedder, no LLM judge (LLM_API_KEY is set empty so a developer's
    .env cannot switch it on), no fault injection, nothing bound to another root."""
    env = {
        k: v
        for k, v in os.environ.items()
        if (not k.startswith(("LLM_", "EMBEDDING_", "FALSIFY_")) or k in KEPT)
        and k not in ("DEMO_MODE", "REFUTED_ID")
        and k not in ROOT_BOUND
    }
    env["LLM_API_KEY"] = ""
    env["FALSIFY_EMBEDDER"] = "local"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update({k: str(v) for k, v in extra.items() if v is not None})
    return env


def run_cli(root, *argv, env=None, timeout=180, stdin=None) -> subprocess.CompletedProcess:
    """``python main.py --root ROOT ARGV...`` in a subprocess (argv may hold bytes)."""
    args = [sys.executable, "main.py", "--root", str(root), *argv]
    return forkserver.run(
        args,
        cwd=REPO,
        env=backend_env(root, env or clean_env()),
        capture_output=True,
        timeout=timeout,
        input=stdin,
    )


def _batch(root, plan: dict, workdir: Path, env) -> tuple[list, Path, dict]:
    """What starting a ``tests/support/cli_batch.py`` process on ``root`` takes: its
    arguments (the plan written to ``workdir``), the path of its JSON-lines results, and
    the ``forkserver`` keywords."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "plan.json"
    out = workdir / "result.jsonl"
    path.write_text(json.dumps({"root": str(root), **plan}), encoding="utf-8")
    args = [sys.executable, str(REPO / "tests" / "support" / "cli_batch.py"), str(path), str(out)]
    return args, out, {"cwd": REPO, "env": backend_env(root, env or clean_env())}


def run_batch(root, steps: list[dict], workdir: Path, env=None, timeout=600) -> list[dict]:
    """Run ``steps`` in one ``tests/support/cli_batch.py`` process against ``root``."""
    args, out, where = _batch(root, {"steps": steps}, workdir, env)
    proc = forkserver.run(args, capture_output=True, timeout=timeout, **where)
    results = (
        [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
        if out.exists()
        else []
    )
    assert proc.returncode == 0 and len(results) == len(steps), (
        f"batch driver failed (exit {proc.returncode}) after {len(results)}/{len(steps)} steps\n"
        f"stderr:\n{proc.stderr.decode(errors='replace')[-4000:]}"
    )
    return results


def popen_batch(root, steps: list[dict], workdir: Path, serve: dict, env=None, stdout=None, stderr=None):
    """Start ``steps`` in one ``tests/support/cli_batch.py`` process against ``root`` that then
    serves the viewer on it (PLAN's ``serve``); returns (process, path of its JSON-lines results)."""
    args, out, where = _batch(root, {"steps": steps, "serve": serve}, workdir, env)
    return forkserver.popen(args, stdout=stdout, stderr=stderr, text=True, **where), out


def backend_env(root, env: dict) -> dict:
    """In a test session on the postgres backend (tests/conftest.py), a child for ``root``
    works on the root's own database (unless ``env`` already names one)."""
    if os.environ.get("FALSIFY_TEST_BACKEND") == "postgres" and "FALSIFY_DATABASE_URL" not in env:
        import pg_server

        env = dict(env, **pg_server.root_env(root))
    return env


def copy_root(src: Path, dst: Path) -> Path:
    if os.environ.get("FALSIFY_TEST_BACKEND") == "postgres":  # the root's data are its database
        import pg_server

        pg_server.copy_database(src, dst)
    shutil.copytree(src, dst, symlinks=True)
    for stale in ("writer.lock",):
        (dst / stale).unlink(missing_ok=True)
    return dst


def loaded_root(tmp_path_factory) -> Path:
    """A data root with examples/company_x.json loaded by the real CLI, built
    once per test session (shared across test modules through the session's
    base temp directory) -- copy it, never use it directly."""
    base = tmp_path_factory.getbasetemp()
    root = base / "company_x_loaded"
    with open(base / "company_x_loaded.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if not (root / ".ready").exists():
            shutil.rmtree(root, ignore_errors=True)
            proc = run_cli(root, "load", str(EXAMPLE), "--json")
            assert proc.returncode == 0, proc.stderr.decode(errors="replace")
            (root / ".ready").write_text("ok")
    return root


def revised_root(tmp_path_factory, name: str) -> tuple[Path, Path]:
    """A fresh copy of :func:`loaded_root` revised once with the demo's fact pinned to E_qa
    (epoch 2), in a new work directory: (work, root)."""
    work = tmp_path_factory.mktemp(name)
    root = copy_root(loaded_root(tmp_path_factory), work / "r1")
    r = run_batch(
        root,
        [{"name": "r1", "op": "cli", "argv": ["revise", DEMO_FACT, "--target", "E_qa", "--json"]}],
        work / "b0",
    )[0]
    assert r["code"] == 0, r["stderr"][-2000:]
    return work, root


def status_of(root, env=None) -> dict:
    proc = run_cli(root, "status", "--json", env=env)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return json.loads(proc.stdout)


def nodes_by_key(status: dict) -> dict:
    return {n["key"]: n for n in status["nodes"]}


def viewer_url(proc: subprocess.Popen, timeout: float):
    """The URL a starting ``serve`` (or ``mcp --http``) prints on its ``FALSIFY viewer: URL``
    line, or None if ``proc`` exits or ``timeout`` seconds pass first. Its stdout (text) is
    drained by a thread from here on, so the server never blocks on a full pipe."""
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        if line.startswith("FALSIFY viewer: "):
            return line.split(": ", 1)[1].strip()
    return None


# ---- reading tests/support/cli_batch.py results (one dict per step: name, code, stdout, stderr,
# and with a snapshot the status before and after the step) ----------------------------
def ok(r: dict) -> dict:
    assert r["code"] == 0, (r["name"], r["stdout"][-2000:], r["stderr"][-3000:])
    return r


def js(r: dict):
    return json.loads(ok(r)["stdout"])


def jsl(r: dict) -> list:
    """``revise --file --json``: one JSON result per line."""
    return [json.loads(line) for line in ok(r)["stdout"].splitlines() if line.strip()]


def states(status: dict) -> dict:
    return {k: n["state"] for k, n in nodes_by_key(status).items()}


def edges(status: dict) -> set:
    return {(e["from"], e["type"], e["to"]) for e in status["edges"]}


def before(r: dict) -> dict:
    return r["before"]["status"]


def after(r: dict) -> dict:
    return r["after"]["status"]

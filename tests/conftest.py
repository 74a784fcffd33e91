"""Shared fixtures.

cognee is configured once per process (memory_core.store.data_root.configure), so the
in-process tests share ONE real data root (Ladybug + LanceDB in a temporary
directory) and keep apart by giving every investigation its own key prefix.
Tests that need a fresh root, a restart or several processes run the CLI in
subprocesses (`cli`), forked from tests/support/forkserver.py (the third-party imports paid once).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import atexit
import gc
import shutil
import tempfile
import time
from collections import defaultdict

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))  # the fork server, drivers, harness
import forkserver

REPO = Path(__file__).resolve().parent.parent

# A suite started in the background by a non-interactive shell (`make test &`, nohup, a CI runner)
# inherits SIGINT and SIGQUIT ignored, and every process it starts keeps that across exec: a cold
# child stopped with SIGINT (as a person's Ctrl-C) would never stop. The suite runs them as a
# terminal's foreground job would: the defaults back (pytest's own Ctrl-C handling included).
for _sig, _default in ((signal.SIGINT, signal.default_int_handler), (signal.SIGQUIT, signal.SIG_DFL)):
    if signal.getsignal(_sig) is signal.SIG_IGN:
        signal.signal(_sig, _default)

# Configure cognee for this process's one data root BEFORE any test module imports
# memory_core.store.models (which imports cognee): cognee reads its settings at import.
for _key in [k for k in os.environ if k.startswith(("LLM_", "EMBEDDING_"))]:
    os.environ.pop(_key)
_ROOT = Path(tempfile.mkdtemp(prefix="falsify-test-root-"))
atexit.register(shutil.rmtree, _ROOT, True)
# No test goes through the user's warm launcher (memory_core/shell/launcher.py) by accident: every
# FALSIFY process a test starts runs cold (or forked from tests/support/forkserver.py), and a private runtime
# directory catches any launcher started anyway (pytest_sessionfinish fails the run if one was). The
# launcher's own tests (tests/system/test_launcher.py) turn it on, each with a runtime directory of its own.
os.environ["FALSIFY_LAUNCHER"] = "0"
os.environ["FALSIFY_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="fl-run-")
atexit.register(shutil.rmtree, os.environ["FALSIFY_RUNTIME_DIR"], True)
from memory_core.store import backends, settings  # noqa: E402
from memory_core.store import data_root as _settings  # noqa: E402

# The backend this session tests: the embedded default, or with FALSIFY_TEST_BACKEND=postgres
# the same tests on PostgreSQL + pgvector (`make test` runs both): a server from the pgserver
# wheel is started here (tests/support/pg_server.py) and stopped at exit, one database per data root.
BACKEND = os.environ.get("FALSIFY_TEST_BACKEND", "ladybug")
# With pytest-xdist (`make test` runs two workers) the controller only schedules and reports:
# it collects and runs nothing, so it needs no server and no configured root.
XDIST_CONTROLLER = "PYTEST_XDIST_WORKER" not in os.environ and any(
    a == "-n" or (a.startswith("-n") and a[2:].isdigit()) or a.startswith("--numprocesses")
    for a in sys.argv[1:]
)
# No cyclic collection while the test modules are imported; once collected, what they built is
# frozen and the collector is on again (pytest_collection_finish). cognee is imported by the first
# test that opens the root (with the collector paused: memory_core.store.process.collector_paused);
# what it built is frozen after that test (pytest_runtest_teardown), so a worker's full collections
# walk only what the tests made since (~0.05 s each instead of ~0.3 s, a dozen per worker). The
# xdist controller collects nothing: its collector stays as it is.
if not XDIST_CONTROLLER:
    gc.disable()
_FROZEN_WITH_COGNEE = False
if BACKEND == "postgres" and not XDIST_CONTROLLER:
    import pg_server  # noqa: E402

    os.environ.update(pg_server.session_env(_ROOT))
if not XDIST_CONTROLLER:
    _settings.configure(_ROOT, backends.choose(settings.current()))
SEED = REPO / "examples" / "company_x.json"


def clean_env(**extra) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LLM_", "EMBEDDING_"))
        and k not in ("FALSIFY_HOME", "FALSIFY_EMBEDDER", "DEMO_MODE", "REFUTED_ID")
    }
    env.update(extra)
    return env


def cli(root, *args, env=None, timeout=240, input=None, same_database=False) -> subprocess.CompletedProcess:
    cmd = (
        [sys.executable, str(REPO / "main.py")]
        + (["--root", str(root)] if root else [])
        + [str(a) for a in args]
    )
    env = env or clean_env()
    if BACKEND == "postgres" and root and not same_database:  # the root's own database
        env = dict(env, **pg_server.root_env(root))
    return forkserver.run(
        cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, input=input
    )


def cli_json(root, *args, **kw):
    proc = cli(root, *args, "--json", **kw)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def root():
    return _ROOT


@pytest.fixture(scope="session")
async def app(root):
    from memory_core.api import Falsify

    falsify = await Falsify.open(root, purpose="pytest")
    await falsify.warm_up()
    yield falsify
    await falsify.close()


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory) -> Path:
    """One mypy cache for the run's type checks (tests/system/test_typing.py, tests/system/test_packaging.py),
    shared by its xdist workers: pydantic and the package are checked once, then read back."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "mypy-cache"


def investigation(prefix: str, hypotheses=(), evidence=(), conclusions=(), edges=(), question="Q") -> str:
    """An investigation file with every key prefixed (``prefix + key``)."""
    p = lambda k: f"{prefix}{k}"
    data = {
        "question": {"key": p(question), "text": f"Question {prefix}: what happened?"},
        "hypotheses": [dict(h, key=p(h["key"])) for h in hypotheses],
        "evidence": [dict(e, key=p(e["key"])) for e in evidence],
        "conclusions": [dict(c, key=p(c["key"])) for c in conclusions],
        "edges": [dict(e, **{"from": p(e["from"]), "to": p(e["to"])}) for e in edges],
    }
    return json.dumps(data)


@pytest.fixture
def prefix():
    return f"t{uuid.uuid4().hex[:8]}_"


def seed_with_prefix(prefix: str) -> str:
    data = json.loads(SEED.read_text())
    p = lambda k: f"{prefix}{k}"
    data["question"]["key"] = p(data["question"]["key"])
    data["question"]["text"] += f" ({prefix})"
    for section in ("hypotheses", "evidence", "conclusions"):
        for node in data[section]:
            node["key"] = p(node["key"])
    for edge in data["edges"]:
        edge["from"], edge["to"] = p(edge["from"]), p(edge["to"])
    return json.dumps(data)


# ---- the order test files are handed to the xdist workers --------------------------------------
# The longest files first (about their quiet seconds on the project's 2-core machine, heaviest
# first; the rest keep their collection order): with `--no-loadscope-reorder` (the Makefile's
# PYTEST) xdist hands the files out in this order, one at a time to whichever worker is free, so
# no long file starts last while the other worker idles (xdist's own order, by number of tests,
# puts the long files with one or two tests last). By file name, wherever the file lives. Only an
# order: nothing asserts a time.
# the warm-CLI files are left to the default order: run in the suite's first, busiest minutes, a
# `serve` they started took over 60 s to stop on SIGINT (2026-12-02, a clean-clone run)
HEAVY_FIRST = {
    "ladybug": [
        "test_fault_injection.py",
        "test_timeline_browser.py",
        "test_demo.py",
        "test_bench_quick.py",
        "test_hostile_input.py",
        "test_foundation.py",
        "test_packaging.py",
        "test_bench_trust.py",
        "test_memory.py",
        "test_viewer_browser.py",
        "test_mcp.py",
        "test_lifecycle_processes.py",
        "test_damage_repair.py",
        "test_write_rollback.py",
        "test_epochs.py",
        "test_partial_view_forget.py",
        "test_damaged_meta.py",
        "test_revision.py",
    ],
    "postgres": [
        "test_bench_quick.py",
        "test_fault_injection.py",
        "test_revision.py",
        "test_epochs.py",
        "test_offline_candidates.py",
        "test_postgres_multiprocess.py",
        "test_validity_cli.py",
        "test_undo.py",
        "test_check_repair.py",
        "test_cancellation.py",
    ],
}


def pytest_collection_finish(session):
    if not gc.isenabled():
        gc.collect()
        gc.freeze()
        gc.enable()


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(HEAVY_FIRST.get(BACKEND, HEAVY_FIRST["ladybug"]))}
    items.sort(
        key=lambda item: rank.get(item.path.name, len(rank))
    )  # stable: a file's tests keep their order


def pytest_runtest_teardown(item, nextitem):
    """The last test of a file closes the Chromium its file's browser tests shared (tests/support/browser.py)."""
    global _FROZEN_WITH_COGNEE
    if not _FROZEN_WITH_COGNEE and "cognee" in sys.modules:
        _FROZEN_WITH_COGNEE = True
        gc.collect()
        gc.freeze()
    if nextitem is None or nextitem.path != item.path:
        for name, module in list(
            sys.modules.items()
        ):  # imported as browser, tests.browser, tests.support.browser...
            where = Path(getattr(module, "__file__", None) or "")
            if (
                name.split(".")[-1] == "browser"
                and where.name == "browser.py"
                and where.is_relative_to(REPO / "tests")
            ):
                module.close_shared()


# ---- each test file's duration, printed at the end of the run (never asserted: the machine is noisy)
_FILE_SECONDS: dict = defaultdict(float)
_FILE_TESTS: dict = defaultdict(int)
_STARTED = time.monotonic()


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] += report.duration  # setup + call + teardown, on whichever worker ran it
    if report.when == "call" or (report.when == "setup" and report.skipped):
        _FILE_TESTS[path] += 1


_SESSION_BEGAN = time.time()


def _launcher_processes(base: str) -> list[int]:
    """Launcher processes serving runtime directory ``base`` (``launcher.py --serve BASE``)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0") if entry.name.isdigit() else []
        except OSError:
            continue
        if b"--serve" in argv and base.encode() in argv:
            found.append(int(entry.name))
    return found


def _launchers_started_since(began: float) -> list[str]:
    """Launchers of this checkout (any runtime directory) started after ``began``: one a test
    started with an environment that lost the session's settings (a client's default one)."""
    script = str(REPO / "memory_core" / "shell" / "launcher.py").encode()
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        boot = next(
            float(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime")
        )
    except (OSError, StopIteration):
        return []
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0") if entry.name.isdigit() else []
            if script not in argv or b"--serve" not in argv:
                continue
            started = boot + int((entry / "stat").read_text().rsplit(")", 1)[1].split()[19]) / ticks
        except (OSError, ValueError, IndexError):
            continue
        if started >= began - 1:
            found.append(
                f"pid {entry.name} ({b' '.join(argv[argv.index(b'--serve') :][:2]).decode(errors='replace')})"
            )
    return found


def pytest_sessionfinish(session, exitstatus):
    base = os.environ["FALSIFY_RUNTIME_DIR"]
    leaked = sorted(p.name for p in Path(base).glob("*.sock"))
    running = _launcher_processes(base)
    for pid in running:  # none may outlive the session
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    if leaked or running:
        print(f"\na test started the warm launcher by accident: {leaked} (pids {running}) in {base}")
        session.exitstatus = 1
    # elsewhere (a child given a client's default environment): named, left to its idle exit
    others = [] if "PYTEST_XDIST_WORKER" in os.environ else _launchers_started_since(_SESSION_BEGAN)
    if others:
        print(
            f"\nlaunchers of this checkout started during the session outside its runtime directory: {others} "
            "(a test's process lost FALSIFY_LAUNCHER=0; tests/system/test_launcher.py's own are stopped by then)"
        )
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    if not _FILE_SECONDS:
        return
    tr = terminalreporter
    tr.write_sep("-", "seconds per test file (setup + tests + teardown)")
    for path, seconds in sorted(_FILE_SECONDS.items(), key=lambda kv: -kv[1]):
        tr.write_line(f"{seconds:8.1f} s  {_FILE_TESTS[path]:4d} tests  {path}")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    tr.write_line(
        f"{sum(_FILE_SECONDS.values()):8.1f} s  in test files; {time.monotonic() - _STARTED:.1f} s wall; "
        f"load average {load}"
    )

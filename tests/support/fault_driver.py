"""Crash trials: SIGKILL a revise / undo / load mid-write, recover, verify.

    python tests/support/fault_driver.py CONFIG.json RESULT.json

One driver process owns one data-root *path* (``<work>/root``; a process serves
one root) and runs every trial on it. The driver configures FALSIFY for that
path, imports cognee and what opening a root imports (lancedb included), and loads
the offline embedding model, but never opens the stores itself; each step of a
trial runs in a child made with ``os.fork()`` -- a real, separate process that
opens the root (lock, journal recovery, Ladybug, LanceDB) through the real CLI
entry point ``memory_core.shell.cli.main`` and can be SIGKILLed like any other. Forking
after the imports and the model saves what every process would pay again (the ~5 s
cognee import, ~0.8 s of CPU for lancedb and the model), which is what makes
dozens of trials affordable (:func:`warm_imports`, :func:`preload_model`).

Per trial:
1. the root is reset to a pristine copy (empty / loaded / revised ...) -- no process
   has it open while it is replaced;
2. child A runs the operation (``load``, ``revise``, ``undo``, ...) and is killed either
   by the fault hook (``FALSIFY_FAULT_AT=step[:n]``, SIGKILL at a named write step)
   or by the driver after a random delay (from the fork, or from the moment the
   journal intent appears, i.e. inside the write window); whether its intent is
   left is noted before any process opens the root again;
3. child B (optionally killed mid-recovery itself, then started again) opens the
   root -- which recovers the journal -- and runs ``check --json``, ``status --json``
   and reads every vector row (:data:`VECTOR_KEYS`), one process for all three.
A driver given ``"prepared": OTHER_WORK`` in its config copies that driver's pristine
roots and reference runs (``prepared.json``) instead of building the same again.
The trial passes when check is clean, no intent is pending, and the root is in
exactly the before-state or exactly the after-state of an uninterrupted run (status
and vector rows), with the revision log agreeing (one more committed entry iff
after-state).

On PostgreSQL (``FALSIFY_BACKEND=postgres`` and ``FALSIFY_DATABASE_URL`` naming the root's
own database, set by tests/system/test_fault_injection.py in a postgres session) the root's data
are that database: a pristine copy is a database made with ``CREATE DATABASE ... TEMPLATE``
(tests/support/pg_server.py), the intent is the row of ``falsify_intent`` and the log the rows of
``falsify_log``, watched with plain SQL instead of the files.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import shutil
import signal
import sys
import threading
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "support"))
POSTGRES = os.environ.get("FALSIFY_BACKEND") == "postgres"

STEPS = ("journalled", "nodes", "node_edges", "edges", "updates", "del_edges", "del_nodes", "committed")
CHILD_TIMEOUT = 180.0
LANCEDB_LOOP = "LanceDBBackgroundEventLoop"  # lancedb's one thread (see warm_imports)
VECTOR_KEYS = ["<vector keys>"]  # a child's pseudo-command (fork_cli)


class Driver:
    def __init__(self, work: Path, fact: str, target: str, example: str):
        self.work = work
        self.root = work / "root"
        self.pristine = work / "pristine"
        self.fact, self.target, self.example = fact, target, example
        self.outputs = work / "outputs"
        self.outputs.mkdir(parents=True, exist_ok=True)
        self.counter = 0
        self._sql = None  # postgres: the driver's own connection to the root's database

    # ---- the journal, on either backend ------------------------------------
    def _query(self, statement: str):
        """One value from the root's database, or None when FALSIFY's tables are not there yet."""
        import psycopg2

        if self._sql is None:
            self._sql = psycopg2.connect(os.environ["FALSIFY_DATABASE_URL"], application_name="fault_driver")
            self._sql.autocommit = True
        try:
            with self._sql.cursor() as cur:
                cur.execute(statement)
                return cur.fetchone()[0]
        except psycopg2.errors.UndefinedTable:
            return None

    def disconnect(self) -> None:
        """Before the root's database is replaced or copied (a template must have no sessions)."""
        if self._sql is not None:
            self._sql.close()
            self._sql = None

    def has_pending(self) -> bool:
        if POSTGRES:
            return bool(self._query("SELECT count(*) FROM falsify_intent"))
        return (self.root / "journal" / "pending.json").exists()

    def poll_pause(self) -> None:
        # a file test costs microseconds; a query a round trip to the server: poll it less often
        time.sleep(0.002 if POSTGRES else 0.0005)

    # ---- process plumbing ----------------------------------------------
    def fork_cli(self, argv: list, env: dict | None = None) -> tuple[int, Path]:
        """Fork a child that runs the CLI on the root; stdout/stderr go to files.
        ``argv`` may be a list of command lines, run one after another (each with
        its own stdout file ``.out<i>``; the exit code is the first non-zero);
        :data:`VECTOR_KEYS` among them prints every vector row per collection, as the keys of
        its nodes (tests/support/cli_batch.py's ``vector_keys``)."""
        others = [
            t
            for t in threading.enumerate()
            if t is not threading.main_thread() and t.name != LANCEDB_LOOP  # started again in the child
        ]
        if others:  # forking with live threads could deadlock the child
            raise RuntimeError(f"driver has threads before fork: {others}")
        self.counter += 1
        base = self.outputs / f"{self.counter:04d}"
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # child
            code = 70
            try:
                out = os.open(str(base) + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                err = os.open(str(base) + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(out, 1)
                os.dup2(err, 2)
                for k, v in (env or {}).items():
                    os.environ[k] = v
                from memory_core.shell import cli

                commands = argv if argv and isinstance(argv[0], list) else [argv]
                code = 0
                for i, command in enumerate(commands):
                    if i:
                        sys.stdout.flush()
                        out_i = os.open(f"{base}.out{i}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                        os.dup2(out_i, 1)
                    if command == VECTOR_KEYS:  # every vector row, as the keys of its nodes
                        if not code:
                            import cli_batch

                            print(json.dumps(cli_batch._locked(str(self.root), cli_batch._vector_keys)))
                        continue
                    code = code or cli.main(["--root", str(self.root), *command])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                import traceback

                traceback.print_exc()
                code = 71
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        return pid, base

    @staticmethod
    def wait(pid: int, timeout: float = CHILD_TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                if os.WIFSIGNALED(status):
                    return f"signal {os.WTERMSIG(status)}"
                return f"exit {os.WEXITSTATUS(status)}"
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "hung"
            time.sleep(0.002)

    @staticmethod
    def exited(pid: int) -> bool:
        """Whether the child has exited (without reaping it)."""
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None

    def kill_after(self, pid: int, delay: float) -> None:
        """SIGKILL ``pid`` after ``delay`` seconds unless it has exited by then."""
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline:
            if self.exited(pid):
                return
            time.sleep(0.0005)
        os.kill(pid, signal.SIGKILL)  # a zombie ignores it

    def run(self, argv, env=None) -> dict:
        pid, base = self.fork_cli(argv, env)
        how = self.wait(pid)
        return self.read(base, how)

    @staticmethod
    def read(base: Path, how: str) -> dict:
        out = (
            Path(str(base) + ".out").read_text(errors="replace") if Path(str(base) + ".out").exists() else ""
        )
        err = (
            Path(str(base) + ".err").read_text(errors="replace") if Path(str(base) + ".err").exists() else ""
        )
        return {"how": how, "stdout": out, "stderr": err}

    # ---- root states -----------------------------------------------------
    def reset(self, name: str) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.copytree(self.pristine / name, self.root, symlinks=True)
        if POSTGRES:
            import pg_server

            self.disconnect()
            pg_server.copy_database(self.pristine / name, self.root)

    def save(self, name: str) -> None:
        dst = self.pristine / name
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(self.root, dst, symlinks=True)
        if POSTGRES:
            import pg_server

            self.disconnect()
            pg_server.copy_database(self.root, dst)

    def log_lines(self) -> int:
        if POSTGRES:
            return int(self._query("SELECT count(*) FROM falsify_log") or 0)
        path = self.root / "revisions.jsonl"
        return len([l for l in path.read_bytes().splitlines() if l.strip()]) if path.exists() else 0

    def observe(self) -> dict:
        """Open the root in a fresh process (recovering it), check it, read it."""
        pid, base = self.fork_cli([["check", "--json"], ["status", "--json"], VECTOR_KEYS])
        check = self.read(base, self.wait(pid))
        result = {"check_how": check["how"], "check_stderr": check["stderr"][-2000:]}
        try:
            result["check"] = json.loads(check["stdout"])
        except ValueError:
            result["check"] = None
        result["status"] = _json_or_none(Path(f"{base}.out1"))
        result["vectors"] = _json_or_none(Path(f"{base}.out2"))
        result["recovered"] = [l for l in check["stderr"].splitlines() if l.startswith("[recovery]")]
        result["pending"] = self.has_pending()
        result["log_lines"] = self.log_lines()
        return result

    # ---- the operations ------------------------------------------------
    def argv_of(self, op: str) -> list[str]:
        if op == "load":
            return ["load", self.example, "--json"]
        if op == "revise":
            return ["revise", self.fact, "--target", self.target, "--json"]
        if op == "undo":
            return ["undo", "--json"]
        if op == "resolve":  # end the dispute "disputed" holds, for the new fact
            return ["resolve", self.target, "--winner", self.fact_key, "--json"]
        if op == "reinstate":  # refute the fact that refuted the target: it and K come back
            return [
                "revise",
                "The forensic audit was retracted by its author.",
                "--target",
                self.fact_key,
                "--json",
            ]
        if op == "end_validity":  # a new CEO from 2021: the stored one held until then (valid_to written)
            return [
                "revise",
                "Sam Ortiz is the CEO of Company X.",
                "--triple",
                "company x|ceo|Sam Ortiz",
                "--valid-from",
                "2021-06-01",
                "--json",
            ]
        raise ValueError(op)

    @property
    def fact_key(self) -> str:
        from memory_core.core.requests import fact_key

        return fact_key(self.fact)

    START = {
        "load": "empty",
        "revise": "loaded",
        "undo": "revised",
        "resolve": "disputed",
        "reinstate": "revised",
        "end_validity": "timed",
    }
    AFTER = {
        "load": "loaded",
        "revise": "revised",
        "undo": "undone",
        "resolve": "resolved",
        "reinstate": "reinstated",
        "end_validity": "ended",
    }
    # evidence true from 2015 and a conclusion resting on it: the supersession in time's start
    TIMED = {
        "question": {"key": "Q"},
        "evidence": [
            {
                "key": "E_ceo",
                "claim": "Dana Reyes is the CEO of Company X.",
                "subject": "company x",
                "predicate": "ceo",
                "object": "Dana Reyes",
                "valid_from": "2015-01-01",
            }
        ],
        "conclusions": [
            {"key": "K_ceo", "statement": "Company X's 2018 recall plan was signed off by Dana Reyes."}
        ],
        "edges": [{"type": "depends_on", "from": "K_ceo", "to": "E_ceo"}],
    }

    def prepare(self) -> dict:
        """Build the pristine roots and the expected before/after states, timing
        an uninterrupted run of each operation (for the random-delay kills)."""
        info: dict = {"timings": {}, "window": {}}  # the root is fresh: configure() just created it
        # status creates an empty, initialised root; a dry run writes nothing but runs cognee's
        # pipeline once, which creates its relational tables: every copy then starts warm, as a used root does
        states: dict = {}
        vectors: dict = {}

        def record(name: str, base: Path) -> None:  # a child's [op, status, VECTOR_KEYS]: name's state
            states[name] = json.loads(Path(f"{base}.out1").read_text())
            vectors[name] = json.loads(Path(f"{base}.out2").read_text())

        pid, base = self.fork_cli(
            [["status", "--json"], ["revise", "warm up", "--dry-run", "--json"], VECTOR_KEYS]
        )
        first = self.read(base, self.wait(pid))
        assert first["how"] == "exit 0", first
        states["empty"] = json.loads(first["stdout"])
        vectors["empty"] = json.loads(Path(f"{base}.out2").read_text())
        self.save("empty")
        for op, after in (("load", "loaded"), ("revise", "revised"), ("undo", "undone")):
            t0 = time.monotonic()
            pid, base = self.fork_cli(
                [self.argv_of(op), ["status", "--json"], VECTOR_KEYS]
            )  # the op, then its after-state
            seen, gone = None, None
            while True:  # watch the journal intent appear and disappear: the write window
                done, status = os.waitpid(pid, os.WNOHANG)
                now = time.monotonic()
                exists = self.has_pending()
                if exists and seen is None:
                    seen = now
                if seen is not None and not exists and gone is None:
                    gone = now
                if done:
                    break
                if now - t0 > CHILD_TIMEOUT:
                    os.kill(pid, signal.SIGKILL)
                    raise RuntimeError(f"{op} hung")
                self.poll_pause()
            result = self.read(base, f"exit {os.WEXITSTATUS(status)}")
            assert result["how"] == "exit 0" and seen and gone, (op, result)
            info["timings"][op] = gone - t0  # from the fork to the commit
            info["window"][op] = [seen - t0, gone - t0]
            record(after, base)
            if after != "undone":
                self.save(after)
        # a dispute (loaded + the fact under preserve_both), resolved; and a reinstatement
        self.reset("loaded")
        pid, base = self.fork_cli(
            [
                ["revise", self.fact, "--target", self.target, "--policy", "preserve_both", "--json"],
                ["status", "--json"],
                VECTOR_KEYS,
            ]
        )
        made = self.read(base, self.wait(pid))
        assert made["how"] == "exit 0", made
        record("disputed", base)
        self.save("disputed")
        for op in ("resolve", "reinstate"):
            self.reset(self.START[op])
            pid, base = self.fork_cli([self.argv_of(op), ["status", "--json"], VECTOR_KEYS])
            result = self.read(base, self.wait(pid))
            assert result["how"] == "exit 0", (op, result)
            record(self.AFTER[op], base)
        # valid time: loaded + timed evidence, then a value that ends it (superseded in time)
        self.reset("loaded")
        fragment = self.work / "timed.json"
        fragment.write_text(json.dumps(self.TIMED), encoding="utf-8")
        pid, base = self.fork_cli([["load", str(fragment), "--json"], ["status", "--json"], VECTOR_KEYS])
        made = self.read(base, self.wait(pid))
        assert made["how"] == "exit 0", made
        record("timed", base)
        self.save("timed")
        pid, base = self.fork_cli([self.argv_of("end_validity"), ["status", "--json"], VECTOR_KEYS])
        result = self.read(base, self.wait(pid))
        assert result["how"] == "exit 0", ("end_validity", result)
        record("ended", base)
        info["states"] = states
        info["vectors"] = vectors
        info["log_lines"] = {"empty": 0, "loaded": 1, "revised": 2, "disputed": 2, "timed": 2}
        return info

    def adopt(self, other: Path, timeout: float = 3600.0) -> dict:
        """Another driver's pristine roots and reference runs (its ``prepared.json``, written
        once its ``prepare`` is done), copied here instead of preparing the same again."""
        deadline = time.monotonic() + timeout
        while not (other / "prepared.json").exists():
            if (other / "failed").exists() or time.monotonic() > deadline:
                raise RuntimeError(f"the driver in {other} did not prepare its roots")
            time.sleep(0.2)
        info = json.loads((other / "prepared.json").read_text())
        for src in sorted((other / "pristine").iterdir()):
            dst = self.pristine / src.name
            shutil.copytree(src, dst, symlinks=True)
            if POSTGRES:
                import pg_server

                pg_server.copy_database(src, dst)
        return info

    def trial(self, spec: dict, info: dict, rng: random.Random) -> dict:
        op = spec["op"]
        start = self.START[op]
        t_reset = time.monotonic()
        self.reset(start)
        t_reset = time.monotonic() - t_reset
        before_name = start
        after_name = self.AFTER[op]
        env = {}
        if spec.get("step"):
            env["FALSIFY_FAULT_AT"] = spec["step"] + (f":{spec['nth']}" if spec.get("nth") else "")
        t0 = time.monotonic()
        pid, base = self.fork_cli(self.argv_of(op), env)
        delay = None
        if spec.get("kill") == "fork":
            delay = rng.uniform(0.0, info["timings"][op])
            self.kill_after(pid, delay)
        elif spec.get("kill") == "window":
            while not self.has_pending():
                if self.exited(pid) or time.monotonic() - t0 > CHILD_TIMEOUT:
                    break
                self.poll_pause()
            lo, hi = info["window"][op]
            delay = rng.uniform(0.0, max(hi - lo, 0.01) * 1.3)  # a few land after the commit point
            self.kill_after(pid, delay)
        how = self.wait(pid)
        child = self.read(base, how)
        pending_at_kill = self.has_pending()  # before any process opens the root again
        killed_recovery = None
        if spec.get("kill_recovery"):
            pid_b, _ = self.fork_cli(["check", "--json"])
            killed_recovery = rng.uniform(0.0, spec["kill_recovery"])
            self.kill_after(pid_b, killed_recovery)
            killed_recovery = {"delay": round(killed_recovery, 4), "how": self.wait(pid_b)}
        t_child = time.monotonic() - t0
        t_obs = time.monotonic()
        seen = self.observe()
        t_obs = time.monotonic() - t_obs
        states = info["states"]
        outcome = "neither"
        if seen["status"] == states[before_name]:
            outcome = "before"
        elif seen["status"] == states[after_name]:
            outcome = "after"
        expected_lines = info["log_lines"][before_name] + (1 if outcome == "after" else 0)
        expected_vectors = info["vectors"].get({"before": before_name, "after": after_name}.get(outcome))
        return {
            "spec": spec,
            "child": how,
            "child_stderr": child["stderr"][-1500:],
            "delay": None if delay is None else round(delay, 4),
            "killed_recovery": killed_recovery,
            "outcome": outcome,
            "check_clean": bool(seen["check"] and seen["check"].get("clean")),
            "check": seen["check"],
            "check_how": seen["check_how"],
            "check_stderr": seen["check_stderr"],
            "recovered": seen["recovered"],
            "pending": seen["pending"],
            "pending_at_kill": pending_at_kill,
            "epoch": info["log_lines"][before_name] + 1,  # the epoch the operation writes
            "vectors_ok": seen["vectors"] is not None and seen["vectors"] == expected_vectors,
            "vectors": seen["vectors"],
            "expected_vectors": expected_vectors,
            "log_lines": seen["log_lines"],
            "log_ok": seen["log_lines"] == expected_lines,
            "seconds": {"reset": round(t_reset, 3), "op": round(t_child, 3), "observe": round(t_obs, 3)},
            "status_diff": None
            if outcome != "neither"
            else _diff(seen["status"], states[before_name], states[after_name]),
        }


def _json_or_none(path: Path):
    try:
        return json.loads(path.read_text()) if path.exists() else None
    except ValueError:
        return None


def _diff(got, before, after) -> str:
    if got is None:
        return "no status"

    def index(s):
        return {("node", n["key"]): n for n in s["nodes"]} | {
            ("edge", e["type"], e["from"], e["to"]): e for e in s["edges"]
        }

    g, b, a = index(got), index(before), index(after)
    lines = []
    for k in sorted(set(g) | set(b) | set(a), key=str):
        if g.get(k) != b.get(k) or g.get(k) != a.get(k):
            lines.append(f"{k}: got={g.get(k)} before={b.get(k)} after={a.get(k)}")
    return "\n".join(lines[:30])


def warm_imports() -> None:
    """Import (never open) what every child would otherwise import itself.
    ``lancedb`` itself is left to the children: importing it starts a background
    event-loop thread, and a process must not fork with threads running. Its
    heavy dependencies (pyarrow, the namespace client) are thread-free. pandas is not
    imported: the product's processes run pyarrow without it (``lazy_imports.defer_pandas``),
    and so do the trials' children."""
    import cognee  # noqa: F401
    from cognee.tasks.storage import add_data_points  # noqa: F401
    from cognee.infrastructure.databases.vector.embeddings import get_embedding_engine  # noqa: F401
    import pyarrow.dataset  # noqa: F401
    import lance_namespace  # noqa: F401
    import lance_namespace_urllib3_client  # noqa: F401
    import aiosqlite  # noqa: F401
    import alembic  # noqa: F401
    import fastembed  # noqa: F401
    import onnxruntime  # noqa: F401
    import tokenizers  # noqa: F401
    import cognee.alembic  # noqa: F401
    import cognee.infrastructure.databases.vector.embeddings.FastembedEmbeddingEngine  # noqa: F401
    from cognee.infrastructure.databases.graph.ladybug import adapter  # noqa: F401
    from cognee.modules.users.models import User  # noqa: F401
    from sqlalchemy.orm import configure_mappers

    # imported here, before the trials fork, so no child pays for them (used by name nowhere)
    from memory_core import api  # noqa: F401
    from memory_core.judging import detect  # noqa: F401
    from memory_core.ops import check, load, revise, status, undo  # noqa: F401
    from memory_core.shell import cli  # noqa: F401
    from memory_core.store import intents  # noqa: F401
    from memory_core.tasks import revision_tasks  # noqa: F401
    from memory_core.store import writer  # noqa: F401

    configure_mappers()  # pure Python, ~0.7 s that every child would pay on its first query

    # what opening a root imports lazily (memory_core/store/engines.py) and the modules it pulls in
    from memory_core.store import engines

    for name in (
        *engines._LAZY_MODULES,
        "anyio._backends._asyncio",
        "anyio.streams.memory",
        "anyio.streams.stapled",
        "anyio.streams.tls",
        "cognee_db_workers._kuzu_helpers",
        "cognee_db_workers.ladybug_migrate",
        "cognee_db_workers.lancedb_compaction",
        "ladybug._lbug",
    ):
        importlib.import_module(name)
    # lancedb last (~0.2 s a child): its import starts one thread, its background event loop, which
    # lancedb itself starts again in a forked child (os.register_at_fork in lancedb/background_loop.py;
    # its native runtime has a pthread_atfork hook). This driver never uses lancedb, so that thread
    # is idle whenever it forks (fork_cli allows it and no other). The warning lancedb gives in each
    # child about it is silenced.
    warnings.filterwarnings("ignore", message="lancedb fork support is experimental")
    import lancedb  # noqa: F401
    from cognee.infrastructure.databases.vector.lancedb import LanceDBAdapter  # noqa: F401


def native_threads() -> int:
    """This process's threads, native ones included (``threading`` sees only Python's)."""
    return len(os.listdir("/proc/self/task"))


def preload_model() -> None:
    """Load the offline embedding model once, here, so no child loads it again (about 0.6 s
    of CPU and 600 MB of page faults each). The model is read-only and the same for every
    root; each child still opens the root's stores itself. A child has no threads but the
    one fork copied, so the model must not need others: onnxruntime's session is rebuilt
    with one intra-op thread (no pool) and the tokenizer runs without its thread pool
    (``TOKENIZERS_PARALLELISM=false``, inherited by the children). Checked: the preload
    leaves this process with no more threads than before it."""
    from memory_core.store import embedder

    if not embedder.local_enabled():
        return
    from cognee.infrastructure.databases.vector.embeddings import get_embedding_engine

    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    before = native_threads()
    engine = get_embedding_engine()  # cached: the children's get_embedding_engine() returns it
    model = embedder._engine_of(engine).embedding_model.model  # fastembed's ONNX text model
    model.threads = 1
    model.load_onnx_model()
    embedder.warm_model(engine)  # its first run allocates and optimises
    if native_threads() > before:
        raise RuntimeError(f"preloading the model started {native_threads() - before} thread(s)")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    config = json.loads(Path(argv[0]).read_text())
    out = Path(argv[1])
    work = Path(config["work"])
    work.mkdir(parents=True, exist_ok=True)
    from memory_core.store import backends, data_root, settings

    # this process and its children serve this one path, as FALSIFY's own processes (the CLI's,
    # the server's) do: pyarrow without pandas among the rest
    data_root.claim_process()
    data_root.configure(work / "root", backends.choose(settings.current()))
    data_root.import_cognee()
    warm_imports()
    preload_model()
    cpu = {"imported": _cpu()}  # where the driver's CPU goes (diagnostics; nothing asserts it)
    driver = Driver(work, config["fact"], config["target"], config["example"])
    rng = random.Random(config.get("seed", 7))
    if config.get("prepared"):  # another driver prepares the pristine roots and reference runs once
        info = driver.adopt(Path(config["prepared"]))
    else:
        try:
            info = driver.prepare()
        except BaseException:
            (work / "failed").write_text("prepare failed")
            raise
        (work / "prepared.tmp").write_text(json.dumps(info))
        os.replace(work / "prepared.tmp", work / "prepared.json")  # whole, for a driver adopting it
    cpu["prepared"] = _cpu()
    report = {"timings": info["timings"], "window": info["window"], "states": info["states"], "trials": []}
    report["cpu"] = cpu
    out.write_text(json.dumps(report))
    for spec in config["trials"]:
        report["trials"].append(driver.trial(spec, info, rng))
        cpu["trials"] = _cpu()
        out.write_text(json.dumps(report))
    return 0


def _cpu() -> dict:
    """CPU seconds so far: this process's, and its children's (the trials' processes, reaped)."""
    t = os.times()
    return {"self": round(t.user + t.system, 2), "children": round(t.children_user + t.children_system, 2)}


if __name__ == "__main__":
    raise SystemExit(main())

"""The warm CLI: while ``python main.py serve`` runs on a root, CLI commands on that
root are answered by the server (same output, same exit codes); without a server
(or with a stale ``server.json``) the CLI works as before."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

import forkserver
from conftest import REPO, SEED, cli, clean_env

pytestmark = pytest.mark.slow

FRAGMENT = {
    "question": {"key": "Q"},
    "evidence": [{"key": "E_warm", "claim": "A warm-CLI claim about valve housings."}],
    "edges": [{"type": "supports", "from": "E_warm", "to": "C", "weight": 0.3}],
}


def default_signals() -> None:
    """In the child, before exec: SIGINT as a terminal's foreground job gets it (default
    disposition, unblocked), whatever the test worker's state. A suite started in the background
    by a non-interactive shell (``make test &``, ``nohup``) runs with SIGINT (and SIGQUIT) set to
    SIG_IGN, which every child inherits across exec: a server started so would be deaf to the
    SIGINT the tests stop it with."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def start_serve(root):
    """``python main.py --root ROOT serve --port 0``, forked from the fork server (a process of its
    own, SIGINT at Python's default handler and unblocked, as tests/support/forkserver.py's children
    start; cold with ``FALSIFY_TEST_FORK=0``), once it prints its address."""
    args = [sys.executable, str(REPO / "main.py"), "--root", str(root), "serve", "--port", "0"]
    log = open(root.parent / "serve.log", "w")
    if forkserver.enabled():
        proc = forkserver.popen(
            args, cwd=REPO, env=clean_env(PYTHONUNBUFFERED="1"), stdout=subprocess.PIPE, stderr=log, text=True
        )
    else:
        proc = subprocess.Popen(
            args,
            cwd=REPO,
            env=clean_env(PYTHONUNBUFFERED="1"),
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            preexec_fn=default_signals,
        )
    log.close()
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if lines.get(timeout=1).startswith("FALSIFY viewer: "):
                return proc
        except queue.Empty:
            continue
    proc.kill()
    pytest.fail("serve did not start: " + (root.parent / "serve.log").read_text()[-3000:])


def answer(proc: subprocess.CompletedProcess) -> tuple:
    """Exit code, output and errors; of ``status``'s closing line ("(ran warm: answered by the
    FALSIFY server ...)" / "(ran cold ...)"), only whether it ran warm."""
    out = re.sub(r"\n\(ran (warm|cold)[^\n]*\)\n$", lambda m: f"\n<{m.group(1)}>\n", proc.stdout)
    return proc.returncode, out, proc.stderr


def test_a_running_server_answers_the_cli(tmp_path):
    root = tmp_path / "root"
    server = start_serve(root)
    try:
        assert cli(root, "load", SEED).returncode == 0
        info = json.loads((root / "server.json").read_text())
        assert (
            info["pid"] == server.pid
            and info["url"].startswith("http://127.0.0.1:")
            and len(info["secret"]) >= 32
        )
        assert oct((root / "server.json").stat().st_mode & 0o777) == "0o600"
        # the server holds the root: a CLI that did not ask it would find the root busy
        busy = cli(root, "status", env=clean_env(FALSIFY_NO_SERVER="1", FALSIFY_LOCK_TIMEOUT="0"))
        assert busy.returncode == 3 and "in use by" in busy.stderr
        # a FALSIFY_* value that does not parse: never forwarded (the server would answer 0), exit 2 naming it
        bad = cli(root, "status", env=clean_env(FALSIFY_GATE1_K="many"))
        assert bad.returncode == 2 and "FALSIFY_GATE1_K" in bad.stderr and not bad.stdout, answer(bad)

        # the command's settings are the server's, or it does not run there: other judging settings
        # are refused (naming them, nothing run); another backend is another store (run cold, here)
        other = cli(root, "revise", "Some fact.", "--dry-run", env=clean_env(FALSIFY_GATE1_K="1"))
        assert other.returncode == 3 and "FALSIFY_GATE1_K" in other.stderr and not other.stdout, answer(other)
        elsewhere = cli(
            root,
            "revise",
            "Some fact.",
            "--target",
            "E_qa",
            env=clean_env(
                FALSIFY_BACKEND="postgres",
                FALSIFY_LOCK_TIMEOUT="0",
                FALSIFY_DATABASE_URL="postgresql://nobody@127.0.0.1:9/none",
            ),
        )
        assert elsewhere.returncode != 0 and "FALSIFY server" not in elsewhere.stderr, answer(elsewhere)
        states = {n["key"]: n["state"] for n in json.loads(cli(root, "status", "--json").stdout)["nodes"]}
        assert states["E_qa"] == "alive"  # the embedded root was not written
        warm = {
            "status": answer(cli(root, "status", "--json")),
            "human": answer(cli(root, "status")),
            "bad_target": answer(cli(root, "revise", "Some fact.", "--target", "NOPE")),
            "usage": answer(cli(root, "status", "--bogus")),  # the parser's own message and exit code 2
        }
        explained = cli(root, "explain", "E_qa", "--json")
        assert explained.returncode == 0 and json.loads(explained.stdout)["key"] == "E_qa"
        assert warm["status"][0] == 0 and json.loads(warm["status"][1])["nodes"]
        assert warm["bad_target"][0] == 2 and "NOPE" in warm["bad_target"][2]
        # load - reads standard input (sent to the server as bytes)
        loaded = cli(root, "load", "-", "--json", input=json.dumps(FRAGMENT))
        assert loaded.returncode == 0, loaded.stderr
        assert "E_warm" in json.loads(loaded.stdout)["added"]
        assert cli(root, "undo").returncode == 0
        # a relative --root and a relative file, from another directory: resolved as the client sees them
        other = subprocess.run(
            [
                sys.executable,
                str(REPO / "main.py"),
                "--root",
                os.path.relpath(root, tmp_path),
                "load",
                os.path.relpath(SEED, tmp_path),
                "--json",
            ],
            cwd=tmp_path,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert other.returncode == 0 and json.loads(other.stdout)["epoch"] is None, (
            other.stderr
        )  # nothing new
        # any input the cold path takes: 12 MB on standard input (base64 on the wire) loads as it would cold
        padded = json.dumps(FRAGMENT) + " " * (12 * 1024 * 1024)
        big = cli(root, "load", "-", "--json", input=padded)
        assert big.returncode == 0 and "E_warm" in json.loads(big.stdout)["added"], big.stderr[-2000:]
        assert cli(root, "undo").returncode == 0
        # a FIFO (or a device) is refused before forwarding: the server never blocks on it
        fifo = tmp_path / "facts.fifo"
        os.mkfifo(fifo)
        for argv in (["load", str(fifo)], ["revise", "--file", str(fifo)], ["load", "/dev/zero"]):
            refused = cli(root, *argv, timeout=60)
            lines = refused.stderr.strip().splitlines()
            assert refused.returncode == 2 and len(lines) == 1 and "not a regular file" in lines[0], answer(
                refused
            )
        assert (
            cli(root, "status", "--json", timeout=60).returncode == 0
        )  # and everyone else is still answered
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(180)  # a wait, not a measure: a loaded machine stops it slowly
    assert not (root / "server.json").exists()  # removed on the way out

    # the same commands without a server: the same output and exit codes
    cold = {
        "status": answer(cli(root, "status", "--json")),
        "human": answer(cli(root, "status")),
        "bad_target": answer(cli(root, "revise", "Some fact.", "--target", "NOPE")),
        "usage": answer(cli(root, "status", "--bogus")),
    }
    assert warm["usage"][0] == 2 and "unrecognized arguments: --bogus" in warm["usage"][2]
    assert warm["human"][1].endswith("<warm>\n") and cold["human"][1].endswith("<cold>\n")
    warm["human"] = (warm["human"][0], warm["human"][1].replace("<warm>", "<cold>"), warm["human"][2])
    assert warm == cold


def test_a_stale_server_file_is_ignored(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    (root / "server.json").write_text(
        json.dumps({"url": "http://127.0.0.1:9/", "secret": "x" * 40, "pid": int(dead.stdout)})
    )
    loaded = cli(root, "load", SEED)
    assert loaded.returncode == 0, loaded.stderr


def test_settings_are_compared_by_meaning():
    """The settings a forwarded command must share with its server are compared by what they
    select: unset and "ladybug" are one backend; FALSIFY_EMBEDDER=local and unset with nothing
    hosted configured are one embedder (the bundled model), not with an LLM key (then unset is
    the hosted one); an empty value is an unset one."""
    from memory_core.shell.remote import settings_digests

    def same(a: dict, b: dict) -> bool:
        return settings_digests(a, "s") == settings_digests(b, "s")

    assert same({}, {"FALSIFY_BACKEND": "ladybug", "FALSIFY_EMBEDDER": "local", "LLM_API_KEY": ""})
    assert same({"FALSIFY_EMBEDDER": "LOCAL"}, {"FALSIFY_EMBEDDER": ""})
    assert not same({"LLM_API_KEY": "k"}, {"LLM_API_KEY": "k", "FALSIFY_EMBEDDER": "local"})
    assert not same({"EMBEDDING_MODEL": "m"}, {"EMBEDDING_MODEL": "m", "FALSIFY_EMBEDDER": "local"})
    assert not same({}, {"FALSIFY_BACKEND": "postgres"})
    assert not same({}, {"FALSIFY_GATE1_K": "1"})
    assert same({"FALSIFY_HOME": "/a", "FALSIFY_LOCK_TIMEOUT": "0"}, {})  # not compared
    from memory_core.shell.warm_server import settings_differ

    assert settings_differ(None) == []  # a request that does not say its settings runs with the server's
    assert "FALSIFY_GATE1_K" in settings_differ(
        {"salt": "s", "digests": settings_digests({"FALSIFY_GATE1_K": "1"}, "s")}
    )

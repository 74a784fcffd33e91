"""Secrets are never printed: one redaction (memory_core.core.redaction) for every error line,
tool error, API answer, log record and crash log, tested with hostile endpoint messages.

* The pure cases: a URL password holding ``@`` or ``:``, ``Authorization`` values of any scheme
  echoed in JSON or prose, ``api_key=`` / ``"password": "..."`` assignments, provider-shaped
  keys, a registered key echoed whole or by a piece of it; FALSIFY's own messages (keys, flags)
  pass unchanged.
* The printers: the CLI's error line (``error_message``), the MCP tool error, a log record of any
  logger, the crash log.
* End to end: the real CLI against a local LLM endpoint (tests/support/llm_stub.py) that answers 401 with
  the request's ``Authorization`` header and the key echoed in its message: exit 5, and neither
  stderr nor any file of the data root holds the key.
"""

from __future__ import annotations

import io
import logging

import pytest

from memory_core.core.errors import JudgeError, error_message
from memory_core.core.redaction import MASK, redact, register

KEY = "sk-proj-Zq81hostileKEY0000abcd9f3e"
PASSWORD = "pa:ss@w0rd/x"


@pytest.fixture(autouse=True)
def registered():
    register([KEY])


HOSTILE = [
    # (text, secrets it must not show, what must stay)
    (
        f"Incorrect API key provided: Bearer {KEY}. You can find your API key at https://example",
        [KEY, "hostileKEY"],
        "Incorrect API key provided",
    ),
    (f"Incorrect API key provided: {KEY[:12]}**************{KEY[-4:]}", [KEY[:12]], "Incorrect API key"),
    (
        '{"error": {"message": "denied", "request": {"headers": {"Authorization": "Basic dXNlcjpwYXNzd29yZA=="}}}}',
        ["dXNlcjpwYXNzd29yZA"],
        '"Authorization": "',
    ),
    ("proxy said: authorization=Token abcdef1234567890; retry", ["abcdef1234567890"], "proxy said"),
    (
        "could not connect to postgresql://u:SECRET@b2@db.example:5432/x",
        ["SECRET", "b2@"],
        "db.example:5432/x",
    ),
    ("dsn postgresql://alice:pa:ss@w0rd@host/db failed", ["pa:ss", "w0rd"], "@host/db failed"),
    (
        'config {"api_key": "live-8c2f9a7d", "password": "hunter2!"}',
        ["live-8c2f9a7d", "hunter2!"],
        '"api_key": "',
    ),
    ("GET /v1?api-key=QWERTY123456&x=1 failed", ["QWERTY123456"], "failed"),
    (
        "keys leaked: sk-ant-api03-AbCdEfGh12345678 AKIAIOSFODNN7EXAMPLE ghp_0123456789abcdefghij "
        "xoxb-1234-5678-abcdefgh AIzaSyA1234567890abcdefghijklmnopqrstu hf_abcdefghijklmnopqrst",
        ["AbCdEfGh", "IOSFODNN7", "0123456789abcdefghij", "xoxb-1234", "AIzaSyA1234567890", "hf_abcdefghij"],
        "keys leaked",
    ),
    (
        "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U expired",
        ["eyJhbGciOiJIUzI1NiJ9"],
        "expired",
    ),
    (f"the tail of your key ...{KEY[-10:]} is revoked", [KEY[-10:]], "is revoked"),
]


@pytest.mark.parametrize("text,hidden,kept", HOSTILE, ids=[str(i) for i in range(len(HOSTILE))])
def test_hostile_messages_are_masked(text, hidden, kept):
    masked = redact(text)
    for secret in hidden:
        assert secret not in masked, (secret, masked)
    assert kept in masked and MASK in masked, masked


@pytest.mark.parametrize(
    "text",
    [
        "error: --target 'E_qa': no evidence with that key",
        "error: evidence[0]: key 'E_q\u0430' mixes letters of CYRILLIC, LATIN",
        "history lost: falsify.json says epoch 2, but the revision log ends at epoch 1",
        "error: the data root /tmp/x can be written by its group (mode 0775): chmod 700 /tmp/x",
        "recall: the question 'what is the token budget?' has no alive answer",
    ],
)
def test_falsify_messages_pass_unchanged(text):
    assert redact(text) == text


def test_every_printer_masks():
    error = JudgeError(f"the LLM judge failed: AuthenticationError: Incorrect API key provided: Bearer {KEY}")
    line = error_message(error)
    assert KEY not in line and line.startswith("error: the LLM judge failed") and MASK in line
    from memory_core.mcp.server import tool_error

    tool = tool_error(error)
    assert tool.is_error and KEY not in tool.content[0].text
    # the exception a Python host receives (every facade method's errors pass through speak)
    from memory_core.core.errors import speak

    spoken = speak(JudgeError(f"the LLM judge failed: Incorrect API key provided: {KEY}"), "python")
    assert KEY not in str(spoken) and MASK in str(spoken) and isinstance(spoken, JudgeError)
    # any logger's record, once the process is configured (settings.configure installs it)
    from memory_core.store.environment import redact_logs

    redact_logs()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("some.dependency")
    logger.addHandler(handler)
    try:
        logger.error("call failed with %s", f"Authorization: Bearer {KEY}")
        try:
            raise RuntimeError(f"postgresql://u:{PASSWORD}@db/x")
        except RuntimeError:
            logger.exception("connect")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert KEY not in text and "w0rd" not in text and "Traceback" in text, text


def test_the_crash_log_masks_a_password_holding_at_and_colon(tmp_path):
    from memory_core.shell import commands

    try:
        raise RuntimeError(f"could not connect to postgresql://u:{PASSWORD}@db.example/x with {KEY}")
    except RuntimeError as error:
        line = commands.internal_error(error, tmp_path)
    text = next((tmp_path / "logs").glob("internal-error-*.log")).read_text()
    for shown in (line, text):
        assert "w0rd" not in shown and "pa:ss" not in shown and KEY not in shown, shown
        assert "postgresql://u:***@db.example/x" in shown


@pytest.mark.slow
def test_a_judge_failure_echoing_the_key_prints_no_key(tmp_path_factory):
    from harness import clean_env, copy_root, loaded_root, run_cli
    from llm_stub import StubLLM

    work = tmp_path_factory.mktemp("redaction")
    root = copy_root(loaded_root(tmp_path_factory), work / "root")
    with StubLLM() as stub:
        stub.mode, stub.status = "status", 401
        stub.error_message = (
            "Incorrect API key provided: {authorization}. Key "
            + KEY
            + " (suffix "
            + KEY[-8:]
            + ") at postgresql://u:"
            + PASSWORD
            + "@db/x"
        )
        env = clean_env(
            LLM_API_KEY=KEY,
            LLM_PROVIDER="custom",
            LLM_ENDPOINT=stub.url,
            LLM_MODEL="openai/stub",
            FALSIFY_EMBEDDER="local",
            FALSIFY_JUDGE_TIMEOUT="30",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        proc = run_cli(root, "revise", "The QA report was written long after March 2021.", env=env)
        assert stub.calls() >= 1
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 5, err[-2000:]
    assert err.startswith("error: ") and MASK in err, err
    for secret in (KEY, KEY[-8:], "hostileKEY", "w0rd"):
        assert secret not in err, (secret, err)
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink() and path.stat().st_size < 50_000_000:
                assert secret.encode() not in path.read_bytes(), (secret, path)

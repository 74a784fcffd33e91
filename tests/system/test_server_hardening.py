"""The viewer server against hostile clients and bad settings (a real server on port 0,
the stand-in facade of tests/integration/test_server.py).

* Tokens are checked at start (printable ASCII without separators, 16+ characters);
  any presented token (non-ASCII too) compares without error; the cookie is named after
  the port; a ``?token=`` redirect stays on this server.
* Static files answer HEAD; an over-long path is a 404, not a 500.
* Half-sent requests are closed after the read timeout; connections beyond the cap get 503.
* A bad ``--port``/``--host`` or a busy port is one line and exit 2.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import subprocess
import sys
from urllib.parse import quote

import pytest

from memory_core.web import server as srv
from test_server import StandInApp, request, running, setting  # noqa: F401  (the fixtures)

TOKEN = "hardening-token-0123456789"


@pytest.mark.parametrize(
    "bad",
    [
        "short-token",
        "tøken-with-non-ascii-0123",
        "token;with;semicolons-0123",
        "token with spaces 0123456789",
        "token,comma-0123456789",
        'quote"token-0123456789',
    ],
)
def test_unusable_tokens_are_refused_at_start(bad, setting, capsys):  # noqa: F811
    setting("FALSIFY_TOKEN", None)
    with pytest.raises(srv.TokenRequired):
        srv.make_server(StandInApp(), host="127.0.0.1", port=0, token=bad)
    assert srv.run_server(None, "127.0.0.1", 0, token=bad) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: the access token") and "Traceback" not in "\n".join(err)


def test_a_token_file(tmp_path, setting):  # noqa: F811
    setting("FALSIFY_TOKEN", None)
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    setting("FALSIFY_TOKEN_FILE", str(path))
    assert srv.resolve_token("0.0.0.0", None) == TOKEN


def test_a_bad_setting_is_one_line_and_exit_2(tmp_path):
    """A FALSIFY_* value that does not parse stops the server (a process of its own, which
    reads its settings once) before it binds or opens the root, naming the variable."""
    env = dict(os.environ, FALSIFY_LLM_CONCURRENCY="many")
    env.pop("FALSIFY_TOKEN", None)
    proc = subprocess.run(
        [sys.executable, "-m", "memory_core.web.server", "--root", str(tmp_path / "root"), "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: FALSIFY_LLM_CONCURRENCY='many': expected a whole number, 1 to 256"
    ], proc.stderr
    assert not (tmp_path / "root").exists()


def test_presented_tokens_never_fail_and_the_cookie_is_per_port(running):  # noqa: F811
    one, two = running(token=TOKEN), running(token=TOKEN)
    for given in ("t\u00f8ken", "%C3%B8", "x" * 5000, "a;b c", ""):
        assert (
            request(
                one,
                "GET",
                "/api/graph",
                headers={"Authorization": f"Bearer {given}".encode("utf-8").decode("latin-1")},
            )[0]
            == 401
        )
        assert request(one, "GET", f"/?token={quote(given)}")[0] == 401
    cookies = []
    for server in (one, two):
        status, headers, _ = request(server, "GET", f"/?token={TOKEN}")
        assert status == 303
        cookie = headers["set-cookie"]
        assert cookie.startswith(f"falsify_token_{server.server_address[1]}={TOKEN};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        cookies.append(cookie.split(";")[0])
    assert cookies[0] != cookies[1]
    assert (
        request(two, "GET", "/api/graph", headers={"Cookie": cookies[0]})[0] == 401
    )  # another port's cookie
    assert request(two, "GET", "/api/graph", headers={"Cookie": cookies[1]})[0] == 200


def test_a_token_redirect_stays_on_this_server(running):  # noqa: F811
    server = running(token=TOKEN)
    redirected = 0
    for path in (
        "//evil.example/x.html",
        "/\\evil.example/x.html",
        "///evil.example/",
        "/%2F%2Fevil.example/",
    ):
        status, headers, _ = request(server, "GET", f"{path}?token={TOKEN}")
        if status == 303:
            redirected += 1
            location = headers["location"]
            assert location.startswith("/") and not location.startswith(("//", "/\\")), location
    assert redirected >= 3


def test_head_of_static_files_and_long_paths(running):  # noqa: F811
    server = running()
    status, headers, data = request(server, "HEAD", "/graph.html")
    got = request(server, "GET", "/graph.html")
    assert status == 200 and data == b"" and headers["content-length"] == str(len(got[2])) and got[0] == 200
    for path in ("/" + "a" * 300 + ".html", "/" + "a" * 5000 + ".js", "/" + "%C3%A9" * 200 + ".css"):
        status, headers, _ = request(server, "GET", path)
        assert status == 404 and headers["content-type"].startswith("application/json")


def test_half_sent_requests_are_closed_and_connections_are_capped(running, monkeypatch):  # noqa: F811
    monkeypatch.setattr(srv, "READ_TIMEOUT_S", 0.5)
    monkeypatch.setattr(srv, "MAX_CONNECTIONS", 3)
    server = running()
    host, port = server.server_address[:2]
    half = socket.create_connection((host, port), timeout=30)
    half.sendall(b"GET /api/graph HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
    assert half.recv(100) == b""  # closed by the server (the read timeout), not by our 30 s
    half.close()
    idle = [socket.create_connection((host, port), timeout=30) for _ in range(3)]
    try:
        for s in idle:
            s.sendall(b"GET /api/graph HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        # over the cap: the connection sending its request the longest is closed, the new one answered
        assert request(server, "GET", "/api/graph")[0] == 200
        for s in idle:
            assert _closed(s)  # and the other half-sent ones are closed in time
    finally:
        for s in idle:
            s.close()
    assert request(server, "GET", "/api/graph")[0] == 200


def _closed(sock) -> bool:
    """Whether the server closed ``sock`` (an end of file, or a reset: it closed with our bytes unread)."""
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True


def _read_response(sock) -> int:
    """Read one whole HTTP response from ``sock`` (Content-Length framed); its status."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed before the response")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(
            line.split(b":", 1)[1]
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
    )
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed in the body")
        body += chunk
    return int(head.split(b" ")[1])


SLOW_CLIENTS = 20  # more than both caps set below
DRIP_LIMIT = 100  # bytes a slow client drips at most, one every DRIP_S: the test is bounded in time
DRIP_S = 0.1


def _slow_client(host: str, port: int, outcome: list, dripping: threading.Event) -> None:
    """One whole request and its answer, then the next request's headers a byte at a time, until
    the server closes the connection (or DRIP_LIMIT bytes: the server never did).
    Records (the first answer's status, how it ended)."""
    first = None
    try:
        sock = socket.create_connection((host, port), timeout=10)
        sock.sendall(b"GET /api/graph HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = _read_response(sock)
    except (ConnectionError, OSError) as error:
        outcome.append((first, f"no first answer ({type(error).__name__})"))
        dripping.set()
        return
    dripping.set()
    try:
        sock.settimeout(DRIP_S)
        for byte in (b"GET /api/graph HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * DRIP_LIMIT)[
            :DRIP_LIMIT
        ]:
            sock.sendall(bytes([byte]))
            try:
                if sock.recv(100) == b"":
                    outcome.append((first, "closed by the server"))
                    return
            except socket.timeout:
                continue
        outcome.append((first, "never closed"))
    except (ConnectionError, OSError):  # a reset: closed by the server while we were sending
        outcome.append((first, "closed by the server"))
    finally:
        sock.close()


def test_a_slow_client_locks_no_one_out(running, monkeypatch):  # noqa: F811
    """Loopback only, bounded in count and time: 20 keep-alive connections (the caps set to 12 in
    all and 8 per client address) opened one after another, each sending one whole request, reading
    its answer, then dripping the next request's headers a byte every 0.1 s. Every one of them is
    answered first; meanwhile the page, the JSON API, MCP (``initialize``) and the warm CLI's
    endpoint answer every one of 20 requests on fresh connections; and the server closes every
    dripping connection (shed to make room, or past the per-request read deadline: 1 s here,
    counted from each request's first byte, not from the connection's opening)."""
    monkeypatch.setattr(srv, "READ_TIMEOUT_S", 1.0)
    monkeypatch.setattr(srv, "MAX_CONNECTIONS", 12)
    monkeypatch.setattr(srv, "MAX_PER_CLIENT", 8)

    async def warm_cli(gate, body, stdin):  # the warm CLI's runner (the route, its secret and body are real)
        return {"stdout": "ok\n", "stderr": "", "exit": 0}

    server = running(mcp=True, cli=warm_cli)
    host, port = server.server_address[:2]
    outcomes: list = []
    threads = []
    for _ in range(SLOW_CLIENTS):  # one after another: each is answered, then drips
        dripping = threading.Event()
        thread = threading.Thread(target=_slow_client, args=(host, port, outcomes, dripping), daemon=True)
        thread.start()
        threads.append(thread)
        dripping.wait(10)
    secret = server.app.cli_secret
    mcp_init = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    ).encode()
    asks = [
        ("GET", "/", None, {}),
        ("GET", "/api/graph", None, {}),
        (
            "POST",
            "/mcp",
            mcp_init,
            {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        ),
        (
            "POST",
            "/api/cli",
            json.dumps({"argv": ["status"], "cwd": "/"}).encode(),
            {"Content-Type": "application/json", "Authorization": f"Bearer {secret}"},
        ),
    ]
    answers = [request(server, *asks[i % len(asks)])[0] for i in range(20)]
    for thread in threads:
        thread.join(DRIP_LIMIT * DRIP_S + 15)
    assert answers == [200] * 20, answers
    assert len(outcomes) == SLOW_CLIENTS, outcomes
    assert all(first == 200 and how == "closed by the server" for first, how in outcomes), outcomes


@pytest.mark.parametrize(
    "host,port", [("127.0.0.1", 99999), ("127.0.0.1", -5), ("999.1.1.1", 0), ("no such host .invalid", 0)]
)
def test_bad_host_or_port_is_one_line_exit_2(host, port, capsys):
    assert srv.run_server(None, host, port, token=TOKEN if host != "127.0.0.1" else None) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len([line for line in err if line.startswith("error:")]) == 1 and "Traceback" not in "\n".join(
        err
    ), err


def test_a_busy_port_is_one_line_exit_2(capsys):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        with pytest.raises(srv.CannotListen, match="cannot listen on 127.0.0.1"):
            srv.make_server(StandInApp(), host="127.0.0.1", port=taken.getsockname()[1])
        assert srv.run_server(None, "127.0.0.1", taken.getsockname()[1]) == 2
        assert capsys.readouterr().err.strip().startswith("error: cannot listen on 127.0.0.1:")
    finally:
        taken.close()


def test_a_repeated_json_field_is_refused(running):  # noqa: F811
    from test_server import post_json

    server = running()
    status, _, data = post_json(server, b'{"fact": "first", "fact": "second"}')
    assert status == 400 and b"'fact' appears twice" in data
    status, _, data = post_json(server, b'{"fact": NaN}')
    assert status == 400


def _open_stream(host, port):
    sock = socket.create_connection((host, port), timeout=10)
    sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert sock.recv(4096).startswith(b"HTTP/1.1 200")  # the stream's head (and its hello)
    return sock


def test_busy_connections_are_never_shed_and_streams_are_capped_per_client(running, monkeypatch):  # noqa: F811
    """Connections being answered (event streams) are never closed to make room: beyond the cap a
    new connection gets 503 at once; and a client opens at most MAX_STREAMS_PER_CLIENT streams."""
    from memory_core.web import app as web_app

    monkeypatch.setattr(srv, "MAX_PER_CLIENT", 2)
    server = running()
    host, port = server.server_address[:2]
    streams = [_open_stream(host, port) for _ in range(2)]
    try:
        status, _, body = request(server, "GET", "/api/graph")
        assert status == 503 and body == b"too many connections; try again later\n"
        for sock in streams:  # still served
            sock.settimeout(0.2)
            try:
                assert sock.recv(10) != b""
            except socket.timeout:
                pass
    finally:
        for sock in streams:
            sock.close()
    monkeypatch.setattr(srv, "MAX_PER_CLIENT", 32)
    monkeypatch.setattr(web_app, "MAX_STREAMS_PER_CLIENT", 1)
    first = _open_stream(host, port)
    try:
        status, _, body = request(server, "GET", "/api/events")
        assert status == 503 and b"too many open event streams" in body
    finally:
        first.close()

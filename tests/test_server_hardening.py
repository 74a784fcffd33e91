"""The viewer server against hostile clients and bad settings (a real server on port 0,
the stand-in facade of tests/test_server.py).

* Tokens are checked at start (printable ASCII without separators, 16+ characters);
  any presented token (non-ASCII too) compares without error; the cookie is named after
  the port; a ``?token=`` redirect stays on this server.
* Static files answer HEAD; an over-long path is a 404, not a 500.
* Half-sent requests are closed after the read timeout; connections beyond the cap get 503.
* A bad ``--port``/``--host`` or a busy port is one line and exit 2.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from urllib.parse import quote

import pytest

from memory_core.web import server as srv
from test_server import StandInApp, request, running, setting  # noqa: F401  (the fixtures)

TOKEN = "hardening-token-0123456789"


@pytest.mark.parametrize("bad", ["short-token", "tøken-with-non-ascii-0123", "token;with;semicolons-0123",
                                 "token with spaces 0123456789", "token,comma-0123456789", 'quote"token-0123456789'])
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
    proc = subprocess.run([sys.executable, "-m", "memory_core.web.server", "--root", str(tmp_path / "root"),
                           "--port", "0"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: FALSIFY_LLM_CONCURRENCY='many': expected a whole number, 1 or more"], proc.stderr
    assert not (tmp_path / "root").exists()


def test_presented_tokens_never_fail_and_the_cookie_is_per_port(running):  # noqa: F811
    one, two = running(token=TOKEN), running(token=TOKEN)
    for given in ("t\u00f8ken", "%C3%B8", "x" * 5000, "a;b c", ""):
        assert request(one, "GET", "/api/graph", headers={"Authorization": f"Bearer {given}".encode("utf-8").decode(
            "latin-1")})[0] == 401
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
    assert request(two, "GET", "/api/graph", headers={"Cookie": cookies[0]})[0] == 401  # another port's cookie
    assert request(two, "GET", "/api/graph", headers={"Cookie": cookies[1]})[0] == 200


def test_a_token_redirect_stays_on_this_server(running):  # noqa: F811
    server = running(token=TOKEN)
    redirected = 0
    for path in ("//evil.example/x.html", "/\\evil.example/x.html", "///evil.example/", "/%2F%2Fevil.example/"):
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
        assert request(server, "GET", "/api/graph")[0] == 503  # over the cap: refused at once
        for s in idle:
            assert s.recv(100) == b""  # and the idle ones are closed in time
    finally:
        for s in idle:
            s.close()
    assert request(server, "GET", "/api/graph")[0] == 200


@pytest.mark.parametrize("host,port", [("127.0.0.1", 99999), ("127.0.0.1", -5), ("999.1.1.1", 0),
                                       ("no such host .invalid", 0)])
def test_bad_host_or_port_is_one_line_exit_2(host, port, capsys):
    assert srv.run_server(None, host, port, token=TOKEN if host != "127.0.0.1" else None) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len([line for line in err if line.startswith("error:")]) == 1 and "Traceback" not in "\n".join(err), err


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

"""The viewer's HTTP server: routing and safety, against a real server on port 0.

These tests check the server's own behaviour (paths, bodies, headers, the one
event loop and its lock), so the facade here is a small stand-in; the browser
tests drive the real facade."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from memory_core.store import settings
from memory_core.web import server as srv

UI = Path(__file__).resolve().parents[2] / "memory_core" / "web" / "static"  # the page: package data


class StandInApp:
    """Records which thread and loop each call ran on, and whether calls overlapped."""

    def __init__(self):
        self.calls = []
        self.threads = set()
        self.loops = set()
        self.active = 0
        self.max_active = 0
        self.closed = False

    async def _enter(self, name, *args):
        self.calls.append((name, args))
        self.threads.add(threading.get_ident())
        self.loops.add(id(asyncio.get_running_loop()))
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        await asyncio.sleep(0.02)
        self.active -= 1

    async def snapshot(self):
        await self._enter("snapshot")
        return {
            "nodes": [{"key": "Q", "type": "question", "state": "alive", "text": "Q?"}],
            "edges": [],
            "epoch": 1,
        }

    async def recall(self, question, **kwargs):
        await self._enter("recall", question, *sorted(kwargs.items()))
        return {"question": question, "falsify": {}, "baseline": {}, "verdict": "", "scoreboard": {}}

    def revision_log(self):
        self.calls.append(("revision_log", ()))
        return [
            {"epoch": 1, "key": "E", "rule": "r", "from": "alive", "to": "refuted", "cause": "c", "fact": "f"}
        ]

    def default_question(self):
        return "Default question?"

    async def revise(self, fact, triple=None, target=None, key=None):
        await self._enter("revise", fact, triple, target)
        if fact == "reject me":
            raise ValueError("that fact is not usable")
        if fact == "explode":
            raise RuntimeError("secret internals")
        return {"fact": fact, "triple": triple, "target": target, "key": key, "refuted": [], "epoch": 2}

    def close(self):
        self.closed = True


@pytest.fixture
def running():
    """Start servers on port 0 in threads; shut them all down afterwards."""
    started = []

    def start(app=None, **kwargs):
        app = app if app is not None else StandInApp()
        server = srv.make_server(app, port=0, **kwargs)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        started.append((server, thread))
        return server

    yield start
    for server, thread in started:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def server(running):
    return running()


def request(server, method, path, body=None, headers=None):
    """A raw request: the path is sent exactly as given (no normalisation)."""
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        headers = dict(headers or {})
        conn.putrequest(method, path, skip_host="Host" in headers, skip_accept_encoding=True)
        if body is not None:
            headers.setdefault("Content-Length", str(len(body)))
        for key, value in headers.items():
            conn.putheader(key, value)
        conn.endheaders()
        if body is not None:
            conn.send(body)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    finally:
        conn.close()


def post_json(server, payload, **kw):
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", **kw.pop("headers", {})}
    return request(server, "POST", "/api/revise", body, headers)


def assert_json_error(status, headers, data, expected_status):
    assert status == expected_status, data
    assert headers["content-type"] == "application/json; charset=utf-8"
    assert isinstance(json.loads(data)["error"], str)
    return json.loads(data)["error"]


# -- static files and headers ---------------------------------------------------


def test_index_and_assets_have_types_and_security_headers(server):
    for path, ctype in [
        ("/", "text/html; charset=utf-8"),
        ("/graph.html", "text/html; charset=utf-8"),
        ("/app.js", "text/javascript; charset=utf-8"),
        ("/style.css", "text/css; charset=utf-8"),
    ]:
        status, headers, data = request(server, "GET", path)
        assert status == 200, path
        assert headers["content-type"] == ctype
        assert headers["x-content-type-options"] == "nosniff"
        csp = headers["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    status, _, data = request(server, "GET", "/")
    assert data == (UI / "graph.html").read_bytes()


def test_page_loads_nothing_from_elsewhere_and_has_no_inline_script():
    html = (UI / "graph.html").read_text()
    for attr in ("src=", "href="):
        for part in html.split(attr)[1:]:
            value = part[1:].split(part[0])[0]
            assert value.startswith("/") or value.startswith("data:"), value
    assert "<script>" not in html and "onload" not in html
    assert '<script type="module" src="/app.js"></script>' in html  # native ES modules, no build step
    modules = sorted(p.name for p in UI.glob("*.js"))
    assert {"app.js", "api.js", "model.js", "paint.js", "panels.js"} <= set(modules)
    for name in modules + ["style.css", "graph.html"]:
        text = (UI / name).read_text()
        if name.endswith(".js"):  # modern syntax: modules, no var, imports only from this folder
            assert "var " not in text and '"use strict"' not in text, name
            for spec in [
                line.split(" from ")[1].strip(' ";')
                for line in text.splitlines()
                if line.startswith("import ")
            ]:
                assert spec.startswith("./") and spec.endswith(".js"), (name, spec)
        assert "http://" not in text and "https://" not in text, name
        assert "innerHTML" not in text and "dangerouslySetInnerHTML" not in text, name


def test_vendor_files_are_an_allow_list(server):
    for name in srv.VENDOR:
        status, headers, data = request(server, "GET", "/vendor/" + name)
        assert status == 200, name
        assert headers["content-type"] == "text/javascript; charset=utf-8"
        assert data[:200].strip(), name
    for path in [
        "/vendor/react.development.js",
        "/vendor/",
        "/vendor/../package.json",
        "/vendor/%2e%2e/package.json",
        "/vendor/react/package.json",
        "/node_modules/react/umd/react.production.min.js",
    ]:
        assert_json_error(*request(server, "GET", path), 404)


def test_vendor_files_come_from_the_package_copy_else_node_modules(running, tmp_path):
    """/vendor/ serves the package's static/vendor/ copy (made by `make ui`), falls back to a
    checkout's ui/node_modules, and without either says which command fixes it."""
    ui, modules = tmp_path / "ui", tmp_path / "node_modules"
    ui.mkdir()
    shutil.copy(UI / "graph.html", ui / "graph.html")
    server = running(ui_dir=ui)
    server.app.node_modules = modules
    name = "react.production.min.js"
    message = assert_json_error(*request(server, "GET", "/vendor/" + name), 404)
    assert name in message and "make ui" in message
    (modules / "react" / "umd").mkdir(parents=True)
    (modules / srv.VENDOR[name]).write_text("from node_modules")
    assert request(server, "GET", "/vendor/" + name)[::2] == (200, b"from node_modules")
    (ui / "vendor").mkdir()
    (ui / "vendor" / name).write_text("from the package")
    assert request(server, "GET", "/vendor/" + name)[::2] == (200, b"from the package")
    assert_json_error(*request(server, "GET", "/vendor"), 404)  # the folder itself is not a page


def test_make_ui_copies_exactly_the_allow_list(tmp_path):
    from memory_core.web import vendor

    modules, target = tmp_path / "node_modules", tmp_path / "vendor"
    with pytest.raises(FileNotFoundError, match="npm ci"):
        vendor.copy_from_node_modules(modules, target)
    for rel in vendor.VENDOR.values():
        (modules / rel).parent.mkdir(parents=True, exist_ok=True)
        (modules / rel).write_text(rel)
    (modules / "react" / "umd" / "react.development.js").write_text("not allow-listed")
    target.mkdir()
    (target / "stale.js").write_text("left from an older allow-list")
    vendor.copy_from_node_modules(modules, target)
    copied = {p.name: p.read_text() for p in target.iterdir()}
    licences = copied.pop(vendor.LICENSES)  # the builds' licences ship beside them
    assert copied == vendor.VENDOR
    assert "react" in licences


@pytest.mark.parametrize(
    "path",
    [
        "/../memory_core/server.py",
        "/%2e%2e/memory_core/server.py",
        "/%2E%2E%2Fmemory_core%2Fserver.py",
        "/..%2f..%2fetc%2fpasswd",
        "/%252e%252e/memory_core/server.py",
        "/..\\memory_core\\server.py",
        "/%5c..%5cmemory_core%5cserver.py",
        "//etc/passwd",
        "/%2fetc%2fpasswd",
        "/etc/passwd",
        "/package.json",
        "/package-lock.json",
        "/node_modules",
        "/node_modules/react/package.json",
        "/.gitignore",
        "/graph.html%00.js",
        "/%ff%fe.js",
        "/nope.html",
    ],
)
def test_traversal_and_non_ui_paths_are_404(server, path):
    assert_json_error(*request(server, "GET", path), 404)


def test_symlink_out_of_ui_is_404(running, tmp_path):
    ui = tmp_path / "ui"
    ui.mkdir()
    shutil.copy(UI / "graph.html", ui / "graph.html")
    secret = tmp_path / "secret.js"
    secret.write_text("SECRET")
    (ui / "leak.js").symlink_to(secret)
    (ui / "inside.js").write_text("ok")
    server = running(ui_dir=ui)
    assert request(server, "GET", "/inside.js")[0] == 200
    status, headers, data = request(server, "GET", "/leak.js")
    assert status == 404 and b"SECRET" not in data


# -- API ------------------------------------------------------------------------


def test_graph_log_and_scoreboard(server):
    status, headers, data = request(server, "GET", "/api/graph")
    assert status == 200 and headers["content-type"] == "application/json; charset=utf-8"
    assert json.loads(data)["nodes"][0]["key"] == "Q"
    assert headers["x-content-type-options"] == "nosniff" and "content-security-policy" in headers
    status, _, data = request(server, "GET", "/api/log")
    assert status == 200 and json.loads(data)[0]["to"] == "refuted"
    status, _, data = request(server, "GET", "/api/scoreboard")
    assert status == 200 and json.loads(data)["question"] == "Default question?"
    status, _, data = request(server, "GET", "/api/scoreboard?q=Why%20%3Cb%3E%3F")
    assert status == 200 and json.loads(data)["question"] == "Why <b>?"


def test_scoreboard_without_any_question_lets_the_facade_choose(running):
    app = StandInApp()
    app.default_question = lambda: None
    server = running(app)
    status, _, data = request(server, "GET", "/api/scoreboard?q=%20")
    assert status == 200 and app.calls[-1] == ("recall", ("",))
    assert assert_json_error(*post_json(server, {"fact": "reject me"}), 400) == "that fact is not usable"


def test_scoreboard_pins_an_inquiry(running):
    app = StandInApp()
    server = running(app)
    status, _, _ = request(server, "GET", "/api/scoreboard?inquiry=Q_bridge")
    assert status == 200 and app.calls[-1] == ("recall", ("", ("inquiry", "Q_bridge")))  # its own question
    status, _, _ = request(
        server, "GET", "/api/scoreboard?q=How%20heavy%3F&inquiry=Q_bridge&as_of=2020-01-01"
    )
    assert status == 200 and app.calls[-1] == (
        "recall",
        ("How heavy?", ("as_of", "2020-01-01"), ("inquiry", "Q_bridge")),
    )
    status, _, _ = request(server, "GET", "/api/scoreboard?inquiry=a&inquiry=b")
    assert status == 400


def test_revise_passes_fields_through(server):
    from memory_core.core.requests import readable_key

    status, headers, data = post_json(
        server, {"fact": "  A new fact.  ", "triple": "s|p|o", "target": "E_qa"}
    )
    assert status == 200 and headers["content-type"] == "application/json; charset=utf-8"
    # no key given: the viewer's readable key, derived from the fact's words
    assert json.loads(data) == {
        "fact": "A new fact.",
        "triple": "s|p|o",
        "target": "E_qa",
        "key": readable_key("A new fact."),
        "refuted": [],
        "epoch": 2,
    }
    assert readable_key("A new fact.").startswith("F_new_fact_")
    status, _, data = post_json(
        server, {"fact": "Only a fact", "triple": None, "target": "", "key": "F_mine"}
    )
    assert status == 200 and json.loads(data)["triple"] is None and json.loads(data)["target"] is None
    assert json.loads(data)["key"] == "F_mine"


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"",
        b"\xff\xfe",
        b"[1, 2]",
        b'"fact"',
        b"{}",
        b'{"fact": ""}',
        b'{"fact": "   "}',
        b'{"fact": 42}',
        b'{"fact": "x", "triple": 7}',
        b'{"fact": "x", "target": ["E"]}',
        b'{"fact": "x", "extra": 1}',
    ],
)
def test_bad_revise_bodies_are_400(server, body):
    assert_json_error(*post_json(server, body), 400)


def test_a_fact_no_revision_may_carry_is_400_naming_it_before_a_key_is_derived(running):
    """Without a key the route derives a readable one from the fact's words: from the checked
    fact only, so a lone surrogate (a JSON escape no UTF-8 text can hold) is a 400 naming
    ``fact``, as ``source`` or ``key`` would be, and the facade is never called."""
    app = StandInApp()
    server = running(app)
    for body, words in (
        (b'{"fact": "The QA report was back-dated \\ud800", "target": "E_qa"}', "lone surrogate U+D800"),
        (b'{"fact": "A NUL \\u0000 in a fact"}', "control character (U+0000"),
    ):
        error = assert_json_error(*post_json(server, body), 400)
        assert error.startswith("fact: ") and words in error, error
        assert json.loads(post_json(server, body)[2])["field"] == "fact"
    assert app.calls == []


@pytest.mark.parametrize(
    "path, name",
    [
        ("/api/scoreboard?q=a%ED%A0%80b", "q"),  # an encoded surrogate
        ("/api/scoreboard?q=%FFwho", "q"),
        ("/api/scoreboard?q=who&inquiry=Q%C3", "inquiry"),  # a character cut short
        ("/api/scoreboard?as_of=2020-01-0%FF", "as_of"),
        ("/api/graph?epoch=%FF1", "epoch"),
    ],
)
def test_a_query_parameter_that_is_not_utf8_is_400_naming_it(running, path, name):
    """A parameter whose percent-decoded bytes are not UTF-8 is refused naming it, as a POST
    body's and a command line's are, never answered as U+FFFD replacement characters."""
    app = StandInApp()
    server = running(app)
    status, headers, data = request(server, "GET", path)
    error = assert_json_error(status, headers, data, 400)
    assert error.startswith(f"{name}: not valid UTF-8") and json.loads(data)["field"] == name, data
    assert app.calls == []
    # UTF-8 text, percent-encoded or as '+' for a space, is read as it was typed
    status, _, data = request(server, "GET", "/api/scoreboard?q=%C3%89t%C3%A9+%E2%80%94+who%3F&as_of=")
    assert status == 200 and json.loads(data)["question"] == "Été — who?"


def test_revise_needs_json_content_type(server):
    body = json.dumps({"fact": "x"}).encode()
    for ctype in ("text/plain", "application/x-www-form-urlencoded", None):
        headers = {"Content-Type": ctype} if ctype else {}
        assert "Content-Type" in assert_json_error(
            *request(server, "POST", "/api/revise", body, headers), 400
        )


def test_revise_value_error_is_400_and_other_errors_do_not_leak(server):
    assert assert_json_error(*post_json(server, {"fact": "reject me"}), 400) == "that fact is not usable"
    message = assert_json_error(*post_json(server, {"fact": "explode"}), 500)
    assert "secret" not in message


def test_oversized_body_is_413(running):
    server = running()
    big = json.dumps({"fact": "x" * (64 * 1024)}).encode()
    message = assert_json_error(*post_json(server, big), 413)
    assert "too large" in message
    small = running(max_body=100)
    assert_json_error(*post_json(small, {"fact": "y" * 200}), 413)
    assert post_json(small, {"fact": "short"})[0] == 200


def test_missing_length_and_chunked_bodies_are_refused(server):
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=10)
    conn.request(
        "POST",
        "/api/revise",
        body=iter([b'{"fact": "x"}']),
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
    )
    resp = conn.getresponse()
    assert resp.status == 411 and "error" in json.loads(resp.read())
    conn.close()
    assert_json_error(
        *request(server, "POST", "/api/revise", None, {"Content-Type": "application/json"}), 411
    )


def test_unknown_routes_are_404_json(server):
    for method, path in [
        ("GET", "/api/nope"),
        ("POST", "/api/nope"),
        ("GET", "/api"),
        ("GET", "/api/graph/x"),
    ]:
        assert_json_error(*request(server, method, path, b"{}" if method == "POST" else None), 404)


def test_wrong_methods_are_405(server):
    cases = [
        ("POST", "/api/graph", "GET"),
        ("GET", "/api/revise", "POST"),
        ("DELETE", "/api/revise", "POST"),
        ("PUT", "/api/log", "GET"),
        ("POST", "/", "GET, HEAD"),
        ("PUT", "/app.js", "GET, HEAD"),
        ("OPTIONS", "/api/revise", "POST"),
    ]
    for method, path, allowed in cases:
        status, headers, data = request(server, method, path, b"{}" if method in ("POST", "PUT") else None)
        assert_json_error(status, headers, data, 405)
        assert headers["allow"] == allowed
    status, headers, data = request(server, "HEAD", "/api/graph")
    assert status == 405 and data == b""


def test_foreign_host_and_cross_origin_are_refused(server):
    host, port = server.server_address[:2]
    assert_json_error(*request(server, "GET", "/api/graph", headers={"Host": f"evil.example:{port}"}), 403)
    assert request(server, "GET", "/api/graph", headers={"Host": f"localhost:{port}"})[0] == 200
    status = post_json(server, {"fact": "x"}, headers={"Origin": "http://evil.example"})
    assert_json_error(*status, 403)
    assert post_json(server, {"fact": "x"}, headers={"Origin": f"http://{host}:{port}"})[0] == 200


# -- the one loop and its lock ----------------------------------------------------


def test_calls_run_one_at_a_time_on_one_loop_thread(running):
    app = StandInApp()
    server = running(app)
    jobs = [
        lambda: request(server, "GET", "/api/graph"),
        lambda: post_json(server, {"fact": "f"}),
        lambda: request(server, "GET", "/api/scoreboard?q=q"),
    ] * 6
    with ThreadPoolExecutor(max_workers=9) as pool:
        results = list(pool.map(lambda job: job()[0], jobs))
    assert results == [200] * len(jobs)
    assert app.max_active == 1
    assert len(app.threads) == 1 and len(app.loops) == 1
    assert threading.get_ident() not in app.threads


def test_a_factory_is_opened_in_the_loop_and_closed_with_the_server(running):
    made = []

    async def open_app():
        app = StandInApp()
        app.opened_on = threading.get_ident()
        made.append(app)
        return app

    server = running(open_app)
    assert request(server, "GET", "/api/graph")[0] == 200
    app = made[0]
    assert app.threads == {app.opened_on}
    server.shutdown()
    server.server_close()
    assert app.closed


@pytest.fixture
def setting():
    """``setting(NAME, value or None)``: set (or unset) a variable and read the settings again,
    as a new command would; the variables and the settings are restored afterwards."""
    saved: dict = {}

    def change(name: str, value) -> None:
        saved.setdefault(name, os.environ.get(name))
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
        settings.reload()

    yield change
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    settings.reload()


def test_beyond_loopback_a_token_is_required(setting):
    setting("FALSIFY_TOKEN", None)
    with pytest.raises(srv.TokenRequired, match="token"):
        srv.make_server(StandInApp(), host="0.0.0.0", port=0)
    server = srv.make_server(StandInApp(), host="0.0.0.0", port=0, token="t0ken-0123456789abc")
    assert server.token == "t0ken-0123456789abc"
    server.server_close()
    setting("FALSIFY_TOKEN", "from-env-0123456789")
    server = srv.make_server(StandInApp(), host="0.0.0.0", port=0)
    assert server.token == "from-env-0123456789"
    server.server_close()
    server = srv.make_server(StandInApp(), host="127.0.0.1", port=0)  # loopback: FALSIFY_TOKEN still applies
    assert server.token == "from-env-0123456789"
    server.server_close()
    setting("FALSIFY_TOKEN", None)
    server = srv.make_server(StandInApp(), host="127.0.0.1", port=0)
    assert server.token is None
    server.server_close()


TOKEN = "s3cret-token-0123456"


def test_token_none_wrong_right_and_cookie(running, monkeypatch):
    from memory_core.web import guard

    compared = []
    real = guard.hmac.compare_digest
    monkeypatch.setattr(guard.hmac, "compare_digest", lambda a, b: compared.append(1) or real(a, b))
    server = running(token=TOKEN)
    for headers in (
        {},
        {"Authorization": "Bearer nope"},
        {"Authorization": f"Bearer {TOKEN}x"},
        {"Authorization": TOKEN},
        {"Cookie": "falsify_token=nope"},
    ):
        for path in ("/api/graph", "/app.js", "/api/events"):
            status, got, data = request(server, "GET", path, headers=headers)
            assert status == 401, (path, headers)
            assert "token" in json.loads(data)["error"] and got["www-authenticate"].startswith("Bearer")
        assert post_json(server, {"fact": "x"}, headers=headers)[0] == 401
    assert compared, "tokens are compared with hmac.compare_digest (constant time)"
    # the page: a clear message instead of the viewer
    status, headers, data = request(server, "GET", "/")
    assert status == 401 and headers["content-type"] == "text/html; charset=utf-8"
    assert b"access token" in data and b"<script" not in data
    # right token as a bearer
    assert request(server, "GET", "/api/graph", headers={"Authorization": f"Bearer {TOKEN}"})[0] == 200
    assert post_json(server, {"fact": "x"}, headers={"Authorization": f"Bearer {TOKEN}"})[0] == 200
    # a one-time ?token= on the page URL sets an HttpOnly cookie and drops the token from the address
    status, headers, _ = request(server, "GET", f"/?token={TOKEN}&q=1")
    assert status == 303 and headers["location"] == "/?q=1"
    cookie = headers["set-cookie"]
    assert (
        cookie.startswith(f"falsify_token_{server.server_address[1]}={TOKEN};")
        and "HttpOnly" in cookie
        and "SameSite=Strict" in cookie
    )
    jar = {"Cookie": cookie.split(";")[0]}
    assert request(server, "GET", "/", headers=jar)[0] == 200
    assert request(server, "GET", "/api/graph", headers=jar)[0] == 200
    assert request(server, "GET", "/?token=wrong")[0] == 401


def test_loopback_without_a_token_needs_none(server):
    assert server.token is None
    assert request(server, "GET", "/")[0] == 200 and request(server, "GET", "/api/graph")[0] == 200


def read_events(server, headers=None, count=2, timeout=10):
    """Open /api/events and return a function reading the next ``count`` events."""
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    conn.request("GET", "/api/events", headers=headers or {})
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("content-type") == "text/event-stream; charset=utf-8"

    def next_event():
        name, data = None, []
        while True:
            line = resp.fp.readline().decode()
            if not line:
                raise EOFError
            line = line.rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif not line and name:
                return name, json.loads("\n".join(data))

    return conn, next_event


def test_every_viewer_hears_each_change(server):
    streams = [read_events(server) for _ in range(2)]
    for _, next_event in streams:
        assert next_event() == ("hello", {"version": 0})
    assert post_json(server, {"fact": "A new fact.", "target": "E"})[0] == 200
    for conn, next_event in streams:
        name, change = next_event()
        assert name == "change" and change["version"] == 1 and change["kind"] == "revise"
        assert change["result"]["fact"] == "A new fact." and change["result"]["epoch"] == 2
        conn.close()
    # reads announce nothing; a refused revision neither
    assert request(server, "GET", "/api/graph")[0] == 200
    assert post_json(server, {"fact": "reject me"})[0] == 400
    conn, next_event = read_events(server)
    assert next_event() == ("hello", {"version": 1})
    conn.close()


def test_warm_cli_route_needs_the_servers_secret(running):
    seen = []

    async def runner(gate, args, stdin):
        seen.append((args, stdin))
        return {"stdout": "out\n", "stderr": "", "exit": 0}

    server = running(cli=runner)
    body = json.dumps({"argv": ["status", "--json"], "cwd": "/", "stdin": None}).encode()
    headers = {"Content-Type": "application/json"}
    assert request(server, "POST", "/api/cli", body, headers)[0] == 404
    assert request(server, "POST", "/api/cli", body, {**headers, "Authorization": "Bearer guess"})[0] == 404
    status, _, data = request(
        server, "POST", "/api/cli", body, {**headers, "Authorization": f"Bearer {server.app.cli_secret}"}
    )
    assert status == 200 and json.loads(data) == {"stdout": "out\n", "stderr": "", "exit": 0}
    assert seen == [({"argv": ["status", "--json"], "cwd": "/", "stdin": None}, None)]


def test_serve_reports_its_url_and_stops(monkeypatch):
    seen, made = [], []
    original = srv.make_server
    monkeypatch.setattr(srv, "make_server", lambda *a, **kw: made.append(original(*a, **kw)) or made[-1])
    thread = threading.Thread(
        target=srv.serve, args=(StandInApp(),), kwargs={"port": 0, "ready": seen.append}, daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen == [made[0].url] and seen[0].startswith("http://127.0.0.1:")
    made[0].shutdown()
    thread.join(5)
    assert not thread.is_alive()

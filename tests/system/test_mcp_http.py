"""``serve --mcp``: one process serves the viewer and MCP over streamable HTTP at
/mcp, with a token. The SDK's own streamable HTTP client drives the tools; a raw
client follows the viewer's live-update stream; every request needs the token."""

from __future__ import annotations

import http.client
import json
import queue
import signal
import subprocess
import sys
import threading
from urllib.parse import urlsplit

import httpx2
import pytest
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client

import forkserver
from test_mcp import TOOLS
from conftest import REPO, clean_env
from harness import viewer_url

pytestmark = pytest.mark.slow

SEED = REPO / "examples" / "company_x.json"
AUDIT = "Forensic audit: the March QA report was back-dated."
TOKEN = "test-token-0123456789"
START_TIMEOUT = 240


def start_server(root, *extra, env=None):
    """``python -m memory_core.web.server`` on port 0; returns (process, url)."""
    proc = forkserver.popen(
        [
            sys.executable,
            "-m",
            "memory_core.web.server",
            "--root",
            str(root),
            "--seed",
            str(SEED),
            "--port",
            "0",
            *extra,
        ],
        cwd=REPO,
        env=env or clean_env(PYTHONUNBUFFERED="1"),
        stdout=subprocess.PIPE,
        stderr=open(root.parent / "server.log", "w"),
        text=True,
    )
    url = viewer_url(proc, START_TIMEOUT)
    if url is None:
        stop(proc)
        pytest.fail("the server did not start: " + (root.parent / "server.log").read_text()[-3000:])
    return proc, url


def stop(proc) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


SERVERS: list = []  # the module's server process, for the last test to stop


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp-http") / "root"
    root.mkdir()
    proc, url = start_server(root, "--mcp", "--token", TOKEN)
    SERVERS.append(proc)
    try:
        yield url, root
    finally:
        stop(proc)


def base(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def get(url, path, headers=None):
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


class EventStream:
    """A raw client of /api/events collecting the parsed events in a queue."""

    def __init__(self, url, headers):
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
        self.conn.request("GET", "/api/events", headers=headers)
        self.resp = self.conn.getresponse()
        self.events: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        name, data = None, []
        try:
            for raw in self.resp:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif not line and name:
                    self.events.put((name, json.loads("\n".join(data))))
                    name, data = None, []
        except Exception:
            pass

    def next(self, timeout=120):
        return self.events.get(timeout=timeout)

    def close(self):
        self.conn.close()


async def mcp_session_call(url, calls, token=TOKEN):
    """Open an MCP session over streamable HTTP and run ``calls(session)``."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120)) as client:
        async with streamable_http_client(base(url) + "/mcp", http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await calls(session)


async def test_tools_over_streamable_http_and_live_events(server):
    url, root = server
    auth = {"Authorization": f"Bearer {TOKEN}"}
    stream = EventStream(url, auth)
    try:
        assert stream.resp.status == 200 and stream.resp.getheader("Content-Type").startswith(
            "text/event-stream"
        )
        name, hello = stream.next()
        assert name == "hello" and "version" in hello

        async def scenario(session):
            tools = {t.name for t in (await session.list_tools()).tools}
            assert tools == TOOLS  # the same tools as over stdio (tests/system/test_mcp.py)
            status = await session.call_tool("status", {})
            assert not status.is_error
            assert {n["key"] for n in status.structured_content["nodes"]} >= {"Q", "A", "B", "E_qa", "K"}
            bad = await session.call_tool(
                "add_beliefs",
                {
                    "fragment": {
                        "question": {"key": "Q"},
                        "edges": [{"type": "supports", "from": "E_qa", "to": "NOPE"}],
                    }
                },
            )
            assert bad.is_error and "NOPE" in bad.content[0].text
            revised = await session.call_tool("revise", {"fact": AUDIT, "target": "E_qa"})
            assert not revised.is_error, revised.content[0].text
            why = await session.call_tool("explain", {"key": "E_qa"})
            # every other tool over this transport too
            hits = await session.call_tool("search", {"query": "QA report", "include_dead": True})
            assert not hits.is_error and "E_qa" in {h["key"] for h in hits.structured_content["result"]}
            board = await session.call_tool("recall", {})
            assert not board.is_error and "falsify" in board.structured_content
            checked = await session.call_tool("check", {})
            assert not checked.is_error and checked.structured_content["clean"] is True
            added = await session.call_tool(
                "add_beliefs",
                {
                    "fragment": {
                        "question": {"key": "Q"},
                        "evidence": [{"key": "E_http", "claim": "An HTTP-added claim."}],
                    }
                },
            )
            assert not added.is_error and added.structured_content["added"] == ["E_http"]
            undone = await session.call_tool("undo", {})
            assert not undone.is_error and undone.structured_content["kind"] == "load"
            graph = json.loads((await session.read_resource("falsify://graph")).contents[0].text)
            assert "E_http" not in {n["key"] for n in graph["nodes"]}
            return revised.structured_content, why.structured_content

        revised, why = await mcp_session_call(url, scenario)
        assert revised["refuted"] == ["E_qa"] and revised["promoted"] == ["B"]
        assert any(e.get("state") == "refuted" for e in why["events"])

        # the viewer's stream saw the MCP revision, with its result (for the animation)
        name, change = stream.next()
        assert name == "change" and change["kind"] == "revise"
        assert change["result"]["refuted"] == ["E_qa"] and change["result"]["epoch"] == revised["epoch"]
        # ... and the viewer's API shows it
        status, _, body = get(url, "/api/graph", auth)
        states = {n["key"]: n["state"] for n in json.loads(body)["nodes"]}
        assert status == 200 and states["E_qa"] == "refuted"
    finally:
        stream.close()


def _post(url, path, body: bytes, headers: dict):
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def test_a_repeated_field_over_http_is_refused_and_nothing_is_written(server):
    """The JSON-RPC message is read by FALSIFY's reader before the SDK's: ``revise`` with
    ``"dry_run": true, "dry_run": false`` is a JSON-RPC error naming the field (HTTP 400), and the
    graph is unchanged."""
    url, _ = server
    auth = {"Authorization": f"Bearer {TOKEN}"}
    headers = dict(
        auth, **{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    )
    init = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
    ).encode()
    status, got, _ = _post(url, "/mcp", init, headers)
    assert status == 200, status
    session = dict(
        headers, **{"mcp-session-id": got.get("mcp-session-id", ""), "mcp-protocol-version": "2025-06-18"}
    )
    _post(url, "/mcp", b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', session)
    before = get(url, "/api/graph", auth)[2]
    body = (
        b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "revise", "arguments": '
        b'{"fact": "The supplier email was forged.", "target": "E_email", "dry_run": true, "dry_run": false}}}'
    )
    status, _, answer = _post(url, "/mcp", body, session)
    error = json.loads(answer)
    assert status == 400 and error["id"] == 2 and error["error"]["code"] == -32600, answer
    assert "'dry_run' appears twice" in error["error"]["message"]
    assert get(url, "/api/graph", auth)[2] == before  # nothing was written


def test_every_route_needs_the_token(server):
    url, _ = server
    for path in ["/", "/graph.html", "/app.js", "/api/graph", "/api/log", "/api/events", "/mcp"]:
        for headers in (
            {},
            {"Authorization": "Bearer wrong-token"},
            {"Authorization": f"Basic {TOKEN}"},
            {"Cookie": "falsify_token=wrong"},
        ):
            status, got, body = get(url, path, headers)
            assert status == 401, (path, headers, status)
    status, headers, body = get(url, "/")
    assert headers["content-type"].startswith("text/html") and b"access token" in body
    status, _, body = get(url, "/api/graph")
    assert "token" in json.loads(body)["error"]
    # the right token: as a bearer, or as the cookie the one-time ?token= sets
    assert get(url, "/api/graph", {"Authorization": f"Bearer {TOKEN}"})[0] == 200
    status, headers, _ = get(url, f"/?token={TOKEN}")
    assert status == 303 and headers["location"] == "/"
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    status, _, body = get(url, "/", {"Cookie": cookie.split(";")[0]})
    assert status == 200 and b'<div id="root">' in body
    assert get(url, "/?token=wrong")[0] == 401


def test_mcp_needs_the_token(server):
    url, _ = server
    parts = urlsplit(url)
    initialize = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
    )
    for token, expected in (("wrong", 401), (None, 401), (TOKEN, 200)):
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        conn.request("POST", "/mcp", body=initialize, headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        assert resp.status == expected, (token, resp.status, body[:300])


def test_beyond_loopback_without_a_token_refuses_to_start(tmp_path):
    root = tmp_path / "root"
    env = {k: v for k, v in clean_env().items() if k != "FALSIFY_TOKEN"}
    proc = forkserver.run(
        [
            sys.executable,
            "-m",
            "memory_core.web.server",
            "--root",
            str(root),
            "--host",
            "0.0.0.0",
            "--port",
            "0",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "token" in proc.stderr and "0.0.0.0" in proc.stderr
    assert not (root / "falsify.json").exists()  # refused before opening anything


def test_stops_without_pending_tasks(server):
    """Stopping ``serve --mcp`` (SIGINT) after MCP sessions leaves no pending task behind."""
    url, root = server
    proc = SERVERS[-1]
    stop(proc)
    assert proc.returncode == 0
    log = (root.parent / "server.log").read_text()
    assert "Task was destroyed" not in log and "Traceback" not in log, log[-3000:]

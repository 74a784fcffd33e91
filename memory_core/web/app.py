"""The viewer's ASGI application: the page and its files, the JSON API, live
updates (server-sent events), MCP over streamable HTTP at ``/mcp`` and the warm
CLI's endpoint, behind one guard (:mod:`memory_core.web.guard`).

    GET  /                  static/graph.html
    GET  /<file>            a file directly inside static/ (html, js, css, svg, png, ico)
    GET  /vendor/<name>     an allow-listed UMD build (:mod:`memory_core.web.vendor`): the
                            package's static/vendor/ copy, else a checkout's ui/node_modules

The page's files are package data of ``memory_core.web`` (``static/``), so an
installed package serves the viewer from any directory; ``ui/`` of a checkout is
only the npm project that ``make ui`` installs and copies the vendor builds from.
    GET|POST /api/...       the JSON API (:mod:`memory_core.web.routes`)
    GET  /api/events        server-sent events: ``change`` {"version", "kind", "result"} per change
    POST|GET|DELETE /mcp    MCP streamable HTTP (``serve --mcp``)
    POST /api/cli           the warm CLI (``Authorization: Bearer <per-start secret>``)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import traceback
from pathlib import Path
from typing import Awaitable, Callable, Optional
from urllib.parse import unquote, urlencode

from memory_core.core.investigation import MAX_FILE
from memory_core.session import Gate
from memory_core.web import routes
from memory_core.web.guard import (
    HTML_TYPE,
    JSON_TYPE,
    SECURITY_HEADERS,
    UNAUTHORIZED_PAGE,
    HTTPError,
    Request,
    authorized,
    check_origin,
    cookie_name,
    local_location,
    same_token,
    token_cookie,
)
from memory_core.web.vendor import FIX as VENDOR_FIX
from memory_core.web.vendor import NODE_MODULES, STATIC_DIR, VENDOR, vendor_file  # noqa: F401 (re-exported)

UI_DIR = STATIC_DIR  # the viewer's own files (package data); ViewerApp(ui_dir=...) serves another folder
MAX_BODY = 64 * 1024
MCP_MAX_BODY = 16 * 1024 * 1024  # an add_beliefs fragment may be large
MAX_STREAMS_PER_CLIENT = 8  # open event streams (/api/events, GET /mcp) per client address
# the warm CLI's body: `load -` carries standard input in base64, up to the cold path's file limit
# and one byte more (memory_core.shell.remote.LOAD_LIMIT), so it is refused as the cold path refuses it
CLI_MAX_BODY = (MAX_FILE + 1) * 4 // 3 + (1 << 20)
KEEPALIVE_S = 15.0

STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
NOT_STATIC = {"package.json", "package-lock.json", "node_modules"}
ALLOWED = {path: method for method, path in routes.ROUTES} | {"/api/events": "GET"}

# (gate, {"argv", "cwd", "falsify_home"}, stdin base64) -> {"stdout", "stderr", "exit"}: the warm CLI,
# supplied by the shell layer (memory_core.shell.warm_server.run_command)
CliRunner = Callable[[Gate, dict, Optional[str]], Awaitable[dict]]
# the MCP SDK's streamable-HTTP handler: (scope, receive, send)
McpHandler = Callable[[dict, Callable, Callable], Awaitable[None]]


class ViewerApp:
    def __init__(
        self,
        gate: Gate,
        *,
        ui_dir: Path | str = UI_DIR,
        max_body: int = MAX_BODY,
        bound_host: str = "127.0.0.1",
        token: Optional[str] = None,
        mcp=None,
        cli: Optional[CliRunner] = None,
        cli_secret: Optional[str] = None,
        node_modules: Path | str = NODE_MODULES,
        viewer: bool = True,
    ):
        self.gate = gate
        self.viewer = viewer  # False: the warm CLI's channel only (the stdio MCP server without --viewer)
        self.ui_dir = Path(ui_dir).resolve()
        self.node_modules = Path(node_modules)  # the fallback for /vendor/ in a checkout
        self.max_body = max_body
        self.bound_host = bound_host
        self.token = token or None
        self.mcp = mcp  # an MCPServer, served at /mcp
        self._mcp_handler: Optional[McpHandler] = None
        if mcp is not None:
            from mcp.server.transport_security import TransportSecuritySettings

            # Host/Origin are checked by our guard for every route, /mcp included
            mcp.streamable_http_app(
                transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
            )
            self._mcp_handler = mcp.session_manager.handle_request
        self.cli = cli
        self.cli_secret = cli_secret
        self.stopping = asyncio.Event()
        self._streams: dict[str, int] = {}  # client address -> its open event streams
        self.ready: Optional[Callable[[], None]] = None  # called once the lifespan started

    # ---- ASGI ------------------------------------------------------------------
    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        try:
            await self._dispatch(request, send)
        except HTTPError as exc:
            await self._error(request, send, exc.status, exc.message, exc.headers, exc.field)
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as exc:  # never leak a traceback to the page
            from memory_core.core.redaction import redact

            print(redact(traceback.format_exc()), end="", file=sys.stderr)
            await self._error(request, send, 500, f"internal error: {type(exc).__name__}")

    async def _lifespan(self, receive, send) -> None:
        async with contextlib.AsyncExitStack() as stack:
            message = await receive()  # lifespan.startup
            try:
                self.gate.start()
                await self.gate.ready()
                if self.mcp is not None:
                    await stack.enter_async_context(self.mcp.session_manager.run())
            except BaseException as exc:
                await send({"type": "lifespan.startup.failed", "message": repr(exc)})
                raise
            await send({"type": "lifespan.startup.complete"})
            message = await receive()  # lifespan.shutdown
            assert message["type"] == "lifespan.shutdown"
            self.stopping.set()
        await send({"type": "lifespan.shutdown.complete"})

    # ---- dispatch ------------------------------------------------------------------
    async def _dispatch(self, request: Request, send) -> None:
        check_origin(request, self.bound_host)
        path = request.raw_path
        cli, mcp_handler = self.cli, self._mcp_handler
        if (
            path == "/api/cli"
            and cli is not None
            and self.cli_secret
            and same_token(request.bearer(), self.cli_secret)
        ):
            return await self._cli(request, send, cli)
        if not self.viewer:
            raise HTTPError(
                404,
                "no viewer here: this server answers the warm CLI only (start `mcp --viewer` for a viewer)",
            )
        if not authorized(request, self.token):
            return await self._unauthorized(request, send)
        if path == "/mcp" and mcp_handler is not None:
            if request.method == "GET":  # a session's event stream: long-lived, counted per client
                return await self._stream(request, lambda: self._mcp(request, send, mcp_handler))
            return await self._mcp(request, send, mcp_handler)
        if path.startswith("/api/"):
            if path not in ALLOWED:
                raise HTTPError(404, f"no such route: {path}")
            if path == "/api/events" and request.method == "GET":
                return await self._stream(request, lambda: self._events(request, send))
            route = routes.ROUTES.get((request.method, path))
            if route is None:
                raise HTTPError(405, f"{request.method} is not allowed on {path}", {"Allow": ALLOWED[path]})
            handler, takes_body = route
            if takes_body:
                arg = await request.read_json(self.max_body)
            else:  # read strictly: a parameter that is not UTF-8 is refused, never answered as U+FFFD
                arg = routes.query_of(request.scope.get("query_string", b""))
            return await self._json(request, send, 200, await handler(self.gate, arg))
        if request.method not in ("GET", "HEAD"):  # HEAD: the headers of the GET, no body
            raise HTTPError(405, f"{request.method} is not allowed on {path}", {"Allow": "GET, HEAD"})
        return await self._static(request, send, path)

    async def _unauthorized(self, request: Request, send) -> None:
        tokens = request.query.get("token")
        given = tokens[0] if tokens else None
        page = request.method == "GET" and not request.raw_path.startswith(("/api/", "/mcp", "/vendor/"))
        if page and given is not None and self.token is not None and same_token(given, self.token):
            # one-time ?token=: set the HttpOnly cookie and drop the token from the address
            rest = {k: v for k, v in request.query.items() if k != "token"}
            location = local_location(request.raw_path) + ("?" + urlencode(rest, doseq=True) if rest else "")
            return await self._send(
                request,
                send,
                303,
                b"",
                "text/plain; charset=utf-8",
                {"Location": location, "Set-Cookie": token_cookie(self.token, cookie_name(request))},
            )
        headers = {"WWW-Authenticate": 'Bearer realm="falsify"'}
        if page and (request.raw_path == "/" or request.raw_path.endswith(".html")):
            return await self._send(request, send, 401, UNAUTHORIZED_PAGE.encode(), HTML_TYPE, headers)
        raise HTTPError(
            401,
            "this FALSIFY server needs its access token (Authorization: Bearer <token>, "
            "or open the page with ?token=<token>)",
            headers,
        )

    # ---- answers -------------------------------------------------------------------
    async def _send(
        self,
        request: Request,
        send,
        status: int,
        body: bytes,
        content_type: str,
        extra: Optional[dict] = None,
    ) -> None:
        headers = {
            "Content-Type": content_type,
            "Content-Length": str(len(body)),
            **SECURITY_HEADERS,
            "Cache-Control": "no-store",
            **(extra or {}),
        }
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in headers.items()
                ],
            }
        )
        await send({"type": "http.response.body", "body": b"" if request.method == "HEAD" else body})

    async def _json(self, request: Request, send, status: int, payload, extra: Optional[dict] = None) -> None:
        # a large graph's or log's JSON is encoded in a worker thread: the server's loop runs on
        body = await asyncio.to_thread(
            lambda: json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
        )
        await self._send(request, send, status, body, JSON_TYPE, extra)

    async def _error(
        self,
        request: Request,
        send,
        status: int,
        message: str,
        extra: Optional[dict] = None,
        field: Optional[str] = None,
    ) -> None:
        from memory_core.core.redaction import redact  # an endpoint's message may echo a key

        await self._json(
            request, send, status, {"error": redact(message), **({"field": field} if field else {})}, extra
        )

    # ---- static files ------------------------------------------------------------
    async def _static(self, request: Request, send, path: str) -> None:
        if path == "/":
            path = "/graph.html"
        if path.startswith("/vendor/"):
            name = path[len("/vendor/") :]
            if name not in VENDOR:
                raise HTTPError(404, "not found")
            target = vendor_file(name, self.ui_dir / "vendor", self.node_modules)
            if target is None:
                raise HTTPError(404, f"vendor file {name} missing: {VENDOR_FIX}")
            return await self._send(
                request, send, 200, target.read_bytes(), STATIC_TYPES[".js"], {"Cache-Control": "no-cache"}
            )
        target = self._resolve(path)
        await self._send(request, send, 200, target.read_bytes(), STATIC_TYPES[target.suffix.lower()])

    def _resolve(self, path: str) -> Path:
        """Map a URL path to a file directly inside the static folder, or raise 404."""
        try:
            name = unquote(path, errors="strict")[1:]
        except UnicodeDecodeError:
            raise HTTPError(404, "not found") from None
        bad = (
            not name
            or "/" in name
            or "\\" in name
            or "\x00" in name
            or name.startswith(".")
            or name in NOT_STATIC
            or Path(name).suffix.lower() not in STATIC_TYPES
        )
        if bad or len(name.encode("utf-8", "surrogatepass")) > 255:
            raise HTTPError(404, "not found")
        try:
            target = (self.ui_dir / name).resolve()
            found = target.parent == self.ui_dir and target.is_file()
        except (OSError, ValueError):  # a name the file system refuses (too long, ...)
            found = False
        if not found:
            raise HTTPError(404, "not found")
        return target

    async def _stream(self, request: Request, serve) -> None:
        """A long-lived stream (live updates, an MCP session's events) holds its connection for
        as long as it runs: at most MAX_STREAMS_PER_CLIENT per client address at once (503 beyond),
        so one client cannot hold every connection the server has (web.server's caps)."""
        client = (request.scope.get("client") or ("?",))[0]
        if self._streams.get(client, 0) >= MAX_STREAMS_PER_CLIENT:
            raise HTTPError(
                503,
                f"too many open event streams from this client (at most {MAX_STREAMS_PER_CLIENT})",
                {"Retry-After": "5"},
            )
        self._streams[client] = self._streams.get(client, 0) + 1
        try:
            return await serve()
        finally:
            self._streams[client] -= 1
            if not self._streams[client]:
                del self._streams[client]

    # ---- live updates --------------------------------------------------------------
    async def _events(self, request: Request, send) -> None:
        """Server-sent events: ``hello`` with the current version, then one ``change`` per
        change of the graph, a comment every 15 s; ends when the client goes or the server stops."""
        queue = self.gate.subscribe()
        headers = {
            "Content-Type": "text/event-stream; charset=utf-8",
            **SECURITY_HEADERS,
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",
        }
        gone = asyncio.Event()

        async def watch():
            while True:
                message = await request.receive()
                if message["type"] == "http.disconnect":
                    gone.set()
                    return

        watcher = asyncio.ensure_future(watch())
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
                }
            )
            hello = json.dumps({"version": self.gate.version})
            await send(
                {
                    "type": "http.response.body",
                    "body": f"retry: 2000\nevent: hello\ndata: {hello}\n\n".encode(),
                    "more_body": True,
                }
            )
            while not gone.is_set() and not self.stopping.is_set():
                getter = asyncio.ensure_future(queue.get())
                stop = asyncio.ensure_future(self.stopping.wait())
                done, _ = await asyncio.wait(
                    {getter, stop, watcher}, timeout=KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED
                )
                stop.cancel()
                if getter not in done:
                    getter.cancel()
                    if not done:
                        await send(
                            {"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True}
                        )
                    continue
                event = getter.result()
                if event is None:  # the gate closed
                    break
                data = json.dumps(event, ensure_ascii=False, default=str)
                await send(
                    {
                        "type": "http.response.body",
                        "body": f"event: change\ndata: {data}\n\n".encode(),
                        "more_body": True,
                    }
                )
            if not gone.is_set():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            watcher.cancel()
            self.gate.unsubscribe(queue)

    # ---- MCP over streamable HTTP ------------------------------------------------------
    async def _mcp(self, request: Request, send, handler: McpHandler) -> None:
        """A POSTed JSON-RPC message is read by FALSIFY's JSON reader first (as over stdio:
        :func:`memory_core.mcp.server.refusal`); one it refuses (a repeated field) is answered
        with a JSON-RPC error and never reaches the SDK. The body is then handed on as read."""
        if request.method != "POST":
            return await handler(request.scope, request.receive, send)
        from memory_core.mcp.server import refusal, refusal_message

        body = await request.read_body(MCP_MAX_BODY, chunked=True)
        refused = refusal(body)
        if refused is not None:
            return await self._json(request, send, 400, refusal_message(*refused))
        given = False

        async def replay():
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await request.receive()

        return await handler(request.scope, replay, send)

    # ---- the warm CLI ----------------------------------------------------------------
    async def _cli(self, request: Request, send, cli: CliRunner) -> None:
        body = await request.read_json(CLI_MAX_BODY)
        if not isinstance(body, dict) or not isinstance(body.get("argv"), list):
            raise HTTPError(400, 'the body must be {"argv": [str, ...], "cwd": str, "stdin": str?}')
        stdin = body.get("stdin")
        if stdin is not None and not isinstance(stdin, str):
            raise HTTPError(400, "'stdin' must be a string")
        await self._json(request, send, 200, await cli(self.gate, body, stdin))

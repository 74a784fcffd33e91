"""The browser viewer's HTTP server (standard library only).

``serve(app)`` serves ``ui/graph.html`` and a small JSON API over one FALSIFY
facade. cognee's engines are bound to the event loop they were created on, so
the server owns ONE asyncio loop in a background thread and runs every facade
call there (``asyncio.run_coroutine_threadsafe``), one at a time under one lock:
a revision never interleaves with another, and readers never see half of one.

``app`` is either the facade itself or a zero-argument callable returning it (or
an awaitable of it), called inside the server's loop, e.g.
``serve(lambda: Falsify.open(root))``.

Routes::

    GET  /                  ui/graph.html
    GET  /<file>            a file directly inside ui/ (html, js, css, svg, png, ico)
    GET  /vendor/<name>     an allow-listed UMD build from ui/node_modules
    GET  /api/graph         app.snapshot()
    GET  /api/scoreboard    app.recall(q or app.default_question() or "")
    GET  /api/log           app.revision_log()
    POST /api/revise        {"fact": str, "triple": "S|P|O"?, "target": key?} -> app.revise(...)

Safety: loopback by default (a warning is printed otherwise); anything that
resolves outside ui/ is a 404; bodies are capped (413); cross-origin or
foreign-Host requests are refused (DNS rebinding, CSRF); every response carries
``X-Content-Type-Options: nosniff`` and a strict Content-Security-Policy.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import ipaddress
import json
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

UI_DIR = Path(__file__).resolve().parents[2] / "ui"
MAX_BODY = 64 * 1024
CALL_TIMEOUT = 600.0

# The only files served from ui/node_modules.
VENDOR = {
    "react.production.min.js": "node_modules/react/umd/react.production.min.js",
    "react-dom.production.min.js": "node_modules/react-dom/umd/react-dom.production.min.js",
    "react-force-graph-2d.min.js": "node_modules/react-force-graph-2d/dist/react-force-graph-2d.min.js",
}
STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
NOT_STATIC = {"package.json", "package-lock.json", "node_modules"}
JSON_TYPE = "application/json; charset=utf-8"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
REVISE_FIELDS = {"fact", "triple", "target"}


class HTTPError(Exception):
    def __init__(self, status: int, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


class AppRunner:
    """One asyncio loop in a daemon thread; facade calls run there, one at a time.

    A factory ``app`` is called in the loop and the facade it opened is closed
    (``aclose()``/``close()`` if it has one) by :meth:`close`."""

    def __init__(self, app, timeout: float = CALL_TIMEOUT):
        self.timeout = timeout
        self.loop = asyncio.new_event_loop()
        self._lock = asyncio.Lock()
        self._thread = threading.Thread(target=self.loop.run_forever, name="falsify-loop", daemon=True)
        self._thread.start()
        self._owned = callable(app) and not hasattr(app, "snapshot")
        self.app = app
        if self._owned:
            try:
                self.app = self._submit(app)
            except BaseException:
                self._stop_loop()
                raise

    def _submit(self, fn):
        async def job():
            async with self._lock:
                result = fn()
                if inspect.isawaitable(result):
                    result = await result
                return result

        return asyncio.run_coroutine_threadsafe(job(), self.loop).result(self.timeout)

    def call(self, method: str, *args, **kwargs):
        """Run ``app.<method>(*args, **kwargs)`` (sync or async) in the loop, under the lock."""
        return self._submit(lambda: getattr(self.app, method)(*args, **kwargs))

    def _stop_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()

    def close(self) -> None:
        if self.loop.is_closed():
            return
        closer = getattr(self.app, "aclose", None) or getattr(self.app, "close", None)
        if self._owned and closer is not None:
            try:
                self._submit(closer)
            except Exception:  # closing is best effort
                traceback.print_exc()
        self._stop_loop()


class ViewerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, ui_dir: Path, max_body: int):
        self.runner: AppRunner | None = None
        self.ui_dir = Path(ui_dir).resolve()
        self.max_body = max_body
        super().__init__(address, Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{port}/"

    def server_close(self) -> None:
        super().server_close()
        if self.runner is not None:
            self.runner.close()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Handler(BaseHTTPRequestHandler):
    server: ViewerServer
    protocol_version = "HTTP/1.1"
    timeout = 60

    def version_string(self) -> str:
        return "FALSIFY"

    def log_message(self, format, *args):  # quiet; errors still go to stderr
        pass

    # -- responses ------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str, extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        for key, value in {"Cache-Control": "no-store", **(extra or {})}.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload, extra: dict | None = None) -> None:
        body = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
        self._send(status, body, JSON_TYPE, extra)

    def _error(self, status: int, message: str, extra: dict | None = None) -> None:
        self._json(status, {"error": message}, extra)

    # -- dispatch -------------------------------------------------------------

    def _guard(self) -> None:
        """Refuse requests meant for another site (DNS rebinding, cross-site posts)."""
        host = self.headers.get("Host") or ""
        try:
            hostname = urlsplit("//" + host).hostname or ""
        except ValueError:
            raise HTTPError(400, "bad Host header") from None
        if host and _is_loopback(self.server.server_address[0]) and not _is_loopback(hostname):
            raise HTTPError(403, "unexpected Host header")
        origin = self.headers.get("Origin")
        if origin and origin != "null" and urlsplit(origin).netloc != host:
            raise HTTPError(403, "cross-origin requests are not allowed")

    def _handle(self) -> None:
        try:
            self._guard()
            path = urlsplit(self.path).path
            if path.startswith("/api/"):
                if path not in ALLOWED:
                    raise HTTPError(404, f"no such route: {path}")
                handler = ROUTES.get((self.command, path))
                if handler is None:
                    raise HTTPError(405, f"{self.command} is not allowed on {path}", {"Allow": ALLOWED[path]})
                handler(self)
            elif self.command != "GET":
                raise HTTPError(405, f"{self.command} is not allowed on {path}", {"Allow": "GET"})
            else:
                self._static(path)
        except HTTPError as exc:
            if self.close_connection:
                exc.headers["Connection"] = "close"
            self._error(exc.status, exc.message, exc.headers)
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as exc:  # never leak a traceback to the page
            traceback.print_exc()
            self._error(500, f"internal error: {type(exc).__name__}")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = _handle

    # -- static files ---------------------------------------------------------

    def _static(self, path: str) -> None:
        if path == "/":
            path = "/graph.html"
        if path.startswith("/vendor/"):
            rel = VENDOR.get(path[len("/vendor/"):])
            if rel is None:
                raise HTTPError(404, "not found")
            target = self.server.ui_dir / rel
            if not target.is_file():
                raise HTTPError(404, "vendor file missing: run `npm ci` in ui/")
            return self._send(200, target.read_bytes(), STATIC_TYPES[".js"], {"Cache-Control": "no-cache"})
        target = self._resolve(path)
        self._send(200, target.read_bytes(), STATIC_TYPES[target.suffix.lower()])

    def _resolve(self, path: str) -> Path:
        """Map a URL path to a file directly inside ui/, or raise 404."""
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
        if bad:
            raise HTTPError(404, "not found")
        root = self.server.ui_dir
        target = (root / name).resolve()
        if target.parent != root or not target.is_file():
            raise HTTPError(404, "not found")
        return target

    # -- API ------------------------------------------------------------------

    def _call(self, method: str, *args, **kwargs):
        try:
            return self.server.runner.call(method, *args, **kwargs)
        except ValueError as exc:
            raise HTTPError(400, str(exc) or "invalid input") from exc

    def api_graph(self):
        self._json(200, self._call("snapshot"))

    def api_log(self):
        self._json(200, self._call("revision_log"))

    def api_scoreboard(self):
        query = parse_qs(urlsplit(self.path).query, keep_blank_values=True)
        question = (query.get("q") or [""])[0].strip()
        if not question:  # the default question; failing that "" lets the facade pick its only one
            question = self._call("default_question") or ""
        self._json(200, self._call("recall", question))

    def api_revise(self):
        body = self._read_json()
        if not isinstance(body, dict):
            raise HTTPError(400, "the body must be a JSON object")
        unknown = set(body) - REVISE_FIELDS
        if unknown:
            raise HTTPError(400, f"unknown field(s): {', '.join(sorted(unknown))}")
        fact = body.get("fact")
        if not isinstance(fact, str) or not fact.strip():
            raise HTTPError(400, "'fact' must be a non-empty string")
        kwargs = {}
        for field in ("triple", "target"):
            value = body.get(field)
            if value is None or (isinstance(value, str) and not value.strip()):
                continue
            if not isinstance(value, str):
                raise HTTPError(400, f"'{field}' must be a string")
            kwargs[field] = value.strip()
        self._json(200, self._call("revise", fact.strip(), **kwargs))

    def _drain(self, length: int, limit: int = 1 << 20) -> None:
        """Discard a refused body (up to ``limit``) so the client can read our answer."""
        left = min(length, limit)
        while left > 0:
            chunk = self.rfile.read(min(left, 65536))
            if not chunk:
                break
            left -= len(chunk)

    def _read_json(self):
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise HTTPError(411, "chunked bodies are not accepted; send Content-Length")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self.close_connection = True
            raise HTTPError(411, "Content-Length required") from None
        if length < 0:
            self.close_connection = True
            raise HTTPError(400, "bad Content-Length")
        if length > self.server.max_body:
            self.close_connection = True
            self._drain(length)
            raise HTTPError(413, f"request body too large ({length} bytes; the limit is {self.server.max_body})")
        raw = self.rfile.read(length)
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise HTTPError(400, "Content-Type must be application/json")
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise HTTPError(400, f"malformed JSON: {exc}") from None


ROUTES = {
    ("GET", "/api/graph"): Handler.api_graph,
    ("GET", "/api/scoreboard"): Handler.api_scoreboard,
    ("GET", "/api/log"): Handler.api_log,
    ("POST", "/api/revise"): Handler.api_revise,
}
ALLOWED = {path: method for method, path in ROUTES}


def make_server(app, host: str = "127.0.0.1", port: int = 8765, ui_dir: Path | str = UI_DIR,
                max_body: int = MAX_BODY) -> ViewerServer:
    """Bind the viewer (port 0 picks a free port); call ``serve_forever()`` and,
    when done, ``shutdown()`` then ``server_close()`` (which also stops the loop)."""
    if not _is_loopback(host):
        print(f"WARNING: the FALSIFY viewer is listening on {host}, not loopback: anyone who can "
              "reach this address can read and revise the memory.", file=sys.stderr)
    server = ViewerServer((host, port), Path(ui_dir), max_body)  # bind first: a busy port fails fast
    try:
        server.runner = AppRunner(app)
    except BaseException:
        server.server_close()
        raise
    return server


def serve(app, host: str = "127.0.0.1", port: int = 8765, ui_dir: Path | str = UI_DIR,
          max_body: int = MAX_BODY, ready=None) -> None:
    """Serve until interrupted. ``ready(url)`` is called once the port is bound."""
    server = make_server(app, host=host, port=port, ui_dir=ui_dir, max_body=max_body)
    try:
        if ready is not None:
            ready(server.url)
        else:
            print(f"FALSIFY viewer: {server.url}", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def run_server(root=None, host: str = "127.0.0.1", port: int = 8765, seeds=(), ready=None) -> int:
    """Serve the real facade for one data root (``python main.py serve``); ``seeds``
    are investigation files loaded first. Returns an exit code."""

    async def open_app():
        from memory_core.api import Falsify

        app = await Falsify.open(root, purpose="viewer")
        try:
            for seed in seeds:
                await app.load_file(seed)
        except BaseException:
            await app.close()
            raise
        return app

    serve(open_app, host=host, port=port, ready=ready)
    return 0


def main(argv=None) -> int:
    """``python -m memory_core.web.server --root DIR [--seed FILE]``: used by the browser
    tests to run the real facade in a process of its own (one process serves one
    data root); users run ``python main.py serve``."""
    parser = argparse.ArgumentParser(prog="python -m memory_core.web.server")
    parser.add_argument("--root", required=True)
    parser.add_argument("--seed", action="append", default=[], help="investigation file to load first")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    return run_server(args.root, args.host, args.port, seeds=args.seed)


if __name__ == "__main__":
    sys.exit(main())

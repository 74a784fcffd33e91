"""The browser viewer's server: ``python main.py serve`` (and ``serve --mcp``).

One process serves one data root: ONE facade opened once, on ONE asyncio loop
(:mod:`memory_core.web.bridge`), behind ONE :class:`~memory_core.session.Gate`
(one session at a time; every change announced to the open viewers). The HTTP
server is uvicorn running :class:`~memory_core.web.app.ViewerApp` on that loop;
with ``mcp=True`` the same app serves MCP over streamable HTTP at ``/mcp``.

``app`` is either the facade itself or a zero-argument callable returning it (or
an awaitable of it), called inside the server's loop, e.g.
``serve(lambda: Falsify.open(root))``.

Safety: loopback by default. Bound to any other address the server refuses to
start without a token (``--token`` or ``FALSIFY_TOKEN``) and then every request
must carry it (:mod:`memory_core.web.guard`). Anything that resolves outside the
viewer's static files (package data, plus the allow-listed vendor builds) is a 404; bodies
are capped (413); cross-origin or foreign-Host requests are refused; every response carries
``nosniff`` and a strict Content-Security-Policy.

The warm CLI: started with a ``cli`` runner, the server writes its address and a
per-start secret to ``<root>/server.json`` (mode 0600) and answers
``POST /api/cli`` from CLI processes holding that secret; the file goes when the
server stops.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import os
import secrets
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Optional

import uvicorn

from memory_core.session import Gate
from memory_core.store import settings as config
from memory_core.web.app import MAX_BODY, STATIC_TYPES, UI_DIR, VENDOR, ViewerApp  # noqa: F401 (re-exported)
from memory_core.web.bridge import LoopThread
from memory_core.web.guard import check_token, is_loopback

CALL_TIMEOUT = 600.0
DISCOVERY = "server.json"
# Connection handling (uvicorn's h11 protocol, guarded: GuardedH11Protocol):
# * each request's headers and body must arrive within READ_TIMEOUT_S of its first byte (and a new
#   connection's first request within READ_TIMEOUT_S of its opening), else the connection is closed:
#   a client dripping a request byte by byte holds a connection for that long at most;
# * an idle keep-alive connection is closed after KEEP_ALIVE_S;
# * at most MAX_PER_CLIENT connections per client address and MAX_CONNECTIONS in all: a new
#   connection beyond either first closes the oldest one that is idle or still sending its request
#   (never one whose request is being answered), and only when there is none is it refused (503)
MAX_CONNECTIONS = 64
MAX_PER_CLIENT = 32
READ_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
_BUSY = b"too many connections; try again later\n"
REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    b"content-length: " + str(len(_BUSY)).encode() + b"\r\n\r\n" + _BUSY
)


class TokenRequired(Exception):
    """Bound beyond loopback without a token (or with an unusable one): the server refuses to start."""


class CannotListen(Exception):
    """The host or port cannot be listened on (not an address, out of range, busy)."""


def _protocol():
    """uvicorn's h11 protocol with a read deadline per request, a cap per client address and
    load shedding of idle or slow connections (see the constants above)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        def connection_made(self, transport):
            super().connection_made(transport)
            self._deadline = None
            self._reading_since = None
            self._idle_since = self.loop.time()
            self._arm()  # the first request must arrive in time too
            self._make_room()

        # ---- state -------------------------------------------------------------------
        def busy(self) -> bool:
            """Answering a request it has received whole (or streaming an answer): never shed."""
            cycle = self.cycle
            return (
                cycle is not None
                and not cycle.response_complete
                and (not cycle.more_body or cycle.response_started)
            )

        def _since(self) -> float:
            """How long it has been idle or sending: the oldest goes first when room is needed."""
            return self._reading_since if self._reading_since is not None else self._idle_since

        # ---- the read deadline ---------------------------------------------------------
        def _arm(self) -> None:
            if self._deadline is None:
                self._reading_since = self.loop.time()
                self._deadline = self.loop.call_later(READ_TIMEOUT_S, self._read_timed_out)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            self._reading_since = None

        def _read_timed_out(self) -> None:
            self._deadline = None
            if not self.busy() and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data):
            if not self.busy():
                self._arm()  # a request begins (or goes on): its deadline runs from its first byte
            super().data_received(data)
            if self.busy():
                self._disarm()

        def on_response_complete(self):
            self._idle_since = self.loop.time()
            super().on_response_complete()

        def connection_lost(self, exc):
            self._disarm()
            super().connection_lost(exc)

        # ---- room for a new connection --------------------------------------------------
        def _make_room(self) -> None:
            host = self.client[0] if self.client else None
            others = [c for c in self.connections if c is not self and isinstance(c, GuardedH11Protocol)]
            same = [c for c in others if host is not None and c.client and c.client[0] == host]
            if len(same) >= MAX_PER_CLIENT and not self._shed(same):
                return self._refuse()
            others = [c for c in others if c in self.connections]
            if len(others) >= MAX_CONNECTIONS and not self._shed(others):
                return self._refuse()

        def _shed(self, candidates) -> bool:
            """Close the connection that has been idle or sending its request the longest."""
            idle = [c for c in candidates if not c.busy() and not c.transport.is_closing()]
            if not idle:
                return False
            oldest = min(idle, key=lambda c: c._since())
            oldest.connections.discard(oldest)  # counted out now: its connection_lost comes later
            oldest.transport.close()
            return True

        def _refuse(self) -> None:
            self.connections.discard(self)
            self._disarm()
            self.transport.write(REFUSED)
            self.transport.close()

    return GuardedH11Protocol


def uvicorn_config(app) -> "uvicorn.Config":
    # uvicorn's own 503 (limit_concurrency) counts the new connection too: one above our cap, so
    # the shedding above decides who stays
    return uvicorn.Config(
        app,
        lifespan="on",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
        server_header=False,
        date_header=False,
        http=_protocol(),
        limit_concurrency=MAX_CONNECTIONS + 1,
        timeout_keep_alive=KEEP_ALIVE_S,
    )


class ViewerServer:
    """A bound viewer: ``serve_forever()`` until ``shutdown()``; then ``server_close()``
    (closes the facade it opened and stops the loop). ``make_server`` builds it."""

    def __init__(
        self,
        app,
        host: str,
        port: int,
        ui_dir: Path,
        max_body: int,
        token: Optional[str] = None,
        mcp: bool = False,
        cli=None,
        root: Optional[Path] = None,
    ):
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise CannotListen(f"--port must be a number from 0 to 65535 (0: any free port), got {port}")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind((host, port))  # bind first: a busy port fails fast
            self.socket.listen(128)
        except (OSError, OverflowError, ValueError, UnicodeError) as error:
            self.socket.close()
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise CannotListen(f"cannot listen on {host}:{port}: {reason}") from None
        except BaseException:
            self.socket.close()
            raise
        self.server_address = self.socket.getsockname()
        self.token = token
        self.bridge = LoopThread()
        self.gate = Gate(app)
        self._serving: Optional[concurrent.futures.Future] = (
            None  # the future of uvicorn's serve() while it runs
        )
        self._closed = False
        self.discovery: Optional[Path] = None
        try:
            self.bridge.submit(self._open, CALL_TIMEOUT)
            mcp_server = None
            if mcp:
                from memory_core.mcp.server import build_server

                mcp_server = build_server(self.gate)
            secret = secrets.token_urlsafe(32) if cli is not None else None
            self.app = ViewerApp(
                self.gate,
                ui_dir=ui_dir,
                max_body=max_body,
                bound_host=host,
                token=token,
                mcp=mcp_server,
                cli=cli,
                cli_secret=secret,
            )
            self._uvicorn = uvicorn.Server(uvicorn_config(self.app))
            if secret is not None and root is not None:  # a secret: the warm CLI is served
                self.discovery = write_discovery(root, self.url, secret)
        except BaseException:
            self.server_close()
            raise

    async def _open(self):
        self.gate.start()
        return await self.gate.ready()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{port}/"

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve until :meth:`shutdown` (``poll_interval`` is accepted for the standard
        library's signature; uvicorn checks every 0.1 s)."""
        serving = self._serving = self.bridge.spawn(lambda: self._uvicorn.serve(sockets=[self.socket]))
        try:
            serving.result()
        except concurrent.futures.CancelledError:  # its loop was closed under it: serving is over
            pass

    def shutdown(self) -> None:
        """Stop serving (from any thread) and wait until uvicorn has finished."""
        self._uvicorn.should_exit = True
        if self._serving is not None:
            try:
                self._serving.result(30)
            except BaseException:
                pass

    def server_close(self) -> None:
        if self._closed:
            return
        self._closed = True
        remove_discovery(self.discovery)
        try:
            if not self.bridge.loop.is_closed():
                self.bridge.submit(self.gate.close, CALL_TIMEOUT)
        except Exception:  # closing is best effort
            import traceback

            traceback.print_exc()
        finally:
            self.bridge.stop()
            self.socket.close()


def write_discovery(root: Path, url: str, secret: str, extra: Optional[dict] = None) -> Path:
    """``<root>/server.json``: where the running server listens and the secret the warm
    CLI shows it (owner-only permissions); ``extra``: more fields (the viewer's token when
    the server made one)."""
    path = Path(root) / DISCOVERY
    tmp = path.with_name(f".{DISCOVERY}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"url": url, "secret": secret, "pid": os.getpid(), **(extra or {})}, fh)
    os.replace(tmp, path)
    return path


def remove_discovery(path: Optional[Path]) -> None:
    if path is None:
        return
    try:
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass


async def serve_alongside(
    gate: Gate, root: Path, cli, stop: asyncio.Event, host: str = "127.0.0.1", viewer: bool = False
) -> None:
    """From inside a loop that already runs (the stdio MCP server's): serve the warm CLI for
    ``gate`` on loopback (a free port; each request carries the per-start secret of
    ``<root>/server.json``, mode 0600) until ``stop`` is set. ``viewer``: the viewer and its
    API too, behind an access token (``FALSIFY_TOKEN`` / ``FALSIFY_TOKEN_FILE``, else one
    made for this session and kept in ``server.json`` as ``viewer_token``); its address,
    never the token, goes to stderr (stdout belongs to the MCP client). Without it, every
    other request is a 404: nothing but the CLI's own channel writes over HTTP."""
    token = made = None
    if viewer:
        token = resolve_token(host, None)
        if token is None:
            token = made = secrets.token_urlsafe(24)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    sock.listen(128)
    url = f"http://{host}:{sock.getsockname()[1]}/"
    secret = secrets.token_urlsafe(32)
    app = ViewerApp(gate, bound_host=host, cli=cli, cli_secret=secret, token=token, viewer=viewer)
    server = uvicorn.Server(uvicorn_config(app))
    server.capture_signals = contextlib.nullcontext  # the host process keeps its own signal handling
    discovery = None
    loop = asyncio.get_running_loop()

    def terminated():
        # SIGTERM ends the process as it always did, but first takes server.json away, so no
        # CLI is sent to a server that is gone
        remove_discovery(discovery)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    try:
        loop.add_signal_handler(signal.SIGTERM, terminated)
        handles_term = True
    except (ValueError, RuntimeError, NotImplementedError):  # not the main thread's loop: the host decides
        handles_term = False
    try:
        while not stop.is_set():  # the root opened (a busy one is tried again, as the MCP tools do)
            try:
                await gate.ready()
                break
            except Exception:  # noqa: BLE001  (the MCP tools report why the root did not open)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), 1.0)
        if stop.is_set():
            return
        discovery = write_discovery(root, url, secret, {"viewer_token": made} if made else None)
        if viewer:
            where = f'"viewer_token" in {discovery}' if made else "FALSIFY_TOKEN (or FALSIFY_TOKEN_FILE)"
            print(
                f"FALSIFY viewer for this MCP session: {url}\n{access_note(url, where)}",
                file=sys.stderr,
                flush=True,
            )

        async def stopper():
            await stop.wait()
            server.should_exit = True

        watcher = asyncio.ensure_future(stopper())
        try:
            await server.serve(sockets=[sock])
        finally:
            watcher.cancel()
    finally:
        remove_discovery(discovery)
        sock.close()
        if handles_term:
            loop.remove_signal_handler(signal.SIGTERM)


def access_note(url: str, where: str) -> str:
    """How to get into a viewer that needs its token, without the token itself (it is never
    printed: terminals, logs and screen shares keep what is printed)."""
    return (
        f"FALSIFY viewer access: the page needs its access token once: open {url}?token=TOKEN, TOKEN being "
        f"the one in {where} (the page then keeps it in an HttpOnly cookie; API clients send "
        "Authorization: Bearer TOKEN)"
    )


def resolve_token(host: str, token: Optional[str], settings=None) -> Optional[str]:
    """The token in force: ``token``, else ``$FALSIFY_TOKEN``, else the first line of the
    file ``$FALSIFY_TOKEN_FILE`` (both from ``settings``, default: the process's,
    :mod:`memory_core.store.settings`); required beyond loopback, and checked
    (:func:`memory_core.web.guard.check_token`)."""
    settings = settings or config.current()
    token = (token or settings.token or "").strip() or None
    if token is None and settings.token_file:
        path = Path(settings.token_file).expanduser()
        try:
            token = (path.read_text(encoding="utf-8").splitlines() or [""])[0].strip() or None
        except (OSError, UnicodeDecodeError) as error:
            raise TokenRequired(f"FALSIFY_TOKEN_FILE {path}: cannot read it ({error})") from None
        if token is None:
            raise TokenRequired(f"FALSIFY_TOKEN_FILE {path} is empty")
    if token is None and not is_loopback(host):
        raise TokenRequired(
            f"refusing to serve on {host}, beyond loopback, without a token: anyone who can reach this address "
            "could read and revise the memory. Set FALSIFY_TOKEN (or FALSIFY_TOKEN_FILE, a file holding it), e.g. "
            f"FALSIFY_TOKEN={secrets.token_urlsafe(24)}"
        )
    if token is not None:
        try:
            check_token(token)
        except ValueError as error:
            raise TokenRequired(str(error)) from None
    return token


def make_server(
    app,
    host: str = "127.0.0.1",
    port: int = 8765,
    ui_dir: Path | str = UI_DIR,
    max_body: int = MAX_BODY,
    token: Optional[str] = None,
    mcp: bool = False,
    cli=None,
    root: Optional[Path] = None,
) -> ViewerServer:
    """Bind the viewer (port 0 picks a free port); call ``serve_forever()`` and,
    when done, ``shutdown()`` then ``server_close()`` (which also stops the loop).
    Beyond loopback a token is required (:class:`TokenRequired` otherwise)."""
    token = resolve_token(host, token)
    return ViewerServer(app, host, port, Path(ui_dir), max_body, token=token, mcp=mcp, cli=cli, root=root)


def serve(
    app,
    host: str = "127.0.0.1",
    port: int = 8765,
    ui_dir: Path | str = UI_DIR,
    max_body: int = MAX_BODY,
    ready=None,
    token: Optional[str] = None,
    mcp: bool = False,
    cli=None,
    root: Optional[Path] = None,
) -> None:
    """Serve until interrupted. ``ready(url)`` is called once the port is bound."""
    server = make_server(
        app, host=host, port=port, ui_dir=ui_dir, max_body=max_body, token=token, mcp=mcp, cli=cli, root=root
    )
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)  # stop as on Ctrl-C: close the root, remove server.json
    try:
        if ready is not None:
            ready(server.url)
        else:
            print(f"FALSIFY viewer: {server.url}", flush=True)  # never the token
            if server.token:
                print(access_note(server.url, "--token, FALSIFY_TOKEN or FALSIFY_TOKEN_FILE"), flush=True)
            if mcp:
                print(f"FALSIFY MCP (streamable HTTP): {server.url}mcp", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def run_server(
    root=None,
    host: str = "127.0.0.1",
    port: int = 8765,
    seeds=(),
    ready=None,
    token: Optional[str] = None,
    mcp: bool = False,
    cli=None,
) -> int:
    """Serve the real facade for one data root (``python main.py serve``); ``seeds``
    are investigation files loaded first. Returns an exit code."""
    from memory_core.store.data_root import resolve_root

    try:
        settings = config.current()
        token = resolve_token(host, token, settings)
    except (TokenRequired, config.SettingsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if token and (settings.token or "").strip() != token.strip():
        print(
            "warning: a --token on the command line is visible to every local user (ps, /proc); set "
            "FALSIFY_TOKEN or FALSIFY_TOKEN_FILE (a file holding it) instead",
            file=sys.stderr,
        )
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        print(
            f"error: --port must be a number from 0 to 65535 (0: any free port), got {port}", file=sys.stderr
        )
        return 2

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

    try:
        serve(
            open_app,
            host=host,
            port=port,
            ready=ready,
            token=token,
            mcp=mcp,
            cli=cli,
            root=resolve_root(root, settings),
        )
    except CannotListen as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def main(argv=None) -> int:
    """``python -m memory_core.web.server --root DIR [--seed FILE] [--mcp] [--token T]``: used by
    the browser tests to run the real facade in a process of its own (one process serves one
    data root); users run ``python main.py serve``."""
    parser = argparse.ArgumentParser(prog="python -m memory_core.web.server")
    parser.add_argument("--root", required=True)
    parser.add_argument("--seed", action="append", default=[], help="investigation file to load first")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--mcp", action="store_true", help="also serve MCP over streamable HTTP at /mcp")
    parser.add_argument("--token", help="access token (required beyond loopback; default $FALSIFY_TOKEN)")
    args = parser.parse_args(argv)
    from memory_core.store.data_root import claim_process

    claim_process()  # a process of its own: cognee is configured for this root
    return run_server(args.root, args.host, args.port, seeds=args.seed, token=args.token, mcp=args.mcp)


if __name__ == "__main__":
    sys.exit(main())

"""The viewer's HTTP guard: who may ask, and how a request is read and answered.

* Host and Origin: a loopback-bound server refuses foreign ``Host`` headers (DNS
  rebinding); any server refuses a cross-origin ``Origin`` (CSRF), ``Origin: null`` included.
* Token: bound beyond loopback, every request carries the token, as
  ``Authorization: Bearer ...`` or the HttpOnly, SameSite=Strict cookie a one-time
  ``?token=`` on the page URL sets (named after the server's port, so two servers on
  one host never share or overwrite it); compared in constant time, as bytes. A token
  is checked when the server starts (:func:`check_token`): printable ASCII without
  separators (letters, digits and ``-._~+/=``), at least 16 characters.
* Bodies: JSON only (strict: no duplicate fields, no NaN), ``Content-Length`` required,
  capped (413), never chunked.
* Every answer carries ``nosniff``, a strict Content-Security-Policy, no referrer,
  no framing and ``Cache-Control: no-store``.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from http.cookies import SimpleCookie
from typing import Optional
from urllib.parse import parse_qs, urlsplit

from memory_core.web.vendor import style_hashes

JSON_TYPE = "application/json; charset=utf-8"
HTML_TYPE = "text/html; charset=utf-8"
CSP = (  # style-src: our stylesheet, and the graph library's injected <style> elements by hash
    "default-src 'self'; script-src 'self'; "
    + " ".join(["style-src 'self'", *style_hashes()])
    + "; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
COOKIE = "falsify_token"
TOKEN_MIN = 16
TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~+/=-]+")
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": CSP,
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
DRAIN_LIMIT = 1 << 20


class HTTPError(Exception):
    def __init__(
        self, status: int, message: str, headers: Optional[dict] = None, field: Optional[str] = None
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})
        self.field = field  # the request field a 400 is about (the JSON body's name for it)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_token(token: str) -> str:
    """The token a server is started with, or ValueError saying what is wrong with it: it
    travels in a header, a cookie and a URL, so printable ASCII without separators."""
    if not TOKEN_CHARS.fullmatch(token):
        bad = next((c for c in token if not TOKEN_CHARS.fullmatch(c)), "")
        raise ValueError(
            f"the access token may hold only letters, digits and - . _ ~ + / = "
            f"(it has {'a space' if bad == ' ' else repr(bad)})"
        )
    if len(token) < TOKEN_MIN:
        raise ValueError(
            f"the access token is {len(token)} characters long; use at least {TOKEN_MIN} "
            "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(24))')"
        )
    return token


def same_token(given: Optional[str], expected: Optional[str]) -> bool:
    """Constant-time comparison (``hmac.compare_digest``) of two tokens, as bytes (any
    text, also non-ASCII or undecodable, compares without error)."""
    if not given or not expected:
        return False
    return hmac.compare_digest(
        given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )


def cookie_name(request: "Request") -> str:
    """The token cookie of this server: cookies are shared by every port of a host, so
    the name carries the port the request came in on."""
    server: tuple = request.scope.get("server") or ()
    port = server[1] if len(server) > 1 and isinstance(server[1], int) else None
    return f"{COOKIE}_{port}" if port is not None else COOKIE


class Request:
    """The parts of an ASGI HTTP request the server looks at."""

    def __init__(self, scope, receive):
        self.scope = scope
        self.receive = receive
        self.method: str = scope["method"]
        raw = scope.get("raw_path") or scope["path"].encode("utf-8")
        self.raw_path: str = raw.decode("latin-1").split("?", 1)[0]  # still percent-encoded
        self.query: dict[str, list[str]] = parse_qs(
            scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True
        )
        self.headers: dict[str, str] = {}
        for key, value in scope.get("headers", []):
            name, text = key.decode("latin-1").lower(), value.decode("latin-1")
            if name in self.headers:
                text = self.headers[name] + ("; " if name == "cookie" else ", ") + text
            self.headers[name] = text
        self.disconnected = False

    def header(self, name: str) -> Optional[str]:
        return self.headers.get(name.lower())

    def cookie(self, name: str) -> Optional[str]:
        raw = self.header("cookie")
        if not raw:
            return None
        jar = SimpleCookie()
        try:
            jar.load(raw)
        except Exception:
            return None
        morsel = jar.get(name)
        return morsel.value if morsel is not None else None

    def bearer(self) -> Optional[str]:
        value = self.header("authorization") or ""
        scheme, _, credentials = value.partition(" ")
        return credentials.strip() if scheme.lower() == "bearer" and credentials.strip() else None

    async def read_json(self, max_body: int):
        """The JSON body, or an HTTPError (411/400/413, closing the connection where
        the rest of the body cannot be trusted)."""
        raw = await self.read_body(max_body)
        ctype = (self.header("content-type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise HTTPError(400, "Content-Type must be application/json")
        from memory_core.core.errors import InputError
        from memory_core.core.investigation import (
            loads_json,
        )  # the one strict reader (duplicate fields refused)

        try:
            return loads_json(raw, "request body")
        except InputError as exc:
            raise HTTPError(400, f"malformed JSON: {exc}") from None

    async def read_body(self, max_body: int, chunked: bool = False) -> bytes:
        """The raw body (Content-Length required unless ``chunked``; at most ``max_body``), or an HTTPError."""
        if self.header("transfer-encoding"):
            if chunked:
                return await self._body(max_body, f"request body too large (the limit is {max_body} bytes)")
            raise HTTPError(
                411, "chunked bodies are not accepted; send Content-Length", {"Connection": "close"}
            )
        try:
            length = int(self.header("content-length") or "")
        except ValueError:
            raise HTTPError(411, "Content-Length required", {"Connection": "close"}) from None
        if length < 0:
            raise HTTPError(400, "bad Content-Length", {"Connection": "close"})
        if length > max_body:
            await self._drain(min(length, DRAIN_LIMIT))
            raise HTTPError(
                413,
                f"request body too large ({length} bytes; the limit is {max_body})",
                {"Connection": "close"},
            )
        return await self._body(length)

    async def _body(self, limit: int, too_long: str = "the body is longer than its Content-Length") -> bytes:
        chunks, size = [], 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                self.disconnected = True
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise HTTPError(400, too_long, {"Connection": "close"})
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        return b"".join(chunks)

    async def _drain(self, limit: int) -> None:
        """Discard a refused body (up to ``limit``) so the client can read our answer."""
        left = limit
        while left > 0:
            message = await self.receive()
            if message["type"] != "http.request":
                break
            left -= len(message.get("body", b""))
            if not message.get("more_body"):
                break


def check_origin(request: Request, bound_host: str) -> None:
    """Refuse requests meant for another site (DNS rebinding, cross-site posts)."""
    host = request.header("host") or ""
    try:
        hostname = urlsplit("//" + host).hostname or ""
    except ValueError:
        raise HTTPError(400, "bad Host header") from None
    if host and is_loopback(bound_host) and not is_loopback(hostname):
        raise HTTPError(403, "unexpected Host header")
    origin = request.header("origin")
    if origin is not None and (origin.strip() == "null" or urlsplit(origin).netloc != host):
        # "null" is an opaque origin (a sandboxed frame, a file: page, a redirect chain): never this server's page
        raise HTTPError(403, "cross-origin requests are not allowed")


def authorized(request: Request, token: Optional[str]) -> bool:
    """No token configured (loopback): everyone who passed the Host check. Otherwise the
    bearer token or the cookie set from a one-time ``?token=``."""
    if token is None:
        return True
    return same_token(request.bearer(), token) or same_token(request.cookie(cookie_name(request)), token)


def token_cookie(token: str, name: str = COOKIE) -> str:
    return f"{name}={token}; HttpOnly; SameSite=Strict; Path=/"


def local_location(raw_path: str) -> str:
    """A redirect target on this server only: one leading slash (``//host/x`` or ``/\\host``
    would send the browser to another site)."""
    return "/" + raw_path.lstrip("/\\")


UNAUTHORIZED_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>FALSIFY: access token required</title>
</head>
<body><main class="denied">
<h1>FALSIFY: access token required</h1>
<p id="denied">This FALSIFY server needs its access token. Open this address once with
<code>?token=TOKEN</code> added, TOKEN being the token the server was started with (its
<code>--token</code>, <code>FALSIFY_TOKEN</code> or <code>FALSIFY_TOKEN_FILE</code>; for
<code>mcp --viewer</code> without one, <code>"viewer_token"</code> in the root's <code>server.json</code>),
or ask whoever started it for the token.</p>
</main></body></html>
"""

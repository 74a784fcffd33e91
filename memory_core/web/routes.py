"""The viewer's JSON API as plain async functions over one :class:`~memory_core.session.Gate`.

Each takes the gate and the request's query (a ``parse_qs`` dict, read by :func:`query_of`: a
name or value that is not UTF-8 is a 400 naming it) or JSON body
and returns what the route answers, calling the facade in a session of the gate
(``fx`` below); bad input raises :class:`HTTPError` (400), and so does a facade's
``ValueError``/``InputError``. The HTTP layer (:mod:`memory_core.web.app`) does the rest.

    GET  /api/graph         fx.snapshot(); ?epoch=N: the graph as it stood after epoch N
    GET  /api/scoreboard    fx.recall(q or the default question or ""); ?epoch=N: recall at epoch N;
                            ?as_of=DATE: from the beliefs valid at DATE; ?inquiry=KEY: that question's beliefs only;
                            ?path=S|P1|P2: alive triples hop by hop instead of a question
    GET  /api/log           fx.revision_log()
    GET  /api/timeline      fx.timeline(): one row per epoch (the viewer's timeline)
    POST /api/revise        {"fact": str, and any other revise field (memory_core.core.fields: triple,
                            target, key, source, asserted_at, trust, policy, valid_from, valid_to,
                            record, supports, refutes, weight, inquiry, dry_run)} -> fx.revise(...); a bad
                            field is a 400 {"error", "field"} naming it as the body does; without a
                            key the fact gets a readable one derived from its text
                            (``core.requests.readable_key``)
    GET  /api/events        server-sent events: one ``change`` per change of the graph (app.py)

A GET route's parameter it does not take, or one given twice, is a 400 naming it (as a revision's
unknown field is, and an MCP tool's unknown argument): answered without it, the route would show
another answer than the one asked for (``?question=...`` is not ``?q=...``).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator, Iterator
from urllib.parse import parse_qsl, quote

from memory_core.core.errors import VOCABULARY, InputError, speak
from memory_core.core.fields import FIELDS
from memory_core.core.requests import readable_key
from memory_core.results import RecallResult, RevisionResult
from memory_core.session import Gate, Session
from memory_core.web.guard import HTTPError

REVISE_FIELDS = {f.name for f in FIELDS}  # the request's fields, declared once
KINDS = {f.name: f.kind for f in FIELDS}


@contextlib.contextmanager
def _refused() -> Iterator[None]:
    """A ``ValueError`` (an ``InputError`` is one) raised inside: a 400 in the viewer's words,
    naming the field it is about."""
    VOCABULARY.set("viewer")  # errors and notes name the body's fields (this request's context only)
    try:
        yield
    except ValueError as exc:
        speak(exc, "viewer")
        field = exc.field if isinstance(exc, InputError) else None
        raise HTTPError(400, str(exc) or "invalid input", field=field) from exc


@contextlib.asynccontextmanager
async def _session(gate: Gate) -> AsyncIterator[Session]:
    """A session of the gate for one request, in the viewer's words."""
    with _refused():
        async with gate.session() as fx:
            yield fx


def query_of(raw: bytes) -> dict[str, list[str]]:
    """The query string's parameters, as ``parse_qs`` gives them (blank values kept), each name
    and value percent-decoded and then read as strict UTF-8: bytes that are not UTF-8 (``%FF``,
    an encoded surrogate ``%ED%A0%80``) are a 400 naming the parameter, as a POST body's and a
    command line's are refused (``parse_qs`` would put U+FFFD in their place, and the route
    would answer a question nobody asked)."""
    query: dict[str, list[str]] = {}
    # latin-1 keeps every byte as one character, so each part can be read as UTF-8 on its own
    for name, value in parse_qsl(raw.decode("latin-1"), keep_blank_values=True, encoding="latin-1"):
        try:
            name = name.encode("latin-1").decode("utf-8")
        except UnicodeDecodeError as error:
            shown = quote(name.encode("latin-1"), safe="")
            raise HTTPError(
                400, f"query parameter {shown!r}: its name is not valid UTF-8 (byte {error.start})"
            ) from None
        try:
            text = value.encode("latin-1").decode("utf-8")
        except UnicodeDecodeError as error:
            raise HTTPError(
                400, f"{name}: not valid UTF-8 (byte {error.start}: {error.reason})", field=name
            ) from None
        query.setdefault(name, []).append(text)
    return query


# each GET route's query parameters (recall's arguments as the viewer names them)
PARAMETERS = {
    "graph": ("epoch",),
    "scoreboard": ("q", "epoch", "as_of", "inquiry", "path"),
    "log": (),
    "timeline": (),
}


def _taken(query: dict, route: str) -> None:
    """A parameter ``route`` does not take, or one given twice: a 400 naming it."""
    known = PARAMETERS[route]
    unknown = sorted(set(query) - set(known))
    if unknown:
        takes = f"it takes {', '.join(known)}" if known else "it takes none"
        raise HTTPError(400, f"unknown query parameter(s): {', '.join(unknown)} ({takes})", field=unknown[0])
    for name, values in query.items():
        if len(values) > 1:
            raise HTTPError(400, f"give '{name}' once", field=name)


def _epoch(query: dict, name: str = "epoch") -> dict:
    """``?epoch=N`` (a whole number), or ``?as_of=DATE`` / ``?inquiry=KEY``, as the facade's
    keyword (the facade checks the value: a 400)."""
    values = query.get(name)
    if not values or not values[0].strip():
        return {}
    if len(values) > 1:
        raise HTTPError(400, f"give '{name}' once")
    value = values[0].strip()
    if name == "epoch":
        if not value.isascii() or not value.isdigit():
            raise HTTPError(400, f"epoch: must be a whole number (0 or more), got {value!r}", field="epoch")
        return {name: int(value)}
    return {name: value}


async def graph(gate: Gate, query: dict) -> dict:
    _taken(query, "graph")
    epoch = _epoch(query)
    async with _session(gate) as fx:
        return await fx.snapshot(**epoch)


async def timeline(gate: Gate, query: dict) -> list:
    _taken(query, "timeline")
    async with _session(gate) as fx:
        # the whole revision log is read and folded: in a worker thread, the server's loop runs on
        return await asyncio.to_thread(fx.timeline)


async def log(gate: Gate, query: dict) -> list:
    _taken(query, "log")
    async with _session(gate) as fx:
        return await asyncio.to_thread(fx.revision_log)


async def scoreboard(gate: Gate, query: dict) -> RecallResult:
    _taken(query, "scoreboard")
    question = (query.get("q") or [""])[0].strip()
    pinned = _epoch(query, "inquiry")
    path = _epoch(query, "path")  # recall's path, as the CLI's --path and the MCP tool's path
    when = {**_epoch(query), **_epoch(query, "as_of")}
    async with _session(gate) as fx:
        if (
            not question and not pinned and not path
        ):  # the default question; failing that "" lets the facade pick its only one
            question = fx.default_question() or ""
        # a path is asked instead of a question: no question with it
        return await fx.recall(question or (None if path else ""), **when, **pinned, **path)


async def revise(gate: Gate, body: Any) -> RevisionResult:
    if not isinstance(body, dict):
        raise HTTPError(400, "the body must be a JSON object")
    unknown = sorted(set(body) - REVISE_FIELDS)
    if unknown:
        raise HTTPError(
            400,
            f"unknown field(s): {', '.join(unknown)} (a revision takes {', '.join(REVISE_FIELDS)})",
            field=unknown[0],
        )
    fact = body.get("fact")
    if not isinstance(fact, str) or not fact.strip():
        raise HTTPError(400, "'fact' must be a non-empty string", field="fact")
    kwargs: dict[str, Any] = {}  # the revision's keyword arguments, each checked against its kind
    for name, value in body.items():
        if name == "fact" or value is None or (isinstance(value, str) and not value.strip()):
            continue  # an empty form field is a field not given
        kind = KINDS[name]
        if kind == "bool" and not isinstance(value, bool):
            raise HTTPError(400, f"'{name}' must be true or false", field=name)
        if kind == "unit" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise HTTPError(400, f"'{name}' must be a number from 0 to 1", field=name)
        if kind not in ("bool", "unit") and not isinstance(value, str):
            raise HTTPError(400, f"'{name}' must be a string", field=name)
        kwargs[name] = value.strip() if isinstance(value, str) else value
    if "key" not in kwargs:  # a person reads the viewer: a key they can read, derived from the fact
        with _refused():  # once the fact is checked: a fact no revision may carry is a 400 naming it
            kwargs["key"] = readable_key(fact)
    async with _session(gate) as fx:
        return await fx.revise(fact.strip(), **kwargs)


# (method, path) -> (handler, reads a JSON body)
ROUTES = {
    ("GET", "/api/graph"): (graph, False),
    ("GET", "/api/scoreboard"): (scoreboard, False),
    ("GET", "/api/log"): (log, False),
    ("GET", "/api/timeline"): (timeline, False),
    ("POST", "/api/revise"): (revise, True),
}

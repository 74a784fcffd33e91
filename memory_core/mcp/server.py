"""FALSIFY as an MCP server (official ``mcp`` Python SDK, ``MCPServer``).

``python main.py [--root DIR] mcp`` serves it over stdio on one data root, which
it opens once (cognee stays warm for the whole session); ``serve --mcp`` mounts
the same tools over streamable HTTP at ``/mcp`` beside the viewer
(:mod:`memory_core.web`). Every tool returns exactly the JSON the matching
``--json`` CLI command prints, as structured content (and as text); bad input is
a tool error (``isError``) carrying the CLI's message, and nothing is written.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from typing import Any, Awaitable, Callable, Mapping, Optional, Union

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from memory_core.api import Falsify
from memory_core.core.errors import VOCABULARY, FalsifyError, error_message, speak
from memory_core.core.fields import FACT_FIELDS, FIELDS
from memory_core.session import Gate, Session
from memory_core.store import data_root

INSTRUCTIONS = """\
FALSIFY is a belief-revision memory for research. It holds an investigation as a graph: a question,
hypotheses (candidate answers), evidence (sourced claims) and conclusions, linked by typed edges
(depends_on, supports, refutes, supersedes, disputes). Every node is alive, refuted, superseded,
invalidated or disputed (two pieces of evidence contradict each other and no policy could rank them:
neither side counts as alive until `resolve` names the winner).
When a new fact contradicts stored evidence, FALSIFY does not just add it: the evidence is refuted,
conclusions that critically depend on it are invalidated (and forgotten when nothing else holds
them), the hypothesis it supported loses to its strongest rival, and all of it is logged so `explain`
can say why. Build the graph with add_beliefs, feed new facts with revise, and answer from recall or
search, which only use beliefs that are still alive. undo reverts the last change completely."""

ADD_BELIEFS = """\
Add beliefs to the memory: a whole investigation, or a fragment added to a question already stored.

Use it when you have gathered hypotheses, evidence or conclusions worth remembering, step by step.
`fragment` is a JSON object (or its JSON text):
  {"question": {"key": "Q", "text": "..."},            # or {"key": "Q"} alone to add to stored question Q
   "hypotheses": [{"key": "A", "statement": "...", "prior": 0.4}],
   "evidence":   [{"key": "E1", "claim": "...", "source_id": "...", "quote": "...", "asserted_at": "2021-03-15",
                   "subject": "...", "predicate": "...", "object": "..."}],   # subject/predicate/object: all or none
   "conclusions":[{"key": "K", "statement": "...", "confidence": 0.8}],
   "edges": [{"type": "depends_on", "from": "K", "to": "E1", "critical": true},   # conclusion/evidence rests on evidence/conclusion
             {"type": "supports", "from": "E1", "to": "A", "weight": 0.8},        # evidence -> hypothesis
             {"type": "refutes", "from": "E2", "to": "A", "weight": 0.5},         # evidence -> hypothesis
             {"type": "supersedes", "from": "E_new", "to": "E_old"}]}             # evidence -> evidence
Keys are unique in the memory; edges may name keys stored earlier. Re-adding what is stored adds only
what is new; a forgotten node is never resurrected. Bad input (unknown field or key, wrong edge types,
weight outside 0..1, ...) is an error naming the offending entry, and nothing is written.
Returns {"question", "added": [keys], "edges_added": ["type from -> to"], "invalidated": [new nodes whose
support was already dead], "notes", "epoch" (null when nothing new was stored)}."""  # noqa: E501 (the tool's description as sent)


def _arguments_text() -> str:
    """The ``revise`` tool's arguments in words, from the request's fields (declared once)."""
    return "\n".join(f"  {f.name}: {'' if f.name == 'fact' else 'optional; '}{f.help}." for f in FIELDS)


REVISE = (
    """\
Revise the memory with one new fact that may contradict what is stored.

Call it whenever you learn something new that bears on stored evidence, especially something that
corrects or overturns it. FALSIFY finds the stored evidence the fact contradicts (vector search, then
a judge), refutes it, invalidates conclusions that critically depend on it (forgetting dead ends),
and promotes the strongest rival of the hypothesis that evidence supported; the fact itself is stored
as new evidence. Arguments:
"""
    + _arguments_text()
    + """
Returns {"fact", "new_evidence", "judge", "candidates", "refuted", "superseded", "invalidated", "weakened",
"promoted", "forgotten", "epoch", "elapsed_ms", ...}: the keys each rule changed. Undo with `undo`.
Offline (no LLM key on the server) a fact in words cannot be judged there: then nothing is recorded and
the result has "to_decide" (a dry run too): the keys of the stored claims it may contradict, best first,
each in "candidates" with its "claim", gate-1 "distance", "lexical" score and fused "rank". YOU are the
judge: read each candidate's claim against the fact; if the fact shows one false or replaced, call
`revise` again with the same fact and `target` set to that key; if it contradicts none of them, call
`revise` again with `record` true (optionally `supports` or `refutes` a hypothesis key, with a
`weight`): the fact is recorded as new evidence."""
)

REVISE_MANY = (
    """\
Revise the memory with many new facts at once (a feed, a day's reading), in order.

Each fact is an object with the `revise` fields ("""
    + ", ".join(FACT_FIELDS)
    + """), e.g.
{"fact": "...", "triple": "S|P|O", "target": "E1", "source": "...", "asserted_at": "2024-05-01", "trust": 0.8}
(only "fact" is required), or just the fact's text. Every fact is validated first: one bad fact
rejects the whole list with an error naming it (`facts line 3: ...`), and nothing is written. Then the
facts go through one pipeline run: each sees the effects of the ones before it, exactly as if revised
one at a time, and the batch is written as one change (one epoch; `undo` reverts the whole batch).
`dry_run`: judge every fact and change nothing. Returns {"result": [one `revise` result per fact]}."""
)

RESOLVE = """\
End a dispute: two stored evidence nodes contradict each other and no policy could rank them (both are
"disputed", linked by a `disputes` edge, e.g. after a revise with policy "preserve_both" or equal dates
and trust). Call it when you have learnt which one is right: `loser` becomes refuted (superseded by
`winner`), `winner` becomes alive, and everything resting on them is relabelled (the loser's dependents
die and dead ends are forgotten; the winner's come back). Both keys must be disputed evidence in one
dispute, or two alive evidence of one question that no judge found contradictory (a fact recorded while
a candidate stayed undecided): then `winner` refutes `loser` by your decision. Anything else is an error
and nothing changes. Returns the shape of `revise`'s result. Undo with `undo`."""

RECALL = """\
Answer a question from the memory: FALSIFY's answer uses only beliefs still alive (evidence,
conclusions, hypotheses of every stored inquiry, found by meaning and by words), next to a plain-RAG
answer over everything ever stored (which may rest on refuted evidence).

Call it to get the current, revised answer. `question`: the question text (default: the stored
question). When nothing stored is near enough, the answer says "nothing stored matches" and lists the
stored questions. `inquiry`: a question's key, answer only from its beliefs. `path`:
"SUBJECT|PREDICATE|PREDICATE..." instead of a question: follow alive triples hop by hop (each hop's
object is the next hop's subject). `epoch`: answer from the beliefs alive after that epoch (as stored
then). `as_of`: an ISO date, a year or a month, answer from the beliefs valid then (valid time); a
question naming its time ("in 2018") is answered as of it (as_of_from_question); a question about the
value before or after another ("before Beth Cole", "the previous CEO", "before 2016") is answered in
that value's timeline (order_from_question). A question no
single fact holds ("the capital of the country of the CEO of X") is answered through a chain of alive
triples when one holds more of it: falsify.through lists the hops. falsify.unheld: the question's words
the answer does not hold (an answer to part of the question); falsify.rival: a supported hypothesis
that holds them when the leading one answers. Returns {"question", "falsify": {"answer",
"nodes", "sources", "unsupported", "matches", "through"?, "unheld"?, ...}, "baseline": {...}, "verdict",
"relevance", "path"?, ...}."""

SEARCH = """\
Find the stored evidence and conclusions nearest in meaning to `query`.

Use it to look up what the memory holds before revising or answering, or to find the key to pass as
`target` to revise. Only alive beliefs unless `include_dead` is true (then refuted, superseded and
invalidated ones too, which is what a plain vector search would return). `top_k`: how many (default 5).
Returns {"result": [{"key", "type", "text", "state", "distance", "sources"}, ...]}, nearest first."""

STATUS = """\
The whole belief graph: every node (key, type, state, weight, epoch, confidence, text, question) and
every edge. Call it to see the current states, e.g. after a revision. `epoch`: the graph as it stood
after that epoch, rebuilt from the revision log (with "epoch": N). Read-only."""

EXPLAIN = """\
Why a node is in its state: the revision history from the log (each epoch, rule, cause and fact), and
for an alive node the justification that currently holds it. Works for forgotten nodes too.
`key`: the node's key. Read-only."""

UNDO = """\
Revert the last change completely: the last revision (refuted, superseded, invalidated and forgotten
nodes come back as they were; the new evidence goes) or the last add_beliefs (what it added goes).
Calling it again reverts the change before that. Use it when a revision was a mistake, e.g. a fact
that turned out false. Returns {"undone": epoch or null when there was nothing to undo, "kind",
"fact", "epoch", "restored", "removed", "reverted", "note"}."""

CHECK = """\
Verify the memory's integrity: the graph and vector stores agree, every state obeys the revision rules
(e.g. no alive conclusion resting critically on refuted evidence), and no change was left half-written.
Call it if results look inconsistent. Returns {"clean": true/false, "problems": [one line each], ...}.
Read-only: repairs are left to the CLI's `check --repair`."""

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITING = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


def tool_error(error: BaseException) -> CallToolResult:
    """A tool error (``isError``) whose text is the line the CLI prints for ``error``."""
    return CallToolResult(content=[TextContent(type="text", text=error_message(error))], is_error=True)


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def build_server(gate: Gate, *, name: str = "falsify") -> MCPServer:
    """The MCP server: FALSIFY's tools and resources over one :class:`Gate`."""
    server = MCPServer(
        name,
        title="FALSIFY belief-revision memory",
        instructions=INSTRUCTIONS,
        version=package_version(),
        log_level="WARNING",
    )

    async def call(tool: str, run: Callable[[Session], Awaitable[Any]]) -> CallToolResult:
        """``run(fx)`` in a session of the gate (``tool``: the tool's name, for the log): its
        result as structured content (a list as ``{"result": [...]}``) and as JSON text; a
        FALSIFY error or bad value as a tool error with the CLI's message."""
        VOCABULARY.set("mcp")  # errors and notes name the tools' arguments (this tool call's context only)
        try:
            async with gate.session() as fx:
                value = await run(fx)
        except (FalsifyError, ValueError) as error:  # InputError is a ValueError too
            return tool_error(speak(error, "mcp") if isinstance(error, FalsifyError) else error)
        except Exception as error:  # noqa: BLE001  (unexpected: one line, secrets masked; the traceback to the log)
            import logging
            import traceback

            # the traceback as the record's text, which the log redaction masks when the record is made;
            # not as its exc_info, which a handler's formatter (cognee's) renders again, unmasked
            trace = "".join(traceback.format_exception(type(error), error, error.__traceback__)).rstrip()
            logging.getLogger("falsify").error("tool %s failed\n%s", tool, trace)
            return tool_error(
                RuntimeError(f"internal error: {type(error).__name__} {' '.join(str(error).split())[:300]}")
            )
        structured = value if isinstance(value, dict) else {"result": value}
        text = await asyncio.to_thread(_dump, value)  # a large result's JSON: off the server's loop
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)

    @server.tool(description=ADD_BELIEFS, annotations=WRITING)
    async def add_beliefs(fragment: Union[dict[str, Any], str]) -> dict[str, Any]:
        # JSON text is read as bytes, never as a path on the server's disk; a lone surrogate (no
        # UTF-8 for it) is passed on as bytes the reader refuses: a tool error, not a crash of the tool
        source = fragment.encode("utf-8", "surrogatepass") if isinstance(fragment, str) else fragment
        return await call("add_beliefs", lambda fx: fx.load(source))

    async def revise(**arguments: Any) -> dict[str, Any]:
        fact = arguments.pop("fact")
        return await call("revise", lambda fx: fx.revise(fact, **arguments))

    revise.__signature__ = revise_signature()  # type: ignore[attr-defined]  # the request's fields
    server.tool(description=REVISE, annotations=WRITING)(revise)

    @server.tool(description=REVISE_MANY, annotations=WRITING)
    async def revise_many(
        facts: list[Union[dict[str, Any], str]], dry_run: bool = False
    ) -> list[dict[str, Any]]:
        return await call("revise_many", lambda fx: fx.revise_many(facts, dry_run=dry_run))

    @server.tool(description=RESOLVE, annotations=WRITING)
    async def resolve(loser: str, winner: str) -> dict[str, Any]:
        return await call("resolve", lambda fx: fx.resolve(loser, winner))

    @server.tool(description=RECALL, annotations=READ_ONLY)
    async def recall(
        question: Optional[str] = None,
        epoch: Optional[int] = None,
        as_of: Optional[str] = None,
        inquiry: Optional[str] = None,
        path: Optional[str] = None,
    ) -> dict[str, Any]:
        return await call(
            "recall", lambda fx: fx.recall(question, epoch=epoch, as_of=as_of, inquiry=inquiry, path=path)
        )

    @server.tool(description=SEARCH, annotations=READ_ONLY)
    async def search(query: str, top_k: int = 5, include_dead: bool = False) -> list[dict[str, Any]]:
        return await call("search", lambda fx: fx.search(query, top_k=top_k, include_dead=include_dead))

    @server.tool(description=STATUS, annotations=READ_ONLY)
    async def status(epoch: Optional[int] = None) -> dict[str, Any]:
        return await call("status", lambda fx: fx.status(epoch=epoch))

    @server.tool(description=EXPLAIN, annotations=READ_ONLY)
    async def explain(key: str) -> dict[str, Any]:
        return await call("explain", lambda fx: fx.explain(key))

    @server.tool(description=UNDO, annotations=WRITING)
    async def undo() -> dict[str, Any]:
        return await call("undo", lambda fx: fx.undo())

    @server.tool(description=CHECK, annotations=READ_ONLY)
    async def check() -> dict[str, Any]:
        return await call("check", lambda fx: fx.check())

    @server.resource(
        "falsify://graph",
        name="graph",
        mime_type="application/json",
        description="The belief graph: the status JSON (every node with its state, every edge).",
    )
    async def graph() -> str:
        async with gate.session() as fx:
            return await asyncio.to_thread(_dump, await fx.status())

    @server.resource(
        "falsify://log",
        name="log",
        mime_type="application/json",
        description="The revision log: one entry per state change (epoch, key, rule, from, to, cause, fact).",
    )
    async def log() -> str:
        async with gate.session() as fx:
            # the whole revision log read and dumped: in a worker thread, the server's loop runs on
            return await asyncio.to_thread(lambda: _dump(fx.revision_log()))

    _keep_json_text(server, "add_beliefs", "fragment")
    _forbid_unknown_arguments(server)
    return server


_TYPES = {"text": str, "key": str, "date": str, "triple": str, "policy": str, "unit": float, "bool": bool}


def revise_signature():
    """The ``revise`` tool's parameters, one per request field (:mod:`memory_core.core.fields`),
    each with its description: the SDK builds the input schema from this signature."""
    import inspect
    from typing import Annotated

    from pydantic import Field as Described

    params = []
    for field in FIELDS:
        kind = _TYPES[field.kind]
        if field.name == "fact":
            annotation, default = Annotated[str, Described(description=field.help)], inspect.Parameter.empty
        elif kind is bool:
            annotation, default = Annotated[bool, Described(description=field.help)], False
        else:
            annotation, default = Annotated[Optional[kind], Described(description=field.help)], None
        params.append(
            inspect.Parameter(
                field.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )
    return inspect.Signature(params, return_annotation=dict[str, Any])


def package_version() -> str:
    """The installed ``falsify`` distribution's version (``serverInfo.version``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("falsify")
    except PackageNotFoundError:  # run from a checkout that was never pip-installed
        import tomllib

        from memory_core.store.data_root import PROJECT_DIR

        try:
            return tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["project"]["version"]
        except (OSError, KeyError, ValueError):
            return "unknown"


def _keep_json_text(server: MCPServer, tool_name: str, argument: str) -> None:
    """The SDK turns an argument given as JSON text into an object with plain ``json.loads``
    before the tool sees it, which keeps the last of a repeated field. FALSIFY's own JSON
    reader refuses repeated fields (as the CLI does), so this argument reaches the tool as
    the caller's text."""
    tool = server._tool_manager.get_tool(tool_name)
    meta = tool.fn_metadata
    metadata_class: Any = type(meta)  # the SDK's FuncMetadata (the type checker does not read mcp)

    class KeepText(metadata_class):
        def pre_parse_json(self, data):
            parsed = super().pre_parse_json(data)
            if isinstance(data.get(argument), str):
                parsed[argument] = data[argument]
            return parsed

    tool.fn_metadata = KeepText.model_construct(
        **{name: getattr(meta, name) for name in type(meta).model_fields}
    )


def _forbid_unknown_arguments(server: MCPServer) -> None:
    """Every tool's arguments are checked strictly against its published input schema: an
    argument a tool does not declare is a tool error (``isError``), never silently
    dropped (a misspelt ``target`` or ``dry_run`` would otherwise revise for real), and a
    value of another type than the schema's is refused, never converted (``"2"`` is not
    an integer, ``"true"``, ``"no"`` and ``1`` are not booleans, a JSON text is not an
    array). Each tool's argument model (the SDK's pydantic model of the function's
    signature) gets ``extra="forbid"``, which also puts ``additionalProperties: false`` in
    its input schema, and is validated in pydantic's strict mode; every problem is one
    ``error: ...`` line naming the argument (:func:`argument_problems`)."""
    from pydantic import ConfigDict

    for tool in server._tool_manager.list_tools():
        base = tool.fn_metadata.arg_model
        strict = type(
            base.__name__,
            (base,),
            {
                "model_config": ConfigDict(**{**base.model_config, "extra": "forbid"}),
                "__module__": base.__module__,
            },
        )
        if isinstance(getattr(tool, "parameters", None), dict):
            tool.parameters = {**tool.parameters, "additionalProperties": False}
        meta = tool.fn_metadata
        checked = _strict_metadata(type(meta), tool.name, tool.parameters)
        tool.fn_metadata = checked.model_construct(
            **{name: getattr(meta, name) for name in type(meta).model_fields}
        )
        tool.fn_metadata.arg_model = strict


_INVALID = "\x00falsify: invalid arguments"


def _strict_metadata(base: Any, tool: str, schema: dict) -> Any:
    """``base``: the SDK's FuncMetadata class (Any: the type checker does not read mcp).
    The SDK's argument handling for one tool, made strict: no JSON-in-a-string guessing
    (the SDK parses a string argument as JSON when the parameter is not a string), strict
    validation, and the problems as one tool error instead of pydantic's report."""
    from pydantic import ValidationError

    class StrictArguments(base):
        def pre_parse_json(self, data):
            return dict(data)

        def validate_arguments(self, arguments_to_validate):
            data = self.pre_parse_json(arguments_to_validate)
            try:
                return self.arg_model.model_validate(data, strict=True).model_dump_one_level()
            except ValidationError as error:
                return {_INVALID: argument_problems(error, tool, schema, data)}

        async def call_fn(self, fn, fn_is_async, arguments, arguments_to_pass_directly=None):
            if _INVALID in arguments:
                return CallToolResult(
                    content=[TextContent(type="text", text="\n".join(arguments[_INVALID]))], is_error=True
                )
            return await super().call_fn(fn, fn_is_async, arguments, arguments_to_pass_directly)

    return StrictArguments


_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def _expected(schema: dict) -> str:
    """What a JSON schema fragment accepts, in words: "an integer", "a string or null"."""
    words: list[str] = []
    for part in schema.get("anyOf") or schema.get("oneOf") or [schema]:
        kinds = part.get("type")
        for kind in kinds if isinstance(kinds, list) else [kinds]:
            word = _TYPE_WORDS.get(kind or "", "")
            if word and word not in words:
                words.append(word)
    return " or ".join(words) or "a value of the published type"


def _given(value: Any) -> str:
    """A value as the caller sent it, in words (never longer than a short quote)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return "the string " + (text if len(text) <= 40 else text[:37] + '..."')
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def argument_problems(error, tool: str, schema: dict, data: dict) -> list[str]:
    """One ``error: ...`` line per argument a tool call got wrong (pydantic's strict errors,
    worded from the published schema): missing, not an argument of the tool, or of the
    wrong type (``top_k: must be an integer, got the string "2"``)."""
    properties = schema.get("properties", {})
    lines: list[str] = []
    seen: set = set()
    for problem in error.errors():
        loc = list(problem.get("loc") or ())
        if not loc:
            continue
        name, path, part, value = (
            str(loc[0]),
            str(loc[0]),
            properties.get(str(loc[0]), {}),
            data.get(str(loc[0])),
        )
        for step in loc[1:]:  # into array items; a union's member tags end the path
            if not isinstance(step, int) or not isinstance(value, list) or step >= len(value):
                break
            # an item is numbered from 1, as every other message names it (``facts line 2: ...``)
            path, part, value = f"{path} line {step + 1}", part.get("items", {}), value[step]
        if path in seen:
            continue
        seen.add(path)
        kind = problem.get("type", "")
        if kind == "extra_forbidden":
            lines.append(
                f"error: {name}: {tool} has no such argument (its arguments: {', '.join(properties) or 'none'})"
            )
        elif kind == "missing":
            lines.append(f"error: {path}: required ({_expected(part)})")
        elif name in properties:
            lines.append(f"error: {path}: must be {_expected(part)}, got {_given(value)}")
        else:
            lines.append(f"error: {path}: {problem.get('msg', 'invalid')}")
    return lines or ["error: the arguments do not match the tool's input schema"]


async def serve_stdio(root=None, alongside=None) -> int:
    """Serve MCP over stdio on one data root until the client closes the pipe. The
    root opens in the background while the client initializes (``initialize`` and
    ``tools/list`` need no cognee; cognee is imported in a worker thread so the loop
    keeps answering); the first tool call waits for it. ``alongside(gate, stop)``, if
    given, runs beside it on the same gate until ``stop`` is set (the shell layer
    serves the viewer and the warm CLI there)."""

    async def open_root():
        await asyncio.to_thread(_import_cognee, root)
        fx = await Falsify.open(root, purpose="python main.py mcp")
        if fx.recovered:
            print(f"[recovery] {fx.recovered}", file=sys.stderr)
        return fx

    gate = Gate(open_root)
    gate.start()
    stop = asyncio.Event()
    side = asyncio.ensure_future(alongside(gate, stop)) if alongside is not None else None
    try:
        await run_stdio_strict(build_server(gate))
    finally:
        stop.set()
        if side is not None:
            try:
                await asyncio.wait_for(side, 10)
            except BaseException as error:  # the side server is best effort; MCP is what was asked for
                if not isinstance(error, (asyncio.CancelledError, asyncio.TimeoutError)):
                    print(f"[viewer] {type(error).__name__}: {error}", file=sys.stderr)
        await gate.close()
    return 0


# ---- FALSIFY's JSON reader in front of the transports ------------------------------------------
# The SDK parses each JSON-RPC message with a reader that keeps the last of a repeated field, so
# {"dry_run": true, "dry_run": false} would revise for real. Every message is read first by
# FALSIFY's one JSON reader (memory_core.core.investigation.loads_json: no repeated fields, no
# NaN/Infinity); one it refuses never reaches the SDK, and a request among them is answered with a
# JSON-RPC error naming the field. Over stdio here; over HTTP in memory_core.web.app.


# The deepest nesting a message may have (the envelope's levels included). The SDK's reader gives
# up at about 200 levels without answering (the client waits for ever); a tool's arguments need a
# handful, an add_beliefs fragment a few more.
MAX_MESSAGE_DEPTH = 64

# a JSON token: a string (escapes included), a bracket, a colon or comma, or a bare scalar
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]|[^\s\[\]{}:,"]+')


def _nesting(text: str) -> tuple[int, Any]:
    """How deep ``text`` nests (read token by token, never parsed: a message too deep for a
    parser is measured all the same) and the ``id`` of its top-level object, if it names one."""
    depth = deepest = 0
    ident = None
    tokens: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth -= 1
        elif depth == 1 and ident is None:
            tokens = (tokens + [token])[-3:]
            if len(tokens) == 3 and tokens[0] == '"id"' and tokens[1] == ":":
                try:
                    ident = json.loads(tokens[2])
                except ValueError:
                    pass
    return deepest, ident


def _too_deep(raw: bytes | str) -> Optional[tuple[Any, str]]:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if text.count("[") + text.count("{") <= MAX_MESSAGE_DEPTH:  # cannot nest deeper: not measured
        return None
    deepest, ident = _nesting(text)
    if deepest <= MAX_MESSAGE_DEPTH:
        return None
    return ident, f"message: nested {deepest} levels deep (the limit is {MAX_MESSAGE_DEPTH} levels)"


def refusal(raw: bytes | str) -> Optional[tuple[Any, str]]:
    """(the message's id, why) when FALSIFY's reader refuses a message the SDK's lenient reader
    would take, or one nested deeper than :data:`MAX_MESSAGE_DEPTH` (which the SDK drops without
    an answer); None when it is fine, or when both readers refuse it (over HTTP the SDK's
    transport answers those with a 400; over stdio FALSIFY's own reader answers them, since the
    SDK's stdio reader drops them unanswered)."""
    from memory_core.core.errors import InputError
    from memory_core.core.investigation import loads_json

    deep = _too_deep(raw)
    if deep is not None:
        ident = deep[0]
        return (ident if isinstance(ident, (int, str)) and not isinstance(ident, bool) else None), deep[1]
    try:
        loads_json(raw, "message")
        return None
    except InputError as error:
        why = str(error)
    try:
        lenient = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    ident = lenient.get("id") if isinstance(lenient, dict) else None
    return (ident if isinstance(ident, (int, str)) and not isinstance(ident, bool) else None), why


_HINT = " (each field may appear once)"


def refusal_message(ident, why: str) -> dict:
    """A JSON-RPC error (invalid request) for a refused message: nothing was done."""
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "error": {
            "code": -32600,
            "message": f"{why}; nothing was done{_HINT if 'appears twice' in why else ''}",
        },
    }


# lone surrogates: a "\ud800" JSON escape (JavaScript's JSON.stringify writes one for a lone
# surrogate) that Python's reader takes and the SDK's reader refuses
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _readable(text: str) -> str:
    """``text`` as an answer may carry it: a lone surrogate written as its escape (the SDK's
    writer cannot encode one, and would stop the transport)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _answerable(ident: Any) -> Any:
    """A request's id as an answer can echo it (None: it has none, or one that cannot be sent)."""
    if isinstance(ident, bool) or not isinstance(ident, (int, str)):
        return None
    if isinstance(ident, str) and _SURROGATE.search(ident):
        return None
    return ident


def _first_surrogate(value: Any, path: str) -> Optional[tuple[str, str]]:
    """(where, the lone surrogate found first) in a JSON value, ``path`` naming it: an array's
    item numbered from 1 (``facts line 2``), an object's field after a colon (``fact``)."""
    if isinstance(value, str):
        bad = _SURROGATE.search(value)
        if bad:
            return path, f"U+{ord(bad.group()):04X} at position {bad.start()}"
        return None
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _first_surrogate(item, f"{path} line {i + 1}")
            if found:
                return found
    if isinstance(value, dict):
        for name, item in value.items():
            inner = f"{path}: {name}" if path else str(name)
            bad = _SURROGATE.search(name)
            if bad:
                return _readable(inner), f"U+{ord(bad.group()):04X} in the field's name"
            found = _first_surrogate(item, inner)
            if found:
                return found
    return None


def unanswered(raw: str) -> Optional[dict]:
    """The answer to a request that FALSIFY's reader takes but the SDK's stdio transport would drop
    without a word (the client waits for ever); None when the SDK answers it (or it is no request).

    * A lone surrogate escape anywhere in the message: the SDK's reader cannot read it. In a tool's
      arguments it is a tool error naming the argument, as any other bad argument is; elsewhere a
      JSON-RPC error (invalid params). Nothing runs either way.
    * A message that is not a JSON-RPC message the SDK accepts (``"method": 7``), or not JSON at all:
      a JSON-RPC error (invalid request, parse error) with the id the message names, if any."""
    from pydantic import ValidationError
    from mcp_types import jsonrpc_message_adapter

    from memory_core.core.errors import InputError
    from memory_core.core.investigation import loads_json

    try:
        message = loads_json(raw, "message")
    except InputError as error:  # FALSIFY's reader refuses it, and (refusal() found) Python's lenient one too
        try:
            jsonrpc_message_adapter.validate_json(raw, by_name=False)
            return None  # the SDK reads it (an integer too long for Python's reader): it answers
        except ValidationError:
            pass
        return _error(_answerable(_nesting(raw)[1]), -32700, f"parse error: {error}; nothing was done")
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None  # a notification or a response: nothing to answer
    ident = _answerable(message.get("id"))
    if _SURROGATE_ESCAPE.search(raw):
        found = _first_surrogate(message, "")
        if found is not None:
            where, what = found
            why = f"not valid Unicode (a lone surrogate, {what}: a \\u{what[2:6].lower()} JSON escape)"
            params = message.get("params")
            arguments = params.get("arguments") if isinstance(params, dict) else None
            if (
                ident is not None
                and message.get("method") == "tools/call"
                and isinstance(arguments, dict)
                and where.startswith("params: arguments: ")
            ):
                text = f"error: {where[len('params: arguments: ') :]}: {why}; nothing was done"
                return {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "result": {"content": [{"type": "text", "text": text}], "isError": True},
                }
            return _error(ident, -32602, f"{where}: {why}; nothing was done")
    try:
        jsonrpc_message_adapter.validate_python(message)
        return None
    except ValidationError:
        pass
    try:
        jsonrpc_message_adapter.validate_json(raw, by_name=False)
        return None  # the SDK reads it after all
    except ValidationError as error:
        problem: Mapping[str, Any] = next(iter(error.errors()), {})
        where = ".".join(str(step) for step in problem.get("loc", ()) if not isinstance(step, int))
        detail = f" ({where}: {problem.get('msg', 'invalid')})" if where else ""
        return _error(ident, -32600, _readable(f"not a JSON-RPC request{detail}; nothing was done"))


def _error(ident: Any, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": _readable(message)}}


class _StrictLines:
    """Standard input's lines for the SDK's stdio transport, each read by FALSIFY's reader first;
    a refused request gets its error through ``answer`` (the transport's write stream, set once it
    exists), a refused notification or response is dropped. A request the SDK's reader would drop
    unanswered (:func:`unanswered`) is answered here too, and never reaches the SDK."""

    def __init__(self, lines):
        self._lines = lines
        self.answer = None
        self._ready = asyncio.Event()

    def attach(self, write_stream) -> None:
        self.answer = write_stream
        self._ready.set()

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._lines.__anext__()
            if not line.strip():
                return line
            refused = refusal(line)
            if refused is not None:
                ident, why = refused
                print(f"[mcp] refused a message: {_readable(why)}", file=sys.stderr)
                answer = refusal_message(_answerable(ident), _readable(why)) if ident is not None else None
            else:
                answer = unanswered(line)
                if answer is None:
                    return line
                said = answer.get("error", {}).get("message") or answer["result"]["content"][0]["text"]
                print(f"[mcp] answered a message the SDK cannot read: {said}", file=sys.stderr)
            if answer is not None:
                from mcp.shared.message import SessionMessage
                from mcp_types import jsonrpc_message_adapter

                await self._ready.wait()
                await self.answer.send(SessionMessage(jsonrpc_message_adapter.validate_python(answer)))


class _InputLines:
    """Standard input's lines, as the SDK reads them (UTF-8, an undecodable byte replaced), read
    on the event loop where it can watch the descriptor (a pipe, a terminal, a socket): a read
    waiting there is cancelled at once, so Ctrl-C stops the server at once. (A blocking read in a
    worker thread, the SDK's own way, cannot be cancelled: the process waited for the next line
    or end of file, holding the root, which on a terminal never comes.) A regular file (which the
    loop cannot watch, and whose read never waits) is read in a worker thread. A terminal that
    hangs up (EIO) ends the input as end of file does."""

    CHUNK = 1 << 16

    def __init__(self, fd: int = 0):
        self._fd = fd
        self._buffer = b""
        self._ended = False

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        while b"\n" not in self._buffer and not self._ended:
            chunk = await self._read()
            if chunk == b"":
                self._ended = True
            elif chunk is not None:
                self._buffer += chunk
        if not self._buffer:
            raise StopAsyncIteration
        line, newline, self._buffer = self._buffer.partition(b"\n")
        return (line + newline).decode("utf-8", "replace")

    async def _read(self) -> Optional[bytes]:
        """The next bytes (b"": end of input; None: none yet)."""
        loop = asyncio.get_running_loop()
        readable: asyncio.Future[None] = loop.create_future()

        def ready() -> None:
            if not readable.done():
                readable.set_result(None)

        try:
            loop.add_reader(self._fd, ready)
        except (OSError, ValueError):  # a regular file: the loop cannot watch it, and its read never waits
            return await asyncio.to_thread(self._read_now)
        try:
            await readable
        finally:
            loop.remove_reader(self._fd)
        return self._read_now()

    def _read_now(self) -> Optional[bytes]:
        try:
            return os.read(self._fd, self.CHUNK)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:  # EIO: the terminal hung up; EBADF: closed
            return b""


async def run_stdio_strict(server: MCPServer) -> None:
    """``server.run_stdio_async()`` with FALSIFY's JSON reader in front of the SDK's. Standard
    input is read here (:class:`_InputLines`: as the SDK reads it, UTF-8 lines, but a read that a
    cancellation stops at once); the SDK still claims standard output."""
    from mcp.server.stdio import stdio_server

    lines = _StrictLines(_InputLines(sys.stdin.fileno()))
    async with stdio_server(stdin=lines) as (read_stream, write_stream):
        lines.attach(write_stream)
        low = server._lowlevel_server
        await low.run(read_stream, write_stream, low.create_initialization_options())


def _import_cognee(root) -> None:
    from memory_core.store import backends, settings

    # this server's settings (read again when the project's .env adds any)
    chosen = settings.reload() if data_root.load_dotenv_file() else settings.current()
    data_root.configure(root, backends.choose(chosen))
    data_root.import_cognee()

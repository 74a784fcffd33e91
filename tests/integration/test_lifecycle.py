"""The lifecycle and the protocol through the public API, in-process on the session's root:

* a closed facade refuses every method (``FacadeClosed``) and writes nothing;
* the gate tries a failed opening again;
* MCP tool arguments are checked strictly against the published schema (the official SDK's
  client, in-process), one ``error: ...`` line per problem, nothing written;
* each caller's vocabulary: no CLI flag reaches a Python or MCP caller (errors, notes,
  rationales), an ``InputError`` carries its field, the viewer's API names the body's field;
* the offline protocol on the API, MCP and the viewer's API: ``to_decide`` in a dry run,
  ``record`` records the fact unjudged, ``supports``/``refutes`` with a weight add that edge,
  notes say what happened;
* ``Origin: null`` is refused."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from mcp import Client

from conftest import investigation, seed_with_prefix
from test_write_rollback import mine
from memory_core import FacadeClosed, Falsify, InputError
from memory_core.core.errors import render
from memory_core.mcp.server import build_server
from memory_core.session import Gate
from memory_core.store.lock import WriterLock

AUDIT = "Forensic audit: the March QA report was back-dated."
WORDS = "The supplier email about the valve turned out to be genuine."
FLAG = re.compile(r"(?<![\w`-])--[a-z][a-z-]+")


def flags_in(value) -> list[str]:
    """Every CLI flag in a result's or message's words (a quoted `command` excepted)."""
    text = json.dumps(value) if not isinstance(value, str) else value
    text = re.sub(r"`[^`]*`", "", text)
    return FLAG.findall(text)


async def test_a_closed_facade_refuses_every_method_and_writes_nothing(root, app, prefix):
    await app.load(seed_with_prefix(prefix))
    fx = await Falsify.open(root, lock=False)
    await fx.close()
    epoch = app.journal.epoch()
    calls = {
        "load": lambda: fx.load(seed_with_prefix(prefix + "x")),
        "load_file": lambda: fx.load_file("nope.json"),
        "revise": lambda: fx.revise(AUDIT, target=f"{prefix}E_qa"),
        "revise_many": lambda: fx.revise_many([AUDIT]),
        "resolve": lambda: fx.resolve(f"{prefix}E_qa", f"{prefix}E_email"),
        "undo": lambda: fx.undo(),
        "check": lambda: fx.check(repair=True),
        "status": lambda: fx.status(),
        "snapshot": lambda: fx.snapshot(),
        "recall": lambda: fx.recall(),
        "search": lambda: fx.search("QA"),
        "explain": lambda: fx.explain("K"),
        "warm_up": lambda: fx.warm_up(),
        "revision_log": lambda: fx.revision_log(),
        "timeline": lambda: fx.timeline(),
        "default_question": lambda: fx.default_question(),
        "forgotten": lambda: fx.forgotten(),
    }
    for name, make in calls.items():
        with pytest.raises(FacadeClosed) as raised:
            result = make()
            if hasattr(result, "__await__"):
                await result
        assert name in str(raised.value) and raised.value.exit_code == 1
    await fx.close()  # twice: harmless
    assert app.journal.epoch() == epoch
    assert (await app.status())["nodes"]  # the open facade of the same root is untouched


async def test_a_read_asked_during_a_write_sees_the_whole_change(app, prefix):
    """A status and a recall asked while a revision is being written (its new node stored,
    the refutation it brings not yet) wait for it and see all of it."""
    await app.load(seed_with_prefix(prefix))
    before = mine(await app.status(), prefix)
    reads: list = []

    def hook(name: str) -> None:
        if name == "nodes" and not reads:
            reads.append(asyncio.ensure_future(app.status()))
            reads.append(asyncio.ensure_future(app.recall(AUDIT)))

    app.hook = hook
    try:
        await app.revise(AUDIT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    finally:
        app.hook = None
    after = mine(await app.status(), prefix)
    assert reads and after != before and after["nodes"][f"{prefix}E_qa"]["state"] != "alive"
    assert mine(await reads[0], prefix) == after
    recalled = await reads[1]
    assert recalled == await app.recall(AUDIT)


async def test_calls_at_once_run_in_the_order_they_were_made(app, prefix):
    """A revise then an undo, gathered: the undo reverts that revise (the revise's early
    detection lets its lock go for a moment; the undo still waits for the whole revise)."""
    await app.load(seed_with_prefix(prefix))
    loaded = app.journal.epoch()
    revised, undone = await asyncio.gather(
        app.revise(AUDIT, target=f"{prefix}E_qa", key=f"{prefix}F_order"), app.undo()
    )
    assert revised["epoch"] == loaded + 1 and undone["undone"] == loaded + 1, (revised, undone)
    keys = {n["key"] for n in (await app.status())["nodes"]}
    assert f"{prefix}E_qa" in keys and f"{prefix}F_order" not in keys


async def test_closing_waits_for_the_write_under_way_and_refuses_the_calls_waiting(
    root, app, prefix, tmp_path
):
    """``close`` while a revision is being written: the revision lands whole, a load queued
    behind it is refused (``FacadeClosed``, nothing written), and close returns after both."""
    await app.load(seed_with_prefix(prefix))
    problems = set((await app.check())["problems"])
    fx = await Falsify.open(root, lock=False)
    # a writer lock of its own (the session's facade holds the root's; a lock-less facade writes nothing)
    fx._lock = WriterLock(tmp_path / "writer.lock", "pytest", 0).acquire(0)
    queued: list = []

    def hook(name: str) -> None:
        if name == "nodes" and not queued:
            queued.append(asyncio.ensure_future(fx.load(seed_with_prefix(prefix + "x"))))
            queued.append(asyncio.ensure_future(fx.close()))

    fx.stores.hook = hook
    result = await fx.revise(AUDIT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    assert result["new_evidence"] == f"{prefix}F_audit"
    with pytest.raises(FacadeClosed, match="load: this Falsify is closed"):
        await queued[0]
    await queued[1]
    assert fx.closed
    status = await app.status()
    keys = {n["key"] for n in status["nodes"]}
    assert f"{prefix}F_audit" in keys and not any(k.startswith(prefix + "x") for k in keys)
    assert set((await app.check())["problems"]) <= problems


async def test_the_gate_tries_a_failed_opening_again():
    attempts = []

    async def opening():
        attempts.append(1)
        if len(attempts) == 1:
            raise InputError("busy the first time")
        return "the facade"

    gate = Gate(opening)
    with pytest.raises(InputError):
        await gate.ready()
    assert await gate.ready() == "the facade" and len(attempts) == 2
    assert await gate.ready() == "the facade" and len(attempts) == 2  # opened once it worked


def mcp(app) -> Client:
    """The official SDK's client on FALSIFY's MCP server, in-process (over one gate on ``app``)."""
    return Client(build_server(Gate(app)))


async def test_mcp_arguments_are_checked_strictly_against_the_schema(app, prefix):
    async with mcp(app) as mcp_client:
        await app.load(seed_with_prefix(prefix))
        tools = {t.name: t for t in (await mcp_client.list_tools()).tools}
        before = app.journal.epoch()
        wrong = [
            (
                "search",
                {"query": "QA", "top_k": "2"},
                ['error: top_k: must be an integer, got the string "2"'],
            ),
            ("status", {"epoch": "1"}, ['error: epoch: must be an integer or null, got the string "1"']),
            (
                "search",
                {"query": "QA", "include_dead": "yes"},
                ['error: include_dead: must be true or false, got the string "yes"'],
            ),
            (
                "search",
                {"query": "QA", "include_dead": 1},
                ["error: include_dead: must be true or false, got the number 1"],
            ),
            (
                "revise",
                {"fact": AUDIT, "target": f"{prefix}E_qa", "dry_run": "true"},
                ['error: dry_run: must be true or false, got the string "true"'],
            ),
            (
                "revise",
                {"fact": AUDIT, "target": f"{prefix}E_qa", "dry_run": "no", "bogus": 1},
                [
                    'error: dry_run: must be true or false, got the string "no"',
                    "error: bogus: revise has no such argument (its arguments: "
                    + ", ".join(tools["revise"].input_schema["properties"])
                    + ")",
                ],
            ),
            (
                "revise",
                {"fact": AUDIT, "record": 1},
                ["error: record: must be true or false, got the number 1"],
            ),
            (
                "revise_many",
                {"facts": json.dumps([AUDIT])},
                ['error: facts: must be an array, got the string "[\\"Forensic ...'],
            ),
            (
                "revise_many",
                {"facts": [AUDIT, 7]},
                ["error: facts line 2: must be an object or a string, got the number 7"],
            ),
            ("revise", {}, ["error: fact: required (a string)"]),
        ]
        for name, arguments, lines in wrong:
            result = await mcp_client.call_tool(name, arguments)
            assert result.is_error, (name, arguments)
            got = result.content[0].text.split("\n")
            assert len(got) == len(lines) and all(
                g == e or (e.endswith("...") and g.startswith(e[:-3])) for g, e in zip(got, lines)
            ), result.content[0].text
        assert app.journal.epoch() == before  # nothing ran
        ok = await mcp_client.call_tool("search", {"query": "QA report", "top_k": 2, "include_dead": False})
        assert not ok.is_error and len(ok.structured_content["result"]) == 2
        float_from_int = await mcp_client.call_tool(  # JSON's integer is a number: trust 1 is allowed
            "revise",
            {"fact": AUDIT, "target": f"{prefix}E_qa", "source": "audit", "trust": 1, "dry_run": True},
        )
        assert not float_from_int.is_error, float_from_int.content[0].text
        schema = tools["revise"].input_schema["properties"]
        assert {"record", "supports", "refutes", "weight"} <= set(schema) and all(
            p.get("description") for p in schema.values()
        )


async def test_no_cli_flag_reaches_a_python_or_mcp_caller(app, prefix):
    async with mcp(app) as mcp_client:
        await app.load(seed_with_prefix(prefix))
        errors = []
        for kwargs in (
            {"target": f"{prefix}NOPE"},
            {"triple": "only|two"},
            {"trust": 2, "source": "s"},
            {"trust": 0.5},
            {"policy": "loudest"},
            {"valid_from": "yesterday"},
            {"record": True, "target": f"{prefix}E_qa"},
            {"weight": 0.4},
            {"supports": f"{prefix}NOPE", "record": True},
            {"key": "bad key"},
        ):
            with pytest.raises(InputError) as raised:
                await app.revise(AUDIT, **kwargs)
            errors.append(str(raised.value))
            assert raised.value.field in kwargs, (kwargs, raised.value.field)
        with pytest.raises(InputError) as raised:
            await app.resolve(f"{prefix}NOPE", f"{prefix}E_qa")
        errors.append(str(raised.value))
        assert errors[0].startswith(f"target='{prefix}NOPE'")
        assert "record=True" in errors[6] and "target" in errors[6]
        offline = await app.revise(WORDS, dry_run=True)
        pinned = await app.revise(AUDIT, target=f"{prefix}E_qa", dry_run=True)
        many = await app.revise_many([{"fact": AUDIT, "target": f"{prefix}E_qa"}, WORDS], dry_run=True)
        assert "target=KEY" in offline["note"] and "record=True" in offline["note"]
        assert pinned["candidates"][0]["rationale"] == f"pinned: target names {prefix}E_qa; gates skipped"
        assert flags_in(errors) == [] and flags_in([offline, pinned, many]) == []
        mcp_texts = []
        for name, arguments in (
            ("revise", {"fact": AUDIT, "target": f"{prefix}NOPE"}),
            ("revise", {"fact": AUDIT, "trust": 0.5}),
            ("revise", {"fact": WORDS, "dry_run": True}),
            ("revise", {"fact": AUDIT, "target": f"{prefix}E_qa", "dry_run": True}),
            ("revise_many", {"facts": [WORDS], "dry_run": True}),
            ("resolve", {"loser": f"{prefix}NOPE", "winner": f"{prefix}E_qa"}),
        ):
            result = await mcp_client.call_tool(name, arguments)
            mcp_texts.append(result.content[0].text)
        assert mcp_texts[0].startswith(f"error: target '{prefix}NOPE'")
        assert "record: true" in mcp_texts[2] and "target KEY" in mcp_texts[2]
        assert flags_in(mcp_texts) == [], mcp_texts
        decided = await app.resolve(f"{prefix}E_qa", f"{prefix}E_email")  # a result, and the log's fact
        assert decided["fact"] == f"resolved: {prefix}E_email wins over {prefix}E_qa"
        assert flags_in(decided) == [] and flags_in(app.timeline()[-1]) == []
        # the CLI's words stay the CLI's
        assert (
            render("decide yourself: --target KEY, or --record", "cli")
            == "decide yourself: --target KEY, or --record"
        )


def own_investigation(prefix: str) -> tuple[str, str]:
    """An investigation whose claims carry a word no other test's do (the session's root is
    shared: the same claims under other prefixes would tie with these), and a fact in words
    near them."""
    word = f"zq{prefix.strip('_')}"
    inv = investigation(
        prefix,
        hypotheses=[
            {"key": "A", "statement": f"The {word} plant passed"},
            {"key": "B", "statement": f"The {word} plant failed"},
        ],
        evidence=[
            {"key": "E_report", "claim": f"The {word} inspector's report says the valves passed."},
            {"key": "E_email", "claim": f"A {word} supplier email says the valves were swapped."},
        ],
        edges=[
            {"type": "supports", "from": "E_report", "to": "A"},
            {"type": "supports", "from": "E_email", "to": "B"},
        ],
    )
    return inv, f"The {word} supplier email about the valves turned out to be genuine."


async def test_the_offline_protocol_on_the_api(app, prefix):
    inv, WORDS = own_investigation(prefix)
    await app.load(inv)
    epoch = app.journal.epoch()
    # scoped to its question: other tests record restatements of such a fact in the session's
    # root, nearer to it than its own claims
    dry = await app.revise(WORDS, dry_run=True, inquiry=f"{prefix}Q")
    assert dry["dry_run"] is True and dry["new_evidence"] is None and dry["epoch"] is None
    assert dry["to_decide"] and dry["to_decide"] == [
        c["key"] for c in dry["candidates"] if c["relation"] is None
    ]
    own = [k for k in dry["to_decide"] if k.startswith(prefix)]
    assert own == dry["to_decide"] and own[0] == f"{prefix}E_email"  # its own claim, nearest first
    real = await app.revise(WORDS, inquiry=f"{prefix}Q")
    assert real["to_decide"] == own  # the same decision offered, not recorded
    assert real["epoch"] is None and app.journal.epoch() == epoch
    # none of these: recorded, unjudged, supporting hypothesis B with weight 0.7
    recorded = await app.revise(
        WORDS, record=True, supports=f"{prefix}B", weight=0.7, key=f"{prefix}F_genuine"
    )
    assert recorded["new_evidence"] == f"{prefix}F_genuine" and recorded["epoch"] == epoch + 1
    assert recorded["judge"] == "caller" and recorded["refuted"] == [] and "to_decide" not in recorded
    assert {c["relation"] for c in recorded["candidates"]} == {"consistent"}
    assert recorded["edges_added"] == [f"supports {prefix}F_genuine -> {prefix}B"]
    assert "decide yourself" not in recorded["note"] and "recorded as" in recorded["note"]
    assert "supports " + prefix + "B (weight 0.7)" in recorded["note"]
    status = await app.status()
    node = next(n for n in status["nodes"] if n["key"] == f"{prefix}F_genuine")
    assert node["state"] == "alive" and node["question"] == f"{prefix}Q"
    edge = next(e for e in status["edges"] if e["from"] == f"{prefix}F_genuine" and e["type"] == "supports")
    assert edge["to"] == f"{prefix}B" and edge["weight"] == 0.7
    undone = await app.undo()  # the fact and its edge go together
    assert undone["undone"] == epoch + 1
    status = await app.status()
    assert not any(n["key"] == f"{prefix}F_genuine" for n in status["nodes"])
    assert not any(e["from"] == f"{prefix}F_genuine" for e in status["edges"])
    refuting = await app.revise(WORDS, record=True, refutes=f"{prefix}A")
    assert refuting["edges_added"] == [f"refutes {refuting['new_evidence']} -> {prefix}A"]
    assert "weight 0.5" in refuting["note"]  # the default weight
    await app.undo()


async def test_an_applied_revision_says_what_was_left_unjudged(app, prefix):
    """A batch whose first fact is pinned and whose second is undecided: the first is applied,
    the second's note says nothing was recorded and offers the decisions; never 'decide
    yourself' on a revision that was applied."""
    await app.load(seed_with_prefix(prefix))
    results = await app.revise_many([{"fact": AUDIT, "target": f"{prefix}E_qa"}, WORDS])
    assert results[0]["refuted"] == [f"{prefix}E_qa"] and "decide yourself" not in results[0]["note"]
    assert results[1]["new_evidence"] is None and results[1].get("to_decide")
    await app.undo()


async def test_the_offline_protocol_through_mcp(app, prefix):
    async with mcp(app) as mcp_client:
        await app.load(seed_with_prefix(prefix))
        offered = (await mcp_client.call_tool("revise", {"fact": WORDS, "dry_run": True})).structured_content
        assert offered["to_decide"] and offered["dry_run"] is True
        decided = await mcp_client.call_tool(
            "revise", {"fact": WORDS, "record": True, "supports": f"{prefix}C", "weight": 0.25}
        )
        assert not decided.is_error, decided.content[0].text
        result = decided.structured_content
        assert result["judge"] == "caller" and result["edges_added"] == [
            f"supports {result['new_evidence']} -> {prefix}C"
        ]
        assert flags_in(result) == []
        await app.undo()


async def test_the_offline_protocol_through_the_viewers_api(app, prefix):
    from memory_core.web import routes
    from memory_core.web.guard import HTTPError

    await app.load(seed_with_prefix(prefix))
    gate = Gate(app)
    offered = await routes.revise(gate, {"fact": WORDS, "dry_run": True})
    assert offered["to_decide"]
    with pytest.raises(HTTPError) as raised:
        await routes.revise(gate, {"fact": WORDS, "record": "yes"})
    assert raised.value.status == 400 and raised.value.field == "record"
    with pytest.raises(HTTPError) as raised:
        await routes.revise(gate, {"fact": WORDS, "record": True, "supports": f"{prefix}B", "weight": 3})
    assert raised.value.status == 400 and raised.value.field == "weight" and "--" not in raised.value.message
    assert raised.value.message.startswith("weight:")
    with pytest.raises(HTTPError) as raised:
        await routes.revise(gate, {"fact": WORDS, "record": True, "target": f"{prefix}E_qa"})
    assert raised.value.field == "record" and "record: true" in raised.value.message
    recorded = await routes.revise(
        gate, {"fact": WORDS, "record": True, "refutes": f"{prefix}B", "weight": 0.4}
    )
    assert recorded["judge"] == "caller" and recorded["edges_added"] == [
        f"refutes {recorded['new_evidence']} -> {prefix}B"
    ]
    await app.undo()


def test_origin_null_is_refused():
    """An opaque origin (a sandboxed frame, a file: page) is never this server's page: 403 on the
    API and on /mcp; the page's own origin passes."""
    import threading

    from test_server import StandInApp, post_json, request

    from memory_core.web import server as srv

    server = srv.make_server(StandInApp(), port=0, mcp=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        for path in ("/api/graph", "/mcp"):
            assert request(server, "GET", path, headers={"Origin": "null"})[0] == 403
        assert post_json(server, {"fact": "x"}, headers={"Origin": "null"})[0] == 403
        assert post_json(server, {"fact": "x"}, headers={"Origin": f"http://{host}:{port}"})[0] == 200
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)

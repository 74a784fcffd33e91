"""The gate's typed session, in-process on the session's root (the real facade):

* ``async with gate.session() as fx`` lends the facade one caller at a time: a second
  session waits for the first; a session cancelled while waiting, or inside its block,
  gives the turn back; ``fx`` used after its block refuses (``SessionEnded``);
* the session offers every facade method with the facade's own signature;
* whether a call writes is declared once, on the facade's methods (``@writes``, read by
  ``changes_graph``): a write that succeeds is announced to the subscribers when the
  session ends (a revision with its result), a dry run, a ``check`` without ``repair``, a
  read or a refused call is not; what succeeded before an error in the same session is;
* the warm CLI shares the declaration: a forwarded command is announced exactly when the
  facade method it runs writes (``revise --dry-run`` and ``check`` are not), and the
  client's own list of writing commands agrees with the declaration."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from conftest import seed_with_prefix
from memory_core import Falsify, InputError
from memory_core.api import changes_graph
from memory_core.session import Gate, Session, SessionEnded
from memory_core.shell import remote, warm_server

AUDIT = "Forensic audit: the March QA report was back-dated."


def events(queue: asyncio.Queue) -> list[tuple]:
    """The announcements waiting in ``queue``: (kind, the result's epoch or None)."""
    found = []
    while not queue.empty():
        event = queue.get_nowait()
        found.append((event["kind"], event["result"]["epoch"] if event["result"] is not None else None))
    return found


async def test_a_session_announces_what_it_changed_and_nothing_else(app, prefix):
    gate = Gate(app)
    heard = gate.subscribe()
    async with gate.session() as fx:
        loaded = await fx.load(seed_with_prefix(prefix))
    assert loaded["epoch"] is not None and events(heard) == [("load", None)]

    async with gate.session() as fx:  # reads, a dry run and a check without repair change nothing
        preview = await fx.revise(AUDIT, target=f"{prefix}E_qa", dry_run=True)
        assert preview["dry_run"] and (await fx.revise_many([AUDIT], dry_run=True))[0]["dry_run"]
        await fx.check()
        assert (await fx.status())["nodes"] and (await fx.snapshot())["nodes"]
        assert (await fx.explain(f"{prefix}E_qa"))["key"] == f"{prefix}E_qa"
        await fx.recall(inquiry=f"{prefix}Q")
        await fx.search("QA report")
        assert isinstance(fx.revision_log(), list) and fx.timeline() and isinstance(fx.forgotten(), dict)
        fx.default_question()
    assert events(heard) == [] and gate.version == 1

    async with gate.session() as fx:
        revised = await fx.revise(AUDIT, target=f"{prefix}E_qa")
        assert f"{prefix}E_qa" in revised["refuted"]
    assert events(heard) == [("revise", revised["epoch"])]  # with its result: the viewer plays it

    async with gate.session() as fx:
        undone = await fx.undo()
        # a repair may change the graph: announced (after the undo: on the shared root a repair of
        # another test's leftovers would be the last change, which undo refuses to reach past)
        await fx.check(repair=True)
    assert undone["undone"] == revised["epoch"], undone
    assert events(heard) == [("undo", None), ("check", None)]
    assert gate.version == 4


async def test_a_refused_call_is_not_announced_and_what_came_before_it_is(app, prefix):
    gate = Gate(app)
    heard = gate.subscribe()
    with pytest.raises(InputError):
        async with gate.session() as fx:
            await fx.load(seed_with_prefix(prefix))
            await fx.revise(AUDIT, target=f"{prefix}NOPE")
    assert events(heard) == [("load", None)]
    async with gate.session() as fx:  # the turn was given back
        assert (await fx.status())["nodes"]


async def test_sessions_take_turns_and_a_cancelled_one_gives_its_turn_back(app):
    gate = Gate(app)
    order: list[str] = []
    release = asyncio.Event()

    async def first():
        async with gate.session() as fx:
            order.append("first in")
            await fx.status()
            await release.wait()
            order.append("first out")

    async def second():
        async with gate.session() as fx:
            order.append("second in")
            await fx.status()
            order.append("second out")

    one = asyncio.ensure_future(first())
    while not order:
        await asyncio.sleep(0)
    two = asyncio.ensure_future(second())
    waiting = asyncio.ensure_future(second())
    for _ in range(50):
        await asyncio.sleep(0)
    assert order == ["first in"]  # both wait for the first session's turn
    waiting.cancel()  # cancelled while waiting: it never held the turn
    release.set()
    await asyncio.gather(one, two)
    assert waiting.cancelled() and order == ["first in", "first out", "second in", "second out"]

    stuck = asyncio.ensure_future(first())  # cancelled inside its block: the turn is given back
    release.clear()
    while order[-1] != "first in":
        await asyncio.sleep(0)
    stuck.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stuck
    await asyncio.wait_for(second(), 60)
    assert order[-2:] == ["second in", "second out"]


async def test_a_session_used_after_its_block_refuses(app):
    gate = Gate(app)
    async with gate.session() as fx:
        assert fx.facade is app
    with pytest.raises(SessionEnded):
        await fx.status()
    with pytest.raises(SessionEnded):
        fx.revision_log()
    with pytest.raises(SessionEnded):
        fx.facade


def test_the_session_offers_every_facade_method_with_its_signature():
    lifecycle = {"open", "attach", "close", "warm_up"}
    methods = {
        name
        for name, value in vars(Falsify).items()
        if inspect.isfunction(value) and not name.startswith("_") and name not in lifecycle
    }
    assert methods == {
        "load",
        "load_file",
        "revise",
        "revise_many",
        "resolve",
        "undo",
        "check",
        "status",
        "snapshot",
        "recall",
        "search",
        "explain",
        "revision_log",
        "timeline",
        "default_question",
        "forgotten",
    }
    for name in methods:
        mine, theirs = vars(Session)[name], vars(Falsify)[name]
        assert inspect.signature(mine) == inspect.signature(theirs), name
        assert inspect.iscoroutinefunction(mine) == inspect.iscoroutinefunction(theirs), name


def test_which_calls_write_is_declared_once_on_the_facade():
    def writing(arguments):
        return {
            name
            for name, value in vars(Falsify).items()
            if inspect.isfunction(value) and changes_graph(value, arguments)
        }

    assert writing({}) == {"load", "load_file", "revise", "revise_many", "resolve", "undo"}
    assert writing({"repair": True}) == writing({}) | {"check"}
    assert writing({"dry_run": True, "repair": True}) == set()
    assert not changes_graph(Session.revise, {})  # the declaration is the facade's, nobody else's


def test_the_warm_cli_shares_the_declaration():
    assert set(warm_server.RUNS) == remote.FORWARDED
    # the client (standard library only, it cannot import the facade) words its errors from its own
    # list of writing commands: the declaration's
    assert remote.WRITERS == {
        command for command, method in warm_server.RUNS.items() if changes_graph(method, {"repair": True})
    }


async def test_a_warm_command_is_announced_when_its_method_writes(root, app, prefix):
    gate = Gate(app)
    heard = gate.subscribe()
    async with gate.session() as fx:
        await fx.load(seed_with_prefix(prefix))
    events(heard)

    async def command(*argv: str) -> dict:
        request = {"argv": ["--root", str(root), *argv, "--json"], "cwd": "/"}
        answer = await warm_server.run_command(gate, request, None)
        assert answer["exit"] == 0, answer
        return answer

    await command("revise", AUDIT, "--target", f"{prefix}E_qa", "--dry-run")
    await command("status")
    await command("check")
    assert events(heard) == []
    await command("revise", AUDIT, "--target", f"{prefix}E_qa")
    assert events(heard) == [("cli revise", None)]
    await command("undo")
    assert events(heard) == [("cli undo", None)]
    assert not app.closed  # the command's own close left the server's facade open

"""``check --repair`` never rewrites the past (the session's root, through the Python API;
embedded, and PostgreSQL with ``FALSIFY_TEST_BACKEND=postgres``).

A repair is logged as an entry (kind ``repair``) whose intent's before-image is the state it
found; reading the root at an earlier epoch (``status(epoch=)``, ``snapshot(epoch=)``,
``recall(epoch=)``) rewinds the present graph through the inverse of every logged intent after
that epoch. Where the repair restored what the log already said (a node deleted behind
FALSIFY's back, a ``valid_to`` or an epoch changed behind its back), the state before it is
what the log says, not the damage: every earlier epoch reads as it did before the damage.
Where a repair corrected a state FALSIFY itself had written (a node it forgot although
something alive needs it, a label the three-valued labelling disagrees with, an unfounded
alive node, a missed orphan), the past really held that state, and the epochs before the
repair show it. ``explain`` keeps the true history either way.
"""

from __future__ import annotations

import pytest

from acme import bob, company
from conftest import seed_with_prefix

pytestmark = pytest.mark.slow

AUDIT = "Forensic audit: the March QA report was back-dated."


def mine(status: dict, prefix: str) -> dict:
    """The prefix's nodes (by key without the prefix) and edges, as ``status`` printed them."""
    nodes = {n["key"][len(prefix) :]: n for n in status["nodes"] if n["key"].startswith(prefix)}
    edges = sorted(
        (e["from"], e["to"], e["type"], repr(sorted(e.items())))
        for e in status["edges"]
        if e["from"].startswith(prefix) or e["to"].startswith(prefix)
    )
    return {"nodes": nodes, "edges": edges}


def differences(now: dict, then: dict) -> dict:
    """What differs between two :func:`mine` readings: node fields (now, then), node and edge sets."""
    out: dict = {}
    for key in sorted(set(now["nodes"]) | set(then["nodes"])):
        a, b = now["nodes"].get(key), then["nodes"].get(key)
        if a is None or b is None:
            out[key] = ("present" if a else "missing", "present" if b else "missing")
        elif a != b:
            out[key] = {f: (a.get(f), b.get(f)) for f in sorted(set(a) | set(b)) if a.get(f) != b.get(f)}
    extra, lacking = set(now["edges"]) - set(then["edges"]), set(then["edges"]) - set(now["edges"])
    if extra or lacking:
        out["edges"] = {"extra": sorted(e[:3] for e in extra), "lacking": sorted(e[:3] for e in lacking)}
    return out


def graph_of(snapshot: dict, prefix: str) -> list:
    """The viewer snapshot's nodes of the prefix (key, state, epoch, valid_to)."""
    return sorted(
        (n.get("key"), n.get("state"), n.get("epoch"), n.get("valid_to"))
        for n in snapshot["nodes"]
        if str(n.get("key", "")).startswith(prefix)
    )


async def seen(app, prefix: str) -> tuple[int, dict, list]:
    return app.journal.epoch(), mine(await app.status(), prefix), graph_of(await app.snapshot(), prefix)


async def assert_past_unchanged(app, prefix: str, history: list) -> None:
    """Every epoch recorded in ``history`` reads now as it did then (status and snapshot)."""
    for epoch, status, snapshot in history:
        at = mine(await app.status(epoch=epoch), prefix)
        assert at == status, (epoch, differences(at, status))
        assert graph_of(await app.snapshot(epoch=epoch), prefix) == snapshot, epoch


def events(explained: dict) -> list:
    return [(e["epoch"], e["rule"], e["state"]) for e in explained["events"]]


async def repair(app, prefix: str, expect: str) -> dict:
    repaired = await app.check(repair=True)
    assert any(expect in r for r in repaired["repaired"]), repaired
    assert not [p for p in repaired["problems_after_repair"] if prefix in p], repaired
    return repaired


# ---- the three reproductions: a repair that restores what the log says ------------------------


async def test_a_node_deleted_behind_the_back_and_restored_is_in_every_earlier_epoch(app, prefix):
    """(1) A node deleted from both stores behind FALSIFY's back, restored by ``check --repair``
    ("restored X from the revision log"), is in ``status(epoch=)`` of the load that made it and
    of every epoch after, as it was then (state, epoch, weight, edges)."""
    from memory_core.core.identity import node_id

    await app.load(seed_with_prefix(prefix))
    history = [await seen(app, prefix)]
    await app.revise(AUDIT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    history.append(await seen(app, prefix))
    assert "E_email" in history[0][1]["nodes"] and "E_email" in history[1][1]["nodes"]
    await app.store.delete({node_id("evidence", f"{prefix}E_email"): "evidence"})  # behind its back
    explained = events(await app.explain(f"{prefix}E_email"))
    await repair(app, prefix, f"restored {prefix}E_email from the revision log")
    assert mine(await app.status(), prefix) == history[-1][1]
    await assert_past_unchanged(app, prefix, history)
    recalled = await app.recall(
        f"Who warned Company X ({prefix}) of cracked valve housings?",
        epoch=history[0][0],
        inquiry=f"{prefix}Q",  # the session root holds other tests' copies of the same evidence
    )
    assert f"{prefix}E_email" in str(recalled), recalled
    # explain keeps the true history: loaded, then (now) the repair's restoration
    after = events(await app.explain(f"{prefix}E_email"))
    assert after[: len(explained)] == explained and explained[0][:2] == (history[0][0], "loaded"), after


async def test_a_valid_to_changed_behind_the_back_and_restored_reads_as_logged_at_every_epoch(app, prefix):
    """(2) A ``valid_to`` changed behind FALSIFY's back and written back by ``check --repair``
    ("restored the logged valid_to of ..."): every earlier epoch shows the valid_to the log
    wrote then, never the damaged one."""
    from memory_core.core.identity import node_id

    loaded_to = {
        "key": "E_dana",
        "claim": f"Dana chairs the board of Acme {prefix}.",
        "subject": f"acme {prefix}",
        "predicate": "chair",
        "object": "Dana",
        "valid_from": "2009-01-01",
        "valid_to": "2012-01-01",
    }
    await app.load(company(prefix, "2010-01-01", more_evidence=[loaded_to]))
    history = [await seen(app, prefix)]
    result = await bob(app, prefix, valid_from="2016-01-01")
    assert result["validity"] == {f"{prefix}E_alice": "ends_stored"}
    history.append(await seen(app, prefix))
    assert history[1][1]["nodes"]["E_alice"]["valid_to"] == "2016-01-01"
    assert "valid_to" not in history[0][1]["nodes"]["E_alice"]
    assert history[0][1]["nodes"]["E_dana"]["valid_to"] == "2012-01-01"
    damage = {
        node_id("evidence", f"{prefix}E_alice"): {"valid_to": "2020-01-01"},
        node_id("evidence", f"{prefix}E_dana"): {"valid_to": "2011-06-01"},
    }
    await app.store.update_nodes(damage)  # behind FALSIFY's back
    await app.store.checkpoint()
    explained = {k: events(await app.explain(f"{prefix}{k}")) for k in ("E_alice", "E_dana")}
    await repair(app, prefix, "restored the logged valid_to of")
    assert mine(await app.status(), prefix) == history[-1][1]
    await assert_past_unchanged(app, prefix, history)
    for key, before in explained.items():
        assert events(await app.explain(f"{prefix}{key}")) == before, key


async def test_an_absurd_epoch_fixed_by_repair_never_reaches_an_earlier_epoch(app, prefix):
    """(3) A node whose stored epoch no log could hold (10**30, behind FALSIFY's back), given
    an epoch by ``check --repair`` ("gave X epoch N in place of an epoch no log could hold"):
    every earlier epoch shows the epoch the log wrote for it then, never the absurd one."""
    from memory_core.core.identity import node_id

    await app.load(seed_with_prefix(prefix))
    history = [await seen(app, prefix)]
    await app.revise(AUDIT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    history.append(await seen(app, prefix))
    await app.store.update_nodes({node_id("evidence", f"{prefix}E_email"): {"truth_epoch": 10**30}})
    await app.store.checkpoint()
    explained = events(await app.explain(f"{prefix}E_email"))
    await repair(app, prefix, f"gave {prefix}E_email epoch")
    await assert_past_unchanged(app, prefix, history)
    assert events(await app.explain(f"{prefix}E_email")) == explained


# ---- repairs of FALSIFY's own states: the past really held them -------------------------------


async def logged_write(app, kind: str, changes=(), **intent) -> int:
    """A write FALSIFY logs (journalled, applied, logged), as a faulty revision would make it:
    the log says what it did, so the state it leaves is FALSIFY's own."""
    from memory_core.store import writer

    epoch = app.journal.epoch() + 1
    intent = dict(intent, epoch=epoch)
    entry = {"epoch": epoch, "kind": kind, "changes": list(changes), "intent": intent}
    await writer.run(app.store, app.journal, intent, entry)
    return epoch


async def stored(app, prefix: str, key: str):
    from memory_core.core.identity import node_id
    from memory_core.store.belief_store import to_node

    kind = {"E": "evidence", "K": "conclusion", "F": "evidence"}.get(key[0], "hypothesis")
    ident = node_id(kind, f"{prefix}{key}")
    return ident, to_node((await app.store.raw_nodes([ident]))[ident])


def state_update(ident: str, node, state: str, epoch: int) -> dict:
    same = {"weight": node.weight, "confidence": node.confidence}
    return {
        "id": ident,
        "key": node.key,
        "before": dict(same, state=node.state, epoch=node.epoch),
        "after": dict(same, state=state, epoch=epoch),
    }


async def test_a_node_falsify_forgot_wrongly_is_absent_until_the_repair_restores_it(app, prefix):
    """A node FALSIFY's own logged write forgot although an alive node it supports still needs
    it (forget rules (b)/(c) broken), restored by ``check --repair``: the store really lacked
    it between that write and the repair, so those epochs show it forgotten; before the
    write it is there."""
    from memory_core.store.intents import tombstones

    await app.load(seed_with_prefix(prefix))
    history = [await seen(app, prefix)]
    whole = await app.store.view_of_investigation(f"{prefix}Q")
    graves = await tombstones(app.store, whole, [f"{prefix}E_email"])
    await logged_write(app, "revise", del_nodes=graves)
    history.append(await seen(app, prefix))
    assert "E_email" not in history[-1][1]["nodes"]
    found = await app.check()
    assert any(p.startswith(f"{prefix}E_email was forgotten at epoch") for p in found["problems"]), found
    await repair(app, prefix, f"restored {prefix}E_email from the revision log")
    assert "E_email" in mine(await app.status(), prefix)["nodes"]
    await assert_past_unchanged(app, prefix, history)


async def test_a_relabel_of_falsifys_own_state_leaves_that_state_in_the_past(app, prefix):
    """A state FALSIFY's own logged write set wrongly (a refuted premise back to alive while its
    refuter stands), relabelled by ``check --repair``: the epochs between that write and the
    repair show the state it wrote (the repair is inverted as logged)."""
    await app.load(seed_with_prefix(prefix))
    history = [await seen(app, prefix)]
    await app.revise(AUDIT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    history.append(await seen(app, prefix))
    ident, node = await stored(app, prefix, "E_qa")
    assert node.state == "refuted"
    epoch = app.journal.epoch() + 1
    await logged_write(app, "revise", updates=[state_update(ident, node, "alive", epoch)])
    history.append(await seen(app, prefix))
    assert history[-1][1]["nodes"]["E_qa"]["state"] == "alive"
    explained = events(await app.explain(f"{prefix}E_qa"))
    await repair(app, prefix, "relabelled")
    assert mine(await app.status(), prefix)["nodes"]["E_qa"]["state"] == "refuted"
    await assert_past_unchanged(app, prefix, history)
    after = events(await app.explain(f"{prefix}E_qa"))
    assert after[: len(explained)] == explained and after[-1][1:] == ("repair", "refuted"), after


async def test_a_relabel_of_a_state_set_behind_the_back_leaves_the_logged_state_in_the_past(app, prefix):
    """The same state set behind FALSIFY's back (nothing logged), relabelled by ``check
    --repair``: the state before the repair is the one the log wrote, never the damage."""
    await app.load(seed_with_prefix(prefix))
    history = [await seen(app, prefix)]
    await app.revise(AUDIT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    history.append(await seen(app, prefix))
    ident, node = await stored(app, prefix, "E_qa")
    await app.store.update_nodes({ident: {"truth_alignment": ["alive"]}})  # behind FALSIFY's back
    await app.store.checkpoint()
    explained = events(await app.explain(f"{prefix}E_qa"))
    await repair(app, prefix, "relabelled")
    now = mine(await app.status(), prefix)  # relabelled at the repair's epoch, as it was
    assert differences(now, history[-1][1]) == {"E_qa": {"epoch": (app.journal.epoch(), history[-1][0])}}
    await assert_past_unchanged(app, prefix, history)
    after = events(await app.explain(f"{prefix}E_qa"))
    assert after[: len(explained)] == explained, after


def refuting(ident: str, node, epoch: int, state: str = "refuted") -> tuple[dict, dict]:
    """A logged change and its update: ``node`` to ``state`` at ``epoch``."""
    change = {
        "key": node.key,
        "rule": state,
        "cause": [],
        "before": {"state": node.state},
        "after": {"state": state},
    }
    return change, state_update(ident, node, state, epoch)


async def test_an_unfounded_node_of_falsifys_own_is_alive_in_the_past(app, prefix):
    """FALSIFY's own logged write refutes a premise but leaves the conclusion resting on it
    alive (unfounded); ``check --repair`` invalidates it ("invalidated unfounded node(s)"): the
    epochs before the repair show it alive, as that write left it."""
    await app.load(seed_with_prefix(prefix))
    history = [await seen(app, prefix)]
    change, update = refuting(*await stored(app, prefix, "E_qa"), app.journal.epoch() + 1)
    await logged_write(app, "revise", changes=[change], updates=[update])
    history.append(await seen(app, prefix))
    assert history[-1][1]["nodes"]["K"]["state"] == "alive"
    await repair(app, prefix, f"invalidated unfounded node(s) {prefix}K")
    assert mine(await app.status(), prefix)["nodes"]["K"]["state"] == "invalidated"
    await assert_past_unchanged(app, prefix, history)


async def test_an_orphan_falsify_failed_to_forget_is_in_the_past(app, prefix):
    """FALSIFY's own logged revision refutes a premise and invalidates the conclusion resting on
    it but forgets neither; ``check --repair`` forgets the orphans ("forgot orphan(s) ... the
    forget rule had missed"): the epochs before the repair show them as that revision left
    them (refuted, invalidated), and before it alive."""
    await app.load(seed_with_prefix(prefix))
    history = [await seen(app, prefix)]
    epoch = app.journal.epoch() + 1
    refuted = refuting(*await stored(app, prefix, "E_qa"), epoch)
    invalidated = refuting(*await stored(app, prefix, "K"), epoch, "invalidated")
    await logged_write(
        app, "revise", changes=[refuted[0], invalidated[0]], updates=[refuted[1], invalidated[1]]
    )
    history.append(await seen(app, prefix))
    assert history[-1][1]["nodes"]["K"]["state"] == "invalidated"
    repaired = await repair(app, prefix, "the forget rule had missed")
    forgot = next(r for r in repaired["repaired"] if "the forget rule had missed" in r)
    assert f"{prefix}K" in forgot, repaired
    assert "K" not in mine(await app.status(), prefix)["nodes"]
    await assert_past_unchanged(app, prefix, history)


async def test_lost_log_spans_still_refuse_a_rebuild_before_them(app, prefix):
    """A span of the log recorded lost by a repair (``lost_epochs``) after the epoch asked:
    the graph before it cannot be rebuilt, and ``status(epoch=)`` says so; after it, it can."""
    from memory_core.core.errors import FalsifyError
    from memory_core.ops import history as history_op
    from memory_core.store.stores import Stores

    await app.load(seed_with_prefix(prefix))
    loaded = app.journal.epoch()
    await app.revise(AUDIT, target=f"{prefix}E_qa", key=f"{prefix}F_audit")
    journal = app.journal
    now = journal.epoch()

    class WithLostSpan:
        """The session's log plus one repair entry recording a lost span (never written)."""

        log_path = getattr(journal, "log_path", None)
        lost = {
            "epoch": now + 1,
            "kind": "repair",
            "changes": [],
            "lost_epochs": [[now, now]],
            "intent": {"epoch": now + 1},
        }

        def epoch(self):
            return now + 1

        def meta(self):
            return journal.meta()

        def entries(self):
            yield from (e for e in journal.entries() if e["epoch"] <= now)
            yield self.lost

        def entries_backwards(self):
            yield self.lost
            yield from (e for e in journal.entries_backwards() if e["epoch"] <= now)

    stores = Stores(app.stores.store, WithLostSpan(), app.stores.paths)
    with pytest.raises(FalsifyError, match=f"epoch {loaded} cannot be rebuilt: the revision log of epoch"):
        await history_op.status_at(stores, loaded)
    at = await history_op.status_at(stores, now)
    assert mine(at, prefix) == mine(await app.status(), prefix)

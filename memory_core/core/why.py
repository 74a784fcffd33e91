"""Why a node is in its state: pure functions over the revision log and a belief view.

* :func:`history` follows the log: every change a revision, load, undo or repair
  made is logged with its rule, its cause (the nodes that triggered it) and its
  epoch, forgotten nodes included, so the chain can be followed back to the fact
  that started it ("why is K dead?").
* :func:`why_alive` reads the current graph, as a JTMS's ``why`` does: the
  justification that holds an alive node now, recursively down to premises
  ("why is K alive?").
* :func:`why_dead` reads it for a node that is dead or disputed: what keeps it
  out now (its attackers that hold, each justification's members that do not),
  which the log's history alone cannot say once an attacker it names has died.

The view they read must hold every antecedent and attacker of the nodes they walk
(forgotten antecedents as dead ghosts): a justification with a member missing from
the view is never given as holding.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

from memory_core.core.vocabulary import DISPUTED, DISPUTES, SUPERSEDES, Rule
from memory_core.core.beliefs import ALIVE, BeliefView
from memory_core.core.tms import L_ALIVE, L_DEAD, L_DISPUTED, historical_node, label_of, labels
from memory_core.core.keys import normalise_key
from memory_core.core.reinstatement import slot_held

RULE_TEXT: dict[str, str] = {  # by rule (a Rule is a str)
    Rule.CONTRADICTED: "refuted: contradicted by {cause}",
    Rule.SUPERSEDED_BY_FACT: "superseded by new evidence {cause}",
    Rule.JUSTIFICATION_LOST: "invalidated: it rested on {cause}, now dead",
    Rule.NONCRITICAL_DECAY: "weakened: non-critical dependency {cause} died",
    Rule.SUPPORT_LOST: "superseded: lost its supporting evidence; rival promoted ({cause})",
    # said for the hypothesis that lost its supporters and for one superseded earlier that comes
    # back with them gone (its own supporters died before): {cause} are the supporters that died now
    Rule.WEAKENED_NO_RIVAL: "weakened: no hypothesis of its question has alive support once {cause} died",
    Rule.PROMOTED: "promoted over {cause}",
    Rule.REBALANCED: "weight lowered so the promoted rival {cause} stays on top",
    Rule.ORPHANED: "forgotten: dead, and nothing alive consumes or supersedes it",
    Rule.VALIDITY_ENDED: "superseded in time: {detail}",
    Rule.VALIDITY_SHORTENED: "its validity ends earlier: {detail}",
    Rule.VALIDITY_REOPENED: "reopened in time: {detail}",
    Rule.OUTRANKED: "refuted: recorded, but {cause} won the contradiction",
    Rule.DISPUTED: "disputed: neither side won ({cause})",
    Rule.REINSTATED: "reinstated: alive again (cause: {cause})",
    Rule.RESOLVED: "alive again: its dispute was resolved in its favour ({cause} lost)",
    # the rival it was promoted over holds again: its support came back, or no rival kept any
    Rule.DEMOTED: "promotion undone: {cause} holds again",
    # a record without its entry: the entry names what died (see _kept_dead)
    Rule.NOT_REINSTATED: "stays dead: it would have been reinstated, but {cause} contradicts it too",
    Rule.RESTATED: "stays dead: the same fact was asserted again as {cause}, which takes its place",
}


def sentence(rule: str, cause: list[str], detail: str = "") -> str:
    template = RULE_TEXT.get(rule, rule)
    if "{detail}" in template:
        return template.format(cause=", ".join(cause) or "-", detail=detail or "-")
    text = template.format(cause=", ".join(cause) or "-")
    return f"{text} ({detail})" if detail else text


def history(
    entries: Iterable[dict], key: str, related: Iterable[str] = (), undone_too: Iterable = ()
) -> dict:
    """Every logged event of ``key`` (each with its epoch, rule, state, cause and text) and
    its fate when it is no longer stored: ``"forgotten"`` (a revision forgot it) or
    ``"removed"`` (an undo removed what added it: ``removed_by_undo`` is the undone epoch).
    ``related``: the node's antecedents and attackers in the current graph (see
    :func:`cause_of`). ``undone_too``: epochs undone by undo entries left out of ``entries``
    (a reader that skips the entries that cannot bear on ``key``)."""
    wanted = normalise_key(key)
    related = frozenset(related)
    events, canonical, undone = [], None, set(undone_too)
    entries = list(entries)
    by_epoch = {e.get("epoch"): e for e in entries}
    for entry in entries:
        if entry.get("kind") == "undo":
            undone.add(entry.get("undoes"))
    fate, removed_by = None, None
    attacks = _Attacks()

    def mine(keys) -> Optional[str]:
        return next((k for k in keys or [] if normalise_key(k) == wanted), None)

    for entry in entries:
        attacks.apply(entry)
        epoch, kind = entry["epoch"], entry.get("kind")
        base = {"epoch": epoch, "at": entry.get("at"), "fact": entry.get("fact"), "undone": epoch in undone}
        if kind == "load" and mine(entry.get("added")):
            # the latest spelling: a key can live again after an undo, spelled otherwise
            canonical = mine(entry.get("added")) or canonical
            entered = _entered(entry, wanted)
            events.append(
                dict(
                    base,
                    rule="loaded",
                    state=entered,
                    cause=[],
                    text=f"loaded from investigation {entry.get('question')} ({entered})",
                )
            )
            fate = None
        if kind == "revise":
            recorded = entry.get("facts") or ([entry] if entry.get("new_evidence") else [])
            for item in recorded:
                if item.get("new_evidence") and normalise_key(item["new_evidence"]) == wanted:
                    canonical = item["new_evidence"]
                    batch = f" (one of {len(recorded)} facts revised together)" if len(recorded) > 1 else ""
                    entered = _entered(entry, wanted)
                    acted = [
                        c.get("key")
                        for c in item.get("candidates") or []
                        if c.get("relation") in ("contradicts", "supersedes")
                    ]
                    events.append(
                        dict(
                            base,
                            fact=item.get("fact"),
                            rule="recorded",
                            state=entered,
                            cause=acted,
                            text=f"recorded as new evidence ({entered}){batch}",
                        )
                    )
                    fate = None
        if kind == "undo":
            target = by_epoch.get(entry.get("undoes"), {})
            told = False
            for change in entry.get("changes", []):
                if normalise_key(change["key"]) == wanted:
                    told = True
                    events.append(
                        dict(
                            base,
                            rule="undo",
                            state=change["after"]["state"],
                            cause=[],
                            undoes=entry.get("undoes"),
                            text=f"undo of epoch {entry.get('undoes')}: back to {change['after']['state']}",
                        )
                    )
            gone = mine(entry.get("removed"))
            if gone:
                if mine(target.get("restored")):  # that change had brought it back from its tombstone
                    fate = "forgotten"
                    events.append(
                        dict(
                            base,
                            rule="undo",
                            state="forgotten",
                            cause=[],
                            undoes=entry.get("undoes"),
                            text=f"forgotten again: undo of epoch {entry.get('undoes')} reverted its "
                            "reinstatement",
                        )
                    )
                else:
                    fate, removed_by = "removed", entry.get("undoes")
                    events.append(
                        dict(
                            base,
                            rule="removed",
                            state="removed",
                            cause=[],
                            undoes=entry.get("undoes"),
                            text=f"removed by undo of epoch {entry.get('undoes')} (the change that added it)",
                        )
                    )
            back = mine(entry.get("restored")) or mine(target.get("forgotten"))
            if back and not gone:
                fate = None
            if back and not gone and not told:
                events.append(
                    dict(
                        base,
                        rule="undo",
                        state="restored",
                        cause=[],
                        undoes=entry.get("undoes"),
                        text=f"restored by undo of epoch {entry.get('undoes')} (it had forgotten it)",
                    )
                )
        else:
            for change in entry.get("changes", []):
                if normalise_key(change["key"]) == wanted:
                    canonical = change["key"]
                    cause = cause_of(change, entry, related)
                    events.append(
                        dict(
                            base,
                            fact=change.get("fact", base["fact"]),
                            rule=change["rule"],
                            cause=cause,
                            state=change["after"]["state"],
                            text=_said(change, cause, attacks, entry),
                        )
                    )
            if mine(entry.get("restored")):
                fate = None
            if mine(entry.get("forgotten")):
                fate = "forgotten"
                by = [entry["new_evidence"]] if entry.get("new_evidence") else []
                events.append(
                    dict(
                        base,
                        rule=Rule.ORPHANED,
                        state="forgotten",
                        cause=by,
                        text=sentence(Rule.ORPHANED, []),
                    )
                )
    result = {"key": canonical or key, "known": bool(events), "events": events, "fate": fate}
    if fate == "removed":
        result["removed_by_undo"] = removed_by
    return result


def _said(
    change: dict, cause: list[str], attacks: Optional["_Attacks"] = None, entry: Optional[dict] = None
) -> str:
    if change["rule"] == Rule.DISPUTED and change.get("detail") == THROUGH_DISPUTED:
        return "disputed: " + _undecided(change, cause, attacks, entry or {})
    if change["rule"] == Rule.SUPPORT_LOST:
        # its cause holds the supporters that died and the rival promoted over it: the rival is
        # the one the same entry promoted over this node, never one of the evidence it lost
        rivals = [
            c["key"]
            for c in (entry or {}).get("changes", [])
            if c.get("rule") == Rule.PROMOTED and change["key"] in (c.get("cause") or [])
        ]
        if rivals:
            lost = ", ".join(k for k in cause if k not in rivals) or "-"
            text = f"superseded: lost its supporting evidence ({lost}); rival {', '.join(rivals)} promoted"
            return f"{text} ({change['detail']})" if change.get("detail") else text
    if change["rule"] == Rule.NOT_REINSTATED:
        return _kept_dead(change, cause, attacks, entry or {})
    if change["rule"] == Rule.JUSTIFICATION_LOST and change.get("detail", "").startswith(NEVER_HELD):
        # found never true in valid time: its record names every antecedent, alive ones too,
        # none of which died (what failed is when they held, not whether)
        return f"invalidated: it rested on {', '.join(cause) or '-'}, but {change['detail']}"
    before, after = change.get("before") or {}, change.get("after") or {}
    if change["rule"] == Rule.REINSTATED and before.get("state") == after.get("state") == "alive":
        # never dead: what came back is a weight or a confidence, not the node
        detail = change.get("detail", "")
        return f"restored (cause: {', '.join(cause) or '-'})" + (f" ({detail})" if detail else "")
    return sentence(change["rule"], cause, change.get("detail", ""))


def _kept_dead(change: dict, cause: list[str], attacks: Optional["_Attacks"], entry: dict) -> str:
    """Why a value the revision would have brought back stays dead, as its record says: the
    fact (or resolve's winner) contradicts it too, or another value holds its single-valued
    slot (the fact's ``supersedes`` edge to it is there in both cases, but in the second the
    fact need not contradict it at all). What would have brought it back is named from the
    same entry: its attackers that died there, or became disputed (read from the log's
    writes up to the change); a log without writes names none."""
    by = attacks.of(change["key"]) if attacks is not None else set()
    fell, doubted = [], []
    for c in entry.get("changes", []):
        if normalise_key(c["key"]) not in by or c["key"] in cause:
            continue
        was = label_of((c.get("before") or {}).get("state", ALIVE))
        now = label_of((c.get("after") or {}).get("state", ALIVE))
        if now == L_DEAD and was != L_DEAD:
            fell.append(c["key"])
        elif now == L_DISPUTED and was != L_DISPUTED:
            doubted.append(c["key"])
    why = []
    if fell:
        why.append(
            f"its refuter {', '.join(fell)} died"
            if len(fell) == 1
            else f"its refuters {', '.join(fell)} died"
        )
    if doubted:
        names = ", ".join(doubted)
        why.append(
            f"its refuter {names} is in dispute"
            if len(doubted) == 1
            else f"its refuters {names} are in dispute"
        )
    # the state the entry leaves it in: a value kept out by a fact that is itself in dispute
    # ends the entry disputed, not dead (its next change says so)
    last = [c for c in entry.get("changes", []) if normalise_key(c["key"]) == normalise_key(change["key"])]
    final = (
        (last[-1].get("after") or {}).get("state", "")
        if last
        else (change.get("after") or {}).get("state", "")
    )
    opened = ("stays dead: " if label_of(final or ALIVE) == L_DEAD else "not reinstated: ") + (
        " and ".join(why) if why else "it would have been reinstated"
    )
    held = slot_held(change.get("detail", ""))
    if held is not None:
        return f"{opened}, but {held.reason} (judge: {held.judged})"
    text = f"{opened}, but {', '.join(cause) or '-'} contradicts it too"
    return f"{text} ({change['detail']})" if change.get("detail") else text


def _undecided(change: dict, cause: list[str], attacks: Optional["_Attacks"], entry: dict) -> str:
    """Why a node no dispute names it a party to became disputed: an attacker of it is in
    dispute (the attackers the revision recorded as its cause: one that held would have killed
    it, so they are undecided), its support runs through disputed nodes, or both. Which of the
    cause's nodes attack it is read from the log's writes up to the change (``attacks``)."""
    said = ", ".join(cause) or "-"
    by = attacks.of(change["key"]) if attacks is not None else set()
    attacking = [k for k in change.get("cause") or [] if normalise_key(k) in by]
    if not attacking:
        return f"{THROUGH_DISPUTED} (cause: {said})"
    died = {
        normalise_key(c["key"])
        for c in entry.get("changes", [])
        if label_of((c.get("after") or {}).get("state", ALIVE)) == L_DEAD
    }
    support = [k for k in cause if normalise_key(k) not in by and normalise_key(k) not in died]
    names = ", ".join(attacking)
    text = (
        f"its attacker {names} is in dispute"
        if len(attacking) == 1
        else f"its attackers {names} are in dispute"
    )
    return text + (f", and {THROUGH_DISPUTED}" if support else "") + f" (cause: {said})"


class _Attacks:
    """Who attacks whom as the revision log's writes left the graph, read entry by entry in
    log order (so a change is read against the attacks of its own time): every ``supersedes``
    and ``disputes`` edge an intent added (with the nodes it added, or on its own) and no later
    intent deleted (an edge deleted, or a node deleted with its edges; an undo's intent deletes
    what the change it reverts added). A log without intents knows of no attack."""

    def __init__(self) -> None:
        self.ids: dict[str, set[str]] = {}  # normalised key -> its node ids
        self.names: dict[str, str] = {}  # node id -> normalised key
        self.edges: dict[str, set[tuple[str, str, str]]] = {}  # node id -> its attack edges

    def apply(self, entry: dict) -> None:
        intent = entry.get("intent")
        if not isinstance(intent, dict):
            return
        added = intent.get("add_nodes") or []
        for node in added:
            if node.get("id") and node.get("key"):
                key = normalise_key(node["key"])
                self.names[node["id"]] = key
                self.ids.setdefault(key, set()).add(node["id"])
        rows = [row for node in added for row in node.get("edges") or []] + list(
            intent.get("add_edges") or []
        )
        for row in rows:
            if len(row) >= 3 and row[2] in (SUPERSEDES, DISPUTES):
                edge = (str(row[0]), str(row[1]), str(row[2]))
                for end in edge[:2]:
                    self.edges.setdefault(end, set()).add(edge)
        for row in intent.get("del_edges") or []:
            if len(row) >= 3:
                self._drop((str(row[0]), str(row[1]), str(row[2])))
        for node in intent.get("del_nodes") or []:
            for edge in list(self.edges.get(node.get("id", ""), ())):
                self._drop(edge)

    def _drop(self, edge: tuple[str, str, str]) -> None:
        for end in edge[:2]:
            self.edges.get(end, set()).discard(edge)

    def of(self, key: str) -> set[str]:
        """The normalised keys of the nodes attacking ``key`` now: its superseders and its
        rivals in a dispute."""
        found = set()
        for ident in self.ids.get(normalise_key(key), ()):
            for src, dst, rel in self.edges.get(ident, ()):
                if rel == DISPUTES or dst == ident:
                    other = src if dst == ident else dst
                    if other in self.names and other != ident:
                        found.add(self.names[other])
        return found


THROUGH_DISPUTED = "its support runs through disputed nodes"
# how a node superseded in time whose support never held while it did is recorded (core.validity)
NEVER_HELD = "its support never held while it did"


def cause_of(change: dict, entry: dict, related: frozenset[str] = frozenset()) -> list[str]:
    """The nodes whose change in ``entry`` caused ``change``, as the log records them, but:

    * a node brought back names only the members of its cause that changed in the same
      entry (a justification holds again through the antecedent that came back, not
      through its members that were alive all along; of its dead attackers, the one that
      died now), unless none did (a justification a load added), when the record stands;
    * the winner of a resolved dispute names the loser it was resolved against (the
      dispute's edge is gone by then, so the record may name nobody);
    * a node that became disputed through its support also names its antecedents and
      attackers (``related``, read from the current graph) that changed in the same entry:
      the justification that held it may have died there, while the record names only the
      disputed members of the ones left."""
    cause = list(change.get("cause") or [])
    changes = entry.get("changes", [])
    if change.get("rule") == Rule.RESOLVED and not cause:
        return [
            c["key"] for c in changes if c.get("rule") == Rule.CONTRADICTED and change["key"] in c["cause"]
        ]
    if change.get("rule") == Rule.REINSTATED:
        moved = {c["key"] for c in changes if c["key"] != change["key"]}
        return [k for k in cause if k in moved] or cause
    if change.get("rule") == Rule.DISPUTED and change.get("detail") == THROUGH_DISPUTED and related:
        # through its support or an attacker in dispute, not a party to a dispute: a party's
        # sentence names its sides ("neither side won (F2)"), and a refuter that died in the
        # same entry is none of them
        also = {c["key"] for c in changes if c["key"] in related and c["key"] not in cause}
        return cause + sorted(also)
    return cause


def _entered(entry: dict, wanted: str) -> str:
    """The state a node entered with in a load or revision (its add_nodes image)."""
    for node in (entry.get("intent") or {}).get("add_nodes", []):
        if normalise_key(node.get("key", "")) == wanted:
            return node.get("state", ALIVE)
    return ALIVE


def why_index(
    entries: Iterable[dict], related: Optional[Mapping[str, Iterable[str]]] = None
) -> dict[str, str]:
    """The latest reason for every key that ever changed state (for the viewer), worded as
    :func:`history` words it for ``explain``: of the changes no undo took back (after an undo a
    node is as it was before the undone epoch, for the reason it was so then). ``related``:
    each node's antecedents and attackers in the graph shown (normalised key -> keys), as
    ``explain`` passes them to :func:`history` (see :func:`cause_of`)."""
    related = related or {}
    entries = list(entries)
    undone = {e.get("undoes") for e in entries if e.get("kind") == "undo"}
    why = {}
    attacks = _Attacks()
    for entry in entries:
        attacks.apply(entry)
        if entry.get("kind") == "undo" or entry["epoch"] in undone:
            continue
        for change in entry.get("changes", []):
            near = frozenset(related.get(normalise_key(change["key"]), ()))
            said = _said(change, cause_of(change, entry, near), attacks, entry)
            why[change["key"]] = f"epoch {entry['epoch']}: " + said
    return why


MAX_WHY_DEPTH = 64  # justification levels shown below the node explained; deeper: "truncated"


def well_founded(view: BeliefView) -> dict[str, Optional[tuple[str, list[str]]]]:
    """Each alive node of the view that holds by a well-founded justification, with it (None:
    a premise): premises first, then a node once one of its justifications has every member
    alive and already founded, as a JTMS's support is found (never a node through itself: in
    A <- {B}, A <- {E}, B <- {A}, A holds by E, and B by A). Justifications whose members are
    not all alive in the view never hold (a member the view lacks is not taken as alive)."""
    founded: dict[str, Optional[tuple[str, list[str]]]] = {}
    waiting: dict[
        str, list[tuple[str, str, list[str], set[str]]]
    ] = {}  # member -> (node, justification, unfounded)
    order: list[str] = []
    for key, node in view.nodes.items():
        if node.state != ALIVE:
            continue
        justifications = view.justifications(key)
        if not justifications:
            founded[key] = None
            order.append(key)
            continue
        for group, members in justifications:
            if all(m in view.nodes and view.state(m) == ALIVE for m in members):
                missing = set(members)
                for member in missing:
                    waiting.setdefault(member, []).append((key, group, members, missing))
    at = 0
    while at < len(order):
        done = order[at]
        at += 1
        for key, group, members, missing in waiting.get(done, ()):
            missing.discard(done)
            if not missing and key not in founded:
                founded[key] = (group, members)
                order.append(key)
    # of a node's justifications whose members were all founded before it, the first in group
    # order (the one shown when several hold): still well founded, each member earlier than it
    place = {key: i for i, key in enumerate(order)}
    for key, found in founded.items():
        if found is not None:
            founded[key] = next(
                (
                    (group, members)
                    for group, members in view.justifications(key)
                    if all(place.get(m, len(order)) < place[key] for m in members)
                ),
                found,
            )
    return founded


def why_alive(view: BeliefView, key: str, unread: Iterable[str] = ()) -> Optional[dict]:
    """The justification holding an alive node, down to premises::

        {"key", "state", "premise": bool, "justification": group name or None,
         "antecedents": [the same for each member ...]}

    Each node's justification is its well-founded one (:func:`well_founded`); a premise (no
    critical ``depends_on``) holds by itself. A node shown already higher in the tree is not
    expanded again (``"repeated": true``); below :data:`MAX_WHY_DEPTH` levels, or at a node
    whose justifications were not read (``unread``: a bounded read stopped there), the tree
    says so (``"truncated": true``). An alive node none of whose justifications is well
    founded gets a ``note`` (check reports it). None for a node that is not alive or not in
    the view."""
    node = view.nodes.get(key)
    if node is None or node.state != ALIVE:
        return None
    founded = well_founded(view)
    stop = set(unread)
    shown: set[str] = set()

    def entry(k: str, depth: int) -> dict:
        row: dict = {
            "key": k,
            "state": view.nodes[k].state,
            "premise": False,
            "justification": None,
            "antecedents": [],
        }
        if k in stop:
            row["truncated"] = True
            row["note"] = "its justifications were not read (the chain is longer than explain reads)"
        elif depth >= MAX_WHY_DEPTH:
            row["truncated"] = True
            row["note"] = f"and further down: more than {MAX_WHY_DEPTH} levels"
        elif k not in founded:
            row["note"] = "alive, but no justification holds (check reports it)"
        elif founded[k] is None:
            row["premise"] = True
        return row

    root = entry(key, 0)
    stack = [(root, 0)]
    while stack:  # depth first, without recursion: a chain may be thousands of levels deep
        row, depth = stack.pop()
        k = row["key"]
        if row.get("truncated") or row["premise"] or "note" in row:
            continue
        if k in shown:  # expanded in a branch before this one
            row["repeated"] = True
            row["note"] = "shown above"
            continue
        shown.add(k)
        group, members = founded[k] or ("", [])
        row["justification"] = group or None
        row["antecedents"] = [entry(m, depth + 1) for m in members]
        for child in reversed(row["antecedents"]):
            stack.append((child, depth + 1))
    return root


def why_dead(view: BeliefView, key: str, forgotten: Iterable[str] = ()) -> Optional[dict]:
    """What keeps a dead or disputed evidence or conclusion out now, read from the view as
    the labelling reads it (:mod:`memory_core.core.tms`: a node holds when one of its
    justifications holds and none of its attackers holds or is undecided; it is disputed when
    none of its attackers holds, none of its justifications is dead and one of them or an
    attacker is undecided)::

        {"key", "state", "premise": bool,
         "attackers": [{"key", "state", "by": "supersedes" | "disputes"}],  # those that count now
         "justifications": [{"justification", "members": [{"key", "state"}]}],  # members not alive
         "past_attackers": [{"key", "state", "by"}],  # dead now: they no longer count
         "reasons": [str]}

    ``forgotten``: keys of the view's dead ghosts (forgotten nodes, state ``forgotten``).
    An attacker counts now when it holds (alive, or superseded in time: what it defeated stays
    defeated), which keeps the node dead, or when it is disputed (undecided), which alone
    leaves the node disputed; only a dead attacker is past. The reasons say which, and when
    the stored state is not the one the labelling gives the node (its neighbours as stored),
    they say that too (check reports it). None for a node that is alive, not in the view, or
    not evidence or a conclusion."""
    node = view.nodes.get(key)
    if node is None or node.state == ALIVE or node.kind not in ("evidence", "conclusion"):
        return None
    gone = set(forgotten)

    def state(k: str) -> str:
        return "forgotten" if k in gone else view.state(k) if k in view.nodes else "unknown"

    def holds(k: str) -> bool:
        return state(k) == ALIVE or historical_node(view.nodes.get(k))

    seen_attackers: dict[str, str] = {}
    for edge in view.in_edges(key, SUPERSEDES):
        seen_attackers.setdefault(edge.src, SUPERSEDES)
    for edge in view.in_edges(key, DISPUTES):
        seen_attackers.setdefault(edge.src, DISPUTES)
    for edge in view.out_edges(key, DISPUTES):
        seen_attackers.setdefault(edge.dst, DISPUTES)
    seen_attackers.pop(key, None)
    attackers: list[dict[str, str]] = []
    past: list[dict[str, str]] = []
    for k, by in sorted(seen_attackers.items()):
        now = holds(k) or state(k) == DISPUTED
        (attackers if now else past).append({"key": k, "state": state(k), "by": by})
    justifications: list[tuple[Optional[str], list[dict[str, str]]]] = []
    for group, members in view.justifications(key):
        out = [{"key": a, "state": state(a)} for a in members if state(a) != ALIVE]
        if out:
            justifications.append((group or None, out))
    whole = len(justifications) == len(view.justifications(key))
    # the label the labelling gives the node, its neighbours read as stored (what check
    # computes for it when they are labelled right)
    expected = labels(view, [key])[key]
    stored = label_of(node.state)
    reasons: list[str] = []
    if historical_node(node):
        reasons.append(
            f"superseded in time: it held until {node.valid_to}" if node.valid_to else "superseded in time"
        )
    for a in attackers:
        k, st = a["key"], a["state"]
        if holds(k):  # it keeps the node dead
            if a["by"] == SUPERSEDES:
                reasons.append(f"{k} ({st}) supersedes it")
            else:
                reasons.append(f"in dispute with {k} ({st}), which holds: that keeps it out")
        elif stored == L_DISPUTED:  # undecided, so is the node
            if a["by"] == SUPERSEDES:
                reasons.append(f"{k} ({st}) supersedes it; {k} is in dispute, so {key} is too")
            else:
                reasons.append(f"in dispute with {k} ({st}): neither side won")
        else:  # undecided: not what keeps it dead
            alone = f"which alone would leave {key} disputed, not dead"
            if a["by"] == SUPERSEDES:
                reasons.append(f"{k} ({st}) supersedes it; {k} is in dispute, {alone}")
            else:
                reasons.append(f"in dispute with {k} ({st}), {alone}")
    if view.justifications(key) and whole:
        said = "; ".join(
            (f"justification {group}: " if group else "")
            + ", ".join(f"{m['key']} is {m['state']}" for m in members)
            for group, members in justifications
        )
        # the best justification is undecided when one has no dead member, only disputed ones
        if any(all(m["state"] == DISPUTED for m in members) for _, members in justifications):
            reasons.append(f"no justification holds, its best runs through disputed nodes ({said})")
        else:
            reasons.append(f"no justification holds ({said})")
    if expected == L_ALIVE:  # nothing above keeps it out: the labelling would bring it back
        if past:
            names = ", ".join(f"{a['key']} ({a['state']})" for a in past)
            reasons.append(
                f"nothing that attacked it holds now ({names}), yet it is {node.state}: "
                "the labelling would bring it back (check reports it)"
            )
        elif not view.justifications(key):
            reasons.append(
                f"{node.state}, yet nothing attacks it and it rests on nothing: "
                "the labelling would bring it back (check reports it)"
            )
        else:
            reasons.append(f"a justification holds, yet it is {node.state} (check reports it)")
    elif expected != stored:
        reasons.append(f"yet it is {node.state}: the labelling makes it {expected} (check reports it)")
    elif not reasons:  # a premise nothing ever attacked, killed outright: stays dead
        reasons.append(f"{node.state} with no recorded winner: nothing alive brings it back")
    return {
        "key": key,
        "state": node.state,
        "premise": not view.justifications(key),
        "attackers": attackers,
        "justifications": [{"justification": g, "members": m} for g, m in justifications],
        "past_attackers": past,
        "reasons": reasons,
    }


def support_of(view: BeliefView, key: str, node_ident: str = "", forgotten: Iterable[dict] = ()) -> dict:
    """A hypothesis's support as the promotion rule reads it: ``score`` = Σ weight of alive
    supporters − Σ weight of alive refuters; ``remaining``: the alive supporters; ``disputed``:
    supporters in an open dispute (they count for nothing until it is decided); ``lost``:
    supporters that are dead now (with their state), forgotten ones included (from their
    tombstones: ``forgotten``, with ``node_ident`` the hypothesis's node id); ``refuters``:
    the alive nodes refuting it. Each entry is ``{"key", "state", "weight"}``."""
    remaining, disputed, lost, refuters = [], [], [], []
    for edge in view.in_edges(key):
        if edge.kind not in ("supports", "refutes"):
            continue
        state = view.state(edge.src)
        item = {"key": edge.src, "state": state, "weight": edge.weight}
        if edge.kind == "refutes":
            if state == ALIVE:
                refuters.append(item)
        elif state == ALIVE:
            remaining.append(item)
        elif state == "disputed":
            disputed.append(item)
        else:
            lost.append(item)
    for tomb in forgotten:
        for src, dst, rel, props in tomb.get("edges", []):
            if rel == "supports" and dst == node_ident and src == tomb.get("id"):
                lost.append(
                    {
                        "key": tomb.get("key"),
                        "state": "forgotten",
                        "weight": float((props or {}).get("weight", 1.0)),
                    }
                )
    node = view.nodes.get(key)
    return {
        "score": round(view.support(key), 6),
        "weight": None if node is None else node.weight,
        "remaining": sorted(remaining, key=lambda i: i["key"]),
        "disputed": sorted(disputed, key=lambda i: i["key"]),
        "lost": sorted(lost, key=lambda i: i["key"]),
        "refuters": sorted(refuters, key=lambda i: i["key"]),
    }


def revision_log(entries: Iterable[dict]) -> list[dict]:
    """Every logged change as one flat row (the viewer's log)."""
    keep = ("epoch", "kind", "at", "fact", "new_evidence", "judge", "question", "undoes")
    result = []
    for entry in entries:
        base = {k: entry[k] for k in keep if k in entry}
        for change in entry.get("changes", []):
            result.append(
                dict(
                    base,
                    key=change["key"],
                    rule=change["rule"],
                    cause=change["cause"],
                    detail=change.get("detail", ""),
                    **{"from": change["before"]["state"], "to": change["after"]["state"]},
                )
            )
        for gone in entry.get("forgotten", []):
            result.append(
                dict(
                    base,
                    key=gone,
                    rule=Rule.ORPHANED,
                    cause=[],
                    detail="forgotten from graph and vector store",
                    **{"from": None, "to": "forgotten"},
                )
            )
    return result

"""An independent reference for FALSIFY's revision rules, over a WHOLE belief graph.

Written from the rules as ``memory_core/core/tms.py``, ``cascade.py``,
``promotion.py`` and ``forget.py`` state them in their docstrings, without
importing anything from ``memory_core`` (not even its vocabulary): the property
tests, the mutation gate and the deep-graph benchmark compare the product with
this model, so it must not share the product's code paths. In particular:

* justifications and attackers are built here from the raw edge list (critical
  ``depends_on`` edges grouped by ``group``, no group = one default
  justification; attackers = ``supersedes`` sources and ``disputes`` rivals); the
  engine's ``BeliefView.justifications`` is never called;
* labels are computed for the WHOLE graph (forgotten nodes included, as the
  engine's *ghosts*) by an alternating fixpoint written here; the engine relabels
  only what is downstream of a change;
* orphans are searched over the whole graph after every revision (the engine
  looks at a neighbourhood of what changed).

The rules, for one revision (a new fact ``F`` pinned against evidence ``T``):

1. ``F`` is added (alive evidence, weight 0.5, ``T``'s question) with
   ``F supersedes T``.
2. Labels (evidence and conclusions; three-valued well-founded model): a node
   holds iff none of its attackers holds and it is a premise or one of its
   justifications holds entirely; a premise with no attacker holds unless it is
   stored dead. Alive = true, disputed = undefined, dead = false.
3. A node whose label changes: to dead -> ``refuted`` (a premise, or a node one
   of whose attackers holds or is superseded in time: it was contradicted) or
   ``invalidated`` (otherwise), weight 0; to disputed -> ``disputed`` (a dead
   node gets back its weight from before its death, else 0.5); to alive ->
   ``alive`` (a dead node gets back its weight from before its death, else 0.5).
   A forgotten node whose label is no longer dead is stored again.
3b. A dispute a revision settled: a stored ``disputes`` edge one side of which is dead
   while a ``supersedes`` source of it holds (or is superseded in time), the other side
   not dead, is dropped, as ``resolve`` drops it (a side dead for want of support keeps it).
4. Every alive node with non-critical ``depends_on`` edges: its confidence is its
   base (the confidence it had before any such dependency died; unset = 1.0 once one
   is dead) x 0.5 per such dependency dead now (dead or forgotten): a function of the
   current state, so a dependency that comes back gives back what its death took.
5. Hypotheses (not labelled): an alive hypothesis ``supports``-ed by a node that
   died here, with no alive supporter left, is a *loser*. Per question: if an
   alive non-loser hypothesis with an alive supporter exists (a rival), the losers
   become ``superseded`` (weight 0) and the best rival (support = alive supports
   - alive refutes weights; ties: higher weight, higher prior, smaller key) is
   promoted to 0.25 above every other hypothesis of the question (cap 1.0;
   another at >= 1.0 is lowered to 0.95; never lowered); else each loser's weight
   is halved.
5b. In that last case (no rival keeps alive support) every ``superseded`` hypothesis of
   the question with no alive supporter is first alive again with its weight from before
   (else its prior, else 0.5), each rival promoted over it put back to its weight before
   that promotion (if higher now), and then halved as the losers are: superseded needs a
   rival with alive support, so the final state does not depend on which support died first.
6. A hypothesis supported by a node that came back alive here, with an alive
   supporter: if ``superseded`` it is alive again with its weight from before
   (else its prior, else 0.5), and each rival promoted over it is put back to its
   weight before that promotion (if higher now); if alive and weakened earlier,
   it gets its weight from before the weakening.
1b. A fact given as a triple ``(s, p, o)`` with no pinned target contradicts
   every alive or disputed evidence stored with the same normalised subject and
   predicate and another object, unless the predicate is declared ``many`` for
   that evidence's question (the structured judge; an undeclared predicate is
   single-valued).
1c. Re-judged reinstatement. Before labelling: evidence stored dead that the new
   labels would bring back (not dead) although it has an attacker is judged: it
   is contradicted when it carries a triple and (the fact's triple has its subject
   and predicate and another object, the predicate not declared ``many``, and one
   of the two has no ``valid_from``) or
   (its predicate is single-valued and another stored or new evidence that holds
   under the new labels has its subject and predicate and another object, and one
   of the two has no ``valid_from``: two timed values are ordered by 1d). Each
   contradicted one gets ``F supersedes`` it, or, when what contradicts it is another
   value holding its slot (true under the new labels), ``V supersedes`` it from that
   value (the smallest key): it stays dead while that value holds, whatever becomes of
   F; repeat (keeping one dead may bring
   back what it had refuted) until nothing new comes back. Evidence without a
   triple, or a fact without one, is not re-judged (it comes back).
1d. Re-judged reinstatement in valid time: such evidence, not contradicted, with a
   single-valued triple and a ``valid_from``, takes its place in its slot's
   timeline among the stored values with its subject and predicate and another
   object that hold (true or undefined under the new labels, or superseded in time)
   and have a ``valid_from``: if one of them held when it starts
   (``from <= its from < to``), that value supersedes it (the earliest-starting, then the
   smallest key) and it stays dead; else, if some start
   after its start and before its end, it comes back held only until the earliest
   such start (right after step 3: superseded in time, weight 0, and what rests on
   it and falls superseded too; a disputed one keeps its state and only its end
   moves). What was dead before the revision and ends so is no death of it (no
   decay, no rescoring: it holds now only in the past). A stored value the new fact
   ends at its start (a timed fact that holds) is taken as ending there.
1e. A value out of dispute in time: evidence disputed before the change and alive after
   it (``resolve`` chose it, or the change killed its rival), with a single-valued triple and
   a ``valid_from``, takes its place in its slot's timeline as a new fact that holds does
   (right after 1d): among the stored values with its subject and predicate and another
   object that hold (alive, disputed, or superseded in time) and have a ``valid_from``, each
   one that started before it and still held when it starts ends there (an alive one
   superseded in time with what falls with it; a disputed one or one superseded in time only
   has its end moved back), and it holds only until the earliest one that starts after it,
   before its end (superseded in time, with what falls with it).
1f. A fact asserted again: the new fact's earlier records (the keys revise derived from its
   text, given; for a fact with a triple, also the evidence of its subject and predicate
   claiming the same text, Unicode-normalised with spacing collapsed) of its question, with its
   ``valid_from`` (another start claims another period), that are
   stored dead, not superseded in time (true for their period), and that nothing rests on (no
   ``depends_on`` into them, no ``supports``/``refutes`` out of them) get ``F supersedes``
   them before labelling: they stay dead when what had refuted them dies, and one alive record
   of the text remains, not one per return. One something rests on comes back with it (step 6).
1g. A value ended by a value found never true: after the revision (right after 1e), each evidence
   superseded in time or disputed, with a single-valued triple and a ``valid_from``, whose
   ``valid_to`` is the start of a value of its slot (another object) that is dead and not
   superseded in time, is placed as 1d places a returning value, with the end its own fact stated
   (its investigation's or revision's ``valid_to``): an alive value of its slot without a
   ``valid_from`` (time cannot order the two), or one that held when it starts, leaves it as it
   is; else it holds until the earliest start after its own among the values of its slot that
   hold (alive, disputed, superseded in time) before that end, else until that end.
   An end only moves on. Superseded in time and ended by no value now: alive again (weight from
   before its death), and the graph is relabelled with what ended with it (superseded in time,
   resting on it: a conclusion, or evidence ending at its old end) taken as not ended: those
   true come back (evidence until its stated end), forgotten nodes whose support came back too;
   the rest stay superseded in time, evidence with its end moved on to the last time its support
   held. Disputed, or still ended by a later value: only its end moves (and the ends of what ended
   with it). Repeated until nothing moves; what came back reinstates hypotheses (step 6).
7. Forget: every stored ``refuted``/``invalidated`` node with no alive consumer
   (alive ``depends_on`` source, alive ``supports`` target), no alive
   ``supersedes`` source, and no disputed consumer or superseder is removed with
   its edges (it stays in the model as a forgotten node).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Optional

ALIVE, DISPUTED = "alive", "disputed"
REFUTED, SUPERSEDED, INVALIDATED = "refuted", "superseded", "invalidated"
LABELLED = ("evidence", "conclusion")
FORGETTABLE = (REFUTED, INVALIDATED)
DECAY = 0.5
STEP = 0.25
NO_RIVAL = 0.5
T, U, F = "true", "undefined", "false"


def term(text: str) -> str:
    """A triple term compared as the structured judge compares it: case-folded, outer
    punctuation and quotes stripped, whitespace collapsed."""
    return " ".join(str(text).casefold().strip().strip(".,;:!?\"'").split())


def same_claim(a: str, b: str) -> bool:
    """Two claims of the same fact: equal once Unicode-normalised (NFC) and spacing collapsed."""
    import unicodedata

    return " ".join(unicodedata.normalize("NFC", a).split()) == " ".join(
        unicodedata.normalize("NFC", b).split()
    )


def label(state: str) -> str:
    return T if state == ALIVE else U if state == DISPUTED else F


@dataclass
class MNode:
    key: str
    kind: str  # question | hypothesis | evidence | conclusion
    question: str
    state: str = ALIVE
    weight: float = 0.5
    confidence: Optional[float] = None
    prior: Optional[float] = None
    forgotten: bool = False
    triple: Optional[tuple] = None  # (subject, predicate, object) of evidence given with one
    valid_to: Optional[str] = None  # valid time: set when its validity ended (superseded in time)
    valid_from: Optional[str] = None  # valid time: when it started being true (None: untimed)
    text: Optional[str] = None  # evidence: its claim (rule 1f compares claims)
    stated_to: Optional[str] = None  # evidence: the end its fact stated (rule 1g reopens to it)


@dataclass(frozen=True)
class MEdge:
    kind: str  # depends_on | supports | refutes | supersedes | disputes
    src: str
    dst: str
    critical: bool = True
    group: Optional[str] = None
    weight: float = 1.0


@dataclass
class Model:
    nodes: dict[str, MNode] = field(default_factory=dict)  # forgotten ones included
    edges: list[MEdge] = field(default_factory=list)
    before_death: dict[str, float] = field(default_factory=dict)
    promotions: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    weakened: dict[str, float] = field(default_factory=dict)
    base_confidence: dict[str, Optional[float]] = field(default_factory=dict)  # rule 4, before any decay
    many: dict[str, set] = field(default_factory=dict)  # question -> predicates declared "many" (normalised)
    returning_until: dict[str, str] = field(default_factory=dict)  # rule 1d, within one revision
    settles_in_time: bool = True  # rule 1e applies (False: how the rules read without it)

    def copy(self) -> "Model":
        return copy.deepcopy(self)

    # ---- reading -------------------------------------------------------
    def stored(self) -> dict[str, MNode]:
        return {k: n for k, n in self.nodes.items() if not n.forgotten}

    def stored_edges(self) -> list[MEdge]:
        keep = self.stored()
        return [e for e in self.edges if e.src in keep and e.dst in keep]

    def alive(self, key: str) -> bool:
        node = self.nodes.get(key)
        return node is not None and not node.forgotten and node.state == ALIVE

    def disputed(self, key: str) -> bool:
        node = self.nodes.get(key)
        return node is not None and not node.forgotten and node.state == DISPUTED

    def rules_of(self, key: str) -> list[frozenset[str]]:
        """The node's justifications, from the raw edges: one set of antecedents per group."""
        by_group: dict[str, set[str]] = {}
        for e in self.edges:
            if e.kind == "depends_on" and e.src == key and e.critical:
                by_group.setdefault("" if e.group is None else e.group, set()).add(e.dst)
        return [frozenset(v) for v in by_group.values()]

    def attackers_of(self, key: str) -> set[str]:
        found = {e.src for e in self.edges if e.kind == "supersedes" and e.dst == key}
        found |= {e.src for e in self.edges if e.kind == "disputes" and e.dst == key}
        found |= {e.dst for e in self.edges if e.kind == "disputes" and e.src == key}
        return found - {key}

    def labels(self) -> dict[str, str]:
        """Three-valued well-founded labels of every evidence and conclusion node
        (forgotten ones included), by the alternating fixpoint of the operator
        "least model of the program where `not a` means `a` is outside S"."""
        keys = sorted(k for k, n in self.nodes.items() if n.kind in LABELLED)
        rules = {k: self.rules_of(k) for k in keys}
        attacks = {k: self.attackers_of(k) for k in keys}
        stored_dead = {k for k in keys if label(self.nodes[k].state) == F}
        # superseded in time: it was true, so what it defeated stays defeated (it still attacks)
        ended = {k for k in keys if self.historical(k)}

        def least(outside_ok: set[str]) -> set[str]:
            true: set[str] = set()
            while True:
                new = set()
                for k in keys:
                    if k in true or k in ended or attacks[k] & (outside_ok | ended):
                        continue
                    if not rules[k]:
                        if attacks[k] or k not in stored_dead:
                            new.add(k)
                    elif any(r <= true for r in rules[k]):
                        new.add(k)
                if not new:
                    return true
                true |= new

        lower: set[str] = set()
        while True:
            upper = least(lower)
            nxt = least(upper)
            if nxt == lower:
                break
            lower = nxt
        return {k: T if k in lower else U if k in upper else F for k in keys}

    def support(self, hyp: str) -> float:
        total = 0.0
        for e in self.edges:
            if e.dst == hyp and e.kind in ("supports", "refutes") and self.alive(e.src):
                total += e.weight if e.kind == "supports" else -e.weight
        return total

    def has_alive_supporter(self, hyp: str) -> bool:
        return any(e.kind == "supports" and e.dst == hyp and self.alive(e.src) for e in self.edges)

    def historical(self, key: str) -> bool:
        """Superseded in time: evidence whose validity ended, or a conclusion resting on one."""
        n = self.nodes.get(key)
        return n is not None and n.state == SUPERSEDED and (n.valid_to is not None or n.kind == "conclusion")

    def needed(self, key: str) -> bool:
        """A stored alive (or disputed) node, or one superseded in time, consumes or supersedes ``key``."""
        for e in self.edges:
            if e.kind == "depends_on" and e.dst == key:
                other = e.src
            elif e.kind == "supports" and e.src == key:
                other = e.dst
            elif e.kind == "supersedes" and e.dst == key:
                other = e.src
            else:
                continue
            if (
                self.alive(other)
                or self.disputed(other)
                or (self.historical(other) and not self.nodes[other].forgotten)
            ):
                return True
        return False

    def orphans(self) -> list[str]:
        return sorted(k for k, n in self.stored().items() if n.state in FORGETTABLE and not self.needed(k))

    # ---- the rules -----------------------------------------------------
    def relabel(self) -> tuple[list[str], list[str]]:
        """Steps 2-3. Returns (died, revived)."""
        new = self.labels()
        died, revived = [], []
        for k in sorted(new):
            node = self.nodes[k]
            old = label(node.state)
            if new[k] == old:
                continue
            if new[k] == F:
                self.before_death[k] = node.weight
                # killed by an attacker that holds (or, superseded in time, still attacks): refuted
                # like any contradicted evidence, even when what it rests on holds
                # (a rival in a dispute won nothing: it holds because k died for want of support)
                superseders = {e.src for e in self.edges if e.kind == "supersedes" and e.dst == k} - {k}
                struck = any(new.get(a) == T or self.historical(a) for a in superseders)
                node.state = INVALIDATED if self.rules_of(k) and not struck else REFUTED
                node.weight = 0.0
                died.append(k)
            elif new[k] == U:
                if old == F:
                    node.weight = self.before_death.get(k, 0.5)
                node.state = DISPUTED
                node.forgotten = False
            else:
                if old == F:
                    node.weight = self.before_death.get(k, 0.5)
                node.state = ALIVE
                node.forgotten = False
                revived.append(k)
        return died, revived

    def end_settled_disputes(self) -> None:
        """Rule 3b: a dispute that is over without a resolve. A stored ``disputes`` edge whose one
        side is dead while a ``supersedes`` source of that side holds or is superseded in time
        (a winner other than the rival killed it), and whose other side is not dead, is dropped:
        the dispute is settled as a resolve settles it. A side dead for want of support keeps
        the edge."""

        def over(dead: str, other: str) -> bool:
            a, b = self.nodes.get(dead), self.nodes.get(other)
            if a is None or b is None or a.forgotten or b.forgotten:
                return False
            if label(a.state) != F or label(b.state) == F:
                return False
            return any(
                e.kind == "supersedes"
                and e.dst == dead
                and e.src != dead
                and (self.alive(e.src) or self.historical(e.src))
                for e in self.edges
            )

        self.edges = [
            e for e in self.edges if not (e.kind == "disputes" and (over(e.src, e.dst) or over(e.dst, e.src)))
        ]

    def decay(self, died: list[str]) -> None:
        """Rule 4 over the whole graph (``died`` is not needed: the rule reads the state)."""
        soft: dict[str, set[str]] = {}
        for e in self.edges:
            if e.kind == "depends_on" and not e.critical:
                soft.setdefault(e.src, set()).add(e.dst)
        for k in sorted(soft):
            if not self.alive(k):
                continue
            node = self.nodes[k]
            base = self.base_confidence.get(k, node.confidence)
            dead = sum(1 for d in soft[k] if label(self.nodes[d].state) == F or self.nodes[d].forgotten)
            if dead:
                want = round((1.0 if base is None else base) * DECAY**dead, 6)
            else:
                want = base
            if want != node.confidence:
                self.base_confidence.setdefault(k, node.confidence)
                node.confidence = want

    def rescore(self, died: list[str]) -> None:
        dead = set(died)
        losers = sorted(
            {
                e.dst
                for e in self.edges
                if e.kind == "supports"
                and e.src in dead
                and self.alive(e.dst)
                and not self.has_alive_supporter(e.dst)
                and not any(
                    s.kind == "supports" and s.dst == e.dst and self.disputed(s.src) for s in self.edges
                )
            }
        )
        for question in sorted({self.nodes[h].question for h in losers}):
            mine = [h for h in losers if self.nodes[h].question == question]
            hyps = sorted(
                k for k, n in self.stored().items() if n.kind == "hypothesis" and n.question == question
            )
            rivals = [h for h in hyps if h not in mine and self.alive(h) and self.has_alive_supporter(h)]
            if not rivals:
                # 5b: no hypothesis of the question keeps alive support, so none may stay
                # superseded for lack of it: back, promotions over it undone, then weakened too
                back = [
                    h
                    for h in hyps
                    if h not in mine and self.nodes[h].state == SUPERSEDED and not self.has_alive_supporter(h)
                ]
                lowered: set[str] = set()
                for h in back:
                    node = self.nodes[h]
                    node.state = ALIVE
                    w = self.before_death.get(h)
                    node.weight = w if w is not None else (node.prior or 0.5)
                    for rival, before in self.promotions.get(h, []):
                        r = self.nodes[rival]
                        if self.alive(rival) and r.weight > before and rival not in lowered:
                            r.weight = before
                            lowered.add(rival)
                for h in mine + back:
                    self.weakened[h] = self.nodes[h].weight
                    self.nodes[h].weight = round(self.nodes[h].weight * NO_RIVAL, 6)
                continue
            winner = sorted(
                rivals,
                key=lambda h: (-self.support(h), -self.nodes[h].weight, -(self.nodes[h].prior or 0.0), h),
            )[0]
            for h in mine:
                self.before_death[h] = self.nodes[h].weight
                self.nodes[h].state = SUPERSEDED
                self.nodes[h].weight = 0.0
            others = [h for h in hyps if h != winner]
            top = max((self.nodes[h].weight for h in others), default=0.0)
            for h in others:
                if self.nodes[h].weight >= 1.0:
                    self.nodes[h].weight = 0.95
            if top >= 1.0:
                top = 0.95
            before = self.nodes[winner].weight
            self.nodes[winner].weight = max(min(1.0, round(top + STEP, 6)), before)
            for h in mine:
                self.promotions.setdefault(h, []).append((winner, before))

    def reinstate(self, revived: list[str], memory: "Model") -> None:
        """Step 6; ``memory``: the model as it was before this revision (what the
        revision log held then)."""
        back = set(revived)
        demoted: set[str] = set()
        for h in sorted({e.dst for e in self.edges if e.kind == "supports" and e.src in back}):
            node = self.nodes.get(h)
            if node is None or node.forgotten or not self.has_alive_supporter(h):
                continue
            if node.state == SUPERSEDED:
                w = memory.before_death.get(h)
                node.state = ALIVE
                node.weight = w if w is not None else (node.prior or 0.5)
                for rival, before in memory.promotions.get(h, []):
                    r = self.nodes.get(rival)
                    if r is not None and self.alive(rival) and r.weight > before and rival not in demoted:
                        r.weight = before
                        demoted.add(rival)
            elif node.state == ALIVE and h in memory.weakened and node.weight < memory.weakened[h]:
                node.weight = memory.weakened[h]

    def load_supporter(self, key: str, hyp: str, weight: float) -> None:
        """Rule 9 for hypotheses: a loaded fragment adds alive evidence ``key`` supporting the
        stored ``hyp``; a hypothesis that then has an alive supporter and is superseded holds
        again as when its support returns (step 6), nothing else changes."""
        before = self.copy()
        self.nodes[key] = MNode(key, "evidence", self.nodes[hyp].question)
        self.edges.append(MEdge("supports", key, hyp, weight=weight))
        self.reinstate([key], before)

    def load_fragment(self, nodes: list[MNode], edges: list[MEdge]) -> list[str]:
        """Rule 9: a fragment adds ``nodes`` and ``edges`` to the stored graph. Everything takes
        the labels of the whole graph and rule 4's confidence (a conclusion loaded onto a
        non-critical dependency that is dead already enters halved, as if it had died since);
        nothing is forgotten. Returns what died."""
        for node in nodes:
            self.nodes[node.key] = node
        self.edges += edges
        return self.load_settle()

    def forget(self) -> list[str]:
        gone = self.orphans()
        for k in gone:
            self.nodes[k].forgotten = True
        return gone

    def load_settle(self) -> list[str]:
        """A freshly loaded graph: labelled; what is dead then is invalidated;
        decay and rescoring follow (nothing is forgotten at load)."""
        died, _ = self.relabel()
        self.decay(died)
        self.rescore(died)
        return died

    # ---- triples (the structured judge, written here) -------------------
    def single_valued(self, key: str) -> bool:
        node = self.nodes[key]
        return node.triple is not None and term(node.triple[1]) not in self.many.get(node.question, set())

    def same_value_slot(self, key: str, triple: tuple) -> bool:
        """``key``'s triple has ``triple``'s subject and predicate."""
        mine = self.nodes[key].triple
        return mine is not None and (term(mine[0]), term(mine[1])) == (term(triple[0]), term(triple[1]))

    def contradicted_by_triple(self, key: str, triple: Optional[tuple]) -> bool:
        """Rule 1b's judge: same subject and predicate, another object, single-valued."""
        return (
            triple is not None
            and self.same_value_slot(key, triple)
            and self.single_valued(key)
            and term(self.nodes[key].triple[2]) != term(triple[2])
        )

    def triple_targets(self, triple: tuple, timeline: bool = False) -> list[str]:
        """Rule 1b: what a fact given as a triple contradicts. ``timeline`` (a timed fact):
        the values superseded in time that have a ``valid_from`` too."""

        def counts(n: MNode) -> bool:
            return n.state in (ALIVE, DISPUTED) or (
                timeline and n.state == SUPERSEDED and n.valid_to is not None and n.valid_from is not None
            )

        return sorted(
            k
            for k, n in self.stored().items()
            if n.kind == "evidence" and counts(n) and self.contradicted_by_triple(k, triple)
        )

    def rejudge(self, new_key: str, triple: Optional[tuple], ends: Optional[dict] = None) -> list[str]:
        """Rules 1c and 1d. ``ends``: the stored values the new fact (a timed one) will end
        at its start if it holds (key -> date). Returns the evidence kept dead (``new_key``
        supersedes each)."""
        kept: list[str] = []
        judged: set[str] = set()
        while True:
            new = self.labels()
            back = [
                k
                for k in sorted(new)
                if k not in judged
                and self.nodes[k].kind == "evidence"
                and label(self.nodes[k].state) == F
                and new[k] != F
                and self.attackers_of(k)
            ]
            if not back:
                return kept
            judged |= set(back)
            hit: dict[str, str] = {}  # kept dead -> what supersedes it
            for k in back:
                node = self.nodes[k]
                if node.triple is None:
                    continue
                holders = sorted(
                    o
                    for o in self.nodes
                    if o != k
                    and new.get(o) == T
                    and not self.nodes[o].forgotten
                    and self.nodes[o].triple is not None
                    and self.same_value_slot(o, node.triple)
                    and term(self.nodes[o].triple[2]) != term(node.triple[2])
                    and (node.valid_from is None or self.nodes[o].valid_from is None)  # else 1d
                )
                if self.contradicted_by_triple(k, triple) and not (
                    node.valid_from is not None and self.nodes[new_key].valid_from is not None
                ):  # both timed: rule 1d places it in its timeline instead
                    hit[k] = new_key
                elif self.single_valued(k) and holders:
                    hit[k] = holders[0]  # the value holding its slot (the smallest key)
            for k in back:
                if k in hit or self.nodes[k].triple is None or not self.single_valued(k):
                    continue
                placed = self.place_returning(k, new, ends if new.get(new_key) == T else None)
                if placed is not None and placed[0] == "held":
                    hit[k] = placed[2]  # the value that held when it starts
                elif placed is not None:
                    self.returning_until[k] = placed[1]
            if not hit:
                return kept
            for k, by in sorted(hit.items()):
                self.edges.append(MEdge("supersedes", by, k))
                kept.append(k)

    def timed_rivals(self, key: str, holds) -> list[str]:
        """The stored evidence with ``key``'s subject and predicate, another object and a
        ``valid_from`` for which ``holds(k)`` is true: the other values of its slot's timeline."""
        mine = self.nodes[key].triple
        return [
            k
            for k, other in self.stored().items()
            if k != key
            and other.kind == "evidence"
            and other.triple is not None
            and other.valid_from is not None
            and self.same_value_slot(k, mine)
            and term(other.triple[2]) != term(mine[2])
            and holds(k)
        ]

    def place_returning(self, key: str, new: dict[str, str], ends: Optional[dict] = None) -> Optional[tuple]:
        """Rule 1d: a timed value that would come back is placed in its slot's timeline
        among the other values (another object) that hold -- alive or disputed by the
        labels ``new``, or superseded in time -- and have a start: one that held when it
        starts keeps it dead (``("held", start, that value)``: the earliest-starting one,
        then the smallest key, supersedes it); else it holds until the earliest later
        start before its own end (``("until", date)``); else None. A value in ``ends`` is
        taken as ending there (the new fact ends it in this revision)."""
        node = self.nodes[key]
        start, end = node.valid_from, node.valid_to
        if start is None:
            return None
        starts, covering = [], []
        for k in self.timed_rivals(key, lambda k: new.get(k) in (T, U) or self.historical(k)):
            other = self.nodes[k]
            other_end = min(other.valid_to or FOREVER, (ends or {}).get(k) or FOREVER)
            if other.valid_from <= start < other_end:
                covering.append((other.valid_from, k))
            elif start < other.valid_from < (end or FOREVER):
                starts.append(other.valid_from)
        if covering:
            since, holder = min(covering)
            return ("held", since, holder)
        return ("until", min(starts)) if starts else None

    def out_of_dispute(self, memory: "Model") -> list[str]:
        """Rule 1e's values: evidence disputed in ``memory`` (before the change), alive now,
        with a single-valued triple and a ``valid_from``."""
        return sorted(
            k
            for k, n in self.stored().items()
            if n.kind == "evidence"
            and n.state == ALIVE
            and k in memory.nodes
            and memory.nodes[k].state == DISPUTED
            and n.valid_from is not None
            and n.triple is not None
            and self.single_valued(k)
        )

    def revise(
        self,
        target,
        new_key: str,
        question: Optional[str] = None,
        triple: Optional[tuple] = None,
        ends: Optional[dict] = None,
        dispute: bool = False,
        interval: tuple = (None, None),
        restates: tuple = (),
        text: Optional[str] = None,
    ) -> dict:
        """One revision: a new fact ``new_key`` contradicting ``target`` (a key, or
        several keys; none: the fact is only recorded, in ``question``; ``"auto"``
        with a ``triple``: what rule 1b finds). ``dispute``: the policy keeps both
        (``preserve_both``): ``disputes`` edges instead of ``supersedes``. ``text``: the
        new fact's claim; the evidence claiming it too, and ``restates``, are its earlier
        records (rule 1f). Returns what died, came back, was forgotten and was kept dead
        by rule 1c."""
        memory = self.copy()
        if target == "auto":
            target = self.triple_targets(triple)
        targets = [target] if isinstance(target, str) else list(target)
        q = self.nodes[targets[0]].question if targets else question
        self.nodes[new_key] = MNode(new_key, "evidence", q, triple=tuple(triple) if triple else None)
        self.nodes[new_key].valid_from, self.nodes[new_key].valid_to = interval  # read by 1c and 1d
        self.nodes[new_key].stated_to = interval[1]
        if text is not None:
            self.nodes[new_key].text = text
        if text is not None and triple:  # found by its subject and predicate, as the store does
            restates = tuple(restates) + tuple(
                k
                for k, n in self.nodes.items()
                if n.text is not None
                and same_claim(n.text, text)
                and n.triple is not None
                and (term(n.triple[0]), term(n.triple[1])) == (term(triple[0]), term(triple[1]))
            )
        for t in targets:
            self.edges.append(MEdge("disputes" if dispute else "supersedes", new_key, t))
        for r in sorted(set(restates) - {new_key}):  # rule 1f
            n = self.nodes.get(r)
            if (
                n is None
                or n.forgotten
                or n.kind != "evidence"
                or n.question != self.nodes[new_key].question
                or n.valid_from != self.nodes[new_key].valid_from
                or label(n.state) != F
                or self.historical(r)
                or any(
                    (e.kind == "depends_on" and e.dst == r)
                    or (e.kind in ("supports", "refutes") and e.src == r)
                    for e in self.edges
                )
            ):
                continue
            self.edges.append(MEdge("supersedes", new_key, r))
        return self._settle(memory, new_key, triple, ends)

    def resolve(self, loser: str, winner: str) -> dict:
        """The caller's decision between two stored facts: ``winner`` supersedes ``loser``
        (their dispute edges, if any, removed), then everything settles as after a revision
        whose new fact is ``winner``."""
        memory = self.copy()
        self.edges = [
            e for e in self.edges if not (e.kind == "disputes" and {e.src, e.dst} == {loser, winner})
        ]
        self.edges.append(MEdge("supersedes", winner, loser))
        return self._settle(memory, winner, self.nodes[winner].triple, None)

    def _settle(self, memory: "Model", new_key: str, triple: Optional[tuple], ends: Optional[dict]) -> dict:
        self.returning_until = {}
        kept = self.rejudge(new_key, triple, ends)
        died, revived = self.relabel()
        self.end_settled_disputes()
        for k, until in sorted(self.returning_until.items()):  # rule 1d: back only until then
            if self.nodes[k].state == ALIVE:
                ended, fell = supersede_in_time(self, k, until)
                revived = [r for r in revived if r not in ended]
                died += [
                    d
                    for d in ended + fell
                    if d not in died and (d not in memory.nodes or label(memory.nodes[d].state) != F)
                ]
            elif self.nodes[k].state == DISPUTED:
                shorten(self, k, until)
        for k in self.out_of_dispute(memory) if self.settles_in_time else []:  # rule 1e
            died += [d for d in place_in_time(self, k) if d not in died]
        revived += [k for k in reopen_in_time(self) if k not in revived]  # rule 1g
        self.decay(died)
        self.rescore(died)
        if revived:
            self.reinstate(revived, memory)
        forgotten = self.forget()
        back = {k: d for k, d in self.returning_until.items() if self.nodes[k].valid_to == d}
        return {
            "died": died,
            "revived": revived,
            "forgotten": forgotten,
            "kept_dead": kept,
            "back_until": back,
        }


def from_investigation(inv: dict) -> Model:
    """The model of an investigation file (the product's format), before loading."""
    q = inv["question"]["key"]
    m = Model()
    m.nodes[q] = MNode(q, "question", q)
    for h in inv.get("hypotheses", []):
        m.nodes[h["key"]] = MNode(h["key"], "hypothesis", q, prior=h.get("prior"))
    for e in inv.get("evidence", []):
        triple = (e["subject"], e["predicate"], e["object"]) if e.get("subject") else None
        m.nodes[e["key"]] = MNode(
            e["key"],
            "evidence",
            q,
            triple=triple,
            valid_from=e.get("valid_from"),
            valid_to=e.get("valid_to"),
            text=e.get("claim"),
            stated_to=e.get("valid_to"),
        )
    m.many[q] = {term(p) for p, c in (inv.get("predicates") or {}).items() if c == "many"}
    for c in inv.get("conclusions", []):
        m.nodes[c["key"]] = MNode(c["key"], "conclusion", q, confidence=c.get("confidence"))
    for e in inv.get("edges", []):
        kind = e["type"]
        if kind == "depends_on":
            m.edges.append(
                MEdge(kind, e["from"], e["to"], critical=e.get("critical", True), group=e.get("group"))
            )
        elif kind in ("supports", "refutes"):
            m.edges.append(MEdge(kind, e["from"], e["to"], weight=e.get("weight", 1.0)))
        else:
            m.edges.append(MEdge(kind, e["from"], e["to"], weight=e.get("confidence", 1.0)))
    return m


# ---- valid time (the rules of memory_core/core/validity.py's docstring) -----------------
FOREVER = "9999-12-31"  # an open end; dates here are plain YYYY-MM-DD, which order as strings


def valid_time_case(new: tuple, stored: tuple) -> str:
    """How a judged contradiction reads in valid time: intervals are [from, to), to = None open.
    A stored value that started earlier and still held when the new one starts ends there
    (whatever its own end); one that starts later ends the new one; the same start is a real
    contradiction; a start on one side only is decided as untimed, unless the side without one
    ends before the other starts (disjoint)."""
    (nf, nt), (sf, st) = new, stored
    # an end with no start: it held at most until then, so a start at or after it is after it
    if (nt is not None and sf is not None and nt <= sf) or (st is not None and nf is not None and st <= nf):
        return "disjoint"
    if nf is None and sf is None:
        return "untimed"
    if nf is None or sf is None:
        return "one_side_untimed"
    if sf < nf:
        return "ends_stored"
    if nf < sf:
        return "new_precedes"
    return "same_period"


def end_validity(model: Model, key: str, until: str) -> list[str]:
    """``key`` (alive evidence) held until ``until``: superseded, weight 0, ``valid_to`` set;
    every alive node the whole-graph labels then make dead is superseded too (never
    forgotten); non-critical dependents decay and hypotheses are rescored as for any death."""
    node = model.nodes[key]
    if node.state != ALIVE or node.forgotten:
        return []
    died, fell = supersede_in_time(model, key, until)
    died += [k for k in fell if k not in died]
    model.decay(died)
    model.rescore(died)
    return died


def supersede_in_time(model: Model, key: str, until: str) -> tuple[list[str], list[str]]:
    """``key`` held until ``until``: superseded, weight 0, ``valid_to`` set; what then falls under
    the whole-graph labels (resting on it) is superseded too and keeps its attacks, evidence
    ending at the last moment its support held (:func:`support_span`), or invalidated when its
    support never held while it could: again until nothing falls; the rest is relabelled as any
    relabelling (a premise it defeated, a dispute left); then what was superseded in time
    before and rests on any of them ends no later than its support (:func:`settle_history`).
    Returns (superseded or invalidated here, relabelled dead); no decay, no rescoring."""
    node = model.nodes[key]
    model.before_death[key] = node.weight
    node.state, node.weight, node.valid_to = SUPERSEDED, 0.0, until
    ended = [key]
    while True:
        falling = [
            k
            for k, lab in sorted(model.labels().items())
            if lab == F
            and model.rules_of(k)
            and not model.nodes[k].forgotten
            and model.nodes[k].state in (ALIVE, DISPUTED)
        ]
        if not falling:
            break
        spans = {k: support_span(model, k, set(falling)) for k in falling}
        for k in falling:
            n = model.nodes[k]
            model.before_death[k] = n.weight
            if spans[k] is None:
                n.state, n.weight = INVALIDATED, 0.0
            else:
                n.state, n.weight = SUPERSEDED, 0.0
                if n.kind == "evidence":
                    n.valid_to = spans[k][1]
            ended.append(k)
    fell, _ = model.relabel()
    settle_history(model, ended + fell)
    return ended, [k for k in fell if k not in ended]


def reopen_in_time(model: Model) -> list[str]:
    """Rule 1g over the whole graph: each evidence superseded in time or disputed, with a
    single-valued triple and a ``valid_from``, whose ``valid_to`` is the start of a value of its
    slot (another object) that is dead and not superseded in time (it never held), was ended by
    nothing true. It is placed as rule 1d places a returning value, with the end its fact
    stated: among the stored values with its subject and predicate and another object that hold
    (alive, disputed, or superseded in time) and have a ``valid_from``, one that held when it
    starts leaves it as it is; else it holds until the earliest such start after its start and
    before that end, else until that end. An end only moves on: superseded in time and no value
    ends it -> alive again (its weight from before its death), and what is superseded in time,
    rests on it (critical ``depends_on``, transitively) and ended with it (a conclusion, or
    evidence whose ``valid_to`` was its end) is labelled again as if it had not ended: true ->
    alive, undefined -> disputed (weights from before their deaths); each one left dead stays
    superseded in time, evidence with its end moved on to the last time its support held
    (:func:`support_span`, over the end its fact stated). A value the next value still ends has
    its end moved to that start, and what ended with it is left dead with its end moved on so;
    a disputed one keeps its state, only its end moves. Repeated until nothing moves. Returns
    the nodes alive again."""
    revived: list[str] = []
    while True:
        moved = False
        for key in sorted(model.stored()):
            node = model.nodes[key]
            if node.kind != "evidence" or node.triple is None or node.valid_from is None:
                continue
            if node.valid_to is None or not (model.historical(key) or node.state == DISPUTED):
                continue
            if not model.single_valued(key):
                continue
            enders = [
                k
                for k, other in model.stored().items()
                if other.kind == "evidence"
                and other.triple is not None
                and model.same_value_slot(k, node.triple)
                and term(other.triple[2]) != term(node.triple[2])
                and other.valid_from == node.valid_to
                and label(other.state) == F
                and not model.historical(k)
            ]
            if not enders:
                continue
            if any(
                other.kind == "evidence"
                and other.triple is not None
                and other.valid_from is None
                and model.alive(k)
                and model.same_value_slot(k, node.triple)
                and term(other.triple[2]) != term(node.triple[2])
                for k, other in model.stored().items()
            ):
                continue  # an alive value of its slot without a start: time cannot order the two
            stated = node.stated_to
            covering, starts = [], []
            for k in model.timed_rivals(
                key, lambda k: model.nodes[k].state in (ALIVE, DISPUTED) or model.historical(k)
            ):
                other = model.nodes[k]
                if other.valid_from <= node.valid_from < (other.valid_to or FOREVER):
                    covering.append(k)
                elif node.valid_from < other.valid_from < (stated or FOREVER):
                    starts.append(other.valid_from)
            if covering:
                continue
            until = min(starts) if starts else stated
            old = node.valid_to
            if (until or FOREVER) <= old:
                continue
            moved = True
            if node.state == DISPUTED or starts:
                node.valid_to = until
                lengthen_dependents(model, key, old, revive=False)
                continue
            node.state, node.valid_to = ALIVE, until
            node.weight = model.before_death.get(key, 0.5)
            revived.append(key)
            revived += lengthen_dependents(model, key, old, revive=True)
        if not moved:
            return revived


def lengthen_dependents(model: Model, key: str, old_end: str, revive: bool) -> list[str]:
    """Rule 1g for what ended with ``key`` (superseded in time, resting on it, a conclusion or
    evidence ending at ``old_end``). Returns the nodes alive again."""
    reach: list[str] = []
    todo = [key]
    while todo:
        k = todo.pop(0)
        for e in model.stored_edges():
            if e.kind == "depends_on" and e.critical and e.dst == k and e.src not in reach and e.src != key:
                reach.append(e.src)
                todo.append(e.src)
    ended = sorted(
        k
        for k in reach
        if model.historical(k)
        and model.rules_of(k)
        and (model.nodes[k].kind != "evidence" or model.nodes[k].valid_to == old_end)
    )
    revived: list[str] = []
    if revive:  # relabelled whole: what rests on it (forgotten or ended with it) may hold again
        for k in ended:
            model.nodes[k].state = INVALIDATED  # labelled as if it had not ended
        _, back = model.relabel()  # a forgotten node whose support came back with it comes back too
        revived = list(back)
        for k in ended:
            if model.nodes[k].state == INVALIDATED:
                model.nodes[k].state = SUPERSEDED
            elif model.nodes[k].kind == "evidence":
                model.nodes[k].valid_to = model.nodes[k].stated_to
    for k in ended:
        n = model.nodes[k]
        if n.state != SUPERSEDED or n.kind != "evidence" or n.valid_to is None:
            continue
        current = n.valid_to
        n.valid_to = n.stated_to
        span = support_span(model, k, set())
        n.valid_to = current
        if span is not None and (span[1] or FOREVER) > current:
            n.valid_to = span[1]
    return revived


def support_span(model: Model, key: str, falling: set, path: tuple = ()) -> Optional[tuple]:
    """(first start, last end) of the times ``key`` held (None bounds open), or None if it never
    held. A premise: its own interval if it held at all (alive, disputed, superseded in time).
    Derived: alive or disputed and not ``falling``: its own interval; refuted: never; else the
    union over its justifications of the times all their antecedents held together, cut to its
    own interval (a justification whose antecedents never overlapped there counts for nothing).
    A node met again on its own path never held (an unfounded cycle)."""
    n = model.nodes.get(key)
    if n is None or key in path:
        return None
    rules = model.rules_of(key)
    mine = (n.valid_from, n.valid_to)
    if not rules:
        return mine if n.state in (ALIVE, DISPUTED) or model.historical(key) else None
    if n.state == REFUTED:
        return None
    if n.state in (ALIVE, DISPUTED) and key not in falling:
        return mine
    pieces = []
    for rule in sorted(rules, key=sorted):
        parts = [support_span(model, a, falling, path + (key,)) for a in sorted(rule)]
        if None in parts:
            continue
        lo = max([p[0] or "" for p in parts] + [mine[0] or ""])
        hi = min([p[1] or FOREVER for p in parts] + [mine[1] or FOREVER])
        if lo < hi:
            pieces.append((lo, hi))
    if not pieces:
        return None
    lo = min(p[0] for p in pieces)
    hi = max(p[1] for p in pieces)
    return (lo or None, None if hi == FOREVER else hi)


def settle_history(model: Model, seeds: list[str]) -> list[str]:
    """The nodes superseded in time with justifications that rest on ``seeds`` (critical
    ``depends_on``, transitively; ``seeds`` themselves left) held only while their support
    did: evidence whose support ends earlier has its ``valid_to`` moved back; one whose
    support never held while it could is invalidated. Returns the keys changed."""
    reach: list[str] = []
    todo = list(seeds)
    while todo:
        k = todo.pop(0)
        for e in model.stored_edges():
            if e.kind == "depends_on" and e.critical and e.dst == k and e.src not in reach:
                reach.append(e.src)
                todo.append(e.src)
    picked = sorted(k for k in reach if k not in seeds and model.historical(k) and model.rules_of(k))
    spans = {k: support_span(model, k, set()) for k in picked}
    changed = []
    for k in picked:
        n = model.nodes[k]
        if spans[k] is None:
            n.state, n.weight = INVALIDATED, 0.0
            changed.append(k)
        elif n.kind == "evidence" and spans[k][1] is not None and spans[k][1] < n.valid_to:
            n.valid_to = spans[k][1]
            changed.append(k)
    return changed


def shorten(model: Model, key: str, until: str) -> list[str]:
    """``key`` (evidence superseded in time, or disputed) held only until ``until`` when its
    ``valid_to`` is later (or it has none): set or moved back; then what is superseded in time
    and rests on it ends no later than its support (:func:`settle_history`). States unchanged
    (but what never held is invalidated)."""
    node = model.nodes[key]
    old = node.valid_to
    if old is not None and old <= until:
        return []
    node.valid_to = until
    return [key] + settle_history(model, [key])


def place_in_time(model: Model, key: str) -> list[str]:
    """Rule 1e for ``key`` (alive evidence out of dispute, timed, single-valued): the other values
    of its slot that hold and have a start are read in valid time against it; each one that
    ``ends_stored`` ends at its start, and it ends at the earliest start of one it precedes (one
    ended in time already, by another value out of dispute, has its end moved back only).
    Returns what stopped holding (superseded or invalidated here, or relabelled dead)."""
    node = model.nodes[key]
    mine = (node.valid_from, node.stated_to)  # as its fact stated it (an end given in dispute is given again)
    cases = {
        k: valid_time_case(mine, (model.nodes[k].valid_from, model.nodes[k].valid_to))
        for k in model.timed_rivals(
            key, lambda k: model.nodes[k].state in (ALIVE, DISPUTED) or model.historical(k)
        )
    }
    died: list[str] = []
    for k in sorted(k for k, c in cases.items() if c == "ends_stored"):
        if model.nodes[k].state == ALIVE:
            ended, fell = supersede_in_time(model, k, node.valid_from)
            died += [d for d in ended + fell if d not in died]
        else:
            shorten(model, k, node.valid_from)
    starts = sorted(model.nodes[k].valid_from for k, c in cases.items() if c == "new_precedes")
    if starts and node.state == ALIVE:
        ended, fell = supersede_in_time(model, key, starts[0])
        died += [d for d in ended + fell if d not in died]
    elif starts and model.historical(key):  # ended already by another value out of dispute
        shorten(model, key, starts[0])
    return died


def revise_in_time(
    model: Model,
    new_key: str,
    triple: tuple,
    new: tuple,
    question: str,
    dispute: bool = False,
    restates: tuple = (),
    text: Optional[str] = None,
) -> dict:
    """A fact given as a triple with its interval ``new`` = (valid_from, valid_to) takes its place
    in the whole timeline of its subject and predicate: what rule 1b finds -- the alive and
    disputed values and, for a timed fact, those superseded in time with a ``valid_from`` -- is
    read in valid time first (:func:`valid_time_case` against each one's stored interval).
    Disjoint: ignored. Untimed, one side untimed, or the same period: a revision as any other
    (those are the targets; a target superseded in time is refuted first: the fact wins, so it
    was never true). Then, if the new fact is alive: it held only until the earliest stored
    value it precedes starts (superseded, weight 0; unless it already ends by then); and every
    value that started before it and still held then ends where it starts: an alive one by
    :func:`end_validity`, one superseded in time by :func:`shorten`. Returns {"cases": {key:
    case}, "ended": [...], "shortened": [...], "back_until": {key: date} (rule 1d)}.
    ``dispute``: the policy keeps both (``preserve_both``): the targets are disputed, not
    refuted (a target superseded in time is disputed again), and the fact, disputed, ends
    nothing (it held at most until the value it precedes starts)."""
    found = model.triple_targets(triple, timeline=new[0] is not None)
    cases = {k: valid_time_case(new, (model.nodes[k].valid_from, model.nodes[k].valid_to)) for k in found}
    targets = [k for k in found if cases[k] in ("untimed", "one_side_untimed", "same_period")]
    refuted = []
    for k in targets:
        n = model.nodes[k]
        if model.historical(k) and n.kind == "evidence":
            if dispute:  # in dispute again: whether it held is open
                n.state, n.weight = DISPUTED, 0.5
                continue
            n.state, n.weight = REFUTED, 0.0
            refuted.append(k)
    settle_history(model, refuted)  # what rested only on a value never true never held either
    ends = {k: new[0] for k in found if cases[k] == "ends_stored"}
    revised = model.revise(
        targets,
        new_key,
        question=question,
        triple=triple,
        ends=ends,
        dispute=dispute,
        interval=new,
        restates=restates,
        text=text,
    )
    node = model.nodes[new_key]
    node.valid_from, node.valid_to = new
    starts = sorted(model.nodes[k].valid_from for k in found if cases[k] == "new_precedes")
    until = starts[0] if starts else None
    if until is not None and new[1] is not None and new[1] <= until:
        until = None
    ended: list[str] = []
    shortened: list[str] = []
    if node.state == DISPUTED and until is not None:
        node.valid_to = until  # in dispute, it held at most until the value it precedes starts
    if node.state == ALIVE and not node.forgotten:
        if until is not None:
            node.state, node.weight, node.valid_to = SUPERSEDED, 0.0, until
        for k in sorted(k for k in found if cases[k] == "ends_stored"):
            if model.nodes[k].state == SUPERSEDED and model.nodes[k].valid_to is not None:
                shortened += shorten(model, k, new[0])
            elif model.nodes[k].state == DISPUTED:  # it ends, still disputed
                shortened += shorten(model, k, new[0])
            else:
                ended += end_validity(model, k, new[0])
    model.forget()  # what placing it in time left dead and unneeded (a dependent that never held)
    return {"cases": cases, "ended": ended, "shortened": shortened, "back_until": revised["back_until"]}

"""Revision sequences through the real product, compared after EVERY revision with
the reference rules applied to the WHOLE graph (:mod:`bench.reference`).

One sequence: a generated investigation (:mod:`bench.graphs`) is loaded with
``Falsify.load``; then each revision pins one evidence (``Falsify.revise(fact,
target=..., key=...)``: the real cognee pipeline, detection pinned, cascade,
promotion, forget, journalled write) and ``Falsify.status()`` is compared with the
model: which nodes are stored, each one's state, feedback weight and confidence,
and which belief edges are stored. Used by ``tests/integration/test_property_store.py`` (a few
sequences) and by ``python -m bench.deep`` (a few hundred).
"""

from __future__ import annotations

import json
import random

from bench.graphs import loaded_model, pick_target, random_investigation
from bench.reference import Model


class Engine:
    """The pure rules driven as the store adapter drives them: the view holds the
    stored nodes and the forgotten ones (*ghosts*, dead, with their edges); each
    plan's changes feed the memory the next revision gets."""

    def __init__(self, model: Model):
        from memory_core.core.beliefs import Edge, Node
        from memory_core.core.tms import Memory

        self.nodes: dict = {}
        for n in model.nodes.values():
            self.nodes[n.key] = Node(
                n.key,
                n.kind,
                state=n.state,
                weight=n.weight,
                confidence=n.confidence,
                question=n.question,
                prior=n.prior,
            )
        self.edges: list = []
        for e in model.edges:
            if e.kind == "depends_on":
                self.edges.append(Edge("depends_on", e.src, e.dst, critical=e.critical, group=e.group))
            elif e.kind in ("supports", "refutes"):
                self.edges.append(Edge(e.kind, e.src, e.dst, weight=e.weight))
            else:
                self.edges.append(Edge(e.kind, e.src, e.dst, confidence=e.weight))
        self.ghosts = {k for k, n in model.nodes.items() if n.forgotten}
        # what the revision log would remember of the load (weights before a death, ...)
        self.memory = Memory(
            before_death={k: {"weight": w} for k, w in model.before_death.items()},
            promotions={k: list(v) for k, v in model.promotions.items()},
            weakened=dict(model.weakened),
            undecayed=dict(model.base_confidence),
        )

    def revise(self, target, new_key: str, epoch: int):
        """``target``: a key, or several (one new fact contradicting them all)."""
        from memory_core.core.beliefs import BeliefView, Node
        from memory_core.core.revision import plan_revision

        targets = [target] if isinstance(target, str) else list(target)
        view = BeliefView(nodes=dict(self.nodes), edges=list(self.edges))
        q = view.nodes[targets[0]].question if targets else None
        plan = plan_revision(
            view,
            [(t, "contradicts", 1.0) for t in targets],
            epoch,
            f"fact {new_key}",
            Node(new_key, "evidence", question=q),
            memory=self.memory,
            ghosts=set(self.ghosts),
        )
        self.nodes, self.edges = dict(view.nodes), list(view.edges)
        self.ghosts = (self.ghosts | set(plan.forgotten)) - set(plan.restored)
        self.memory.absorb(plan)
        return plan

    def resolve(self, loser: str, winner: str, epoch: int):
        """``resolve loser --winner winner`` (a dispute, or two alive facts of one question)."""
        from memory_core.core.beliefs import BeliefView
        from memory_core.core.revision import plan_resolve

        view = BeliefView(nodes=dict(self.nodes), edges=list(self.edges))
        plan = plan_resolve(view, loser, winner, epoch, memory=self.memory, ghosts=set(self.ghosts))
        self.nodes, self.edges = dict(view.nodes), list(view.edges)
        self.ghosts = (self.ghosts | set(plan.forgotten)) - set(plan.restored)
        self.memory.absorb(plan)
        return plan

    def stored(self) -> dict:
        return {k: n for k, n in self.nodes.items() if k not in self.ghosts}

    def stored_edges(self) -> set:
        keep = self.stored()
        return {(e.kind, e.src, e.dst, e.group) for e in self.edges if e.src in keep and e.dst in keep}


def accepts_shared_antecedents() -> bool:
    """Does the loader accept two ``depends_on`` edges between the same nodes in
    different groups? Asked of the product's own parser."""
    from memory_core.core.errors import InputError
    from memory_core.core.investigation import parse

    probe = {
        "question": {"key": "Q", "text": "q"},
        "evidence": [{"key": "E", "claim": "e"}, {"key": "A", "claim": "a"}],
        "conclusions": [{"key": "K", "statement": "k"}],
        "edges": [
            {"type": "depends_on", "from": "K", "to": "E", "group": "g1"},
            {"type": "depends_on", "from": "K", "to": "A", "group": "g1"},
            {"type": "depends_on", "from": "K", "to": "E", "group": "g2"},
        ],
    }
    try:
        parse(json.dumps(probe))
        return True
    except InputError:
        return False


def stored_picture(status: dict, prefix: str) -> tuple[dict, set]:
    nodes = {
        n["key"]: (
            n["state"],
            round(float(n["feedback_weight"]), 6),
            None if n.get("confidence") is None else round(float(n["confidence"]), 6),
        )
        for n in status["nodes"]
        if n["key"].startswith(prefix)
    }
    edges = {(e["type"], e["from"], e["to"]) for e in status["edges"] if e["from"].startswith(prefix)}
    return nodes, edges


def model_picture(model: Model) -> tuple[dict, set]:
    """What the stores must hold: the model's stored (not forgotten) nodes and their edges."""
    nodes = {
        k: (
            n.state,
            round(n.weight, 6),
            None if n.confidence is None or n.kind != "conclusion" else round(n.confidence, 6),
        )
        for k, n in model.stored().items()
    }
    edges = {(e.kind, e.src, e.dst) for e in model.stored_edges()}
    return nodes, edges


def differences(status: dict, model: Model, prefix: str) -> list[str]:
    (got, got_edges), (want, want_edges) = stored_picture(status, prefix), model_picture(model)
    out = []
    for k in sorted(set(want) - set(got)):
        out.append(f"{k}: missing (expected {want[k][0]})")
    for k in sorted(set(got) - set(want)):
        out.append(f"{k}: stored as {got[k][0]} (expected forgotten)")
    for k in sorted(set(got) & set(want)):
        if got[k] != want[k]:
            out.append(f"{k}: (state, weight, confidence) {got[k]} expected {want[k]}")
    for e in sorted(want_edges - got_edges):
        out.append(f"edge {e[0]} {e[1]} -> {e[2]}: missing")
    for e in sorted(got_edges - want_edges):
        out.append(f"edge {e[0]} {e[1]} -> {e[2]}: stored (expected gone)")
    return out


# Loaded supersedes edges: a supersedes edge in a loaded file between two alive evidence: the
# loader's settle (two-valued) leaves the superseded evidence alive, while the revision rules
# (three-valued, supersedes = attack) label it refuted; the first revision that reaches it flips
# it. Generated sequences leave such edges out (tested on its own).


def sequence_case(
    seed: int, prefix: str, shared: bool, revisions: tuple[int, int] = (2, 6), **limits
) -> tuple[dict, list[int]]:
    """A generated investigation and its revision picks, from ``seed`` alone."""
    rng = random.Random(seed)
    limits.setdefault("supersedes", False)  # see "Loaded supersedes edges" above
    inv = random_investigation(rng, prefix=prefix, shared=shared, **limits)
    picks = [rng.randint(0, 10_000) for _ in range(rng.randint(*revisions))]
    return inv, picks


async def run_sequence(fx, inv: dict, picks: list, prefix: str, stop_at_first: bool = True) -> dict:
    """Load ``inv``, apply the revisions, compare after the load and after each one.
    ``picks``: indices choosing each target among the alive evidence (or keys).
    Returns {"revisions", "steps": [{"target", "differences", "expected_dead",
    "observed_dead"}...], "differences": first mismatches}."""
    model = loaded_model(inv)
    await fx.load(inv)
    report = {"revisions": 0, "steps": [], "differences": []}
    diffs = differences(await fx.status(), model, prefix)
    if diffs:
        report["differences"] = [f"after load: {d}" for d in diffs]
        return report
    for step, pick in enumerate(picks, start=1):
        target = pick if isinstance(pick, str) else pick_target(model, pick)
        if target is None:
            break
        new_key = f"{prefix}F{step}"
        before = {k for k in model.nodes if model.alive(k)}
        model.revise(target, new_key)
        result = await fx.revise(
            f"Revision {step} of {prefix}: {target} did not hold", target=target, key=new_key
        )
        report["revisions"] += 1
        expected_dead = sorted(before - {k for k in model.nodes if model.alive(k)})
        observed = (
            set(result.get("refuted", []))
            | set(result.get("invalidated", []))
            | set(result.get("superseded", []))
        )
        diffs = differences(await fx.status(), model, prefix)
        report["steps"].append(
            {
                "target": target,
                "expected_dead": expected_dead,
                "observed_dead": sorted(observed),
                "differences": diffs,
            }
        )
        if diffs:
            report["differences"] = [f"after revision {step} (target {target}): {d}" for d in diffs]
            if stop_at_first:
                break
    return report


def describe(inv: dict, picks: list[int], report: dict) -> str:
    """A failure message that reproduces the case."""
    targets = [s["target"] for s in report["steps"]]
    return (
        "\n".join(report["differences"][:15])
        + f"\nrevision targets: {targets}\ninvestigation: "
        + json.dumps(inv)[:4000]
    )

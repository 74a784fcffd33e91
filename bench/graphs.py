"""Generated belief graphs (investigation files, the product's own format) and
revision sequences, for the deep-graph benchmark and the property tests.

A graph holds hypotheses (priors, supports and refutes with unequal weights),
evidence (mostly premises; some depend on earlier evidence), conclusions in
chains (a conclusion's first justification uses only nodes drawn before it),
alternative justifications (named groups), cycles (later groups may use any
node), non-critical dependencies (decay), loaded ``supersedes`` edges and, with
``shared``, antecedents shared by several justifications of one node. Every node
is well-founded when loaded.

``rng`` is anything with ``randint``, ``choice``, ``sample`` and ``random``
(``random.Random``, or hypothesis's ``st.randoms()`` in the property tests).
"""

from __future__ import annotations

from typing import Optional

from bench.reference import Model, from_investigation

PRIORS = (None, 0.1, 0.3, 0.5, 0.7, 0.9)
EDGE_WEIGHTS = (0.3, 0.6, 0.9, 1.0)
CONFIDENCES = (None, 0.6, 0.8)


def random_investigation(
    rng,
    prefix: str = "",
    shared: bool = False,
    max_evidence: int = 7,
    max_conclusions: int = 6,
    max_hypotheses: int = 4,
    supersedes: bool = True,
    min_conclusions: int = 0,
) -> dict:
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    hyps = [p(f"H{i}") for i in range(rng.randint(0, max_hypotheses))]
    ev = [p(f"E{i}") for i in range(rng.randint(2, max_evidence))]
    co = [p(f"K{i}") for i in range(rng.randint(min_conclusions, max_conclusions))]
    order = ev + co
    edges: list[dict] = []
    pairs: set[tuple[str, str]] = set()
    triples: set[tuple[str, str, Optional[str]]] = set()

    def depends(src: str, ants: list[str], group: Optional[str], critical: bool = True) -> None:
        for a in ants:
            if a == src or (src, a, group) in triples or ((src, a) in pairs and not (shared and critical)):
                continue
            if not critical and (src, a) in pairs:
                continue
            pairs.add((src, a))
            triples.add((src, a, group))
            edge = {"type": "depends_on", "from": src, "to": a, "critical": critical}
            if group is not None:
                edge["group"] = group
            edges.append(edge)

    for i, node in enumerate(order):
        earlier = order[:i]
        conclusion = node in co
        if not earlier or (not conclusion and rng.randint(0, 3) != 0):
            continue  # most evidence are premises
        groups = rng.randint(1, 3 if conclusion else 2)
        named = groups > 1 or rng.random() < 0.5
        for g in range(groups):
            pool = earlier if g == 0 else [k for k in order if k != node]
            ants = rng.sample(pool, rng.randint(1, min(3, len(pool))))
            depends(node, ants, f"g{g}" if named else None)
    for node in co:  # non-critical dependencies
        if rng.randint(0, 2) == 0:
            depends(node, [rng.choice([k for k in order if k != node])], None, critical=False)
    for h in hyps:
        for e in rng.sample(ev, rng.randint(0, min(3, len(ev)))):
            edges.append({"type": "supports", "from": e, "to": h, "weight": rng.choice(EDGE_WEIGHTS)})
        if rng.randint(0, 2) == 0:
            e = rng.choice(ev)
            if not any(x["from"] == e and x["to"] == h for x in edges):
                edges.append({"type": "refutes", "from": e, "to": h, "weight": rng.choice(EDGE_WEIGHTS)})
    if supersedes and rng.randint(0, 2) == 0:
        a, b = rng.sample(ev, 2)
        edges.append({"type": "supersedes", "from": a, "to": b, "confidence": 0.9})
    hypotheses = []
    for h in hyps:
        item = {"key": h, "statement": f"hypothesis {h} explains what happened"}
        prior = rng.choice(PRIORS)
        if prior is not None:
            item["prior"] = prior
        hypotheses.append(item)
    conclusions = []
    for c in co:
        item = {"key": c, "statement": f"conclusion {c} follows from the evidence"}
        confidence = rng.choice(CONFIDENCES)
        if confidence is not None:
            item["confidence"] = confidence
        conclusions.append(item)
    return {
        "question": {"key": p("Q"), "text": f"Question {prefix or 'Q'}: what happened?"},
        "hypotheses": hypotheses,
        "evidence": [{"key": e, "claim": f"evidence {e} was observed on site"} for e in ev],
        "conclusions": conclusions,
        "edges": edges,
    }


def pick_target(model: Model, pick: int, dead_targets: bool = False) -> Optional[str]:
    """The evidence a revision pins, chosen by ``pick``: an alive one (any stored
    one with ``dead_targets``); None when there is none."""
    pool = sorted(
        k for k, n in model.stored().items() if n.kind == "evidence" and (dead_targets or n.state == "alive")
    )
    return pool[pick % len(pool)] if pool else None


def loaded_model(inv: dict) -> Model:
    m = from_investigation(inv)
    m.load_settle()
    return m


def resting_on(rnd, prefix: str, keys: list[str], most: int = 2) -> tuple[list, list, list]:
    """One to three conclusions resting on one to ``most`` of the evidence ``keys`` (each in a
    group of its own half the time) and one or two hypotheses each supported by one of them:
    (conclusions, hypotheses, edges) in the investigation format."""
    conclusions, hypotheses, edges = [], [], []
    for j in range(rnd.randint(1, 3)):
        k = f"{prefix}K{j}"
        conclusions.append({"key": k, "statement": f"Conclusion {j} of {prefix}.", "confidence": 0.8})
        for g, ant in enumerate(rnd.sample(keys, rnd.randint(1, min(most, len(keys))))):
            edges.append(
                {"type": "depends_on", "from": k, "to": ant, "group": f"g{g}" if rnd.random() < 0.5 else None}
            )
    for h in range(rnd.randint(1, 2)):
        key = f"{prefix}H{h}"
        hypotheses.append(
            {"key": key, "statement": f"Hypothesis {h} of {prefix}.", "prior": round(0.3 + 0.2 * h, 2)}
        )
        edges.append({"type": "supports", "from": rnd.choice(keys), "to": key, "weight": 0.8})
    return conclusions, hypotheses, [{k: v for k, v in e.items() if v is not None} for e in edges]


LEADERS = ("Alice", "Bob", "Carol", "Dave", "Erin")
DATES = ("2000-01-01", "2005-01-01", "2010-01-01", "2015-01-01", "2020-01-01")
ORDERS = ("forward", "backward", "shuffled")


def timed_interval(rnd) -> tuple:
    start = rnd.choice(DATES)
    later = [d for d in DATES if d > start]
    end = rnd.choice(later) if later and rnd.random() < 0.3 else None
    return start, end


def timed_case(
    seed: int, prefix: str, order: Optional[str] = None, revisits: bool = False
) -> tuple[dict, list]:
    """A generated investigation whose one or two subjects have a timed value of the
    single-valued predicate ``led by`` (conclusions and hypotheses resting on them), and a
    history of 3 to 6 later values (another leader from one of a few dates, sometimes with an
    end) arriving in ``order`` (drawn when None): ``forward`` (by start date), ``backward``
    (each one starts before the ones already known: every value arrives late) or
    ``shuffled``; ``"undo"`` steps are sprinkled in. ``revisits``: one or two values are
    contested and come back -- another leader claims the same start, then the first leader
    again (so what the second had refuted is reinstated) -- drawn from a second stream, so
    the rest of the history is the one without. Returns (investigation, steps) where a step
    is ``(subject, leader, valid_from, valid_to)`` or ``"undo"``."""
    import random

    rnd = random.Random(seed)
    q = f"{prefix}Q"
    subjects = [f"team {i} of {prefix.rstrip('_')}" for i in range(rnd.randint(1, 2))]
    evidence = []
    for i, subject in enumerate(subjects):
        start, end = timed_interval(rnd)
        leader = rnd.choice(LEADERS)
        ev = {
            "key": f"{prefix}E{i}",
            "claim": f"{subject.capitalize()} was led by {leader}.",
            "subject": subject,
            "predicate": "led by",
            "object": leader,
            "valid_from": start,
        }
        if end:
            ev["valid_to"] = end
        evidence.append(ev)
    keys = [e["key"] for e in evidence]
    conclusions, hypotheses, edges = resting_on(rnd, prefix, keys)
    inv = {
        "question": {"key": q, "text": f"Who led the teams of {prefix}?"},
        "hypotheses": hypotheses,
        "evidence": evidence,
        "conclusions": conclusions,
        "edges": edges,
    }
    order = order or rnd.choice(ORDERS)
    values = []
    for _ in range(rnd.randint(3, 6)):
        start, end = timed_interval(rnd)
        values.append((rnd.choice(subjects), rnd.choice(LEADERS), start, end))
    if revisits:
        again = random.Random(seed ^ 0x5EED)
        known = values + [(e["subject"], e["object"], e["valid_from"], e.get("valid_to")) for e in evidence]
        for _ in range(again.randint(1, 2)):
            subject, leader, start, end = again.choice(known)
            rival = again.choice([name for name in LEADERS if name != leader])
            values.append((subject, rival, start, again.choice([end, None])))
            values.append((subject, leader, start, again.choice([end, None])))
    if order == "forward":
        values.sort(key=lambda v: v[2])
    elif order == "backward":
        values.sort(key=lambda v: v[2], reverse=True)
    steps: list = []
    for value in values:
        steps.append(value)
        if rnd.random() < 0.2:
            steps.append("undo")
    return inv, steps


def disputed_timed_case(seed: int, prefix: str) -> tuple[dict, list]:
    """A generated investigation whose one subject has one or two values of the single-valued
    ``led by`` (the first timed or not, the second untimed; conclusions and hypotheses resting
    on them), and a history of 5 to 9 steps: a later value ``("value", leader, valid_from,
    valid_to, dispute)`` (untimed one time in seven; ``dispute``: revised under
    ``preserve_both``, so what it contradicts is disputed, not refuted), a ``("resolve", r)``
    of one of the disputes stored then (``r`` in [0, 1) picks the pair and its winner), or
    ``"undo"``. Disputes settled in a value's favour, by a resolve or by a later value that
    kills its rival, meet rule 1e of :mod:`bench.reference`."""
    import random

    rnd = random.Random(seed)
    subject = f"team of {prefix.rstrip('_')}"
    evidence = []
    for i in range(rnd.randint(1, 2)):
        # the second loaded value untimed: a file holding two overlapping values is no revision's doing
        start, end = timed_interval(rnd) if i == 0 and rnd.random() < 0.4 else (None, None)
        leader = LEADERS[i]
        ev = {
            "key": f"{prefix}E{i}",
            "claim": f"The {subject} was led by {leader}.",
            "subject": subject,
            "predicate": "led by",
            "object": leader,
        }
        if start:
            ev["valid_from"] = start
        if end:
            ev["valid_to"] = end
        evidence.append(ev)
    conclusions, hypotheses, edges = resting_on(rnd, prefix, [e["key"] for e in evidence])
    inv = {
        "question": {"key": f"{prefix}Q", "text": f"Who led the {subject}?"},
        "hypotheses": hypotheses,
        "evidence": evidence,
        "conclusions": conclusions,
        "edges": edges,
    }
    steps: list = []
    for _ in range(rnd.randint(5, 9)):
        roll = rnd.random()
        if roll < 0.3:
            steps.append(("resolve", rnd.random()))
        elif roll < 0.37:
            steps.append("undo")
        else:
            start, end = timed_interval(rnd) if rnd.random() < 0.85 else (None, None)
            steps.append(("value", rnd.choice(LEADERS), start, end, rnd.random() < 0.5))
    return inv, steps

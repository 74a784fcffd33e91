"""A batch against its facts one at a time, and ``check`` after both, on random value slots.

    python -m bench.slot_differential [--seeds 0:100] [--root DIR] [--json]

Each seed draws a small scenario about one crane's single-valued lifting capacity: one to
three loaded values (timed or not), up to two revisions before, then two to four facts,
each a value (timed or not) or a pinned refutation of an earlier one, under a random
reconciliation policy; half the scenarios then resolve one dispute left (the same pair in
both runs). The facts are revised once as one ``revise_many`` batch and once fact by fact,
under two prefixes of one data root (a process serves one root, so every scenario shares it
and gate 1 sees the other scenarios' look-alike claims). It prints every seed whose two
final graphs differ (state and valid time of each node) and every ``check`` problem naming a
scenario's nodes, except the overlaps a loaded file can hold (two loaded values of one
slot). A search for defects, never a test: a scenario it finds becomes one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import tempfile
from typing import Any, Optional

OBJECTS = ["10 t", "20 t", "30 t", "40 t", "50 t"]
STARTS = [None, "2010-01-01", "2012-01-01", "2015-01-01", "2018-01-01"]
POLICIES = [None, "latest_wins", "preserve_both"]


def scenario(rng: random.Random) -> tuple[dict, list[dict], list[dict]]:
    """(investigation, facts revised before, the batch), with ``SUBJ`` for the subject's tag."""
    evidence = []
    for i in range(rng.randint(1, 3)):
        ev = {
            "key": f"E{i}",
            "claim": f"The crane SUBJ lifts {OBJECTS[i]}.",
            "subject": "crane SUBJ",
            "predicate": "lifts",
            "object": OBJECTS[i],
        }
        start = rng.choice(STARTS)
        if start:
            ev["valid_from"] = start
        evidence.append(ev)
    inv = {
        "question": {"key": "Q", "text": "What does crane SUBJ lift?"},
        "hypotheses": [{"key": "H", "statement": "Crane SUBJ is heavy-duty."}],
        "evidence": evidence,
        "edges": [{"type": "supports", "from": e["key"], "to": "H", "weight": 0.6} for e in evidence],
    }
    before = [_value(rng, f"P{i}", f"r{i}") for i in range(rng.randint(0, 2))]
    batch = []
    for i in range(rng.randint(2, 4)):
        keys = [f["key"] for f in before] + [e["key"] for e in evidence]
        if rng.random() < 0.25:
            target = rng.choice(keys)
            fact = {
                "fact": f"The SUBJ figure {target} was a misprint (b{i}).",
                "target": target,
                "key": f"B{i}",
            }
            policy = rng.choice(POLICIES)
            if policy:
                fact["policy"] = policy
        else:
            fact = _value(rng, f"B{i}", f"b{i}")
        batch.append(fact)
    return inv, before, batch


def _value(rng: random.Random, key: str, tag: str) -> dict:
    obj = rng.choice(OBJECTS)
    fact: dict[str, Any] = {
        "fact": f"The crane SUBJ lifts {obj} ({tag}).",
        "triple": f"crane SUBJ|lifts|{obj}",
        "key": key,
    }
    start = rng.choice(STARTS)
    if start:
        fact["valid_from"] = start
    policy = rng.choice(POLICIES)
    if policy:
        fact["policy"] = policy
    return fact


def prefixed(obj: Any, prefix: str) -> Any:
    """The scenario part with its subject tagged and every key prefixed."""
    out = json.loads(json.dumps(obj).replace("SUBJ", "sx" + prefix))
    items = (
        [d for section in ("hypotheses", "evidence", "edges") for d in out.get(section, [])]
        if isinstance(out, dict)
        else out
    )
    for d in items:
        for field in ("key", "target", "from", "to"):
            if field in d:
                d[field] = prefix + d[field]
    if isinstance(out, dict):
        out["question"]["key"] = prefix + "Q"
    return out


async def run(
    fx,
    prefix: str,
    inv: dict,
    before: list,
    batch: list,
    as_batch: bool,
    resolve_pick: Optional[float] = None,
) -> tuple[Optional[str], dict, bool]:
    """(the error the run ended with, each node's state and valid time, whether it resolved a dispute)."""
    await fx.load(json.dumps(prefixed(inv, prefix)))
    for fact in prefixed(before, prefix):
        await fx.revise(fact.pop("fact"), **fact)
    error = None
    try:
        if as_batch:
            await fx.revise_many(prefixed(batch, prefix))
        else:
            for fact in prefixed(batch, prefix):
                await fx.revise(fact.pop("fact"), **fact)
    except Exception as e:  # the two runs must fail alike too
        error = type(e).__name__
    status = await fx.status()
    resolved = False
    if resolve_pick is not None and error is None:
        # the caller then settles one dispute left (the same one in both runs, by its keys)
        disputed = {
            n["key"] for n in status["nodes"] if n["key"].startswith(prefix) and n["state"] == "disputed"
        }
        pairs = sorted(
            {
                tuple(sorted((e["from"], e["to"])))
                for e in status["edges"]
                if e["type"] == "disputes" and e["from"] in disputed and e["to"] in disputed
            }
        )
        if pairs:
            pick = resolve_pick * len(pairs)
            a, b = pairs[int(pick)]
            loser, winner = (a, b) if pick % 1 < 0.5 else (b, a)
            resolved = True
            try:
                await fx.resolve(loser, winner=winner)
            except Exception as e:
                error = f"resolve: {type(e).__name__}"
            status = await fx.status()
    return (
        error,
        {
            n["key"][len(prefix) :]: (n["state"], n.get("valid_from"), n.get("valid_to"))
            for n in status["nodes"]
            if n["key"].startswith(prefix)
        },
        resolved,
    )


def _loaded_overlap(problem: str, prefix: str) -> bool:
    """An overlap between two loaded values (a file may hold one; no revision made it)."""
    return (
        "overlapping validity" in problem
        and problem.startswith(f"{prefix}E")
        and f" and {prefix}E" in problem
    )


async def main_async(seeds: range, root: Optional[str]) -> dict:
    from memory_core import Falsify

    where = root or tempfile.mkdtemp(prefix="slot-differential-")
    report: dict[str, Any] = {"seeds": [seeds.start, seeds.stop], "differ": [], "check": [], "resolved": 0}
    try:
        async with Falsify.open(where) as fx:
            for seed in seeds:
                rng = random.Random(seed)
                inv, before, batch = scenario(rng)
                pick = rng.random() if rng.random() < 0.5 else None  # half the scenarios end with a resolve
                one = await run(fx, f"o{seed}x", inv, before, batch, False, pick)
                many = await run(fx, f"m{seed}x", inv, before, batch, True, pick)
                report["resolved"] += one[2]
                if one[:2] != many[:2]:
                    report["differ"].append({"seed": seed, "batch": batch, "one": one, "many": many})
                    print(f"seed {seed}: the batch and one at a time differ", flush=True)
                problems = (await fx.check()).get("problems", [])
                for prefix in (f"o{seed}x", f"m{seed}x"):
                    mine = [
                        str(p) for p in problems if prefix in str(p) and not _loaded_overlap(str(p), prefix)
                    ]
                    if mine:
                        report["check"].append({"seed": seed, "prefix": prefix, "problems": mine})
                        print(f"seed {seed} ({prefix}): check: {mine}", flush=True)
    finally:
        if root is None:
            shutil.rmtree(where, ignore_errors=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0:100", help="FIRST:LAST (last excluded)")
    parser.add_argument("--root", help="a new data root to keep (default: a temporary one, removed)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    first, last = (int(x) for x in args.seeds.split(":"))
    report = asyncio.run(main_async(range(first, last), args.root))
    if args.json:
        print(json.dumps(report, indent=2))
    print(
        f"{len(report['differ'])} of {last - first} scenarios differ between the batch and one at a time; "
        f"{len(report['check'])} runs with check problems; {report['resolved']} scenarios ended with a resolve"
    )


if __name__ == "__main__":
    main()

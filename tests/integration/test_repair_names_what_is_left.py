"""``check --repair`` says it cannot repair only what is still there after its repairs.

A resolve placed its winner in the slot's timeline: B2 (50 t from 2015) won its dispute and
ended C1 (30 t from 2012) in 2015. Behind FALSIFY's back C1 is set alive and open-ended again:
``check`` names two problems, C1's ``valid_to`` is not the one the log wrote, and B2 and C1
overlap. The repair writes the logged ``valid_to`` back, which ends the overlap too. Before,
the result also said "cannot repair: B2 and C1 ... overlapping" (advising to revise or undo
a value) beside ``clean_after_repair``: the overlap was named from the findings before the
repair. The real stores, on the session root.
"""

from __future__ import annotations

import pytest
from cranes import crane, lifts

pytestmark = pytest.mark.slow


async def test_an_overlap_a_repaired_valid_to_ends_is_not_named_as_beyond_repair(app, prefix):
    from memory_core.core.identity import node_id

    p = f"{prefix}ov"
    await app.load(crane(p, [("E0", "10 t", None, True), ("C1", "30 t", "2012-01-01", False)]))
    fact = lifts(p, "B2", "50 t", policy="preserve_both", valid_from="2015-01-01")
    await app.revise(fact.pop("fact"), **fact)
    await app.resolve(p + "E0", winner=p + "B2")
    await app.store.update_nodes(
        {node_id("evidence", p + "C1"): {"truth_alignment": ["alive"], "valid_to": None}}
    )  # behind FALSIFY's back
    await app.store.checkpoint()
    found = [x for x in (await app.check())["problems"] if p in x]
    assert any("overlapping validity" in x for x in found), found
    assert any(f"{p}C1 has valid_to None" in x for x in found), found
    repaired = await app.check(repair=True)
    assert any(f"restored the logged valid_to of {p}C1" in r for r in repaired["repaired"]), repaired
    assert not [x for x in repaired["problems_after_repair"] if p in x], repaired
    assert not [x for x in repaired["cannot_restore"] if p in x], repaired
    nodes = {n["key"]: n for n in (await app.status())["nodes"]}
    assert nodes[p + "C1"]["valid_to"] == "2015-01-01", nodes[p + "C1"]

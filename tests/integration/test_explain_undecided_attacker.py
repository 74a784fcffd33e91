"""explain on the real stores, of a node disputed because what supersedes it is disputed.

E_old is superseded by F (a loaded edge), F rests on D, and a ``preserve_both`` revision
puts D in dispute: F is disputed, so E_old is (the three-valued labelling), and K on it.
explain names F among E_old's attackers now (undecided, it is why E_old is undecided), not
among the past ones (those dead now), and its reasons and history say so: F's dispute, not
a support E_old (a premise) does not have, nor a labelling that would bring it back.
"""

from __future__ import annotations

import pytest

from conftest import investigation

pytestmark = pytest.mark.slow


async def test_a_node_disputed_by_its_disputed_attacker_names_it_as_attacker(app, prefix):
    p = lambda k: f"{prefix}{k}"  # noqa: E731
    await app.load(
        investigation(
            prefix,
            evidence=[
                {"key": "E_old", "claim": f"The {prefix} 2019 ledger shows 40 crates."},
                {"key": "D", "claim": f"The {prefix} auditor certified the 2021 ledger."},
                {"key": "F", "claim": f"The {prefix} 2021 ledger corrects the 2019 ledger: 35 crates."},
            ],
            conclusions=[{"key": "K", "statement": f"The {prefix} stock was 40 crates."}],
            edges=[
                {"type": "depends_on", "from": "F", "to": "D"},
                {"type": "supersedes", "from": "F", "to": "E_old", "confidence": 0.9},
                {"type": "depends_on", "from": "K", "to": "E_old"},
            ],
            question="QL",
        )
    )
    await app.revise(
        f"The {prefix} auditor's certificate was forged.", target=p("D"), key=p("X"), policy="preserve_both"
    )
    states = {n["key"]: n["state"] for n in (await app.status())["nodes"] if n["key"].startswith(prefix)}
    assert {k: states[p(k)] for k in ("D", "F", "E_old", "K")} == dict.fromkeys(
        ("D", "F", "E_old", "K"), "disputed"
    ), states
    e_old = await app.explain(p("E_old"))
    why = e_old["why_dead"]
    assert why["attackers"] == [{"key": p("F"), "state": "disputed", "by": "supersedes"}], why
    assert why["past_attackers"] == [], why
    assert why["reasons"] == [
        f"{p('F')} (disputed) supersedes it; {p('F')} is in dispute, so {p('E_old')} is too"
    ]
    last = e_old["events"][-1]
    assert last["text"] == f"disputed: its attacker {p('F')} is in dispute (cause: {p('F')})", e_old["events"]
    k = (await app.explain(p("K")))["why_dead"]
    assert k["attackers"] == [] and k["reasons"] == [
        f"no justification holds, its best runs through disputed nodes ({p('E_old')} is disputed)"
    ], k
    # the viewer's "Why" of E_old says the same as explain
    node = next(n for n in (await app.snapshot())["nodes"] if n["key"] == p("E_old"))
    assert node["why"].endswith(f"disputed: its attacker {p('F')} is in dispute (cause: {p('F')})"), node

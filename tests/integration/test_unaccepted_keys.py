"""Nodes a host writes past FALSIFY's input (cognee's own ``add_data_points`` with FALSIFY's public
DataPoint classes) under keys or with texts that input refuses (the session's root, through the
Python API).

* ``check`` names each such node, escaped, as a problem, and ``check --repair`` says it cannot
  repair it (a key or a text is the host's to choose) and leaves the node as it is;
* ``explain`` of such a key says a node is stored under it but its key is not one FALSIFY
  accepts, not "no node" nor only why the key is refused; a refused key nothing is stored
  under keeps the plain refusal.

Before, check reported such a root clean, while explain refused the keys as bad input or as
naming no node.
"""

from __future__ import annotations

import pytest

from conftest import investigation

pytestmark = pytest.mark.slow


async def test_check_names_stored_keys_and_texts_falsify_refuses_and_explain_says_they_are_stored(
    app, prefix
):
    from cognee.tasks.storage import add_data_points

    from memory_core import Evidence, Hypothesis
    from memory_core.core.errors import InputError
    from memory_core.store.models import node_id

    question = f"{prefix}Q"
    await app.load(
        investigation(
            prefix,
            hypotheses=[{"key": "H", "statement": f"The wren {prefix} nested in the blackthorn hedge."}],
            evidence=[{"key": "E_seen", "claim": f"A wren {prefix} was seen in the blackthorn hedge."}],
            edges=[{"type": "supports", "from": "E_seen", "to": "H", "weight": 0.7}],
        )
    )
    injected = f"{prefix}x'}}) DETACH DELETE n //"  # what a Cypher string built from keys would run
    spelled = f"\ufb01nch_{prefix}"  # U+FB01 LATIN SMALL LIGATURE FI: FALSIFY's input reads "finch_..."
    nul = f"{prefix}E_nul"  # an accepted key, with a NUL in its claim
    host_written = {
        node_id("evidence", injected): "evidence",
        node_id("evidence", nul): "evidence",
        node_id("hypothesis", spelled): "hypothesis",
    }
    # as a host writes them: one add_data_points call per DataPoint type
    await add_data_points(
        [
            Evidence(key=injected, claim=f"A wren {prefix} sang at dusk.", question_key=question),
            Evidence(key=nul, claim=f"A wren {prefix}\x00 sang twice.", question_key=question),
        ]
    )
    await add_data_points(
        [Hypothesis(key=spelled, statement=f"A finch {prefix} nested there.", question_key=question)]
    )
    mine = lambda problems: sorted(p for p in problems if prefix in p)  # noqa: E731
    try:
        found = await app.check()
        assert not found["clean"]
        named = mine(found["problems"])
        assert len(named) == 3 and all("\x00" not in p for p in named), named
        by_key = {key: [p for p in named if repr(key) in p] for key in (injected, nul, spelled)}
        assert all(len(said) == 1 for said in by_key.values()), by_key
        assert by_key[injected][0].startswith(
            f"evidence {injected!r} is stored under a key FALSIFY does not accept"
        )
        assert "U+0027 APOSTROPHE" in by_key[injected][0]
        assert by_key[spelled][0].startswith(
            f"hypothesis {spelled!r} is stored under a key FALSIFY does not accept"
        )
        assert f"reads it as {'finch_' + prefix!r}" in by_key[spelled][0]
        assert by_key[nul][0].startswith(f"evidence {nul!r} is stored with a claim FALSIFY does not accept")
        assert "U+0000" in by_key[nul][0]

        for key, kind in ((injected, "evidence"), (spelled, "hypothesis")):
            with pytest.raises(InputError) as refused:
                await app.explain(key)
            said = str(refused.value)
            assert said.startswith(
                f"explain: the stored {kind} node {key!r} has a key FALSIFY does not accept"
            )
            assert "no node" not in said
        assert (await app.explain(nul))["state"] == "alive"  # its key is accepted: explained as stored
        with pytest.raises(InputError, match="may hold only letters") as refused:  # nothing stored under it
            await app.explain(f"{prefix}y'}}) DETACH DELETE n //")
        assert "stored" not in str(refused.value)

        repaired = await app.check(repair=True)
        for problem in named:
            assert problem in repaired["problems_after_repair"], repaired
            assert any(c.startswith(f"cannot repair: {problem}") for c in repaired["cannot_restore"]), (
                repaired
            )
        assert not any(prefix in r for r in repaired["repaired"]), repaired
        assert set(await app.store.raw_nodes(list(host_written))) == set(host_written)  # left as they are
    finally:
        await app.store.delete(host_written)  # the session's root is shared: later checks find it clean
    assert mine((await app.check())["problems"]) == []

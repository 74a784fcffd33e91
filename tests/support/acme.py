"""The valid-time tests' small company: Alice, CEO of Acme from a date, supports hypothesis H
("Alice runs Acme's strategy") and is the premise of conclusion K, every key under the
test's prefix; and the new fact that Bob is the CEO (the API's valid-time, epoch and
repair-history tests each load the one and revise with the other)."""

from __future__ import annotations

from conftest import investigation


def alice_ceo(prefix: str, valid_from=None, valid_to=None) -> dict:
    """E_alice: "Alice is the CEO of Acme", a triple the structured judge compares, in valid time."""
    ev = {
        "key": "E_alice",
        "claim": f"Alice is the CEO of Acme {prefix}.",
        "subject": f"acme {prefix}",
        "predicate": "ceo",
        "object": "Alice",
    }
    if valid_from:
        ev["valid_from"] = valid_from
    if valid_to:
        ev["valid_to"] = valid_to
    return ev


def company(prefix: str, valid_from=None, valid_to=None, more_evidence=()) -> str:
    """The investigation: E_alice (``valid_from``/``valid_to``), ``more_evidence``, H and K on it."""
    return investigation(
        prefix,
        hypotheses=[{"key": "H", "statement": "Alice runs Acme's strategy."}],
        evidence=[alice_ceo(prefix, valid_from, valid_to), *more_evidence],
        conclusions=[{"key": "K", "statement": "Acme's 2012 plan was Alice's."}],
        edges=[
            {"type": "depends_on", "from": "K", "to": "E_alice"},
            {"type": "supports", "from": "E_alice", "to": "H", "weight": 0.9},
        ],
    )


async def bob(app, prefix: str, **kw) -> dict:
    """Revise with "Bob is the CEO of Acme" (F_bob), the triple contradicting E_alice; ``kw``: valid time, policy."""
    return await app.revise(
        f"Bob is the CEO of Acme {prefix}.", triple=f"acme {prefix}|ceo|Bob", key=f"{prefix}F_bob", **kw
    )

"""The batch and dispute tests' crane: one crane's single-valued lifting capacity (``lifts``),
every key and text under the test's prefix, and the facts that give it another value."""

from __future__ import annotations

import json
from typing import Optional


def crane(prefix: str, values: list[tuple[str, str, Optional[str], bool]]) -> str:
    """An investigation of the crane: each value ``(key, object, valid_from or None, supports H)``."""
    evidence, edges = [], []
    for key, obj, start, supports in values:
        ev = {
            "key": prefix + key,
            "claim": f"The crane {prefix} lifts {obj}.",
            "subject": f"crane {prefix}",
            "predicate": "lifts",
            "object": obj,
        }
        if start:
            ev["valid_from"] = start
        evidence.append(ev)
        if supports:
            edges.append({"type": "supports", "from": prefix + key, "to": f"{prefix}H", "weight": 0.6})
    return json.dumps(
        {
            "question": {"key": f"{prefix}Q", "text": f"What does the crane {prefix} lift?"},
            "hypotheses": [{"key": f"{prefix}H", "statement": f"The crane {prefix} is heavy-duty."}],
            "evidence": evidence,
            "edges": edges,
        }
    )


def lifts(prefix: str, key: str, obj: str, **kw) -> dict:
    """The fact that the crane lifts ``obj`` (a triple the structured judge compares), as
    ``revise``'s keyword arguments plus ``fact``."""
    return dict(
        fact=f"The crane {prefix} lifts {obj} ({key}).",
        triple=f"crane {prefix}|lifts|{obj}",
        key=prefix + key,
        **kw,
    )

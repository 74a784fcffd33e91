"""Predicate cardinality: how many objects a subject may have for one predicate (pure).

An investigation declares ``"predicates": {"speaks": "many", "capital": "one"}``.
A ``one`` (single-valued) predicate has one true object per subject: a fact with the
same subject and predicate and another object contradicts the stored one. A
``many`` predicate (languages spoken, children, authors, members...) holds several
objects at once: another object is another value, not a contradiction. A predicate
nobody declared is single-valued.

Names are normalised as triple subjects and predicates are
(:func:`memory_core.core.keys.normalise_term`), so ``"Speaks"`` declares ``speaks``.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from memory_core.core.errors import InputError
from memory_core.core.keys import normalise_term, visible_name

ONE, MANY = "one", "many"
CARDINALITIES = (ONE, MANY)
MAX_NAME = 200


def check_predicates(raw: Any, where: str = "'predicates'") -> dict[str, str]:
    """Validate a ``predicates`` section: an object of predicate name -> ``"one"``/``"many"``.
    Returns it with normalised names (InputError names what is wrong)."""
    if not isinstance(raw, dict):
        raise InputError(f'{where} must be an object mapping a predicate to "one" or "many"')
    result: dict[str, str] = {}
    spelled: dict[str, str] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"{where}: a predicate name must be a non-empty string, got {name!r}")
        if (
            len(name) > MAX_NAME
            or any(c in name for c in "|\n\t")
            or any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in name)
        ):
            raise InputError(
                f"{where}: predicate name {name!r} is too long or contains '|', a tab, a newline "
                "or a control character"
            )
        norm = normalise_term(visible_name(name, where, "predicate name"))
        if not norm:
            raise InputError(f"{where}: predicate name {name!r} is empty once normalised")
        if not isinstance(value, str) or value not in CARDINALITIES:
            raise InputError(f'{where}: {name!r} must be "one" or "many", got {value!r}')
        if norm in result and result[norm] != value:
            raise InputError(
                f"{where}: {name!r} and {spelled[norm]!r} are the same predicate once normalised "
                f"({norm!r}) but declared {value!r} and {result[norm]!r}"
            )
        result[norm] = value
        spelled.setdefault(norm, name)
    return dict(sorted(result.items()))


def stored_predicates(value: Any) -> dict[str, str]:
    """A question node's stored declarations (whatever the store gave back) as a dict;
    anything malformed counts as not declared (single-valued)."""
    if not isinstance(value, Mapping):
        return {}
    return {normalise_term(k): v for k, v in value.items() if isinstance(k, str) and v in CARDINALITIES}


def cardinality(predicates: Optional[Mapping[str, str]], predicate: Optional[str]) -> str:
    """``one`` unless the predicate is declared ``many``."""
    if not predicates or not predicate:
        return ONE
    return MANY if predicates.get(normalise_term(predicate)) == MANY else ONE


def multi_valued(predicates: Optional[Mapping[str, str]], predicate: Optional[str]) -> bool:
    return cardinality(predicates, predicate) == MANY


def merged(declarations: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """Several questions' declarations as one (``many`` only where every declaring
    question says ``many``: a predicate single-valued anywhere stays single-valued)."""
    result: dict[str, str] = {}
    for decl in declarations:
        for name, value in (decl or {}).items():
            result[name] = ONE if result.get(name, value) == ONE or value == ONE else MANY
    return dict(sorted(result.items()))


def declarations_text(predicates: Optional[Mapping[str, str]]) -> str:
    """The declarations as the LLM judge reads them (empty when nothing is declared)."""
    if not predicates:
        return ""
    many = sorted(k for k, v in predicates.items() if v == MANY)
    one = sorted(k for k, v in predicates.items() if v == ONE)
    lines = ["Declared predicate cardinality (JSON data):"]
    if many:
        lines.append(
            "MULTI_VALUED = " + _json(many) + " (a subject may have several of these at once: another "
            "value for one of them is NOT a contradiction)"
        )
    if one:
        lines.append(
            "SINGLE_VALUED = " + _json(one) + " (one value per subject: another value contradicts or "
            "supersedes the stored one)"
        )
    lines.append("Any other predicate is single-valued.")
    return "\n".join(lines) + "\n"


def _json(names: list[str]) -> str:
    import json

    return json.dumps(names, ensure_ascii=False)


__all__ = [
    "CARDINALITIES",
    "MANY",
    "ONE",
    "cardinality",
    "check_predicates",
    "declarations_text",
    "merged",
    "multi_valued",
    "stored_predicates",
]

"""Key and term normalisation (cognee-free, safe to import before cognee is configured)."""

from __future__ import annotations


def normalise_key(key: str) -> str:
    """How cognee normalises identity values (DataPoint._normalize_identity_value):
    keys equal under it are the same node. tests/test_cognee_contract.py pins it."""
    return key.lower().replace(" ", "_").replace("'", "")


def normalise_term(text: str) -> str:
    return " ".join(str(text).casefold().strip().strip(".,;:!?\"'").split())


def sp_key(subject: str | None, predicate: str | None) -> str | None:
    """Normalised ``subject|predicate`` (the structured judge's lookup key)."""
    if not subject or not predicate:
        return None
    return f"{normalise_term(subject)}|{normalise_term(predicate)}"

"""Key and term normalisation (cognee-free, safe to import before cognee is configured)."""

from __future__ import annotations


def normalise_key(key: str) -> str:
    """How cognee normalises identity values (DataPoint._normalize_identity_value):
    keys equal under it are the same node. tests/integration/test_cognee_contract.py pins it."""
    return key.lower().replace(" ", "_").replace("'", "")


def visible_name(text: str, where: str, name: str) -> str:
    """``text`` normalised as a key is (NFKC), refused (InputError) if it holds an invisible
    format character (zero-width space or joiner, bidi control, soft hyphen): a name compared
    with others ("spe\u200baks" against "speaks") must look like what it is."""
    import unicodedata

    from memory_core.core.errors import InputError

    text = unicodedata.normalize("NFKC", text)
    bad = next((c for c in text if unicodedata.category(c) == "Cf"), None)
    if bad is not None:
        raise InputError(
            f"{where}: {name!r} contains an invisible character (U+{ord(bad):04X} "
            f"{unicodedata.name(bad, 'format character')} at position {text.index(bad)})"
        )
    return text


def normalise_term(text: str) -> str:
    """A triple's part as the structured judge compares it: canonically equivalent Unicode
    spellings alike (NFC), case folded, outer punctuation and spacing dropped."""
    import unicodedata

    return " ".join(unicodedata.normalize("NFC", str(text)).casefold().strip().strip(".,;:!?\"'").split())


def claim_text(text: str) -> str:
    """A claim as compared for sameness (the same fact): canonically equivalent Unicode spellings
    alike (NFC), runs of spacing as one space; case and punctuation kept."""
    import unicodedata

    return " ".join(unicodedata.normalize("NFC", str(text)).split())


def sp_key(subject: str | None, predicate: str | None) -> str | None:
    """Normalised ``subject|predicate`` (the structured judge's lookup key)."""
    if not subject or not predicate:
        return None
    return f"{normalise_term(subject)}|{normalise_term(predicate)}"


def resolve_words(loser: str, winner: str) -> str:
    """``resolve LOSER --winner 'WINNER'`` as the CLI's parser reads it back, for the hints that
    tell the caller how to decide: a key starting with ``-`` (a key may: ``-E1``) is no option of
    the parser's (the winner joined to its flag, the loser after ``--``). A key holds no quote
    or space (:func:`memory_core.core.investigation.check_key`): the quotes need no escaping."""
    win = f"--winner='{winner}'" if winner.startswith("-") else f"--winner '{winner}'"
    if loser.startswith("-"):
        return f"resolve {win} -- {loser}"
    return f"resolve {loser} {win}"

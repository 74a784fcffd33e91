"""Revision requests: one validator shared by every surface (CLI, Python API,
web routes, MCP). Pure: nothing here reads the stores.

A request is a dict with the ``revise`` fields::

    {"fact": str, "triple": "S|P|O"?, "target": key?, "key": key?, "source": str?,
     "asserted_at": ISO date?, "trust": 0..1?, "policy": "latest_wins"|"trust_ranked"|"preserve_both"?,
     "valid_from": ISO date?, "valid_to": ISO date?, "dry_run": bool?}

``valid_from`` / ``valid_to``: when the fact was true in the world (valid time, see
:mod:`memory_core.core.validity`).

``trust`` registers the fact's ``source`` with that trust when the source is not
known yet (it needs a ``source``); ``policy`` overrides the question's
reconciliation policy for this revision (see :mod:`memory_core.core.policy`).

:func:`revision_request` checks one and returns a :class:`RevisionRequest`;
:func:`fact_lines` parses a ``revise --file`` JSONL text into requests; a bad
entry raises :class:`InputError` naming it, before anything is written.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from memory_core.core.errors import InputError
from memory_core.core.investigation import check_key, check_name, check_text, check_value, loads_json
from memory_core.core.policy import check_policy, check_trust
from memory_core.core.validity import check_interval

FACT_FIELDS = ("fact", "triple", "target", "key", "source", "asserted_at", "trust", "policy", "valid_from", "valid_to")
LINE_FIELDS = set(FACT_FIELDS)


def parse_triple(text: str) -> tuple[str, str, str]:
    parts = [p.strip() for p in str(text).split("|")]
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"--triple must look like 'subject|predicate|object', got {text!r}")
    return parts[0], parts[1], parts[2]


def fact_key(fact: str) -> str:
    """The default key of a new fact: derived from its text, so the same fact is the same node."""
    digest = hashlib.sha1(" ".join(fact.split()).casefold().encode("utf-8")).hexdigest()[:10]
    return f"F_{digest}"


STOP_WORDS = frozenset("a an the of to in on at by for and or but is was were be been are it its this that with "
                       "from as".split())


def readable_key(fact: str, words: int = 4) -> str:
    """A readable key for a fact, derived from its text (the same fact, the same key):
    ``F_`` + its first significant words (ASCII letters and digits, accents dropped) + four
    hex digits of its text's hash, e.g. ``F_forensic_audit_march_qa_3f2a``; the
    :func:`fact_key` form when the text has no such word."""
    import re
    import unicodedata

    plain = unicodedata.normalize("NFKD", fact).encode("ascii", "ignore").decode("ascii").casefold()
    picked = [w for w in re.findall(r"[a-z0-9]+", plain) if w not in STOP_WORDS][:words]
    if not picked:
        return fact_key(fact)
    return f"F_{'_'.join(w[:16] for w in picked)}_{fact_key(fact)[2:6]}"


@dataclass(frozen=True)
class RevisionRequest:
    fact: str
    triple: Optional[tuple[str, str, str]] = None
    target: Optional[str] = None
    key: Optional[str] = None
    source: Optional[str] = None
    asserted_at: Optional[str] = None
    line: Optional[int] = None  # its line in a --file, for messages
    trust: Optional[float] = None  # the trust of a not yet known --source
    policy: Optional[str] = None  # overrides the question's policy for this revision
    valid_from: Optional[str] = None  # valid time (core.validity)
    valid_to: Optional[str] = None

    @property
    def new_key(self) -> str:
        return self.key or fact_key(self.fact)

    @property
    def where(self) -> str:
        return f"line {self.line}" if self.line is not None else "fact"


def revision_request(fact: Any, triple: Any = None, target: Any = None, key: Any = None, source: Any = None,
                     asserted_at: Any = None, line: Optional[int] = None, trust: Any = None,
                     policy: Any = None, valid_from: Any = None, valid_to: Any = None) -> RevisionRequest:
    """Validate one request (``InputError`` names the field)."""
    fact = check_text(fact, "fact", "text")
    parsed = None
    if triple is not None:
        if not isinstance(triple, str):
            raise InputError("--triple must be a string 'subject|predicate|object'")
        try:
            subject, predicate, obj = parse_triple(triple)
            parsed = (check_text(subject, "--triple", "part"), check_name(predicate, "--triple", "part"),
                      check_text(obj, "--triple", "part"))
        except ValueError as error:
            raise InputError(str(error)) from None
    if target is not None:
        target = check_key(target, "--target")
    if key is not None:
        key = check_key(key, "--key")
    if source is not None:
        source = check_text(source, "--source", "source")
    if asserted_at is not None:
        asserted_at = check_value("date", asserted_at, "--asserted-at", "date")
    if trust is not None:
        trust = check_trust(trust, "--trust")
        if source is None:
            raise InputError("--trust needs --source (the trust is that source's)")
    if policy is not None:
        policy = check_policy(policy, "--policy")
    valid_from, valid_to = check_interval(valid_from, valid_to)
    return RevisionRequest(fact, parsed, target, key, source, asserted_at, line, trust, policy, valid_from, valid_to)


def request_from_dict(obj: Any, where: str, line: Optional[int] = None) -> RevisionRequest:
    """A request given as an object (a --file line, an API/MCP/web call)."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: each fact must be a JSON object")
    unknown = sorted(set(obj) - LINE_FIELDS)
    if unknown:
        raise InputError(f"{where}: unknown field(s) {', '.join(unknown)}")
    if "fact" not in obj:
        raise InputError(f"{where}: missing 'fact'")
    try:
        return revision_request(**{k: obj.get(k) for k in FACT_FIELDS}, line=line)
    except InputError as error:
        raise InputError(f"{where}: {error}") from None


def requests_from(facts: Iterable[Any], what: str = "facts") -> list[RevisionRequest]:
    """Validate many requests (strings or dicts) as a whole; numbered from 1."""
    result = []
    for number, obj in enumerate(facts, 1):
        if isinstance(obj, str):
            obj = {"fact": obj}
        result.append(request_from_dict(obj, f"{what} line {number}", number))
    if not result:
        raise InputError(f"{what}: no facts")
    return result


def fact_lines(data: bytes | str, what: str) -> list[RevisionRequest]:
    """Parse and validate a whole ``revise --file`` JSONL text."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"{what}: not valid UTF-8 (byte {error.start})") from None
    result = []
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        obj = loads_json(line, f"{what} line {number}")
        if not isinstance(obj, dict):
            raise InputError(f"{what} line {number}: each line must be a JSON object")
        result.append(request_from_dict(obj, f"{what} line {number}", number))
    if not result:
        raise InputError(f"{what}: no facts")
    return result

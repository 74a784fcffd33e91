"""Revision requests: one validator shared by every surface (CLI, Python API,
web routes, MCP). Pure: nothing here reads the stores.

A request is a dict with the ``revise`` fields::

    {"fact": str, "triple": "S|P|O"?, "target": key?, "key": key?, "source": str?,
     "asserted_at": ISO date?, "trust": 0..1?, "policy": "latest_wins"|"trust_ranked"|"preserve_both"?,
     "valid_from": ISO date?, "valid_to": ISO date?, "record": bool?, "supports": key?, "refutes": key?,
     "weight": 0..1?}

(the fields are declared once, in :mod:`memory_core.core.fields`). ``record``, ``supports``,
``refutes`` and ``weight`` are the caller's decision where no judge could decide: ``record``
says the fact contradicts none of the candidates (it is recorded as new evidence, unjudged),
``supports``/``refutes`` name a hypothesis the recorded fact bears on, with the edge's
``weight`` (default 0.5).

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
from collections.abc import Iterable, Mapping
from typing import Any, Optional

from memory_core.core.errors import InputError
from memory_core.core.fields import FACT_FIELDS as _FACT_FIELDS
from memory_core.core.investigation import check_key, check_name, check_text, check_value, loads_json
from memory_core.core.policy import check_policy, check_trust
from memory_core.core.results import RevisionResult
from memory_core.core.validity import check_interval

FACT_FIELDS = _FACT_FIELDS  # the fields of one fact (memory_core.core.fields: declared once)
LINE_FIELDS = set(FACT_FIELDS)


def parse_triple(text: str) -> tuple[str, str, str]:
    parts = [p.strip() for p in str(text).split("|")]
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"--triple must look like 'subject|predicate|object', got {text!r}")
    return parts[0], parts[1], parts[2]


def check_fact(fact: Any) -> str:
    """A fact's text, checked (a string, not empty, within the length limit, no control
    character, no lone surrogate) and stripped; ``InputError`` about the field ``fact``
    otherwise. Every key derived from a fact's text is derived from what this returns. In
    Unicode NFC: canonically equivalent spellings ("Zürich" with its "ü" composed or as "u" and
    a combining diaeresis) are one text, one fact, one key."""
    import unicodedata

    return unicodedata.normalize(
        "NFC", _about("fact", check_text, check_string(fact, "fact"), "fact", "text")
    )


def fact_key(fact: str) -> str:
    """The default key of a new fact: derived from its text, so the same fact is the same node.
    The text is checked first (:func:`check_fact`): a fact no request may carry has no key."""
    fact = check_fact(fact)
    digest = hashlib.sha1(" ".join(fact.split()).casefold().encode("utf-8")).hexdigest()[:10]
    return f"F_{digest}"


STOP_WORDS = frozenset(
    "a an the of to in on at by for and or but is was were be been are it its this that with from as".split()
)


def readable_key(fact: str, words: int = 4) -> str:
    """A readable key for a fact, derived from its text (the same fact, the same key):
    ``F_`` + its first significant words (ASCII letters and digits, accents dropped) + four
    hex digits of its text's hash, e.g. ``F_forensic_audit_march_qa_3f2a``; the
    :func:`fact_key` form when the text has no such word. The text is checked first
    (:func:`check_fact`: ``InputError`` naming ``fact``), so a caller deriving a key before
    the rest of the request is checked refuses the fact as the request would."""
    import re
    import unicodedata

    fact = check_fact(fact)
    plain = unicodedata.normalize("NFKD", fact).encode("ascii", "ignore").decode("ascii").casefold()
    picked = [w for w in re.findall(r"[a-z0-9]+", plain) if w not in STOP_WORDS][:words]
    if not picked:
        return fact_key(fact)
    return f"F_{'_'.join(w[:16] for w in picked)}_{fact_key(fact)[2:6]}"


DEFAULT_WEIGHT = (
    0.5  # a supports/refutes edge's weight when the caller gives none (as in investigation files)
)


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
    record: bool = False  # the caller decided: the fact contradicts none of the candidates
    supports: Optional[str] = None  # a hypothesis the recorded fact supports ...
    refutes: Optional[str] = None  # ... or refutes
    weight: Optional[float] = None  # that edge's weight (DEFAULT_WEIGHT when None)
    inquiry: Optional[str] = None  # the question the caller says the fact belongs to

    @property
    def new_key(self) -> str:
        return self.key or fact_key(self.fact)

    @property
    def where(self) -> str:
        return f"line {self.line}" if self.line is not None else "fact"

    @property
    def hypothesis(self) -> Optional[tuple[str, str, float]]:
        """The edge the caller asked for: (``supports``|``refutes``, hypothesis key, weight)."""
        if self.supports is not None:
            return "supports", self.supports, DEFAULT_WEIGHT if self.weight is None else self.weight
        if self.refutes is not None:
            return "refutes", self.refutes, DEFAULT_WEIGHT if self.weight is None else self.weight
        return None


def shown(value: Any) -> str:
    """A value as a message quotes it: its ``repr``, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _field_of(name: str) -> str:
    """The field an argument named by its CLI flag (``--as-of``) or its keyword is about."""
    return name.lstrip("-").replace("-", "_")


def check_string(value: Any, name: str, optional: bool = False) -> Optional[str]:
    """An argument that must be text: ``InputError`` (about the field ``name``) for anything
    else, ``None`` only when ``optional``. ``name``: the CLI flag when it has one (each shell
    renders it), else the keyword."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise InputError(f"{name}: must be a string, got {shown(value)}", field=_field_of(name))
    return value


def check_switch(value: Any, name: str) -> bool:
    """A true/false argument: exactly a ``bool`` (``"no"``, ``1`` and ``None`` are refused,
    never read as true or false). ``name``: the keyword (a CLI switch is never given a value)."""
    if not isinstance(value, bool):
        raise InputError(f"{name}: must be true or false, got {shown(value)}", field=_field_of(name))
    return value


def check_count(value: Any, name: str, low: int, high: int) -> int:
    """A whole-number argument from ``low`` to ``high`` (a ``bool`` or ``"2"`` is not one)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(
            f"{name}: must be a whole number from {low} to {high}, got {shown(value)}", field=_field_of(name)
        )
    return value


def check_epoch(value: Any) -> Optional[int]:
    """An ``epoch`` argument's type: ``None`` or a whole number (its range is the root's,
    checked where the log is read); ``"1"``, ``1.0`` and ``True`` are refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"--epoch: must be a whole number (0 or more), got {shown(value)}", field="epoch")
    return value


def kept_for_decision(result: RevisionResult, request: RevisionRequest) -> RevisionResult:
    """A fact left for the caller to decide (``to_decide``: nothing recorded) that named a
    hypothesis (``supports``/``refutes``) says so in its note: the edge is part of the decision
    and is written with it (``target`` or ``record`` given with the same hypothesis), never
    dropped unsaid. Returns ``result`` (noted once)."""
    edge = request.hypothesis
    if edge is None or not result.get("to_decide"):
        return result
    kind, key, weight = edge
    said = f"--{kind} {key!r}" + (f" (weight {weight:g})" if request.weight is not None else "")
    if said in (result.get("note") or ""):
        return result
    kept = (
        f"{said} is part of your decision: nothing was recorded, so no {kind} edge either; give it again "
        "with --target KEY (the candidate the fact contradicts) or --record (none of them)"
    )
    result["note"] = "; ".join(filter(None, [result.get("note"), kept]))
    return result


def _about(name: str, check, *args):
    """``check(*args)``, its InputError marked as being about the field ``name``."""
    try:
        return check(*args)
    except InputError as error:
        error.field = name
        raise


def revision_request(
    fact: Any,
    triple: Any = None,
    target: Any = None,
    key: Any = None,
    source: Any = None,
    asserted_at: Any = None,
    line: Optional[int] = None,
    trust: Any = None,
    policy: Any = None,
    valid_from: Any = None,
    valid_to: Any = None,
    record: Any = False,
    supports: Any = None,
    refutes: Any = None,
    weight: Any = None,
    inquiry: Any = None,
) -> RevisionRequest:
    """Validate one request (``InputError`` names the field, and carries it as ``.field``)."""
    fact = check_fact(fact)
    for name, value in (
        ("--target", target),
        ("--key", key),
        ("--source", source),
        ("--asserted-at", asserted_at),
        ("--policy", policy),
        ("--valid-from", valid_from),
        ("--valid-to", valid_to),
        ("--supports", supports),
        ("--refutes", refutes),
        ("--inquiry", inquiry),
    ):
        check_string(value, name, optional=True)
    parsed = None
    if triple is not None:
        if not isinstance(triple, str):
            raise InputError("--triple must be a string 'subject|predicate|object'", field="triple")
        try:
            subject, predicate, obj = parse_triple(triple)
            parsed = (
                _about("triple", check_text, subject, "--triple", "part"),
                _about("triple", check_name, predicate, "--triple", "part"),
                _about("triple", check_text, obj, "--triple", "part"),
            )
        except ValueError as error:
            raise InputError(str(error), field="triple") from None
    if target is not None:
        target = _about("target", check_key, target, "--target")
    if key is not None:
        key = _about("key", check_key, key, "--key")
    if source is not None:
        source = _about("source", check_text, source, "--source", "source")
    if asserted_at is not None:
        asserted_at = _about("asserted_at", check_value, "date", asserted_at, "--asserted-at", "date")
    if trust is not None:
        trust = _about("trust", check_trust, trust, "--trust")
        if source is None:
            raise InputError("--trust needs --source (the trust is that source's)", field="trust")
    if policy is not None:
        policy = _about("policy", check_policy, policy, "--policy")
    valid_from, valid_to = check_interval(valid_from, valid_to, names=("--valid-from", "--valid-to"))
    if record is None:  # a --file line's "record": null is the field not given
        record = False
    check_switch(record, "record")
    if supports is not None:
        supports = _about("supports", check_key, supports, "--supports")
    if refutes is not None:
        refutes = _about("refutes", check_key, refutes, "--refutes")
    if inquiry is not None:
        inquiry = _about("inquiry", check_key, inquiry, "--inquiry")
    if supports is not None and refutes is not None:
        raise InputError(
            "give --supports or --refutes, not both (one hypothesis edge per fact)", field="refutes"
        )
    if weight is not None:
        weight = _about("weight", check_trust, weight, "--weight")
        if supports is None and refutes is None:
            raise InputError(
                "--weight needs --supports or --refutes (it is that edge's weight)", field="weight"
            )
    if record and target is not None:
        raise InputError(
            "--record (the fact contradicts none of the candidates) and --target (it contradicts this "
            "one) are two different decisions: give one",
            field="record",
        )
    return RevisionRequest(
        fact,
        parsed,
        target,
        key,
        source,
        asserted_at,
        line,
        trust,
        policy,
        valid_from,
        valid_to,
        record,
        supports,
        refutes,
        weight,
        inquiry,
    )


def request_from_dict(obj: Any, where: str, line: Optional[int] = None) -> RevisionRequest:
    """A request given as an object (a --file line, an API/MCP/web call)."""
    if not isinstance(obj, dict):
        raise InputError(
            f"{where}: a fact is its text or an object of its fields ({', '.join(FACT_FIELDS)}), got "
            f"{shown(obj)}",
            field="facts",
        )
    unknown = sorted(set(obj) - LINE_FIELDS)
    if unknown:
        raise InputError(
            f"{where}: unknown field(s) {', '.join(unknown)} (a fact takes {', '.join(FACT_FIELDS)})",
            field=unknown[0],
        )
    if "fact" not in obj:
        raise InputError(f"{where}: missing 'fact'", field="fact")
    try:
        return revision_request(**{k: obj[k] for k in FACT_FIELDS if k in obj}, line=line)
    except InputError as error:
        raise InputError(f"{where}: {error}", field=error.field) from None


def requests_from(facts: Iterable[Any], what: str = "facts") -> list[RevisionRequest]:
    """Validate many requests (strings or dicts) as a whole; numbered from 1. A request
    validated already (``fact_lines``'s) is taken as it is, with its own line number.
    ``facts`` is a list (any iterable but text, bytes or a mapping: ``"abc"`` is not three
    facts, nor a dict its keys)."""
    if isinstance(facts, (str, bytes, bytearray, Mapping)) or not isinstance(facts, Iterable):
        raise InputError(
            f"{what}: must be a list of facts (each its text or an object of its fields), got "
            + (f"a single {type(facts).__name__} {shown(facts)}" if facts is not None else "None"),
            field="facts",
        )
    result = []
    for number, obj in enumerate(facts, 1):
        if isinstance(obj, RevisionRequest):
            result.append(obj)
            continue
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

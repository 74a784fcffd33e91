"""The investigation file: parsing and validation (pure; nothing is written).

Format (JSON, UTF-8)::

    {"question":   {"key": "Q", "text": "..."},
     "hypotheses": [{"key": "A", "statement": "...", "prior": 0.4}],
     "evidence":   [{"key": "E_qa", "claim": "...", "source_id": "...", "quote": "...",
                     "asserted_at": "2021-03-15", "stance": "supports",
                     "subject": "...", "predicate": "...", "object": "..."}],
     "conclusions":[{"key": "K", "statement": "...", "confidence": 0.8}],
     "edges": [{"type": "depends_on", "from": "K", "to": "E_qa", "critical": true, "group": "g1"},
               {"type": "supports", "from": "E_qa", "to": "A", "weight": 0.8}],
     "sources": [{"id": "qa-lab", "trust": 0.9, "name": "QA lab"}],   (optional)
     "policy": "latest_wins" | "trust_ranked" | "preserve_both",      (optional)
     "predicates": {"speaks": "many", "capital": "one"}}              (optional; undeclared: "one")

A ``depends_on`` pair may repeat with another ``group`` (the antecedent belongs to
several justifications); the parsed edge then carries ``groups`` (every membership,
in file order). An exact repeat is a duplicate edge.

Any problem raises :class:`InputError` naming the offending entry; the CLI
exits 2 and nothing is written.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any, Optional

from memory_core.core.vocabulary import DEPENDS_ON, ENDPOINTS, REFUTES, SUPERSEDES, SUPPORTS
from memory_core.core.errors import InputError
from memory_core.core.keys import normalise_key, visible_name
from memory_core.core.cardinality import check_predicates
from memory_core.core.policy import check_policy, check_trust, finite

MAX_TEXT = 8000
MAX_KEY = 200
MAX_FILE = 50 * 1024 * 1024
# C0 (but tab, newline) and C1 controls, DEL; the line and paragraph separators (a line break
# most readers do not show as one); the bidirectional controls (they reorder what a reader sees:
# U+202E makes "txt.exe" read "exe.txt")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile(
    r"[\ud800-\udfff]"
)  # lone surrogates: from "\ud800" JSON escapes or undecodable argv bytes

SECTIONS = {
    "question": "question",
    "hypotheses": "hypothesis",
    "evidence": "evidence",
    "conclusions": "conclusion",
}
TEXT_OF = {"question": "text", "hypothesis": "statement", "evidence": "claim", "conclusion": "statement"}
OPTIONAL = {
    "question": {},
    "hypothesis": {"prior": "unit"},
    "evidence": {
        "source_id": "str",
        "quote": "str",
        "asserted_at": "date",
        "stance": "stance",
        "subject": "str",
        "predicate": "name",
        "object": "str",
        "valid_from": "date",
        "valid_to": "date",
    },
    "conclusion": {"confidence": "unit"},
}
EDGE_FIELDS = {
    DEPENDS_ON: {"critical": "bool", "group": "str"},
    SUPPORTS: {"weight": "unit"},
    REFUTES: {"weight": "unit"},
    SUPERSEDES: {"confidence": "unit"},
}


@dataclass
class NodeSpec:
    kind: str
    key: str
    text: Optional[str]  # None for a reference to a stored node (a fragment's question)
    fields: dict = field(default_factory=dict)
    reference: bool = False


@dataclass
class EdgeSpec:
    type: str
    src: str
    dst: str
    props: dict = field(default_factory=dict)


@dataclass
class Investigation:
    question: NodeSpec
    nodes: list[NodeSpec]  # question first
    edges: list[EdgeSpec]
    sources: list[dict] = field(default_factory=list)  # [{"id", "trust", "name"?}]
    policy: Optional[str] = None  # latest_wins | trust_ranked | preserve_both (None: latest_wins)
    predicates: dict = field(
        default_factory=dict
    )  # normalised predicate -> "one" | "many" (core.cardinality)

    def kinds(self) -> dict[str, str]:
        return {n.key: n.kind for n in self.nodes}


def _reject_constant(name: str):
    raise InputError(f"invalid JSON: {name} is not allowed (numbers must be finite)")


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    seen: dict = {}
    for k, v in pairs:
        if k in seen:
            raise InputError(f"invalid JSON: field {k!r} appears twice in one object")
        seen[k] = v
    return seen


def loads_json(data: bytes | str, what: str) -> Any:
    """Strict JSON: valid UTF-8, no NaN/Infinity, no duplicate fields."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"{what}: not valid UTF-8 (byte {error.start}: {error.reason})") from None
    if data.startswith("\ufeff"):
        data = data[1:]
    try:
        return json.loads(data, object_pairs_hook=_pairs, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise InputError(
            f"{what}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    except RecursionError:
        raise InputError(f"{what}: JSON nested too deeply") from None
    except InputError as error:  # duplicate field, NaN/Infinity: say which input
        raise InputError(f"{what}: {error}") from None
    except ValueError as error:  # e.g. an integer literal longer than Python's 4300-digit limit
        raise InputError(
            f"{what}: invalid JSON: {' '.join(str(error).split(';')[0].split())[:200]}"
        ) from None


def check_text(value: Any, where: str, name: str, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise InputError(f"{where}: {name!r} must be a string")
    if not value.strip():
        raise InputError(f"{where}: {name!r} is empty")
    if len(value) > limit:
        raise InputError(f"{where}: {name!r} is {len(value)} characters long (limit {limit})")
    bad = _CONTROL.search(value)
    if bad:
        raise InputError(
            f"{where}: {name!r} contains a control character (U+{ord(bad.group()):04X} at position {bad.start()})"
        )
    bad = _SURROGATE.search(value)
    if bad:
        raise InputError(
            f"{where}: {name!r} is not valid Unicode (lone surrogate U+{ord(bad.group()):04X} at position "
            f"{bad.start()}; undecodable bytes in a command-line argument, or a \\u{ord(bad.group()):04x} JSON escape)"
        )
    return value.strip()


KEY_PUNCTUATION = "_-."
# a key check_key accepts as it is, read without its per-letter script lookups (check reads every stored key)
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.-]*[A-Za-z0-9][A-Za-z0-9_.-]*")


def _script(char: str) -> str:
    """The script a letter belongs to, from its Unicode name (LATIN, CYRILLIC, GREEK, ...)."""
    import unicodedata

    name = unicodedata.name(char, "")
    return name.split(" ")[0] if name else "UNKNOWN"


def check_key(value: Any, where: str) -> str:
    """A key: after NFKC normalisation, letters, digits, ``_``, ``-`` and ``.`` only (no
    spaces, no zero-width or bidi-control characters), and the letters of one script (a
    key mixing Latin with look-alike Cyrillic or Greek letters is refused). Returns the
    NFKC form."""
    import unicodedata

    key = check_text(value, where, "key", MAX_KEY)
    if "\n" in key or "\t" in key or "|" in key:
        raise InputError(f"{where}: key {key!r} may not contain newlines, tabs or '|'")
    key = unicodedata.normalize("NFKC", key)
    bad = next((c for c in key if not (c.isalnum() or c in KEY_PUNCTUATION)), None)
    if bad is not None:
        label = "a space" if bad == " " else f"U+{ord(bad):04X} {unicodedata.name(bad, 'unnamed character')}"
        raise InputError(
            f"{where}: key {key!r} may hold only letters, digits, '_', '-' and '.' (it has {label})"
        )
    if not any(c.isalnum() for c in key):
        raise InputError(
            f"{where}: key {key!r} needs a letter or a digit ('.', '..' and other punctuation alone "
            "are not keys)"
        )
    scripts = sorted({_script(c) for c in key if c.isalpha()})
    if len(scripts) > 1:
        raise InputError(
            f"{where}: key {key!r} mixes letters of {', '.join(scripts)}: look-alike letters "
            "(confusables) are refused; use one script per key"
        )
    if len(key) > MAX_KEY:
        raise InputError(f"{where}: 'key' is {len(key)} characters long (limit {MAX_KEY})")
    return key


def key_refusal(key: Any) -> Optional[str]:
    """Why FALSIFY's input does not accept ``key`` as it is stored, or None. A node written past
    that input (a host's own ``add_data_points`` with FALSIFY's DataPoint classes) may carry a key
    :func:`check_key` refuses, or accepts only spelled otherwise (its NFKC form, stripped): no
    command can name that node. The reason is check_key's own, without its "where" prefix."""
    if isinstance(key, str) and len(key) <= MAX_KEY and _PLAIN_KEY.fullmatch(key):
        return None  # ASCII letters, digits and key punctuation: what check_key accepts unchanged, at once
    try:
        accepted = check_key(key, "key")
    except InputError as refused:
        return str(refused).removeprefix("key: ")
    if accepted != key:
        return f"FALSIFY's input reads it as {accepted!r}, another key"
    return None


def text_refusal(text: Any, name: str) -> Optional[str]:
    """Why FALSIFY's input does not accept ``text`` (a stored node's claim, statement or
    question) as it is stored, or None: empty, or holding a control character or a lone
    surrogate (:func:`check_text`; its length is no reason here: a long text harms no reader)."""
    try:
        check_text(text, "text", name, limit=len(text) if isinstance(text, str) else MAX_TEXT)
    except InputError as refused:
        return str(refused).removeprefix("text: ")
    return None


def named(key: str) -> str:
    """A stored key as a message names it: escaped (``repr``: a control or bidi character shows
    as its escape, never acts on the reader's terminal), and cut at :data:`MAX_KEY` characters."""
    if len(key) <= MAX_KEY:
        return repr(key)
    return f"{key[:MAX_KEY]!r}... ({len(key)} characters)"


def check_name(value: Any, where: str, name: str, limit: int = MAX_TEXT) -> str:
    """A name that identifies something when compared (a predicate): text, normalised like a
    key (NFKC), and without invisible format characters (:func:`memory_core.core.keys.visible_name`)."""
    return visible_name(check_text(value, where, name, limit), where, name)


def check_value(kind: str, value: Any, where: str, name: str):
    if kind == "str":
        return check_text(value, where, name)
    if kind == "name":
        return check_name(value, where, name)
    if kind == "bool":
        if not isinstance(value, bool):
            raise InputError(f"{where}: {name!r} must be true or false")
        return value
    if kind == "unit":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not finite(value):
            raise InputError(f"{where}: {name!r} must be a number between 0 and 1")
        if not 0.0 <= float(value) <= 1.0:
            raise InputError(f"{where}: {name!r} is {value}, outside 0..1")
        return float(value)
    if kind == "date":
        text = check_text(value, where, name, 64)
        said = where if where.startswith("--") else f"{where}: {name!r}"  # a flag names itself
        try:
            if len(text) == 10:
                date.fromisoformat(text)
            else:
                instant = datetime.fromisoformat(text)
                if instant.tzinfo is not None:
                    instant.astimezone(timezone.utc)  # an instant outside the calendar in UTC is none
        except (ValueError, OverflowError):
            raise InputError(f"{said} must be an ISO date such as 2021-03-15, got {text!r}") from None
        return text
    if kind == "stance":
        if value not in ("supports", "refutes"):
            raise InputError(f"{where}: 'stance' must be 'supports' or 'refutes'")
        return value
    raise AssertionError(kind)


def _node(kind: str, raw: Any, where: str, stored: bool = False) -> NodeSpec:
    """``stored``: the key names a node of this kind already in the data root, so its
    text may be left out (a fragment's ``{"question": {"key": "Q"}}``)."""
    if not isinstance(raw, dict):
        raise InputError(f"{where}: must be an object")
    text_field = TEXT_OF[kind]
    allowed = {"key", text_field, *OPTIONAL[kind]}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise InputError(
            f"{where}: unknown field(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})"
        )
    if "key" not in raw:
        raise InputError(f"{where}: missing 'key'")
    key = check_key(raw["key"], where)
    where = f"{where} ({key})"
    if text_field not in raw:
        if stored and set(raw) == {"key"}:
            return NodeSpec(kind, key, None, {}, reference=True)
        if kind == "question":
            raise InputError(
                f"{where}: missing {text_field!r} (a fragment names a question already stored in this "
                "data root; this one is not)"
            )
        raise InputError(f"{where}: missing {text_field!r}")
    text = check_text(raw[text_field], where, text_field)
    fields = {
        name: check_value(t, raw[name], where, name)
        for name, t in OPTIONAL[kind].items()
        if raw.get(name) is not None
    }
    triple = [fields.get(n) for n in ("subject", "predicate", "object")]
    if any(triple) and not all(triple):
        raise InputError(f"{where}: give all of subject, predicate and object, or none")
    if kind == "evidence" and (fields.get("valid_from") or fields.get("valid_to")):
        from memory_core.core.validity import check_interval  # valid time: valid_to not before valid_from

        check_interval(fields.get("valid_from"), fields.get("valid_to"), where)
    return NodeSpec(kind, key, text, fields)


def parse(
    data: bytes | str, known: Optional[dict[str, str]] = None, what: str = "investigation file"
) -> Investigation:
    """Validate a whole investigation. ``known``: keys already stored → kind, so
    edges may point at nodes loaded earlier."""
    if isinstance(data, (bytes, str)) and len(data) > MAX_FILE:
        raise InputError(f"{what}: larger than {MAX_FILE // (1024 * 1024)} MB")
    raw = loads_json(data, what)
    if not isinstance(raw, dict):
        raise InputError(f"{what}: the top level must be a JSON object")
    unknown = sorted(set(raw) - {*SECTIONS, "edges", "sources", "policy", "predicates"})
    if unknown:
        raise InputError(f"{what}: unknown section(s) {', '.join(unknown)}")
    if "question" not in raw:
        raise InputError(f"{what}: missing 'question'")
    qraw = raw["question"]
    qkey = qraw.get("key") if isinstance(qraw, dict) else None
    stored_question = isinstance(qkey, str) and any(
        normalise_key(k) == normalise_key(qkey.strip()) and v == "question" for k, v in (known or {}).items()
    )
    question = _node("question", qraw, "question", stored=stored_question)
    nodes = [question]
    for section, kind in SECTIONS.items():
        if section == "question":
            continue
        items = raw.get(section, [])
        if not isinstance(items, list):
            raise InputError(f"{what}: {section!r} must be a list")
        nodes += [_node(kind, item, f"{section}[{i}]") for i, item in enumerate(items)]
    seen: dict[str, str] = {}
    for node in nodes:
        norm = normalise_key(node.key)
        if norm in seen:
            raise InputError(
                f"duplicate key {node.key!r} (same as {seen[norm]!r}; keys are compared case-insensitively)"
            )
        seen[norm] = node.key
    kinds = {normalise_key(k): v for k, v in (known or {}).items()}
    kinds.update({normalise_key(n.key): n.kind for n in nodes})
    canonical = {normalise_key(k): k for k in (known or {})}
    canonical.update({normalise_key(n.key): n.key for n in nodes})
    edges = _edges(raw.get("edges", []), kinds, canonical)
    sources = _sources(raw.get("sources", []))
    policy = check_policy(raw["policy"], "'policy'") if raw.get("policy") is not None else None
    predicates = check_predicates(raw["predicates"]) if raw.get("predicates") is not None else {}
    return Investigation(question, nodes, edges, sources, policy, predicates)


def _sources(items: Any) -> list[dict]:
    """``"sources": [{"id", "trust", "name"?}]``: who asserts the evidence, and how far it is trusted."""
    if not isinstance(items, list):
        raise InputError("'sources' must be a list")
    result, seen = [], set()
    for i, raw in enumerate(items):
        where = f"sources[{i}]"
        if not isinstance(raw, dict):
            raise InputError(f"{where}: must be an object")
        unknown = sorted(set(raw) - {"id", "trust", "name"})
        if unknown:
            raise InputError(f"{where}: unknown field(s) {', '.join(unknown)} (allowed: id, name, trust)")
        for needed in ("id", "trust"):
            if needed not in raw:
                raise InputError(f"{where}: missing {needed!r}")
        sid = check_text(raw["id"], where, "id", MAX_KEY)
        where = f"{where} ({sid})"
        if sid in seen:
            raise InputError(f"{where}: duplicate source id")
        seen.add(sid)
        source = {"id": sid, "trust": check_trust(raw["trust"], f"{where}: 'trust'")}
        if raw.get("name") is not None:
            source["name"] = check_text(raw["name"], where, "name")
        result.append(source)
    return result


def _edges(items: Any, kinds: dict[str, str], canonical: dict[str, str]) -> list[EdgeSpec]:
    if not isinstance(items, list):
        raise InputError("'edges' must be a list")
    edges: list[EdgeSpec] = []
    seen: dict[tuple, EdgeSpec] = {}
    for i, raw in enumerate(items):
        where = f"edges[{i}]"
        if not isinstance(raw, dict):
            raise InputError(f"{where}: must be an object")
        etype = raw.get("type")
        if etype not in EDGE_FIELDS:
            raise InputError(f"{where}: 'type' must be one of {', '.join(EDGE_FIELDS)}, got {etype!r}")
        allowed = {"type", "from", "to", *EDGE_FIELDS[etype]}
        unknown = sorted(set(raw) - allowed)
        if unknown:
            raise InputError(f"{where}: unknown field(s) {', '.join(unknown)} for a {etype} edge")
        ends = []
        for end in ("from", "to"):
            if end not in raw:
                raise InputError(f"{where}: missing {end!r}")
            key = check_key(raw[end], where)
            if normalise_key(key) not in kinds:
                raise InputError(f"{where}: {end!r} names unknown key {key!r}")
            ends.append(canonical[normalise_key(key)])
        src, dst = ends
        where = f"{where} ({etype} {src} -> {dst})"
        if normalise_key(src) == normalise_key(dst):
            raise InputError(f"{where}: an edge may not join a node to itself")
        sources, targets = ENDPOINTS[etype]
        ks, kd = kinds[normalise_key(src)], kinds[normalise_key(dst)]
        if ks not in sources or kd not in targets:
            raise InputError(
                f"{where}: a {etype} edge goes from {'/'.join(sorted(sources))} to "
                f"{'/'.join(sorted(targets))}, not from {ks} to {kd}"
            )
        props = {
            name: check_value(t, raw[name], where, name)
            for name, t in EDGE_FIELDS[etype].items()
            if raw.get(name) is not None
        }
        if etype == DEPENDS_ON:
            props.setdefault("critical", True)
            props.setdefault("group", None)
        elif etype in (SUPPORTS, REFUTES):
            props.setdefault("weight", 1.0)
        else:
            props.setdefault("confidence", 1.0)
        ident = (etype, normalise_key(src), normalise_key(dst))
        if ident in seen:
            first = seen[ident]
            # an antecedent shared by several justifications: the same depends_on pair again,
            # in another group (one stored edge; its groups list every membership)
            if etype != DEPENDS_ON or props["group"] in first.props.get("groups", [first.props["group"]]):
                raise InputError(f"{where}: duplicate edge")
            if props["critical"] != first.props["critical"]:
                raise InputError(
                    f"{where}: repeats a depends_on edge in another group with another 'critical' "
                    "(the edges of one antecedent must agree on it)"
                )
            first.props["groups"] = first.props.get("groups", [first.props["group"]]) + [props["group"]]
            continue
        spec = EdgeSpec(etype, src, dst, props)
        seen[ident] = spec
        edges.append(spec)
    return edges

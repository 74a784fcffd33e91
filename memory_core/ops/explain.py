"""``explain KEY``: why a node is in its state (see :mod:`memory_core.core.why`).

The revision log gives the history of every change to the node, forgotten nodes
included (and what an undo removed: "removed by undo of epoch N"); for an evidence or
conclusion node, the current graph gives why it is in its state now: alive, the
justification that holds it, recursively to premises; dead or disputed, what keeps it
out (the attackers that hold or are in dispute, each justification's members that do not); for a
hypothesis, its support score and its remaining and lost supporters, from every
``supports`` and ``refutes`` edge it has, whatever inquiry the other end belongs to (rule
5 counts them so when a revision promotes). The graph read for an evidence or conclusion
is the node with its justifications followed up to premises, whatever inquiry each
antecedent belongs to, and the forgotten nodes any of them still rests on as the dead
ghosts they are (forgetting a node deletes its edges: without them a justification
through it would look whole). A key neither stored nor ever logged is an InputError
(exit 2).
"""

from __future__ import annotations

import asyncio
import bisect
import re
from typing import Callable, Iterable, Iterator, Optional

from memory_core.core import why
from memory_core.core.beliefs import BeliefView
from memory_core.core.errors import InputError
from memory_core.core.identity import KIND_BY_TYPE, node_id
from memory_core.core.investigation import check_key, key_refusal, named
from memory_core.core.keys import normalise_key
from memory_core.core.results import ExplainResult
from memory_core.core.tms import attackers
from memory_core.core.vocabulary import DEPENDS_ON, DISPUTES, SUPERSEDES, Rule
from memory_core.store.stores import Stores
from memory_core.store.belief_store import state_of, to_node
from memory_core.store.journal import FileJournal, Journal, _entry
from memory_core.store.forgotten import forgotten_index
from memory_core.store.tms_io import add_antecedent_ghosts

MAX_CHAIN = 500  # nodes read up the justifications of the node explained


async def explain(stores: Stores, key: str) -> ExplainResult:
    asked = key
    try:
        key = check_key(key, "explain")
    except InputError:
        await refuse_if_stored(stores, asked)
        raise
    props = (await stores.store.find_keys([key])).get(key)
    kind = KIND_BY_TYPE.get(props.get("type", "")) if props is not None else None
    view, ghosts, related, unread = BeliefView(), set[str](), set[str](), set[str]()
    if props is not None and kind in ("evidence", "conclusion"):
        view, ghosts, unread = await chain_view(stores, props)
        me = props.get("key", key)
        related = {a for _, group in view.justifications(me) for a in group} | set(attackers(view, me))

    # the log's entries that can bear on the key, read off the event loop (other tasks keep running)
    def read() -> dict:
        entries, undone = entries_about(stores.journal, key)
        return why.history(entries, key, related, undone)

    logged = await asyncio.to_thread(read)
    # the logged history, with its fate said as the state of a node no longer stored
    result: ExplainResult = {"key": logged["key"], "known": logged["known"], "events": logged["events"]}
    if props is None:
        if not result["known"]:
            await refuse_if_stored(stores, asked)
            raise InputError(
                f"explain: no node with key {key!r} in this data root, and none in its revision log "
                "(never loaded, recorded or forgotten here)"
            )
        if "removed_by_undo" in logged:
            result["removed_by_undo"] = logged["removed_by_undo"]
        # not stored: a revision forgot it, or an undo removed what had added it
        result["state"] = logged["fate"] or "forgotten"
        return result
    result["key"] = props.get("key", result["key"])
    result["known"] = True
    result["state"] = state_of(props)
    if kind == "hypothesis":
        # the hypothesis with every supports/refutes edge it has, whatever inquiry the other end
        # belongs to: rule 5's support, as the revision engine counts it when it promotes
        node = to_node(props)
        if node is not None:
            view.add_node(node)
            await stores.store.complete(view, [node.key])
        gone = forgotten_index(stores.journal).gone.values()
        result["support"] = why.support_of(view, result["key"], node_id("hypothesis", result["key"]), gone)
    elif kind in ("evidence", "conclusion"):
        if result["state"] == "alive":
            result["why_alive"] = why.why_alive(view, result["key"], unread)
        else:
            result["why_dead"] = why.why_dead(view, result["key"], ghosts)
    return result


async def refuse_if_stored(stores: Stores, key) -> None:
    """Refuse ``key`` as naming a stored node whose key FALSIFY's input does not accept (written
    past that input, e.g. by a host's own add_data_points), if one is stored under it (as cognee
    compares keys): not "no node". Returns when none is (the caller's own refusal stands)."""
    if not isinstance(key, str) or not key.strip() or _unencodable(key):
        return  # a lone surrogate names no stored node: an id is made of the key's UTF-8 bytes
    props = (await stores.store.find_keys([key])).get(key) or {}
    stored = props.get("key")
    if not isinstance(stored, str):
        return
    refused = key_refusal(stored)
    if refused is None:
        return
    kind = KIND_BY_TYPE.get(props.get("type", ""), "belief")
    raise InputError(
        f"explain: the stored {kind} node {named(stored)} has a key FALSIFY does not accept ({refused}): it "
        "was written past FALSIFY's input (e.g. by a host's add_data_points), so no command can name it; "
        "check names it as a problem"
    )


def _unencodable(key: str) -> bool:
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


async def chain_view(stores: Stores, props: dict) -> tuple[BeliefView, set[str], set[str]]:
    """The node of ``props`` with every edge it has (its justifications, attackers and
    consumers), its antecedents with theirs, up to premises, across inquiries (bounded by
    :data:`MAX_CHAIN`); then the forgotten nodes any of them rests on, as dead ghosts.
    Returns the view, the ghosts' keys and the nodes whose justifications were not read (the
    bound reached)."""
    view = BeliefView()
    node = to_node(props)
    if node is None:
        return view, set(), set()
    view.add_node(node)
    done: set[str] = set()
    todo = [node.key]
    while todo and len(done) < MAX_CHAIN:
        done.update(todo)
        await stores.store.complete(view, todo)
        todo = sorted({e.dst for k in todo for e in view.out_edges(k, DEPENDS_ON)} - done)
    ghosts: dict[str, dict] = {}
    add_antecedent_ghosts(view, forgotten_index(stores.journal), ghosts)
    return view, set(ghosts), set(todo)


def entries_about(journal: Journal, key: str) -> tuple[Iterable[dict], set[int]]:
    """The revision log's entries :func:`why.history` reads for ``key``, in log order, and the
    epochs undone by the undos left out: the same history as from every entry, without
    parsing the lines that cannot bear on it (on a long log, parsing every line was most of
    explain's time). A line is parsed when a test on its raw text finds it may name the key
    (any spelling that normalises to it, escaped or not), when it is an undo of an entry read
    (or says what it undoes otherwise than FALSIFY writes it), or, for a key with a change
    whose words read who attacked it then, when it names the node id of its node or of a node
    with a ``supersedes`` or ``disputes`` edge to or from it. A log not in this root's file (a
    database's), read as it stood at an epoch, or with a carriage return, is read whole. Read
    on a log ``check`` finds whole (epochs increasing, every line an entry)."""
    if type(journal) is not FileJournal or journal.at is not None:
        return journal.entries(), set()
    undone: set[int] = set()
    return list(_about(journal, normalise_key(key), undone)), undone


# a JSON escape: a surrogate pair, another \uXXXX, or one character after the backslash
_ESCAPE = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(.))", re.S
)
_SHORT = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescaped(found: re.Match) -> str:
    high, low, code, char = found.groups()
    if high is not None:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))
    if code is not None:
        return chr(int(code, 16))
    return _SHORT.get(char, char)


def _text(line: str) -> str:
    """A raw log line with its JSON escapes read (no other parsing): every string in it is then
    spelled as it is, between the line's own punctuation."""
    return _ESCAPE.sub(_unescaped, line) if "\\" in line else line


def _normalised(text: str) -> str:
    """``text`` as :func:`normalise_key` reads a key (lower-cased, a space as ``_``, no quote),
    character by character: a string of ``text`` that normalises to a key is, normalised in
    place, that key between the double quotes of its JSON string (lower-casing reads a double
    quote as a word's end, as it reads the string's own end). The newlines stay where they
    were, one for one."""
    return text.lower().replace(" ", "_").replace("'", "")


# a key FALSIFY accepts, normalised (letters, digits, '_', '-', '.'): in a line that is ASCII,
# an escape spells one of its characters only as an ASCII character or the Kelvin sign (the
# one character outside ASCII that lower-cases into ASCII); json.dumps writes neither so
_PLAIN = re.compile(r"[a-z0-9_.-]+")
_KELVIN = "\u212a".encode()
# an undo's epoch undone, as json.dumps writes it
_UNDOES = re.compile(r'"undoes": (\d+)[,}]')
MAX_IDS_SEARCHED = 24  # node ids looked for one by one (a pass over the log each); more: every line is parsed


def _about(journal: FileJournal, wanted: str, undone: set[int]) -> Iterator[dict]:
    if not journal.log_path.exists():
        return
    data = journal.log_path.read_bytes()
    if b"\r" in data:  # read as Journal.entries reads it: a carriage return ends a line there
        yield from journal.entries()
        return
    if not data.isascii():
        data.decode("utf-8")  # a line that is not UTF-8 fails the read, as Journal.entries's does
    raw = data.split(b"\n")
    ends, at = [], -1
    for line in raw:  # the offset of each line's newline (the last: the end of the data)
        at += len(line) + 1
        ends.append(at)
    parsed: dict[int, Optional[dict]] = {}

    def parse(numbers: Iterable[int]) -> None:
        for n in numbers:
            if n not in parsed:
                parsed[n] = _entry(raw[n].decode("utf-8"))

    # the key's spellings without escapes (ASCII lower-cased in bytes: a key FALSIFY accepts);
    # then the lines with an escape or a character that may spell one of its characters
    # otherwise, read as text with their escapes read (for any other key: every line with an
    # escape or a character outside ASCII)
    if _PLAIN.fullmatch(wanted):
        low = data.lower().replace(b"'", b"")
        if "_" in wanted:  # a space normalises to '_': only a key with one may be spelled with one
            low = low.replace(b" ", b"_")
        parse(_lines_with(low, _ends(low), f'"{wanted}"'.encode()))  # its newlines, one for one
        odd = _lines_with(data, ends, b"\\u00", lambda rest: rest[:1] in b"01234567")
        odd |= _lines_with(data, ends, b"\\u212", lambda rest: rest[:1] in b"aA")
        odd |= _lines_with(data, ends, _KELVIN)
    else:
        spelled = _normalised(data.decode("utf-8")).encode("utf-8")  # its newlines where they were
        parse(_lines_with(spelled, _ends(spelled), f'"{wanted}"'.encode("utf-8")))
        odd = {n for n, line in enumerate(raw) if b"\\" in line or not line.isascii()}
    escaped = {n: _text(raw[n].decode("utf-8")) for n in odd}
    parse(n for n, line in escaped.items() if '"undo"' in line or f'"{wanted}"' in _normalised(line))
    # every undo says which epoch it undoes: read from its line alone when it says so once, as
    # FALSIFY writes it (parsed when it undoes an entry read, or says it otherwise)
    told: dict[int, int] = {}
    for n in _lines_with(data, ends, b'"undo"'):
        if n in parsed:
            continue
        undo = raw[n].decode("utf-8")
        said = _UNDOES.findall(undo)
        if len(said) == 1 and undo.count('"undoes"') == 1 and undo.count('"kind": "undo"') == 1:
            told[n] = int(said[0])
        else:
            parse([n])
    read = {entry["epoch"] for entry in parsed.values() if entry is not None}
    parse(n for n, epoch in told.items() if epoch in read)
    # who attacked it when (why._Attacks) words only a change that became disputed or was not
    # reinstated: for those, the lines naming its node (edges to and from it, its deletion), then
    # those naming a node that attacks it or that it attacks (its key, its deletion)
    if any(
        isinstance(change, dict)
        and change.get("rule") in (Rule.DISPUTED, Rule.NOT_REINSTATED)
        and isinstance(change.get("key"), str)
        and normalise_key(change["key"]) == wanted
        for entry in parsed.values()
        for change in (entry or {}).get("changes") or []
    ):
        ids = _ids_of(parsed.values(), wanted)
        for nodes in (ids, None):
            nodes = nodes if nodes is not None else _ends_with(parsed.values(), ids) - ids
            if len(nodes) > MAX_IDS_SEARCHED:
                parse(range(len(raw)))
                break
            parse(n for ident in sorted(nodes) for n in _lines_with(data, ends, ident.encode("utf-8")))
            parse(n for n, line in escaped.items() if any(ident in line for ident in nodes))
    undone.update(epoch for n, epoch in told.items() if n not in parsed)
    for n in sorted(parsed):
        entry = parsed[n]
        if entry is not None:
            yield entry


def _lines_with(
    data: bytes, ends: list[int], what: bytes, then: Optional[Callable[[bytes], bool]] = None
) -> set[int]:
    """The numbers (from 0) of the lines of ``data`` (ending at the offsets ``ends``) holding
    ``what`` (no newline in it), each followed by what ``then`` accepts (the bytes after it)
    when it is given."""
    found: set[int] = set()
    at = data.find(what)
    while at >= 0:
        if then is not None and not then(data[at + len(what) : at + len(what) + 1]):
            at = data.find(what, at + 1)
            continue
        n = bisect.bisect_left(ends, at)
        found.add(n)
        at = data.find(what, ends[n])  # the next line's
    return found


def _ends(data: bytes) -> list[int]:
    """The offset of each line's newline in ``data`` (the last: the end of the data)."""
    ends, at = [], data.find(b"\n")
    while at >= 0:
        ends.append(at)
        at = data.find(b"\n", at + 1)
    return ends + [len(data)]


def _ids_of(entries: Iterable[Optional[dict]], wanted: str) -> set[str]:
    """The node ids a write gave a node with the key (what why._Attacks knows it by)."""
    ids = set()
    for entry in entries:
        for node in ((entry or {}).get("intent") or {}).get("add_nodes") or []:
            key = node.get("key") if isinstance(node, dict) else None
            if isinstance(key, str) and node.get("id") and normalise_key(key) == wanted:
                ids.add(str(node["id"]))
    return ids


def _ends_with(entries: Iterable[Optional[dict]], ids: set[str]) -> set[str]:
    """The node ids at either end of a ``supersedes`` or ``disputes`` edge (what
    :class:`why._Attacks` reads) an intent of ``entries`` adds or deletes with an end in ``ids``."""
    ends: set[str] = set()
    for entry in entries:
        intent = (entry or {}).get("intent")
        if not isinstance(intent, dict):
            continue
        added = [node for node in intent.get("add_nodes") or [] if isinstance(node, dict)]
        rows = [row for node in added for row in node.get("edges") or []]
        rows += list(intent.get("add_edges") or []) + list(intent.get("del_edges") or [])
        for row in rows:
            if isinstance(row, (list, tuple)) and len(row) >= 3 and row[2] in (SUPERSEDES, DISPUTES):
                if str(row[0]) in ids or str(row[1]) in ids:
                    ends.update((str(row[0]), str(row[1])))
    return ends


def revision_log(journal: Journal) -> list[dict]:
    return why.revision_log(journal.entries())

"""Valid time: when a fact was true in the world (pure).

Evidence may carry ``valid_from`` / ``valid_to`` (ISO dates; the interval is
half-open, ``[valid_from, valid_to)``; no ``valid_to``: still true; an empty or
inverted interval is refused). A timed fact takes its place in the whole timeline
of its subject and predicate (the semantics of temporal edge invalidation: a value
that was true stops being true where the next one starts). When a judge says a new
fact F contradicts stored evidence E (alive, disputed, or already superseded in
time: every value of that timeline) and both have a ``valid_from``:

* ``disjoint``: the intervals do not overlap: no contradiction, both stay as they are;
* ``ends_stored``: E started before F and still held when F starts: E held until
  F's ``valid_from`` (its ``valid_to`` is written, or moved back when it had one),
  E becomes ``superseded`` (it was true) and so does what rests on it:
  historical, never forgotten;
* ``new_precedes``: F starts before E: F holds until the earliest such E starts
  (``valid_to`` = that ``valid_from``) and is recorded ``superseded``; E is untouched;
* ``same_period``: both start together: a real contradiction, decided by the
  reconciliation policy as any other (an E superseded in time that loses is then
  ``refuted``: it was never true, and what was superseded in time with it and rests on
  nothing else that held never held either: ``invalidated``).

What falls with an ended fact held while its support held: its end is the latest time one
of its justifications held (:func:`held`), it moves back when its support later ends earlier
(:func:`settle_ends`), and one whose support never held while it did is ``invalidated``
(never an empty or inverted interval).

With no ``valid_from`` on either side the verdict stands (``untimed``). With a
``valid_from`` on one side only (``one_side_untimed``) time cannot order the two:
the verdict stands too, decided by the policy as an untimed contradiction, and the
result says so (:func:`untimed_note`).

For a single-valued predicate two values that both held (alive, disputed or
superseded in time) over overlapping intervals are inconsistent:
:func:`overlaps` finds such pairs (``check`` reports them; no repair guesses which
value's dates are wrong).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, timezone
from typing import Iterable, Optional, overload

from memory_core.core.beliefs import ALIVE, INVALIDATED, REFUTED, SUPERSEDED, SUPPORTS, UNRECORDED, BeliefView
from memory_core.core.vocabulary import DISPUTED, Rule
from memory_core.core.errors import InputError
from memory_core.core.plan import Plan, record

UNTIMED, DISJOINT, ENDS_STORED, NEW_PRECEDES, SAME_PERIOD = (
    "untimed",
    "disjoint",
    "ends_stored",
    "new_precedes",
    "same_period",
)
ONE_UNTIMED = "one_side_untimed"  # one side has a valid_from, the other not: decided as untimed
HELD_UNTIL = Rule.VALIDITY_ENDED  # the rule of a change that ends a fact's validity (and its dependents')
SHORTENED = Rule.VALIDITY_SHORTENED  # the rule of a change that moves an ended fact's valid_to back

Interval = tuple[Optional[str], Optional[str]]
Span = tuple[str, str]  # a bounded interval: a period's first day and the day after its last


def moment(text: str) -> datetime:
    """A comparable instant of an ISO date or date-time (naive times are UTC); ValueError for
    text that is none, or an instant outside the calendar once in UTC (year 1 to 9999)."""
    value = (
        datetime.combine(date.fromisoformat(text), datetime.min.time())
        if len(text) == 10
        else datetime.fromisoformat(text)
    )
    if value.tzinfo is not None:
        try:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        except OverflowError:
            raise ValueError(f"{text} is outside the calendar in UTC") from None
    return value


@overload
def check_date(value: str, name: str) -> str: ...
@overload
def check_date(value: object, name: str) -> Optional[str]: ...
def check_date(value: object, name: str) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{name} must be an ISO date such as 2016-01-01, got {value!r}")
    text = value.strip()
    try:
        moment(text)
    except ValueError:
        raise InputError(f"{name} must be an ISO date such as 2016-01-01, got {text!r}") from None
    return text


_PERIOD = re.compile(r"(\d{4})(?:-(\d{2}))?")
MONTHS = "january february march april may june july august september october november december".split()
_MONTH_NAMES = "|".join(MONTHS) + "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
_AT = r"\b(?P<at>in|during|throughout|as of|back in|on|at|around)\s+(?:the\s+)?"
# the times a question names after a preposition, most precise first: a date (ISO, "1 June 2016",
# "June 1, 2016"), a month ("2016-06", "June 2016", "06/2016"), a season of a year, a decade, a year
_IN_QUESTION = [
    ("iso", re.compile(_AT + r"(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b(?![-/:]\d)", re.IGNORECASE)),
    (
        "dmy",
        re.compile(
            _AT
            + rf"(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mn>{_MONTH_NAMES})\.?,?\s+(?P<y>\d{{4}})\b",
            re.IGNORECASE,
        ),
    ),
    (
        "mdy",
        re.compile(
            _AT + rf"(?P<mn>{_MONTH_NAMES})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>\d{{4}})\b",
            re.IGNORECASE,
        ),
    ),
    ("ym", re.compile(_AT + r"(?P<y>\d{4})-(?P<m>\d{2})\b(?![-/:]\d)", re.IGNORECASE)),
    ("my", re.compile(_AT + rf"(?P<mn>{_MONTH_NAMES})\.?\s+(?:of\s+)?(?P<y>\d{{4}})\b", re.IGNORECASE)),
    ("m/y", re.compile(_AT + r"(?P<m>\d{1,2})/(?P<y>\d{4})\b(?![-/:]\d)", re.IGNORECASE)),
    (
        "season",
        re.compile(
            _AT + r"(?P<season>spring|summer|autumn|fall|winter)\s+(?:of\s+)?(?P<y>\d{4})\b", re.IGNORECASE
        ),
    ),
    ("decade", re.compile(_AT + r"(?P<decade>\d{3}0)'?s\b", re.IGNORECASE)),
    ("year", re.compile(_AT + r"(?P<y>\d{4})\b(?![-/:]\d)", re.IGNORECASE)),
    ("relative", re.compile(r"\b(?P<rel>last|this)\s+year\b", re.IGNORECASE)),
]
# seasons as the meteorological seasons of the northern hemisphere: (first month, months)
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}


def _month_number(name: str) -> int:
    name = name.lower()
    return next(i + 1 for i, m in enumerate(MONTHS) if m.startswith(name[:3]))


def _read_time(kind: str, found: re.Match, today: Optional[str]) -> Optional[str]:
    """The as-of text one of :data:`_IN_QUESTION`'s forms names (None: no time of the calendar)."""
    if kind == "relative":
        if today is None:
            return None
        year = int(today[:4]) - (0 if found.group("rel").lower() == "this" else 1)
        return f"{year:04d}"
    if kind == "decade":
        first = int(found.group("decade"))
        return f"{first:04d}/{first + 9:04d}"
    if kind == "season":
        year = int(found.group("y"))
        first, months = _SEASONS[found.group("season").lower()]
        end_year, end_month = (year + (first + months - 2) // 12, (first + months - 2) % 12 + 1)
        return f"{year:04d}-{first:02d}/{end_year:04d}-{end_month:02d}"
    year = found.group("y")
    if kind == "year":
        return year
    month = int(found.group("m")) if "m" in found.re.groupindex else _month_number(found.group("mn"))
    if "d" not in found.re.groupindex:
        return f"{year}-{month:02d}"
    return f"{year}-{month:02d}-{int(found.group('d')):02d}"


# a time a range in a question is made of: a year, a month ("March 2018", "2018-03"), a date
_TIME = r"(?:(?:" + "|".join(MONTHS) + r")\s+)?\d{4}(?:-\d{2}(?:-\d{2})?)?"
# "between 2015 and 2018", "from March 2015 to 2018", "since 2018": a range of time a question asks about
_RANGE_IN_QUESTION = re.compile(
    rf"\b(?:between\s+(?P<a>{_TIME})\s+and\s+(?P<b>{_TIME})|from\s+(?P<c>{_TIME})\s+(?:to|until|till)\s+"
    rf"(?P<d>{_TIME})|since\s+(?P<e>{_TIME}))\b(?![-/:]\d)",
    re.IGNORECASE,
)


def period(text: str) -> Optional[Span]:
    """A year (``2018``) or a month (``2018-03``) as the half-open interval of its days
    (``[2018-01-01, 2019-01-01)``), or a range ``START/END`` of two of those or of dates, from
    the start of the first to the end of the last (``2015/2018``: ``[2015-01-01, 2019-01-01)``;
    ``2018-01-01/2018-06-30``: ``[2018-01-01, 2018-07-01)``); None for anything else (a date is
    a moment)."""
    if "/" in text:
        first, _, last = text.strip().partition("/")
        if "/" in last or first != first.strip() or last != last.strip():
            return None
        start, end = _whole(first), _whole(last)
        if start is None or end is None or moment(start[0]) >= moment(end[1]):
            return None
        return start[0], end[1]
    found = _PERIOD.fullmatch(text.strip())
    if found is None:
        return None
    year, month = int(found.group(1)), found.group(2)
    if not 1 <= year <= 9998:  # its end, the next year's first day, is a date too
        return None
    if month is None:
        return f"{year:04d}-01-01", f"{year + 1:04d}-01-01"
    number = int(month)
    if not 1 <= number <= 12:
        return None
    after = (year + 1, 1) if number == 12 else (year, number + 1)
    return f"{year:04d}-{number:02d}-01", f"{after[0]:04d}-{after[1]:02d}-01"


def check_when(value, name: str) -> Optional[str]:
    """An as-of time: an ISO date or date-time (a moment), or a year, a month or a range of
    them (a period, :func:`period`)."""
    if isinstance(value, str) and period(value) is not None:
        return value.strip()
    try:
        return check_date(value, name)
    except InputError:
        raise InputError(
            f"{name} must be an ISO date such as 2016-01-01, a year (2016) or a month (2016-03), or a range "
            f"START/END of those (2015/2018, its end after its start), got {value!r}",
            field="as_of",
        ) from None


def said(when: str) -> str:
    """``when`` as an answer words it: "on 2018-03-01", "in 2018", "in 2018-03", "from 2015 to 2018"."""
    if "/" in when and period(when) is not None:
        first, _, last = when.partition("/")
        return f"from {first} to {last}"
    return f"in {when}" if period(when) is not None else f"on {when}"


def when_in_question(question: str, today: Optional[str] = None) -> Optional[tuple[str, str]]:
    """The time a question asks about, when it names one ("Where did Maria live in 2018?",
    "... during March 2018", "... as of 2018-03-01", "... between 2015 and 2018", "... since
    2018" (to ``today``, when given)): (the words that name it, the as-of time: a year, a month,
    a date or a range ``START/END``). A bare number is not a time ("the 2018 World Cup")."""
    ranged = _RANGE_IN_QUESTION.search(question)
    if ranged is not None:
        first = ranged.group("a") or ranged.group("c") or ranged.group("e")
        last = ranged.group("b") or ranged.group("d") or today
        sides = [_iso(first), _iso(last) if last else None]
        if sides[0] is None or sides[1] is None or period(f"{sides[0]}/{sides[1]}") is None:
            return None
        return ranged.group(0), f"{sides[0]}/{sides[1]}"
    for kind, form in _IN_QUESTION:
        found = form.search(question)
        if found is None:
            continue
        when = _read_time(kind, found, today)
        if when is None or (period(when) is None and _whole(when) is None):
            return None  # a time of no calendar ("on 2018-02-30", "in 0000"): none read
        return found.group(0), when
    return None


# "before Beth Cole", "after 2016", "until March 2018", "prior to 2016-05-01": the value that came
# before or after another value of the same subject and predicate, or a time
_ORDERED = re.compile(
    r"\b(?P<how>before|after|prior to|until|till)\s+(?P<anchor>[^?!.,;]*[^\s?!.,;])", re.IGNORECASE
)
# "the previous CEO", "the former address", "used to live", "Where did Maria live before?": the value
# before the one that holds now
_EARLIER = re.compile(
    r"\b(?:previous|previously|former|formerly|prior|earlier|used to|use to)\b|\bbefore(?=\s*[?!.]*\s*$)",
    re.IGNORECASE,
)
# "Where did Orbital Foods move its headquarters from?": a change, asked where it started
_CHANGED = re.compile(r"\b(?:mov|relocat|switch|chang|transferr?)\w*\b", re.IGNORECASE)
_FROM_AT_END = re.compile(r"\bfrom(?=\s*[?!.]*\s*$)", re.IGNORECASE)
_MONTH_YEAR = re.compile(r"(?P<month>" + "|".join(MONTHS) + r")\s+(?P<year>\d{4})", re.IGNORECASE)


@dataclass(frozen=True)
class Ordered:
    """A question about the value before or after another one ("Who was CEO before Beth Cole?")."""

    words: str  # the words that ask it, left out of the question the stored facts answer
    before: bool  # before (or until) the anchor; else after it
    when: Optional[str] = None  # the anchor is a time: the moment the question is read at
    anchor: Optional[str] = None  # the words naming the value it is ordered from; None: the current one


def _shifted(text: str, days: int) -> Optional[str]:
    """A date ``days`` away (a date-time: a second before, for -1), or None outside the calendar."""
    try:
        if len(text) == 10:
            return (date.fromisoformat(text) + timedelta(days=days)).isoformat()
        return (moment(text) + (timedelta(seconds=-1) if days < 0 else timedelta(days=days))).isoformat()
    except (ValueError, OverflowError):
        return None


def just_before(text: str) -> Optional[str]:
    """The last moment before the instant ``text`` names: the day before a date."""
    return _shifted(text, -1)


def anchor_time(text: str) -> Optional[Span]:
    """The time an anchor names: a year, a month ("March 2018", "2018-03") or a date, as the
    half-open interval it covers; None for words that name no time."""
    iso = _iso(text)
    return _whole(iso) if iso is not None else None


def _iso(text: str) -> Optional[str]:
    """A time as an as-of text: "March 2018" -> "2018-03"; a year, month or date as it is; None
    for no time of the calendar."""
    named = _MONTH_YEAR.fullmatch(text.strip())
    if named is not None:
        text = f"{named.group('year')}-{MONTHS.index(named.group('month').lower()) + 1:02d}"
    return text.strip() if _whole(text) is not None else None


def _whole(text: str) -> Optional[Span]:
    """A year, a month or a date (ISO) as the interval it covers."""
    span = period(text) if "/" not in text else None
    if span is not None:
        return span
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
        return None
    try:
        moment(text.strip())
    except ValueError:
        return None
    after = _shifted(text.strip(), 1)
    return (text.strip(), after) if after is not None else None


def order_in_question(question: str) -> Optional[Ordered]:
    """The order a question asks about, when it asks one: "before 2016" (read as of the day
    before), "after May 2016" (as of the first day after), "before Beth Cole" (the value of
    Beth Cole's subject and predicate before hers), "the previous CEO", "where did X move
    from?" (the value before the one that holds now). A range ("from 2015 until 2018") is no
    order: :func:`when_in_question` reads it."""
    if _RANGE_IN_QUESTION.search(question):
        return None
    found = _ORDERED.search(question)
    if found is not None:
        before = found.group("how").lower() != "after"
        span = anchor_time(found.group("anchor"))
        if span is None:
            return Ordered(found.group(0), before, anchor=found.group("anchor"))
        when = just_before(span[0]) if before else span[1]
        return Ordered(found.group(0), before, when=when) if when is not None else None
    found = _EARLIER.search(question)
    if found is None and _CHANGED.search(question):
        found = _FROM_AT_END.search(question)
    if found is None:
        return None
    return Ordered(found.group(0), True)


def outside(interval: Interval, when: str) -> bool:
    """Whether a fact valid over ``interval`` holds at no time of ``when`` (a moment or a period)."""
    span = period(when)
    if span is None:
        return not holds_at(interval, when)
    start, end = interval
    return (start is not None and moment(start) >= moment(span[1])) or (
        end is not None and moment(end) <= moment(span[0])
    )


def check_interval(
    valid_from, valid_to, where: str = "", names: tuple[str, str] = ("valid_from", "valid_to")
) -> Interval:
    """Validate an interval: each bound an ISO date, ``valid_to`` after ``valid_from`` (the
    interval is half-open: ``valid_to == valid_from`` would hold at no date). ``names``: how a
    message names the two bounds (a file's fields; a revision request's CLI flags, which each
    shell renders in its own words)."""
    prefix = f"{where}: " if where else ""
    first, second = names
    try:
        start = check_date(valid_from, first)
    except InputError as error:
        raise InputError(prefix + str(error), field="valid_from") from None
    try:
        end = check_date(valid_to, second)
    except InputError as error:
        raise InputError(prefix + str(error), field="valid_to") from None
    if start is not None and end is not None and moment(end) < moment(start):
        raise InputError(f"{prefix}{second} {end} is before {first} {start}", field="valid_to")
    if start is not None and end is not None and moment(end) == moment(start):
        raise InputError(
            f"{prefix}{second} {end} equals {first} {start}: the interval [valid_from, valid_to) "
            f"would be empty (give a later {second}, or none for a fact still true)",
            field="valid_to",
        )
    return start, end


def holds_at(interval: Interval, when: str) -> bool:
    """Whether a fact valid over ``interval`` is true at ``when`` (open bounds hold)."""
    start, end = interval
    at = moment(when)
    return (start is None or moment(start) <= at) and (end is None or at < moment(end))


def classify(new: Interval, stored: Interval) -> str:
    """How a judged contradiction between a new fact and stored evidence reads in valid time
    (see the module docstring). ``stored`` may be closed (a value already superseded in time,
    or loaded with a ``valid_to``): a value that started earlier and still held when the new
    one starts ends there, whatever its own end. A side with an end and no start held at most
    until its end: the other starting then or later is ``disjoint`` from it."""
    nf, nt = new
    sf, st = stored
    # a value with an end and no start held at most until its end: one that starts then or later
    # is after it, whatever else time cannot say about the two
    if (nt is not None and sf is not None and moment(nt) <= moment(sf)) or (
        st is not None and nf is not None and moment(st) <= moment(nf)
    ):
        return DISJOINT
    if nf is None and sf is None:
        return UNTIMED
    if nf is None or sf is None:
        return ONE_UNTIMED
    nf_, sf_ = moment(nf), moment(sf)
    if sf_ < nf_:
        return ENDS_STORED
    if nf_ < sf_:
        return NEW_PRECEDES
    return SAME_PERIOD


def untimed_note(new_key: str, new: Interval, stored: dict[str, Interval], cases: dict[str, str]) -> str:
    """What the one-side-untimed rule did, in one sentence (empty when it did not apply)."""
    keys = sorted(k for k, c in cases.items() if c == ONE_UNTIMED)
    if not keys:
        return ""
    parts = []
    for key in keys:
        start = stored.get(key, (None, None))[0]
        if new[0] is None:
            parts.append(f"{key} is valid from {start} but {new_key} has no valid_from")
        else:
            parts.append(f"{new_key} is valid from {new[0]} but {key} has no valid_from")
    return (
        "; ".join(parts) + ": time cannot order them, so the contradiction was decided by the policy as an "
        "untimed one (a loser is refuted: never true, not held until a date); give both a valid_from to "
        "place them in time"
    )


def sort_verdicts(
    verdicts: Iterable[tuple[str, str, float]], new: Interval, stored: dict[str, Interval]
) -> dict:
    """Split a fact's verdicts by :func:`classify`. Returns ``{"kept": [verdicts that stay
    contradictions], "ends": {key: date its validity ends}, "new_valid_to": date or None,
    "cases": {key: case}}``: the new fact ends where the earliest later value starts, and
    every value that started before it and still held then ends where it starts."""
    kept, ends, cases = [], {}, {}
    new_to = None
    for verdict in verdicts:
        key = verdict[0]
        case = classify(new, stored.get(key, (None, None)))
        cases[key] = case
        if case in (UNTIMED, ONE_UNTIMED, SAME_PERIOD):
            kept.append(verdict)
        elif case == ENDS_STORED:
            ends[key] = new[0]
        elif case == NEW_PRECEDES:
            start = stored[key][0]  # classify: a stored value the new one precedes has a start
            if start is not None and (new_to is None or moment(start) < moment(new_to)):
                new_to = start
    if new_to is not None and new[1] is not None and moment(new[1]) <= moment(new_to):
        new_to = None  # already ends before the stored value starts (then it is disjoint)
    return {"kept": kept, "ends": ends, "new_valid_to": new_to, "cases": cases}


def end_validity(
    view: BeliefView, plan: Plan, ends: dict[str, str], cause: str, ghosts: Iterable[str] = ()
) -> list[str]:
    """Each evidence in ``ends`` (key -> date) held until that date: ``valid_to`` set, state
    ``superseded``; alive nodes whose support that takes away become ``superseded`` too.
    Recorded in ``plan`` (rule ``validity_ended``). Returns what stopped holding. ``ghosts``:
    forgotten nodes rebuilt from their tombstones; one the relabelling makes hold again (or
    disputed) is listed in ``plan.restored``, as in any revision."""
    ended: list[str] = []
    for key in sorted(ends):
        node = view.nodes[key]
        if node.kind == "evidence" and (historical(view, key) or node.state == DISPUTED):
            # superseded in time already: its end moves back; disputed: it ends, still disputed
            shorten(view, plan, key, ends[key], cause)
            continue
        if node.state != ALIVE:
            continue
        before_to = node.valid_to
        node.valid_to = ends[key]
        record(
            view,
            plan,
            key,
            HELD_UNTIL,
            [cause],
            f"held until {ends[key]} ({cause} holds from then)",
            state=SUPERSEDED,
            weight=0.0,
        )
        plan.changes[-1].before["valid_to"] = before_to
        plan.changes[-1].after["valid_to"] = ends[key]
        ended.append(key)
    if not ended:
        return []
    # what rested on them and holds no more held while its support held: superseded (not
    # invalidated), and it keeps defeating what it defeated; found by the three-valued labelling,
    # again until nothing more falls (each one ended keeps its attacks); the rest is relabelled
    # (a dependent with only a disputed justification left becomes disputed). Its end is the last
    # time one of its justifications held (:func:`held`); one whose support never held while it
    # did (its own start is not before that end) never held: invalidated.
    from memory_core.core.tms import downstream, labels, relabel

    victims: list[str] = []
    while True:
        scope = downstream(view, ended + victims)
        new = labels(view, scope)
        falling = sorted(
            k
            for k in scope
            if new[k] == "dead" and view.nodes[k].state in (ALIVE, DISPUTED) and view.justifications(k)
        )
        if not falling:
            break
        memo: dict[str, Optional[Interval]] = {}
        spans = {k: held(view, k, set(falling), memo) for k in falling}
        for key in falling:
            node = view.nodes[key]
            lost = sorted({a for _, ants in view.justifications(key) for a in ants if new.get(a) == "dead"})
            span = spans[key]
            if span is None:
                record(
                    view,
                    plan,
                    key,
                    Rule.JUSTIFICATION_LOST,
                    lost,
                    "its support never held while it did: it would hold over an empty interval",
                    state=INVALIDATED,
                    weight=0.0,
                )
                victims.append(key)
                continue
            # each lost antecedent with the end it was given here, else its own (one that fell
            # with it); the support's end when none has one to name
            named = [(a, ends.get(a) or view.nodes[a].valid_to) for a in lost if a in view.nodes]
            until = ", ".join(f"{a} held until {when}" for a, when in named if when) or (
                f"its support held only until {span[1]}" if span[1] else "its support held only until then"
            )
            before_to = node.valid_to
            if node.kind == "evidence":  # derived evidence held while its support did: its validity ends too
                node.valid_to = span[1]
            last = f", until {span[1]}" if node.kind == "evidence" and span[1] is not None else ""
            record(
                view,
                plan,
                key,
                HELD_UNTIL,
                lost,
                f"held while its support held{last} ({until})",
                state=SUPERSEDED,
                weight=0.0,
            )
            if node.kind == "evidence":
                plan.changes[-1].before["valid_to"], plan.changes[-1].after["valid_to"] = before_to, span[1]
            victims.append(key)
    outcome = relabel(view, plan, ended + victims, ghosts=ghosts)
    victims += [k for k in outcome.died if k not in victims]
    # what ended with its support before (superseded in time already) ends no later than it now
    settle_ends(view, plan, ended + victims, skip=ended + victims)
    plan.died = plan.died + [k for k in ended + victims if k not in plan.died]
    return ended + victims


def held(
    view: BeliefView, key: str, fresh: set[str], memo: dict[str, Optional[Interval]]
) -> Optional[Interval]:
    """When ``key`` held, as the hull ``(first start, last end)`` of its times (open bounds None);
    None: it never held. A premise holds over its own interval when alive, disputed or
    superseded in time, and never when dead otherwise (refuted, or superseded by a judged value
    without a time). A derived node (one with justifications) alive or disputed, unless in
    ``fresh`` (falling now), holds over its own interval; a refuted one never; any other held
    while one of its justifications held (as :func:`at` labels it): each one holds where all its
    antecedents held at once (the latest start, the earliest end), within the node's own
    interval, and its end is the latest such end. A node met again on its own path of support
    holds nowhere there (an unfounded cycle); ``memo`` keeps only what no such cut decided."""
    return _held(view, key, fresh, memo, ())[0]


def _held(
    view: BeliefView, key: str, fresh: set[str], memo: dict[str, Optional[Interval]], path: tuple
) -> tuple[Optional[Interval], bool]:
    """:func:`held` on the path of support ``path``; also whether a cycle cut decided it."""
    if key in memo:
        return memo[key], False
    node = view.nodes.get(key)
    if node is None:
        return None, False
    if key in path:
        return None, True
    own: Interval = (node.valid_from, node.valid_to)
    rules = view.justifications(key)
    if not rules:
        memo[key] = own if node.state in (ALIVE, DISPUTED) or historical(view, key) else None
        return memo[key], False
    if node.state == REFUTED:
        return None, False
    if node.state in (ALIVE, DISPUTED) and key not in fresh:
        return own, False
    found: Optional[Interval] = None
    cut = False
    for _, ants in rules:
        spans = []
        for ant in ants:
            span, cut_here = _held(view, ant, fresh, memo, path + (key,))
            cut = cut or cut_here
            spans.append(span)
        if any(s is None for s in spans):
            continue
        start = _latest([own[0]] + [s[0] for s in spans if s is not None])
        end = _earliest([own[1]] + [s[1] for s in spans if s is not None])
        if start is not None and end is not None and moment(end) <= moment(start):
            continue  # its antecedents never held together within its own interval
        if found is None:
            found = (start, end)
        else:
            first = None if found[0] is None or start is None else min(found[0], start, key=moment)
            last = None if found[1] is None or end is None else max(found[1], end, key=moment)
            found = (first, last)
    if not cut:
        memo[key] = found
    return found, cut


def _latest(bounds: list[Optional[str]]) -> Optional[str]:
    known = [b for b in bounds if b is not None]
    return max(known, key=moment) if known else None


def _earliest(bounds: list[Optional[str]]) -> Optional[str]:
    known = [b for b in bounds if b is not None]
    return min(known, key=moment) if known else None


def settle_ends(view: BeliefView, plan: Plan, seeds: Iterable[str], skip: Iterable[str] = ()) -> list[str]:
    """What rests on ``seeds`` (critical ``depends_on``, transitively) and is superseded in time
    held only while its support held (:func:`held`): derived evidence whose support now ends
    before its ``valid_to`` has it moved back (rule ``validity_shortened``; logged, undoable);
    a node superseded in time whose support never held while it did (an end moved before its
    start, a value it rested on found never true) is ``invalidated`` (dead, not history: it
    may be forgotten). ``skip``: nodes this change already placed. Returns the keys changed."""
    done = set(skip)
    order: list[str] = []
    todo = [d for s in seeds for d in view.dependents(s, critical_only=True)]
    while todo:
        key = todo.pop(0)
        if key in order or key not in view.nodes:
            continue
        order.append(key)
        todo += view.dependents(key, critical_only=True)
    placed = sorted(k for k in order if k not in done and historical(view, k) and view.justifications(k))
    memo: dict[str, Optional[Interval]] = {}
    spans = {k: held(view, k, set(), memo) for k in placed}
    changed = []
    for key in placed:
        node, span = view.nodes[key], spans[key]
        lost = sorted({a for _, ants in view.justifications(key) for a in ants})
        if span is None:
            record(
                view,
                plan,
                key,
                Rule.JUSTIFICATION_LOST,
                lost,
                "its support never held while it did: it was never true",
                state=INVALIDATED,
                weight=0.0,
            )
            changed.append(key)
        elif (
            node.kind == "evidence"
            and span[1] is not None
            and node.valid_to is not None  # historical evidence has one (tms.historical_node)
            and moment(span[1]) < moment(node.valid_to)
        ):
            before_to = node.valid_to
            node.valid_to = span[1]
            record(
                view,
                plan,
                key,
                SHORTENED,
                lost,
                f"held while its support held (until {span[1]}; it was recorded until {before_to})",
            )
            plan.changes[-1].before["valid_to"], plan.changes[-1].after["valid_to"] = before_to, span[1]
            changed.append(key)
    return changed


def shorten(view: BeliefView, plan: Plan, key: str, until: str, cause: str) -> None:
    """Evidence already superseded in time (or disputed) whose interval reaches past ``until``
    held only until then (a value that starts earlier than its recorded successor arrived
    late): its ``valid_to`` is set or moves back (logged, undoable); what ended with its
    support moves back with it, to the last time its support held (:func:`settle_ends`).
    States are unchanged (a disputed value stays disputed: whether it held is still open)."""
    node = view.nodes[key]
    old = node.valid_to
    if old is not None and moment(old) <= moment(until):
        return
    node.valid_to = until
    was = f"it was recorded until {old}" if old else "it was open-ended"
    record(view, plan, key, SHORTENED, [cause], f"held until {until} ({cause} holds from then; {was})")
    plan.changes[-1].before["valid_to"], plan.changes[-1].after["valid_to"] = old, until
    settle_ends(view, plan, [key])


def place(view: BeliefView, plan: Plan, timed: dict, new_key: str, ghosts: Iterable[str] = ()) -> list[str]:
    """After the policy decided the real contradictions (``timed``: :func:`sort_verdicts`'s
    result): when the new fact holds, it takes its place in its timeline -- it ends where
    the earliest later value starts (:func:`precede`), and every value that started before
    it and still held then ends where it starts (:func:`end_validity`, decay as for any
    death). Returns what stopped holding."""
    from memory_core.core.cascade import decay

    node = view.nodes[new_key]
    # what ends it: of the values it precedes, the one (or ones) that starts first
    until = timed["new_valid_to"]
    later = sorted(
        k
        for k, c in timed["cases"].items()
        if c == NEW_PRECEDES
        and until is not None
        and k in view.nodes
        and (start := view.nodes[k].valid_from) is not None
        and moment(start) == moment(until)
    ) or sorted(k for k, c in timed["cases"].items() if c == NEW_PRECEDES)
    if not node.alive:
        if node.state == DISPUTED and timed["new_valid_to"]:
            # in dispute, it still cannot hold past the start of a value it precedes: whichever
            # side wins, it held at most until then (its state stays disputed)
            shorten(view, plan, new_key, timed["new_valid_to"], later[0])
        if not historical(view, new_key):
            return []
        # ended in time already, by a value out of dispute that starts after it
        # (:func:`place_settled`): it held from its start all the same, so it still ends
        # what held then, and it ends no later than the first value it precedes starts
        if timed["new_valid_to"]:
            shorten(view, plan, new_key, timed["new_valid_to"], later[0])
    elif timed["new_valid_to"]:
        precede(view, plan, new_key, timed["new_valid_to"], later)
    ended: list[str] = []
    if timed["ends"]:
        ended = end_validity(view, plan, timed["ends"], new_key, ghosts)
        decay(view, plan, ended)
    return ended


def precede(view: BeliefView, plan: Plan, key: str, until: str, cause: list[str]) -> None:
    """The new fact held only until a stored value started: recorded as ``superseded``."""
    node = view.nodes[key]
    node.valid_to = until
    record(
        view,
        plan,
        key,
        HELD_UNTIL,
        cause,
        f"held until {until} ({', '.join(cause)} holds from then)",
        state=SUPERSEDED,
        weight=0.0,
    )
    plan.changes[-1].after["valid_to"] = until


def returning_place(
    interval: Interval, others: Iterable[tuple[str, Interval]], ends: Optional[dict[str, str]] = None
) -> Optional[tuple[str, str, str]]:
    """Where a value that comes back (reinstated: what had refuted it died) stands in its
    single-valued slot's timeline, as a new fact would: ``others`` are ``(key, interval)`` of
    the slot's values with another object that hold once the revision is applied (alive,
    disputed, or superseded in time). Returns ``("held", key, start)`` when one of them held
    when it starts (it stays dead: that value held then), ``("until", key, start)`` when the
    earliest one that starts later starts before its end (it comes back held until then), or
    None (nothing in its way; an untimed value is placed nowhere in time, nor is a value
    that has no start). ``ends``: values the revision's new fact ends at its start (it
    holds): taken as ending there."""
    start, end = interval
    if start is None:
        return None
    begin = moment(start)
    covering, later = [], []
    for key, (o_start, o_end) in others:
        if o_start is None:
            continue
        o_begin = moment(o_start)
        if ends and key in ends and (o_end is None or moment(ends[key]) < moment(o_end)):
            o_end = ends[key]
        if o_begin <= begin and (o_end is None or begin < moment(o_end)):
            covering.append((o_begin, key, o_start))
        elif begin < o_begin and (end is None or o_begin < moment(end)):
            later.append((o_begin, key, o_start))
    if covering:
        _, key, when = min(covering)
        return ("held", key, when)
    if later:
        _, key, when = min(later)
        return ("until", key, when)
    return None


def end_returning(view: BeliefView, plan: Plan, ghosts: Iterable[str] = ()) -> list[str]:
    """After the relabelling: each value that came back (alive or disputed) and that
    :func:`returning_place` placed ``until`` a later value's start (``plan.meta``'s
    ``returning_until``, set by the re-judging) held only until then: ended as a new fact
    ends a stored value (:func:`end_validity`). What this revision had brought back and
    now ends (the value, what rests on it) was dead before it and holds now only in the
    past: not a death of this revision (no decay, no rescoring of the hypotheses it
    supports: its support was lost when it was refuted), only a refuted value found true
    once. Anything alive before that it ends dies as in any revision. Returns what
    stopped holding."""
    from memory_core.core.cascade import decay
    from memory_core.core.tms import L_DEAD, label_of

    pending = plan.meta.returning_until
    ended: list[str] = []
    for key in sorted(pending):
        node = view.nodes.get(key)
        if node is None or node.state not in (ALIVE, DISPUTED):
            continue
        until, cause = pending[key]
        now = end_validity(view, plan, {key: until}, cause, ghosts)
        ended += [k for k in now if k not in ended]
    first: dict[str, str] = {}
    for change in plan.changes:
        first.setdefault(change.key, change.before["state"])
    past = {k for k in ended if label_of(first.get(k, ALIVE)) == L_DEAD}  # dead when the revision began
    plan.died = [k for k in plan.died if k not in past]
    decay(view, plan, [k for k in ended if k not in past])
    return ended


def place_settled(view: BeliefView, plan: Plan, ghosts: Iterable[str] = ()) -> list[str]:
    """After the relabelling: a timed value this change took out of dispute (disputed before
    it, alive now: ``resolve`` chose it, or a revision ended its dispute) takes its place in its
    slot's timeline as a new fact that holds does (:func:`place`): every value of its slot
    that started before it and still held then ends where it starts (:func:`end_validity`),
    and it holds only until the earliest value of its slot that starts after it, before its
    end (what rests on it falls as for any end). In dispute it could not end another value,
    since whether it held was open. ``plan.meta.settling``: each such value -> the other
    values of its single-valued slot (another object) the task read into the view; those
    that hold (alive, disputed, superseded in time) and have a ``valid_from`` count. Returns
    what stopped holding."""
    from memory_core.core.cascade import decay

    if not plan.meta.settling:
        return []
    ghosts = set(ghosts)
    first: dict[str, str] = {}
    for change in plan.changes:
        first.setdefault(change.key, change.before["state"])
    settled = [
        k
        for k in sorted(plan.meta.settling)
        if (n := view.nodes.get(k)) is not None
        and n.state == ALIVE
        and first.get(k) == DISPUTED
        and n.valid_from is not None
    ]
    ended: list[str] = []
    for key in settled:
        # one ended in time already by another placed before it held from its start all the
        # same: it still ends what held then, and ends no later than its own next value
        node = view.nodes[key]
        if node.state != ALIVE and not historical(view, key):
            continue
        stored: dict[str, Interval] = {}
        for other in plan.meta.settling[key]:
            o = view.nodes.get(other)
            if o is None or other in ghosts or o.valid_from is None:
                continue
            if o.state in (ALIVE, DISPUTED) or historical(view, other):
                stored[other] = (o.valid_from, o.valid_to)
        timed = sort_verdicts(
            # its own interval, as its fact stated it (an end a later value's start gave it while
            # it was in dispute is that value's to give again)
            [(k, "contradicts", 1.0) for k in sorted(stored)],
            (node.valid_from, stated_end(node)),
            stored,
        )
        now: list[str] = []
        if timed["ends"]:
            now += end_validity(view, plan, timed["ends"], key, ghosts)
        until = timed["new_valid_to"]
        if until is not None:
            cause = min(k for k, c in timed["cases"].items() if c == NEW_PRECEDES and stored[k][0] == until)
            if node.state == ALIVE:
                now += [k for k in end_validity(view, plan, {key: until}, cause, ghosts) if k not in now]
            else:
                shorten(view, plan, key, until, cause)
        decay(view, plan, now)
        ended += [k for k in now if k not in ended]
    return ended


def stated_end(node) -> Optional[str]:
    """The end ``node``'s fact stated (None: open): its ``valid_to`` unless a later value's
    start ended it earlier (evidence stored before the stated end was kept: its ``valid_to``)."""
    return node.valid_to if node.stated_to == UNRECORDED else node.stated_to


def never_held(node) -> bool:
    """Dead and not superseded in time: refuted, invalidated, or superseded by a value without
    a time. A value so found ends nothing: it never held."""
    from memory_core.core.tms import L_DEAD, historical_node, label_of

    return label_of(node.state) == L_DEAD and not historical_node(node)


def reopen_ended(view: BeliefView, plan: Plan, ghosts: Iterable[str] = ()) -> list[str]:
    """After the change is placed in time: a value whose end was the start of a later value of
    its single-valued slot, that later value now found never true (refuted as a misprint,
    invalidated, or the loser of a resolve), was ended by nothing that held. It takes its place
    in its timeline again, as a value that comes back does (:func:`returning_place`), with the
    end its own fact stated (:func:`stated_end`): among the other values of its slot that hold
    (alive, disputed, or superseded in time) and have a start, it holds until the earliest
    that starts after it, before that end; else until that end. An alive value of its slot
    without a start (time cannot order the two) leaves it as it is, as it keeps a returning
    value dead. A value superseded in time that
    no value ends so holds again (``alive``, its weight back; rule ``validity_reopened``), and
    what had ended with it comes back where its support holds again (what still rests on
    something ended has its end moved on, to the last time its support held); one that the
    next value still ends has its end moved on to that value's start; a disputed one keeps its
    state and only its end moves. An end never moves back here.

    ``plan.meta.reopening``: each such value -> (the value found never true, the other values of
    its slot), read into the view by the task (another object, a start). Returns the keys
    whose state or end changed."""
    from memory_core.core.cascade import decay

    ghosts = set(ghosts)
    changed: list[str] = []
    revived: list[str] = []
    for key in sorted(plan.meta.reopening):
        gone, rivals = plan.meta.reopening[key]
        node, ender = view.nodes.get(key), view.nodes.get(gone)
        if node is None or ender is None or key in ghosts or not never_held(ender):
            continue
        if not (historical(view, key) or node.state == DISPUTED) or node.valid_to is None:
            continue
        if ender.valid_from is None or moment(ender.valid_from) != moment(node.valid_to):
            continue  # not the end it gave (another value's start, or its own stated end)
        if any(
            k != gone
            and k not in ghosts
            and (o := view.nodes.get(k)) is not None
            and o.alive
            and o.valid_from is None
            for k in rivals
        ):
            continue  # an alive value of its slot time cannot order with it holds: it is left as it is
        others = [
            (k, (o.valid_from, o.valid_to))
            for k in rivals
            if k != gone
            and k not in ghosts
            and (o := view.nodes.get(k)) is not None
            and o.valid_from is not None
            and (o.state in (ALIVE, DISPUTED) or historical(view, k))
        ]
        stated = stated_end(node)
        placed = returning_place((node.valid_from, stated), others)
        if placed is not None and placed[0] == "held":
            continue  # another value held when it starts (it never ended it: left as it is)
        until = placed[2] if placed is not None else stated
        old = node.valid_to
        if until is not None and moment(until) <= moment(old):
            continue
        reason = f"{gone}, whose start on {old} had ended it, was never true ({ender.state})"
        if node.state == DISPUTED or placed is not None:
            since = f" ({placed[1]} holds from then)" if placed is not None else ""
            node.valid_to = until
            record(view, plan, key, REOPENED, [gone], f"held until {until}{since}: {reason}")
            plan.changes[-1].before["valid_to"], plan.changes[-1].after["valid_to"] = old, until
            changed.append(key)
            changed += _reopen_dependents(view, plan, key, old, False, ghosts)
            continue
        _hold_again(view, plan, key, [gone], f"holds again{_until_text(until)}: {reason}", until)
        changed.append(key)
        revived.append(key)
        more = _reopen_dependents(view, plan, key, old, True, ghosts)
        changed += [k for k in more if k not in changed]
        revived += [k for k in more if view.nodes[k].state == ALIVE and k not in revived]
    if revived:
        plan.revived = plan.revived + [k for k in revived if k not in plan.revived]
        decay(view, plan, [])  # a non-critical dependency that holds again gives back what it took
    return changed


REOPENED = Rule.VALIDITY_REOPENED


def _until_text(until: Optional[str]) -> str:
    return f" (until {until}, the end its fact states)" if until is not None else ""


def _hold_again(
    view: BeliefView, plan: Plan, key: str, cause: list[str], detail: str, until, state: str = ALIVE
) -> None:
    """``key`` (superseded in time) alive again (or ``state``: disputed), with its weight (and
    confidence base) from before it ended, its end ``until``."""
    memory = plan.meta.memory
    before = memory.before_death.get(key, {}) if memory is not None else {}
    weight = before.get("weight")
    old = view.nodes[key].valid_to
    view.nodes[key].valid_to = until
    extra = {}
    if memory is not None and key in memory.undecayed:
        extra["confidence"] = memory.undecayed[key]
    record(
        view,
        plan,
        key,
        REOPENED,
        cause,
        detail,
        state=state,
        weight=0.5 if weight is None else weight,
        **extra,
    )
    if old != until:
        plan.changes[-1].before["valid_to"], plan.changes[-1].after["valid_to"] = old, until


def _reopen_dependents(
    view: BeliefView, plan: Plan, key: str, old_end: str, revive: bool, ghosts: Iterable[str] = ()
) -> list[str]:
    """What ended with ``key`` (superseded in time, resting on it: a conclusion, or derived
    evidence ending when it did, at ``old_end``) once its end moved on. With ``revive`` (it holds
    again) they are relabelled downstream of it as if they had not ended: each one whose
    support holds again comes back (alive, or disputed through disputed support), evidence
    with the end its fact stated, and so does anything else there whose support came back (a
    forgotten node from ``ghosts`` too); the rest stays superseded in time. Evidence left
    superseded in time (all of it without ``revive``) has its end moved on to the last time its
    support held. Returns the keys changed."""
    from memory_core.core.tms import downstream, relabel

    scope = downstream(view, [key])
    ended = sorted(
        k
        for k in scope
        if k != key
        and historical(view, k)
        and view.justifications(k)
        and (view.nodes[k].kind != "evidence" or view.nodes[k].valid_to == old_end)
    )
    changed: list[str] = []
    if revive:
        saved = {k: view.nodes[k].state for k in ended}
        for k in ended:  # labelled as if it had not ended: its support decides
            view.nodes[k].state = INVALIDATED
        first = len(plan.changes)
        outcome = relabel(view, plan, [key], ghosts=ghosts)
        for change in plan.changes[first:]:
            if change.key in saved and change.before["state"] == INVALIDATED:
                change.before["state"] = saved[change.key]  # it was superseded in time, not invalidated
                node = view.nodes[change.key]
                if node.kind == "evidence" and node.valid_to != stated_end(node):
                    change.before["valid_to"], change.after["valid_to"] = node.valid_to, stated_end(node)
                    node.valid_to = stated_end(node)
        for k, state in saved.items():
            if view.nodes[k].state == INVALIDATED:  # still without support: still superseded in time
                view.nodes[k].state = state
        plan.died = plan.died + [k for k in outcome.died if k not in plan.died and k not in saved]
        changed += [c.key for c in plan.changes[first:] if c.key not in changed]
    memo: dict[str, Optional[Interval]] = {}
    for k in ended:
        node = view.nodes[k]
        if k in changed or not historical(view, k) or node.kind != "evidence" or node.valid_to is None:
            continue
        current = node.valid_to
        node.valid_to = stated_end(node)
        span = held(view, k, set(), memo)
        node.valid_to = current
        if span is None or span[1] == current:
            continue
        if span[1] is not None and moment(span[1]) <= moment(current):
            continue
        node.valid_to = span[1]
        record(view, plan, k, REOPENED, [key], f"held while its support held, until {span[1]}")
        plan.changes[-1].before["valid_to"], plan.changes[-1].after["valid_to"] = current, span[1]
        changed.append(k)
    return changed


def changed_intervals(view: BeliefView, plan: Plan, skip: Iterable[str] = ()) -> dict[str, dict]:
    """Every node whose ``valid_to`` this change sets, as it left it: ``{key: {"valid_from",
    "valid_to", "was"}}`` (``was``: its ``valid_to`` before the change); ``skip``: keys left out.
    One whose end is where it was (a value ended in time at the end it already had) is not listed."""
    skip = set(skip)
    spans: dict[str, dict] = {}
    for change in plan.changes:
        if "valid_to" not in change.after or change.key in skip or change.key not in view.nodes:
            continue
        was = spans.get(change.key, {}).get("was", change.before.get("valid_to"))
        spans[change.key] = {
            "valid_from": view.nodes[change.key].valid_from,
            "valid_to": change.after["valid_to"],
            "was": was,
        }
    return {k: span for k, span in spans.items() if span["valid_to"] != span["was"]}


def past_value(node) -> bool:
    """Evidence superseded in time with a known start: a value of its subject+predicate's
    timeline that held once (a timed fact is compared with it)."""
    return (
        node.kind == "evidence"
        and node.state == SUPERSEDED
        and node.valid_to is not None
        and node.valid_from is not None
    )


def reopen(
    view: BeliefView, plan: Plan, kept: Iterable[tuple[str, str, float]], decisions: dict, new_key: str
) -> list[str]:
    """Values already superseded in time that the new fact contradicts as a real contradiction
    (the same period, or one side untimed): when the fact wins, such a value was never true:
    ``refuted`` (rule ``contradicted``), and what ended with it and rests on nothing else that
    held never held either: ``invalidated`` (:func:`settle_ends`); in a dispute it is
    ``disputed`` again. (An alive value is settled by the relabelling; one superseded in time is
    dead already and would stay "true until" its ``valid_to`` beside the winner.) Returns the
    keys changed (the values)."""
    from memory_core.core.policy import EVIDENCE

    changed = []
    for key, relation, _ in sorted(kept):
        node = view.nodes.get(key)
        if node is None or not historical(view, key) or node.kind != "evidence":
            continue
        decision = decisions.get(key)
        when = f"from {node.valid_from}" if node.valid_from else "without a start date"
        if decision is None or (not decision.dispute and decision.winner != EVIDENCE):
            record(
                view,
                plan,
                key,
                Rule.CONTRADICTED,
                [new_key],
                f"judge: {relation}; {new_key} claims the same period ({when}), and it was superseded in "
                f"time only (held until {node.valid_to}): refuted, never true",
                state=REFUTED,
                weight=0.0,
            )
            changed.append(key)
        elif decision.dispute:
            record(
                view,
                plan,
                key,
                Rule.DISPUTED,
                [new_key],
                f"in dispute with {new_key} over the same period ({when})",
                state=DISPUTED,
                weight=0.5,
            )
            changed.append(key)
    # what rested on a value now found never true never held either (it is no history)
    settle_ends(view, plan, changed)
    return changed


def historical(view: BeliefView, key: str) -> bool:
    """A node superseded in time: it was true; never forgotten, and what it consumes or
    supersedes is kept with it (see :func:`memory_core.core.tms.historical_node`)."""
    from memory_core.core.tms import historical_node

    node = view.nodes.get(key)
    return node is not None and historical_node(node)


def counts_at(node, when: str) -> bool:
    """Whether a stored evidence or conclusion may count at ``when`` on its own: alive or
    disputed and valid then, or superseded in time (it has a ``valid_to``) with ``when``
    inside its interval. Refuted never (it was never true); superseded by a newer value
    without an interval, or invalidated, never on its own (its support is recomputed)."""
    interval = (node.valid_from, node.valid_to)
    if node.state in (ALIVE, DISPUTED):
        return holds_at(interval, when)
    if node.state == SUPERSEDED and node.valid_to is not None:
        return holds_at(interval, when)
    return False


def untimed(node) -> bool:
    """Evidence stored without any valid time (neither ``valid_from`` nor ``valid_to``). At
    an as-of date it is taken as holding (nothing says when it was not true): recall shows it
    as such."""
    return node.kind == "evidence" and node.valid_from is None and node.valid_to is None


def as_of(view: BeliefView, when: str) -> BeliefView:
    """The beliefs valid at ``when``: a moment (:func:`at`), or a year or a month: the beliefs
    valid at some time of it (:func:`during`)."""
    span = period(when)
    return at(view, when) if span is None else during(view, *span)


def during(view: BeliefView, start: str, end: str) -> BeliefView:
    """The beliefs valid at some time of ``[start, end)``: the slice at each moment the graph
    can change inside it (its start, and every ``valid_from`` or ``valid_to`` within it),
    merged: a node alive at one of them is alive (else disputed at one of them: disputed; else
    as it stands at the start). Maria's home in 2018 is Lisbon until June and Porto from then."""
    first, last = moment(start), moment(end)
    moments = {start}
    for node in view.nodes.values():
        for bound in (node.valid_from, node.valid_to):
            if bound is not None and first < moment(bound) < last:
                moments.add(bound)
    slices = [at(view, m) for m in sorted(moments, key=moment)]
    merged = slices[0]
    for key, node in merged.nodes.items():
        states = {s.nodes[key].state for s in slices}
        if ALIVE in states:
            node.state = ALIVE
        elif DISPUTED in states:
            node.state = DISPUTED
    return merged


def at(view: BeliefView, when: str) -> BeliefView:
    """The beliefs valid at the moment ``when``: a copy of ``view`` labelled on that slice by the
    three-valued labelling (:func:`memory_core.core.tms.labels`). Premises that cannot count
    then (:func:`counts_at`: outside their interval, a refuted node, a premise superseded by
    a judged newer value) are taken as dead. Derived evidence and conclusions (those with
    justifications) are relabelled from their justifications whatever their present state
    (a node superseded because its support ended in time holds again at a date its support
    held), unless refuted or outside their own interval. A hypothesis holds when one of its
    supporters holds (or, with no supporter, when it is alive now). Evidence without any
    interval holds at every date (:func:`untimed`)."""
    from memory_core.core.tms import L_ALIVE, L_DISPUTED, labels

    when = check_date(when, "as_of")
    sliced = BeliefView({k: replace(n) for k, n in view.nodes.items()}, list(view.edges))
    forced = set()
    for key, node in sliced.nodes.items():
        if node.kind not in ("evidence", "conclusion"):
            continue
        if view.justifications(
            key
        ):  # relabelled from its justifications, unless refuted or out of its interval
            if node.state == REFUTED or not holds_at((node.valid_from, node.valid_to), when):
                forced.add(key)
            else:  # its present state (ended with its support, invalidated, disputed) is recomputed on the slice
                node.state = ALIVE
        elif counts_at(node, when):
            node.state = DISPUTED if node.state == DISPUTED else ALIVE
        else:
            forced.add(key)
    labelled = labels(sliced, forced_dead=forced)
    for key, lab in labelled.items():
        node = sliced.nodes[key]
        if lab == L_ALIVE:
            node.state = ALIVE
        elif lab == L_DISPUTED:
            node.state = DISPUTED
        elif node.state in (ALIVE, DISPUTED):  # not valid at that date, or its support is not
            node.state = SUPERSEDED if key in forced else INVALIDATED
    for key, node in sliced.nodes.items():
        if node.kind != "hypothesis":
            continue
        supporters = [e.src for e in sliced.in_edges(key, SUPPORTS)]
        holds = any(sliced.state(s) == ALIVE for s in supporters) if supporters else view.nodes[key].alive
        node.state = ALIVE if holds else SUPERSEDED
    return sliced


def overlaps(
    values: Iterable[tuple[str, str, str, Interval]],
    apart: Iterable[tuple[str, str]] = (),
    undecided: Iterable[str] = (),
) -> list[tuple[str, str, str, Interval]]:
    """Pairs of values of one single-valued slot whose validity overlaps: ``values`` are
    ``(key, slot, object, (valid_from, valid_to))`` of evidence that held (alive, disputed or
    superseded in time) with a ``valid_from`` (an untimed value is placed nowhere in time);
    values with the same (normalised) object agree. ``apart``: pairs known to be in an
    open dispute (recorded, not an inconsistency); ``undecided``: values whose state is
    disputed (in a dispute, or resting on one): a pair with one of them is an open question,
    not two values that both held (whether the disputed one held, and so whether it ended the
    other, is what the dispute leaves open). Returns ``(a, b, slot, shared interval)`` sorted, ``a < b``; the
    shared interval is ``[later start, earlier end)``."""
    from memory_core.core.keys import normalise_term

    skip = {tuple(sorted(p)) for p in apart}
    open_ = set(undecided)
    by_slot: dict[str, list] = {}
    for key, slot, obj, (start, end) in values:
        if start is None or not slot:
            continue
        by_slot.setdefault(slot, []).append(
            (key, normalise_term(obj), moment(start), None if end is None else moment(end), start, end)
        )
    found = []
    for slot, items in sorted(by_slot.items()):
        items.sort(key=lambda i: (i[2], i[0]))
        for i, a in enumerate(items):
            for b in items[i + 1 :]:
                if b[2] >= (a[3] or datetime.max):
                    break  # b (and every later one: sorted by start) starts after a ended
                if a[1] == b[1] or tuple(sorted((a[0], b[0]))) in skip or {a[0], b[0]} & open_:
                    continue
                start = b[4]  # b starts no earlier than a
                ends = [e for e in (a, b) if e[3] is not None]
                end = min(ends, key=lambda e: e[3])[5] if ends else None
                first, second = sorted((a[0], b[0]))
                found.append((first, second, slot, (start, end)))
    return sorted(found)


def overlap_text(pair: tuple[str, str, str, Interval]) -> str:
    a, b, slot, (start, end) = pair
    until = f"until {end}" if end else "with no end"
    return f"{a} and {b} are two values of single-valued {slot!r} that both held from {start} {until}"

"""Recall, twice over the same stores: FALSIFY (truth state read) vs plain RAG.

* **FALSIFY** searches the question over the alive beliefs of every kind
  (questions, hypotheses, evidence claims, conclusions) of every inquiry, with
  gate 1's hybrid retrieval (vector + lexical, reciprocal rank fusion:
  :func:`memory_core.judging.retrieval.search_beliefs`); dead beliefs never enter.
  Nothing within the relevance floor (:func:`relevant`): "nothing stored matches",
  no node used, the stored questions listed. When the nearest alive belief is an
  inquiry's question or one of its hypotheses (the question asked is the inquiry's
  own), the best-supported hypothesis with alive support leads with its supporting
  evidence; otherwise (or when no hypothesis has alive support) the most relevant
  alive evidence or conclusion answers, with the justification chain it rests on
  and its sources. A hypothesis without alive support is listed as unsupported,
  never given as the answer.
* **Plain RAG** is what a cognee user gets out of the box: vector search of
  the same collections of facts and findings (``Evidence_claim``,
  ``Conclusion_statement``) with no truth state, answering from the nearest hits.
* **Paths** (:func:`recall_path`): ``SUBJECT|PREDICATE|PREDICATE...`` follows alive
  triples hop by hop; plain RAG's side follows every stored triple (it cannot tell
  a dead one).

``as_of``: truth state is the valid-time slice (:func:`memory_core.core.validity.as_of`,
the three-valued labelling on the facts valid at that date); ``epoch``: the beliefs as
stored after that epoch (:mod:`memory_core.ops.history`); both compose. The scoreboard's
marks are computed on the same slice.

Offline both answers are extractive (the chosen statement and its source); with
``LLM_API_KEY`` each is written by the LLM from its own context only (FALSIFY's:
alive beliefs only). docs/recall.md is the same contract in prose.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal, Mapping, NamedTuple, Optional, cast

from py_rust_stemmers import SnowballStemmer

from memory_core.core import validity
from memory_core.core.beliefs import ALIVE, SUPERSEDED, BeliefView, Node
from memory_core.core.vocabulary import REFUTED
from memory_core.core.errors import InputError
from memory_core.core.identity import KIND_BY_TYPE, collection, node_id
from memory_core.core.investigation import check_text
from memory_core.core.keys import normalise_key, normalise_term, sp_key
from memory_core.core.results import RecallMatch, RecallRelevance, RecallResult, RecallSide, SearchHit
from memory_core.core.cardinality import MANY
from memory_core.core.tms import downstream
from memory_core.core.vocabulary import DEPENDS_ON, DISPUTED, DISPUTES, REFUTES, SUPPORTS, TEXT_FIELD, Rule
from memory_core.core.why import why_alive
from memory_core.tasks.propagate_refutation import today
from memory_core.judging.llm import structured_output
from memory_core.judging.prompts import ANSWER_PROMPT, Answer, answer_input
from memory_core.judging.retrieval import (
    BeliefHit,
    cosine_distance,
    fuse_beliefs,
    search_beliefs_within,
)
from memory_core.store.belief_store import state_of, to_edge, to_node
from memory_core.store.forgotten import forgotten_index
from memory_core.store.journal import log_identity
from memory_core.store.tms_io import add_antecedent_ghosts
from memory_core.store.lexical import query_words

BASELINE_K = 3
RECALL_POOL = 32  # rows of each collection each retriever returns before the truth state filters them
MATCHES_SHOWN = 5  # the alive beliefs nearest the question, listed with every answer
LLM_EXTRA = 2  # further relevant alive facts an LLM answer may draw on
MAX_CHAIN = 200  # nodes read up a justification chain
MAX_HOPS = 16
MAX_FAN_OUT = 100  # values followed at one hop of a path
# the offline embedder's floor (all-MiniLM-L6-v2): measured by `python -m bench.recall_qa --floor-study`
# (docs/recall.md, "The relevance floor"); FALSIFY_RECALL_FLOOR sets another
DEFAULT_FLOOR = 0.5
# the question asked is an inquiry's own when its question (or a hypothesis) is the nearest alive
# belief and this near: within this share of the floor (a paraphrase, not a question about its facts)
OWN_SHARE = 0.6
NOTHING = "nothing stored matches the question"
# a fact whose period ended before the date asked, nothing revised over it (alive in the stored states)
ENDED = "ended"
# words a question is made of that say nothing about what it asks (the content-word rule of relevant())
STOPWORDS = frozenset(
    """a about after all also an and any are as at be been before being between both but by can
could did do does doing during each for from had has have having he her here hers him his how i if in into is it
its itself know known me more most my no nor not of on once only or other our out over own same she should so some
such than that the their them then there these they this those through to too under until up very was we were what
when where which while who whom whose why will with would you your am still now anymore ever yet already
isn aren wasn weren doesn didn hasn haven hadn wouldn shouldn couldn t many much name names currently presently
nowadays""".split()
)


COMPOUND_PART = 4  # letters of each half of a compound word matched as two words
# two words that differ only in a last vowel or two (with an "s") are two names, not two forms of
# one word: "maria" / "mario", "carla" / "carlos", "georgia" / "george"
_NAME_ENDING = re.compile(r"[aeiou]{1,2}s?")
MAX_INITIALS = 6  # letters of a word read as the initials of the words it abbreviates


def recall_floor(settings) -> float:
    """The cosine distance within which a stored belief counts as relevant to a question."""
    return DEFAULT_FLOOR if settings.recall_floor is None else settings.recall_floor


class QuestionWords(frozenset):
    """A question's content words (lower-cased); ``initialisms``: those it writes in capitals
    ("CEO", "USA"), which also stand for the words they abbreviate; ``names``: the entities it
    names, each as its words: a run of capitalised words past the first ("Lee Park"), a word
    holding a digit ("Company7"), a word of a script with no capitals ("王芳"), and the user for
    "I", "me", "myself"."""

    initialisms: frozenset[str] = frozenset()
    names: tuple[tuple[str, ...], ...] = ()
    ever: bool = False  # it asks whether something ever held ("Was Alan ever CEO?", "Has Beth been CEO?")
    negated: bool = False  # it asks in the negative ("Which language does Odile not speak?")
    when: bool = False  # it asks when ("When did Kendra join Orchid?", "Since what year ...?")
    # the content words of the phrase asking when ("how long": 'long', "which year": 'year'):
    # a fact's valid time answers them, so an answer with one is never said not to hold them
    # (:func:`_timed_held`)
    timed: frozenset[str] = frozenset()


USER = (
    "user"  # the subject first-person memories are stored under ("I moved to Munich": user|lives in|Munich)
)
# "I", "me", "myself", "I'm", "I've": the user (lower-case "me": "Me 262" is a name)
_FIRST_PERSON = re.compile(r"\b(?:I(?:['\u2019](?:m|ve|d|ll))?|me|myself)\b(?!['\u2019]\w)")
_POSSESSIVE_FIRST_PERSON = re.compile(r"\b(?:[Mm]y|mine)\b")
# letters a word is written with that are no accent of a plainer letter (NFKD leaves them whole)
_FOLDED = str.maketrans(
    {
        "ø": "o",
        "Ø": "O",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ß": "ss",
        "đ": "d",
        "Đ": "D",
        "ł": "l",
        "Ł": "L",
        "þ": "th",
        "Þ": "TH",
        "ı": "i",
    }
)


# a question asking for a time: its answer is a fact's valid time when the fact has one
# ("since when", "until which year", "how many years": its words are the question's form, held by
# a valid time)
_WHEN = re.compile(
    r"\b(?:(?:since|until|till)\s+)?(?:when\b|(?:what|which)\s+(?:year|date|day|month)\b)"
    r"|\bhow\s+long\b|\bhow\s+many\s+years\b",
    re.IGNORECASE,
)
_EVER = re.compile(r"\bever\b|\b(?:has|have|had)\s+(?:[^\W\d_]+\s+){0,4}been\b", re.IGNORECASE)


# a negation: "not", "never", "no", "cannot", "n't" (whose "not" and "no" are no content words);
# written with a capital they are a title's words ("Dr. No", "Never Say Never", "Can't Buy Me Love")
_NEGATION = re.compile(r"\b(?:not|never|no|cannot|[a-z]+n['\u2019]t)\b")


def negated(text: str) -> bool:
    """Whether a text says something in the negative ("Ivar does not drive.", "I don't have a
    cat anymore."), outside the titles it quotes."""
    return bool(_NEGATION.search(_QUOTED.sub(" ", text)))


def folded(text: str) -> str:
    """``text`` without accents: "José Müller" is "Jose Muller", "Søren Ødegård" "Soren Odegard"."""
    if text.isascii():
        return text
    plain = unicodedata.normalize("NFKD", text.translate(_FOLDED))
    return "".join(c for c in plain if not unicodedata.combining(c))


def _unpossessed(text: str) -> str:
    """``text`` without a possessive's "s", which is no word of a question ("Alice's") nor of a
    title it quotes ("She's Leaving Home" is held by a text saying it)."""
    return re.sub(r"['\u2019]s\b", "", text)


# a quoted span of one to eight words: a title the question names ("Love You To", "Something")
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201c\u201d]{1,80})[\"\u201d]")
MAX_TITLE = 8


def _first_person(text: str) -> list[re.Match]:
    """Where a question speaks for its user: "I" after a capitalised word past the first is a
    numeral of a name ("World War I", "Louis I"), not the user ("Am I", "where do I"); nor is
    a word of a quoted title ("Who sang "I Will Survive"?")."""
    found = []
    quoted = [m.span(1) for m in _QUOTED.finditer(text)]
    for match in _FIRST_PERSON.finditer(text):
        if any(start <= match.start() < end for start, end in quoted):
            continue
        before = re.findall(r"[^\W_]+", text[: match.start()])
        if match.group(0).startswith("I") and len(before) > 1 and before[-1][0].isupper():
            continue
        found.append(match)
    return found


# words that say "now", which every answer is read at unless a time is named
_NOW = re.compile(r"\b(?:these days|at the moment|at present|right now|as of now|for now)\b", re.IGNORECASE)


def content_words(text: str) -> QuestionWords:
    text = _NOW.sub(" ", folded(text))
    spoken = _first_person(text)
    me = bool(spoken)
    for match in reversed(spoken):
        text = f"{text[: match.start()]} {USER} {text[match.end() :]}"
    quoted = [m.span(1) for m in _QUOTED.finditer(text)]
    text = _POSSESSIVE_FIRST_PERSON.sub(  # "my" in a quoted title ("Drive My Car") is a word of it
        lambda m: m.group(0) if any(a <= m.start() < b for a, b in quoted) else f" {USER}", text
    )
    text = _unpossessed(text)
    words = QuestionWords(w for w in query_words(text) if w not in STOPWORDS)
    words.initialisms = words & {
        t.lower() for t in re.findall(r"[^\W\d_]+", text) if 2 <= len(t) <= MAX_INITIALS and t.isupper()
    }
    words.names = _names(text, words) + (((USER,),) if me else ())
    words.ever = bool(_EVER.search(text))
    words.negated = negated(text)
    asking_when = _WHEN.search(_QUOTED.sub(" ", text))
    words.when = bool(asking_when)
    if asking_when is not None:
        words.timed = words & frozenset(query_words(asking_when.group(0)))
    return words


class Title(tuple):
    """A name the question quotes ("Love You To"): its words as written, stop words too, held
    only by a text that says them in that order ("Love Me Do" is another song)."""


def _titles(text: str) -> list[tuple[Title, tuple[int, int]]]:
    """The titles a question quotes, each with where it lies in ``text``."""
    found = []
    for match in _QUOTED.finditer(text):
        title = Title(w.lower() for w in re.findall(r"[^\W_]+", match.group(1)))
        if 0 < len(title) <= MAX_TITLE:
            found.append((title, match.span(1)))
    return found


def uncased(token: str) -> bool:
    """A word of a script with no capitals (Chinese, Japanese, Arabic, Hebrew, Thai...): in a
    question it is a name, as a capitalised word is ("Where does 王芳 live?")."""
    letters = [c for c in token if c.isalpha()]
    return bool(letters) and not any(c.isupper() or c.islower() for c in letters)


def _names(text: str, words: frozenset[str]) -> tuple[tuple[str, ...], ...]:
    """The entities a question names (:class:`QuestionWords`), each as its content words, and
    the titles it quotes, each as its words (:class:`Title`)."""
    titles = _titles(text)
    names: list[tuple[str, ...]] = [title for title, _ in titles]
    run: list[str] = []
    tokens = [(m.group(0), m.start()) for m in re.finditer(r"[^\W_]+", text)]
    for i, (token, at) in enumerate(tokens):
        word = token.lower()
        if any(start <= at < end for _, (start, end) in titles):  # inside a quoted title: named by it
            if run:
                names.append(tuple(run))
            run = []
            continue
        capital = i > 0 and token[0].isupper() and not (len(token) <= MAX_INITIALS and token.isupper())
        if (
            capital or uncased(token) or any(c.isdigit() for c in token) and not token.isdigit()
        ) and word in words:
            run.append(word)
            continue
        if run:
            names.append(tuple(run))
        run = []
    if run:
        names.append(tuple(run))
    return tuple(dict.fromkeys(names))


_STEMMER = SnowballStemmer("english")

# English verbs whose past forms no stemmer relates to their base: a question asks with the
# base after "did" ("What did the audit find?") where a stored fact says the past ("The audit
# found ..."). Base -> its irregular past and participle forms (those that are not another
# common word's spelling: "left", "saw", "lay" are kept out).
_IRREGULAR = {
    "become": "became",
    "begin": "began begun",
    "bring": "brought",
    "build": "built",
    "buy": "bought",
    "catch": "caught",
    "choose": "chose chosen",
    "come": "came",
    "do": "did done",
    "draw": "drew drawn",
    "drink": "drank drunk",
    "drive": "drove driven",
    "eat": "ate eaten",
    "fall": "fell fallen",
    "feel": "felt",
    "fight": "fought",
    "find": "found",
    "fly": "flew flown",
    "forget": "forgot forgotten",
    "get": "got gotten",
    "give": "gave given",
    "go": "went gone",
    "grow": "grew grown",
    "hear": "heard",
    "hold": "held",
    "keep": "kept",
    "know": "knew known",
    "lead": "led",
    "leave": "left",
    "lose": "lost",
    "make": "made",
    "mean": "meant",
    "meet": "met",
    "pay": "paid",
    "ride": "rode ridden",
    "rise": "rose risen",
    "run": "ran",
    "say": "said",
    "see": "seen",
    "sell": "sold",
    "send": "sent",
    "sing": "sang sung",
    "sit": "sat",
    "sleep": "slept",
    "speak": "spoke spoken",
    "spend": "spent",
    "stand": "stood",
    "steal": "stole stolen",
    "swim": "swam swum",
    "take": "took taken",
    "teach": "taught",
    "tell": "told",
    "think": "thought",
    "throw": "threw thrown",
    "understand": "understood",
    "wear": "wore worn",
    "win": "won",
    "write": "wrote written",
}
_BASE_OF = {form: base for base, forms in _IRREGULAR.items() for form in forms.split()}


@functools.lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """The English Snowball stem of a lower-case word ("living" and "lives": "live"); an
    irregular verb's past form stems as its base ("found": "find", "bought": "buy")."""
    return _STEMMER.stem_word(_BASE_OF.get(word, word))


class Found(frozenset):
    """The words of a stored text (lower-cased), with ``stems``: theirs."""

    stems: frozenset[str] = frozenset()


def found_in(text: str) -> Found:
    found = Found(query_words(folded(text)))
    found.stems = frozenset(stem(w) for w in found)
    return found


def _same_word(word: str, found: Found) -> bool:
    """``word`` or a form of it is in ``found``: the same word, one of the same stem ("living" /
    "lives", "die" / "died"), or (4 letters or more) a word it begins or that begins it, which
    adds at most four letters ("warn" / "warned", "citizen" / "citizenship", "america" /
    "american"; not "chair" / "chairperson", and a name of four letters and one more, "paul" /
    "paula", is another name), or one sharing its first letters with it, all but at most four of
    the longer one's ("creator" / "created", "writer" / "written", "produced" / "production"),
    unless both differ only in a last vowel or two: "maria" / "mario", "carla" / "carlos",
    "georgia" / "george" are other names."""
    if word in found or stem(word) in found.stems:
        return True
    if len(word) < 4:
        return False
    for other in found:
        if len(other) < 4:
            continue
        short, long = (word, other) if len(word) <= len(other) else (other, word)
        extra = len(long) - len(short)
        if long.startswith(short):
            if extra <= 4 and (len(short) >= 5 or extra >= 2):
                return True
            continue
        shared = 0
        for a, b in zip(word, other):
            if a != b:
                break
            shared += 1
        tails = (word[shared:], other[shared:])
        if shared >= max(4, len(long) - 4) and not all(_NAME_ENDING.fullmatch(t) for t in tails):
            return True
    return False


def coverage(words: QuestionWords, text: str) -> float:
    """The share of the question's content words (or a form of them) a text holds."""
    return len(covered(words, text)) / len(words) if words else 0.0


def covered(words: QuestionWords, text: str) -> frozenset[str]:
    """The question's content words that ``text`` holds: the word or a form of it, both halves
    of a compound ("birthplace" / "place of birth"), or for a word the question writes in
    capitals, the words it abbreviates ("CEO" / "chief executive officer", "USA" / "United
    States of America")."""
    found = found_in(text)
    held = {w for w in words if _same_word(w, found)}
    if len(held) < len(words):
        initialisms = words.initialisms
        spelled = None
        for w in words - held:
            if len(w) >= 2 * COMPOUND_PART and any(
                _same_word(w[:i], found) and _same_word(w[i:], found)
                for i in range(COMPOUND_PART, len(w) - COMPOUND_PART + 1)
            ):
                held.add(w)
            elif w in initialisms:
                if spelled is None:  # the initials of the text's content words, in order
                    spelled = "".join(
                        t[0] for t in re.findall(r"[^\W\d_]+", text.lower()) if t not in STOPWORDS
                    )
                if w in spelled:
                    held.add(w)
    return frozenset(held)


def _named_in(name: tuple[str, ...], text: str) -> bool:
    """Every word of an entity's name is in ``text`` as it is written (or one of its stem):
    "Company7" is not "Company74", "Lee Park" not "Lee Parker"; a quoted title, its words in
    order ("Love You To" is not "Love Me Do")."""
    if isinstance(name, Title):
        said_words = " ".join(w.lower() for w in re.findall(r"[^\W_]+", _unpossessed(folded(text))))
        return f" {' '.join(name)} " in f" {said_words} "
    found = found_in(text)
    return all(w in found or stem(w) in found.stems and w.isalpha() for w in name)


def _entity(subject: str) -> str:
    """The entity a subject names: "user's mother" names the mother, not the user."""
    return re.split(r"['\u2019]s\s+", subject)[-1]


def _timed_held(words: QuestionWords, props: dict) -> frozenset[str]:
    """Asked "how long" or "which year", a fact's valid time is the answer: a fact with one holds
    those words ('long', 'year'), a fact without one does not. Only for the words an answer is
    said not to hold: which fact the question is about is read from what the facts say."""
    return words.timed if props.get("valid_from") or props.get("valid_to") else frozenset()


def held_by(words: QuestionWords, props: dict) -> frozenset[str]:
    """The question's words a fact holds (:func:`covered`, in its text and its triple), where
    a name the question gives is held only by the entity the fact is about: its subject or
    object, when it has a triple ("User's wife Julia works at IBM." holds no "user"), else its
    text, each word of the name as written ("Company74" holds no "Company7")."""
    held = covered(words, said(props))
    if not words.names:
        return held
    ends = _ends(props)
    for name in words.names:
        if not _names_entity(name, props, ends):
            held = held - set(name)
    return held


def names_held(words: QuestionWords, props: dict) -> int:
    """How many of the entities the question names a fact is about (:func:`held_by`)."""
    ends = _ends(props)
    return sum(1 for name in words.names if _names_entity(name, props, ends))


def _names_entity(name: tuple[str, ...], props: dict, ends: str) -> bool:
    """The fact is about the entity ``name`` names: its words are in ``ends``
    (:func:`_ends`); a quoted title is said whole by its subject or its object as written
    ("She's Leaving Home"), or by its text when its triple says no names."""
    if not isinstance(name, Title):
        return _named_in(name, ends)
    if ends == said(props):
        return _named_in(name, ends)
    return any(_named_in(name, props.get(k) or "") for k in ("subject", "object"))


def _ends(props: dict) -> str:
    """The entities a fact is about, as text: its subject's entity and its object, when its text
    names them (a triple of identifiers, "Q938795", says nothing of names: its text does)."""
    subject, object_ = props.get("subject"), props.get("object")
    text = found_in(text_of(props))
    if subject and object_ and set(query_words(folded(_entity(subject)))) & text:
        return f"{_entity(subject)} {object_}"
    return said(props)


def polarity_differs(words: QuestionWords, props: dict) -> bool:
    """A belief says in the negative what the question asks in the affirmative, or the other
    way round (:func:`negated`)."""
    return words.negated != negated(text_of(props))


def relevant(hit: BeliefHit, floor: float, words: QuestionWords) -> bool:
    """A belief is relevant to a question when it lies within the floor (cosine distance),
    or when its text holds every content word of the question, or a form of it (a name or a
    long claim the embedding does not place near: "Who is Valtec?", "When did the supplier warn
    Company X?")."""
    if hit.distance is not None and hit.distance <= floor:
        return True
    return bool(words) and held_by(words, hit.props) == words


def text_of(props: dict) -> str:
    kind = KIND_BY_TYPE.get(props.get("type", ""))
    return (props.get(TEXT_FIELD[kind]) if kind is not None else None) or ""


def inquiry_of(props: dict) -> Optional[str]:
    return props.get("key") if props.get("type") == "InvestigationQuestion" else props.get("question_key")


def may_answer(props: dict, pinned: Optional[str], as_of: Optional[str]) -> bool:
    """Whether a belief can be among those an answer reads: of the pinned inquiry, alive, or
    with ``as_of`` alive or superseded and valid at some time of it (its evidence's interval;
    derived beliefs are labelled on the slice later: this only bounds how deep recall searches)."""
    if pinned and inquiry_of(props) != pinned:
        return False
    state = state_of(props)
    if as_of is None:
        return state == ALIVE
    if state not in (ALIVE, SUPERSEDED):
        return False
    start, end = props.get("valid_from"), props.get("valid_to")
    return not (start or end) or not validity.outside((start, end), as_of)


class Slice:
    """Truth state as recall reads it: the stored state (now, or at an epoch), or with
    ``as_of`` the valid-time slice of each inquiry (read and labelled once per recall)."""

    def __init__(self, store, as_of: Optional[str]):
        self.store = store
        self.as_of = as_of
        self.views: dict[str, BeliefView] = {}
        self.hypothesis_views: dict[str, BeliefView] = {}  # the views above, with support from outside

    async def load(self, inquiries) -> None:
        for key in sorted({k for k in inquiries if k} - set(self.views)):
            view = await self.store.view_of_investigation(key)
            self.views[key] = validity.as_of(view, self.as_of) if self.as_of is not None else view

    async def view(self, inquiry: str) -> BeliefView:
        await self.load([inquiry])
        return self.views[inquiry]

    async def hypothesis_view(self, inquiry: str) -> BeliefView:
        """The inquiry's view with every ``supports`` and ``refutes`` edge into its hypotheses,
        wherever the other end lives (rule 5 counts a supporter of another inquiry: the revision
        engine promotes on it), and those nodes with their states in the slice (with ``as_of``,
        read on their own inquiry's slice, and a hypothesis holds when one of its supporters
        holds). One read of the hypotheses' edges and one of the nodes outside the inquiry."""
        if inquiry in self.hypothesis_views:
            return self.hypothesis_views[inquiry]
        view = await self.view(inquiry)
        hypotheses = {node_id("hypothesis", k): k for k, n in view.nodes.items() if n.kind == "hypothesis"}
        rows = []
        if hypotheses:
            rows = [
                r
                for r in await self.store.all_edges_of(list(hypotheses))
                if r[2] in (SUPPORTS, REFUTES) and r[1] in hypotheses
            ]
        # the sources already in the inquiry's view (their edges are in it too)
        inside = {
            node_id(view.nodes[e.src].kind, e.src) for h in hypotheses.values() for e in view.in_edges(h)
        }
        outside = sorted({r[0] for r in rows} - inside)
        if not outside:
            self.hypothesis_views[inquiry] = view
            return view
        found = await self.store.raw_nodes(outside)
        if self.as_of is not None:
            await self.load(inquiry_of(p) for p in found.values())
        whole = BeliefView(dict(view.nodes), list(view.edges))
        keys = {}
        for i, props in found.items():
            node = self.node(props) if self.as_of is not None else to_node(props)
            if node is not None and node.key not in whole.nodes:
                whole.add_node(node)
                keys[i] = node.key
        for src, dst, rel, props in rows:
            if src in keys:
                whole.add_edge(to_edge(rel, keys[src], hypotheses[dst], props or {}))
        if self.as_of is not None:  # validity.at's rule, with the supporters read across inquiries
            for key in sorted({hypotheses[dst] for src, dst, rel, _ in rows if src in keys}):
                supporters = [e.src for e in whole.in_edges(key, SUPPORTS)]
                if supporters:
                    held = any(whole.state(s) == ALIVE for s in supporters)
                    whole.nodes[key] = replace(whole.nodes[key], state=ALIVE if held else SUPERSEDED)
        self.hypothesis_views[inquiry] = whole
        return whole

    def state(self, props: dict) -> str:
        if self.as_of is None:
            return state_of(props)
        view = self.views.get(inquiry_of(props) or "")
        node = view.nodes.get(props.get("key") or "") if view is not None else None
        return node.state if node is not None else state_of(props)

    def said_state(self, props: dict) -> str:
        """:meth:`state` in words for the caller: on a slice, a fact whose valid time starts after
        the date asked did not hold yet ("not yet valid"), which the slice labels as it labels
        one that ended ("superseded")."""
        state = self.state(props)
        node = self.node(props) if self.as_of is not None and state == SUPERSEDED else None
        period = validity.period(self.as_of or "")
        if node is not None and node.valid_from is not None:
            asked_end = period[1] if period is not None else self.as_of
            if asked_end is not None and validity.moment(node.valid_from) >= validity.moment(asked_end):
                return "not yet valid"
        if node is not None and node.valid_to is not None and state_of(props) == ALIVE:
            # its period ended before the date asked, and no revision superseded it (a fact
            # loaded with its end stays alive in the stored states)
            asked_start = period[0] if period is not None else self.as_of
            if asked_start is not None and validity.moment(node.valid_to) <= validity.moment(asked_start):
                return ENDED
        return state

    def node(self, props: dict) -> Optional[Node]:
        view = self.views.get(inquiry_of(props) or "")
        if view is not None and props.get("key") in view.nodes:
            return view.nodes[props["key"]]
        return to_node(props)


WINNING_RULES = (Rule.CONTRADICTED, Rule.SUPERSEDED_BY_FACT, Rule.VALIDITY_ENDED)
_MARKS_CACHE: dict = {}  # (journal, epoch, log size) -> (promoted, winners): the log only grows


class Marks(NamedTuple):
    promoted: dict[str, int]  # hypothesis -> the epoch a revision (not undone) promoted it
    winners: dict[str, int]  # new fact -> the epoch it was recorded over a stored belief
    replaced: dict[str, str]  # belief -> the belief that refuted, superseded or ended it (the last time)
    recorded: dict[str, int]  # belief -> the epoch that recorded it (a load, a revision, a batch)


def revision_marks(journal) -> Marks:
    """One pass over the revision log (none again until it changes), skipping what an undo
    took back: :class:`Marks`."""
    # the log file's size and time stand for its content (journal.epoch() would parse its last
    # entry, which for a large batch costs as much as the pass itself)
    ident = log_identity(journal) or (type(journal).__name__, id(journal), journal.epoch())
    if ident in _MARKS_CACHE:
        return _MARKS_CACHE[ident]
    entries = list(journal.entries())
    undone = {e.get("undoes") for e in entries if e.get("kind") == "undo"}
    promoted: dict[str, int] = {}
    winners: dict[str, int] = {}
    replaced: dict[str, str] = {}
    recorded: dict[str, int] = {}
    for entry in entries:
        if entry.get("kind") == "undo" or entry["epoch"] in undone:
            continue
        new = {entry.get("new_evidence")} | {f.get("new_evidence") for f in entry.get("facts") or []}
        for key in [*(entry.get("added") or []), *new]:
            if key:
                recorded.setdefault(key, entry["epoch"])
        for change in entry.get("changes", []):
            if change["rule"] == "promoted":
                promoted[change["key"]] = entry["epoch"]
            elif change["rule"] in ("support_lost", "demoted"):  # it fell, or its promotion was undone
                promoted.pop(change["key"], None)
            elif change["rule"] in WINNING_RULES:
                for cause in change.get("cause", []):
                    if change["rule"] == Rule.VALIDITY_ENDED and cause not in new:
                        continue  # ended with its support: the antecedent that ended took nothing's place
                    replaced[change["key"]] = cause
                    if cause in new and entry.get("kind") == "revise":
                        winners[cause] = entry["epoch"]
    if len(_MARKS_CACHE) > 64:
        _MARKS_CACHE.clear()
    _MARKS_CACHE[ident] = Marks(promoted, winners, replaced, recorded)
    return _MARKS_CACHE[ident]


def disputes_of(view) -> dict:
    """The disputes that touch the question: ``disputed``, every disputed
    node's key; ``disputes``, each unresolved pair of rivals with what rests on it."""
    disputed = sorted(k for k, n in view.nodes.items() if n.state == DISPUTED)
    pairs = sorted(
        {
            tuple(sorted((e.src, e.dst)))
            for e in view.edges
            if e.kind == DISPUTES and view.state(e.src) == DISPUTED and view.state(e.dst) == DISPUTED
        }
    )
    rows = []
    for a, b in pairs:
        rests = sorted(k for k in downstream(view, [a, b]) if k not in (a, b) and view.state(k) == DISPUTED)
        rows.append({"keys": [a, b], "rests_on_it": rests})
    return {"disputed": disputed, "disputes": rows}


def _near(disputes: dict, keys: set[str]) -> dict:
    """The disputes among (or resting on) ``keys``."""
    rows = [d for d in disputes["disputes"] if keys & (set(d["keys"]) | set(d["rests_on_it"]))]
    touched = {k for d in rows for k in d["keys"] + d["rests_on_it"]}
    return {"disputed": sorted((keys | touched) & set(disputes["disputed"])), "disputes": rows}


async def chain_view(stores, slice_: Slice, props: dict) -> tuple[BeliefView, set[str]]:
    """A view holding ``props``'s node and everything up its justifications, read upwards
    edge by edge (bounded) into whatever inquiry each antecedent lives, over a copy of the
    inquiry's sliced view when it was read (its states are the slice's); then the forgotten
    nodes the chain rests on, as dead ghosts (forgetting a node deletes its edges: without
    them a justification through it would look whole). With it, the nodes whose justifications
    were not read (the bound reached)."""
    store = stores.store
    nodes = {props["id"]: props}
    edges = []
    frontier = [props["id"]]
    while frontier and len(nodes) < MAX_CHAIN:
        rows = [r for r in await store.all_edges_of(frontier) if r[2] == DEPENDS_ON and r[0] in set(frontier)]
        edges += rows
        new = [r[1] for r in rows if r[1] not in nodes]
        found = await store.raw_nodes(new)
        nodes.update({i: dict(p, id=i) for i, p in found.items()})
        frontier = list(found)
    from memory_core.store.belief_store import BeliefStore

    view = BeliefStore._view(store, list(nodes.values()), edges)
    sliced = slice_.views.get(inquiry_of(props) or "")
    if sliced is not None:  # the slice's nodes (with its states) first, the chain read around them
        whole = BeliefView(dict(sliced.nodes), list(sliced.edges))
        for key, node in view.nodes.items():
            if key not in whole.nodes:
                whole.add_node(node)
        have = {(e.kind, e.src, e.dst) for e in whole.edges}
        for edge in view.edges:
            if (edge.kind, edge.src, edge.dst) not in have:
                whole.add_edge(edge)
        view = whole
    add_antecedent_ghosts(view, forgotten_index(stores.journal), {})
    unread = {n.key for i in frontier if (n := view.nodes.get(str(nodes.get(i, {}).get("key")))) is not None}
    return view, unread


def _chain_keys(tree: Optional[dict]) -> list[str]:
    if not tree:
        return []
    found = [tree["key"]]
    for antecedent in tree.get("antecedents", []):
        found += [k for k in _chain_keys(antecedent) if k not in found]
    return found


def _source(props: Optional[dict]) -> str:
    return f" (source: {props['source_id']})" if props and props.get("source_id") else ""


async def answer_from_hypotheses(stores, slice_: Slice, inquiry: str) -> Optional[dict]:
    """The inquiry's best-supported hypothesis with alive support (support, then feedback
    weight, then prior), with its alive supporting evidence (of any inquiry); None when none has any."""
    view = await slice_.hypothesis_view(inquiry)
    supported = [
        k
        for k, n in view.nodes.items()
        if n.kind == "hypothesis" and n.alive and view.alive_supporters(k) and view.support(k) > 0
    ]
    if not supported:
        return None
    best = min(
        supported, key=lambda h: (-view.support(h), -view.nodes[h].weight, -(view.nodes[h].prior or 0.0), h)
    )
    evidence = sorted(
        view.alive_supporters(best),
        key=lambda e: (-max(x.weight for x in view.in_edges(best) if x.src == e), e),
    )
    raw = await stores.store.raw_nodes(node_id(view.nodes[e].kind, e) for e in evidence)
    props_by_key = {p["key"]: p for p in raw.values() if "key" in p}
    sources = [props_by_key[e].get("source_id") for e in evidence if props_by_key.get(e, {}).get("source_id")]
    lead = props_by_key.get(evidence[0])
    answer = view.nodes[best].text
    if lead is not None:  # a statement written without its full stop still reads as a sentence
        answer = answer.rstrip() + ("" if answer.rstrip().endswith((".", "!", "?")) else ".")
        answer += f" Evidence: {lead.get('claim')}" + _source(lead)
    context = [view.nodes[best].text] + [view.nodes[e].text for e in evidence]
    also = await held_in_period(stores, slice_, lead) if lead is not None else []
    if also and lead is not None:  # asked about a year or a month: the slot's other values then
        period = validity.said(slice_.as_of or "").capitalize()
        answer += f" [{_interval_said(slice_.node(lead))}] {period} also: "
        answer += " ".join(f"{text_of(p)} [{_interval_said(slice_.node(p))}]" for p in also)
        evidence = evidence + [p["key"] for p in also if p["key"] not in evidence]
        context += [text_of(p) for p in also]
    return {
        "answer": answer,
        "nodes": [best] + evidence,
        "sources": sources,
        "context": context,
        "kind": "hypothesis",
        "rests_on": {"key": best, "supported_by": evidence},
        "untimed": [e for e in evidence if slice_.as_of is not None and validity.untimed(view.nodes[e])],
        # the other supported hypotheses, best first: what each says (with its supporters) and its support
        "rivals": [
            (
                h,
                view.nodes[h].text,
                " ".join(view.nodes[e].text for e in view.alive_supporters(h)),
                view.support(h),
            )
            for h in sorted(supported, key=lambda h: (-view.support(h), h))
            if h != best
        ],
        "support": view.support(best),
        "inquiry_question": view.nodes[inquiry].text if inquiry in view.nodes else "",
    }


async def answer_from_facts(
    stores, slice_: Slice, lead: BeliefHit, more: list[BeliefHit], words: Optional[QuestionWords] = None
) -> dict:
    """The most relevant alive evidence or conclusion, with the justification chain it rests
    on (to its premises) and their sources; a value of a predicate its inquiry declares
    ``many`` that the question does not name comes with the other alive values ("Which
    languages does Maria speak?": all of them)."""
    view, unread = await chain_view(stores, slice_, dict(lead.props, id=lead.node_id))
    key = lead.props["key"]
    tree = why_alive(view, key, unread)
    chain = [k for k in _chain_keys(tree) if k != key]
    raw = await stores.store.raw_nodes(node_id(view.nodes[k].kind, k) for k in chain if k in view.nodes)
    props_by_key = {p["key"]: p for p in raw.values() if "key" in p}
    props_by_key[key] = lead.props
    nodes = [key] + chain
    sources = list(
        dict.fromkeys(props_by_key[k]["source_id"] for k in nodes if props_by_key.get(k, {}).get("source_id"))
    )
    answer = text_of(lead.props) + _source(lead.props)
    if chain:
        said = lambda k: (text_of(props_by_key.get(k, {})) or view.nodes[k].text).rstrip(".")  # noqa: E731
        answer += " Rests on: " + "; ".join(f"{k}: {said(k)}" for k in chain if k in view.nodes) + "."
    untimed = []
    if slice_.as_of is not None:
        untimed = [k for k in nodes if k in view.nodes and validity.untimed(view.nodes[k])]
        if untimed:
            answer += f" [{', '.join(untimed)}: no valid time recorded, taken as holding {validity.said(slice_.as_of)}]"
    context = [text_of(lead.props)] + [text_of(props_by_key.get(k, {})) for k in chain]
    also = await held_in_period(stores, slice_, lead.props)
    if also:
        period = validity.said(slice_.as_of or "").capitalize()
        answer += f" [{_interval_said(slice_.node(lead.props))}] {period} also: "
        answer += " ".join(f"{text_of(p)} [{_interval_said(slice_.node(p))}]" for p in also)
        nodes += [p["key"] for p in also]
        context += [text_of(p) for p in also]
    elif words is not None and not names_value(words, lead.props) and await _many(stores, lead.props):
        others = [p for p in await values_of(stores, slice_, lead.props) if slice_.state(p) == ALIVE]
        if others:
            answer += " Also: " + " ".join(text_of(p) for p in others)
            nodes += [p["key"] for p in others]
            context += [text_of(p) for p in others]
    if words is not None and words.when and not also:
        # asked when, the value's timeline says it ("When did Kendra start at Orchid?": from
        # 2021-06-01): every period it held, as a period's answer gives each value's
        periods = await periods_of(stores, slice_, lead.props)
        if any(n.valid_from or n.valid_to for n, _ in periods):
            answer += f" [{'; '.join(_interval_said(n) for n, _ in periods)}]"
            nodes += [p["key"] for _, p in periods if p["key"] not in nodes]
    return {
        "answer": answer,
        "nodes": nodes,
        "sources": sources,
        "context": context,
        "kind": lead.kind,
        "rests_on": tree or {"key": key},
        "untimed": untimed,
        "more": [(h.props["key"], text_of(h.props)) for h in more],
    }


def names_value(words: QuestionWords, props: dict) -> bool:
    """Whether the question names the fact's value: it holds a word of the object that is not
    a word of the subject too. A child's surname is the parent's: "Who are the children of
    Henrietta Quill?" names no value of "Henrietta Quill | child | Oscar Quill", "Does Henrietta
    Quill have a child named Mabel?" names one."""
    return bool(covered(words, props.get("object") or "") - covered(words, props.get("subject") or ""))


async def _many(stores, props: dict) -> bool:
    """Whether a fact's predicate is declared ``many`` by its inquiry (several values at once)."""
    if not props.get("predicate"):
        return False
    declared = (await stores.store.declared_predicates([props])).get(props.get("question_key") or "", {})
    return declared.get(normalise_term(props["predicate"])) == MANY


async def values_of(stores, slice_: Slice, props: dict, within: Optional[str] = None) -> list[dict]:
    """The other facts of a fact's subject and predicate (their states read on the slice),
    earliest valid first: of every inquiry, as a timed revision ends and places them (the slot
    is one timeline in the world, whatever question each value was recorded for), or only of
    the inquiry ``within`` when given."""
    key = sp_key(props.get("subject"), props.get("predicate"))
    if key is None:
        return []
    found = [
        p
        for p in await stores.store.nodes_by_sps({key: props["subject"]})
        if p.get("key") != props.get("key") and (within is None or inquiry_of(p) == within)
    ]
    await slice_.load(inquiry_of(p) for p in found)
    nodes = [(slice_.node(p), p) for p in found]
    return [p for n, p in sorted(nodes, key=lambda np: ((np[0] and np[0].valid_from) or "", np[1]["key"]))]


async def held_in_period(stores, slice_: Slice, props: dict) -> list[dict]:
    """Asked about a year or a month, the other values of the answer's subject and predicate
    that held at some time of it (Lisbon until June 2018, Porto from then), earliest first."""
    if slice_.as_of is None or validity.period(slice_.as_of) is None:
        return []
    return [p for p in await values_of(stores, slice_, props) if slice_.state(p) == ALIVE]


async def periods_of(stores, slice_: Slice, props: dict) -> list[tuple[Node, dict]]:
    """Every period a fact's value held, earliest first: the fact and each other record of its
    subject, predicate and object (of any inquiry: the slot is one timeline) that held, alive or
    superseded in time (a value asserted again is a new record of a new period: Lisbon 2015 to
    2018 and from 2020 are two). A refuted, invalidated or disputed record never held. The states
    are the stored ones (at an epoch, as stored then), not a date's slice: a when-question asks
    for the timeline, whichever date the answering fact was read at."""
    node = slice_.node(props)
    found = [(node, props)] if node is not None else []
    value = normalise_term(props.get("object") or "")
    if value:
        for other in await values_of(stores, slice_, props):
            held = to_node(other)
            if (
                held is not None
                and normalise_term(other.get("object") or "") == value
                and (held.state == ALIVE or (held.state == SUPERSEDED and held.valid_to))
            ):
                found.append((held, other))
    start = lambda np: validity.moment(np[0].valid_from) if np[0].valid_from else datetime.min  # noqa: E731
    return sorted(found, key=lambda np: (start(np), np[1]["key"]))


def _interval_said(node: Optional[Node]) -> str:
    start, end = (node.valid_from, node.valid_to) if node is not None else (None, None)
    if start and end:
        return f"valid {start} to {end}"
    if start:
        return f"valid from {start}"
    return f"valid until {end}" if end else "no valid time recorded"


def held_by_dead(
    hits: list[BeliefHit],
    slice_: Slice,
    in_scope,
    words: QuestionWords,
    than: frozenset[str],
    within: Optional[float] = None,
) -> Optional[BeliefHit]:
    """The dead fact (refuted, superseded, invalidated, or not valid at the slice's date) that
    holds every question word ``than`` holds and more, at cosine distance ``within`` or nearer
    (the alive answer's: a word form alone, "living" / "lives", does not outweigh meaning): the
    question is about it (its most words, then the nearest)."""
    best, best_key = None, None
    for h in hits:
        if h.kind not in ("evidence", "conclusion") or not in_scope(h) or slice_.state(h.props) == ALIVE:
            continue
        if within is not None and (h.distance is None or h.distance > within):
            continue
        held = held_by(words, h.props)
        if held > than:
            key = (-len(held), _nearness(h))
            if best_key is None or key < best_key:
                best, best_key = h, key
    return best


async def replacement(
    stores, slice_: Slice, dead: str, props: Optional[dict] = None, pinned: Optional[str] = None
) -> Optional[dict]:
    """The alive belief that took a dead one's place: what refuted, superseded or ended it (the
    revision log), followed while that died too; at an as-of time, a fact not valid then is in
    the place of the value of its subject and predicate that is (Alan Reed was the CEO in 2012,
    not Beth Cole, who became CEO in 2016), of any inquiry, or of the ``pinned`` one when the
    caller pinned one (that value is the answer); None when nothing alive did."""
    if props is not None and slice_.as_of is not None:
        node = slice_.node(props)
        if node is not None and validity.outside((node.valid_from, node.valid_to), slice_.as_of):
            valued = await values_of(stores, slice_, props, pinned)
            then = [p for p in valued if slice_.state(p) == ALIVE]
            if then:
                return then[0]
    replaced = revision_marks(stores.journal).replaced
    seen, key = {dead}, replaced.get(dead)
    while key is not None and key not in seen:
        seen.add(key)
        props = (await stores.store.find_keys([key])).get(key)
        if props is None:  # forgotten
            return None
        if slice_.as_of is not None:
            await slice_.load([inquiry_of(props)])
        if slice_.state(props) == ALIVE:
            return props
        key = replaced.get(key)
    return None


def same_value(props: dict, ranked: list[BeliefHit], words: QuestionWords) -> list[dict]:
    """A question about a value that asks for its subjects ("Who lives in Oslo?" holds Oslo, not
    Tom): the other alive facts found with the same predicate and object, nearest first."""
    subject, predicate, object_ = (props.get(k) for k in ("subject", "predicate", "object"))
    if (
        not (subject and predicate and object_)
        or not names_value(words, props)
        # it names the subject too, beyond the words its object shares with it
        or covered(words, _entity(subject)) - covered(words, object_)
    ):
        return []
    same = lambda p: (  # noqa: E731
        normalise_term(p.get("predicate") or "") == normalise_term(predicate)
        and normalise_term(p.get("object") or "") == normalise_term(object_)
    )
    return [
        h.props
        for h in ranked
        if h.kind == "evidence" and h.props.get("key") != props.get("key") and same(h.props)
    ][:MAX_FAN_OUT]


TIE = 0.05  # facts holding as much of a question whose distances differ by less: a tie in meaning


async def by_triples_on_a_tie(
    store, question: str, words: QuestionWords, matches: list[BeliefHit]
) -> list[BeliefHit]:
    """Facts that hold as much of the question (and of the entities it names) and lie as near
    to it: the one whose triple, said as a sentence, lies nearest leads ("Where does Daniel
    Okafor reside?": "Daniel Okafor lives in Abuja." said by "Daniel Okafor moved to Abuja.",
    over "Daniel Okafor is a geologist."). One embedding call for the tied facts with a triple."""
    facts = [h for h in matches if h.kind in ("evidence", "conclusion")]
    if len(facts) < 2 or facts[0].distance is None:
        return matches
    rank = lambda h: (  # noqa: E731
        len(held_by(words, h.props)),
        names_held(words, h.props),
        polarity_differs(words, h.props),
    )
    first = rank(facts[0])
    tied = [
        h
        for h in facts
        if rank(h) == first and h.distance is not None and h.distance - facts[0].distance < TIE
    ]
    with_triple = [
        h for h in tied if h.props.get("subject") and h.props.get("predicate") and h.props.get("object")
    ]
    if len(tied) < 2 or not with_triple:
        return matches
    vectors = await store.embed([question] + [_triple_said(h.props) for h in with_triple])
    said_near = {h.props["key"]: cosine_distance(vectors[0], v) for h, v in zip(with_triple, vectors[1:])}
    nearest = lambda h: min(h.distance or 0.0, said_near.get(h.props["key"], 1.0))  # noqa: E731
    lead = min(tied, key=nearest)
    return [lead] + [h for h in matches if h is not lead]


def own_value(words: QuestionWords, props: dict, ranked: list[BeliefHit]) -> Optional[BeliefHit]:
    """The question names an entity the nearest fact is not about, and that entity has its
    own alive value of the fact's predicate: that value answers ("Do I live in Faro?" near
    "User's mother lives in Faro." is answered by "User lives in Lisbon."; "Do I work at
    IBM?" near "User's wife Julia works at IBM." by the user's own employer). The nearest
    such fact found; None when the fact is about a named entity or none has a value."""
    subject, predicate = props.get("subject"), props.get("predicate")
    if not (words.names and subject and predicate and props.get("object")):
        return None
    if any(_named_in(name, _entity(subject)) for name in words.names):
        return None
    slot = normalise_term(predicate)
    for hit in ranked:
        other = hit.props
        if (
            hit.kind == "evidence"
            and other.get("key") != props.get("key")
            and other.get("subject")
            and other.get("object")
            and normalise_term(other.get("predicate") or "") == slot
            and any(_named_in(name, _entity(other["subject"])) for name in words.names)
        ):
            return hit
    return None


def possessed_value(
    words: QuestionWords, props: dict, ranked: list[BeliefHit]
) -> tuple[Optional[BeliefHit], Optional[str]]:
    """The question asks about someone the nearest fact's subject has ("my sister", "Alice's
    brother": a question word the fact does not hold, stored as the subject "user's sister",
    "Alice's brother" of a fact found), not about its subject: that one's value of the same
    predicate answers ("Does my sister live in Berlin?" near "I moved to Berlin." is answered by
    "My sister Ingrid lives in Oslo."). Returns that fact (None when that one has no value of
    the predicate: the nearest fact is about another entity) and the subject asked about (None
    when no fact found is about someone the subject has)."""
    subject, predicate = props.get("subject"), props.get("predicate")
    if not (subject and predicate and props.get("object")) or _entity(subject) != subject:
        return None, None
    unheld = set(words) - held_by(words, props)
    if not unheld:
        return None, None
    owner, slot = normalise_term(subject), normalise_term(predicate)
    asked: Optional[str] = None
    for hit in ranked:
        other = hit.props
        # "user's sister": whose (the user) and who (the sister)
        parts = re.split(r"['\u2019]s\s+", other.get("subject") or "")
        if not (
            hit.kind == "evidence"
            and len(parts) == 2
            and normalise_term(parts[0]) == owner
            and other.get("object")
            and covered(words, parts[1]) & unheld
        ):
            continue
        if normalise_term(other.get("predicate") or "") == slot:
            return hit, other["subject"]
        asked = asked or other["subject"]
    return None, asked


# someone an entity has: "Noa Brandt's brother", "my wife" ask about that one, not about its owner
KIN = frozenset(
    """brother brothers sister sisters mother father son sons daughter daughters wife husband
spouse partner child children parent parents cousin uncle aunt nephew niece grandmother
grandfather grandson granddaughter grandchild girlfriend boyfriend fiance fiancee
stepmother stepfather stepson stepdaughter colleague boss neighbour neighbor""".split()
)


def kin_asked(question: str, words: QuestionWords, props: dict) -> Optional[str]:
    """The question asks about someone the fact's subject has, whom no fact found is stored
    under ("Where does Noa Brandt's brother work?" near "Noa Brandt works at Quarry Bank.", "Does
    my brother live in Ulaanbaatar?" near "I moved to Ulaanbaatar."): that one, as a subject would
    name it ("Noa Brandt's brother"), so that the owner's own value does not answer for them; None when the
    question asks no such thing, or the fact holds the word (a fact of the relation: "Who is
    Noa's child?" near "Noa | child | Leo")."""
    subject = props.get("subject")
    if not (subject and props.get("predicate") and props.get("object")) or _entity(subject) != subject:
        return None
    unheld = set(words) - held_by(words, props)
    owner = r"my" if normalise_term(subject) == USER else rf"{re.escape(folded(subject))}['\u2019]s"
    said_kin = re.compile(rf"\b{owner}\s+([^\W\d_]+)", re.IGNORECASE)
    for match in said_kin.finditer(folded(question)):
        kin = match.group(1).lower()
        if kin in KIN and kin in unheld:
            return f"{subject}'s {kin}"
    return None


def _about(props: dict) -> Optional[str]:
    """The entity a fact with a triple is about (its subject's, :func:`_entity`)."""
    return _entity(props["subject"]) if props.get("subject") and props.get("object") else None


def other_entity_answer(words: QuestionWords, props: dict, asked: Optional[str] = None) -> dict:
    """The question names entities none of the alive facts is about ("Am I allergic to
    peanuts?" near "User's son Max is allergic to peanuts."), or asks about someone the nearest
    fact's subject has (``asked``: "Alice's brother" near "Alice works at Lumen Bank."): no
    answer, the nearest named."""
    named = repr(asked) if asked else ", ".join(repr(" ".join(n)) for n in words.names)
    about = _about(props)
    return {
        "answer": f"no alive belief answers it about {named}: the nearest, {props['key']} "
        f"({text_of(props).rstrip('.')}), is about {about or 'something else'}",
        "nodes": [],
        "sources": [],
        "context": [],
        "kind": None,
        "untimed": [],
        "unheld": sorted({w for n in words.names for w in n if w in words}),
        "other_entity": {"key": props["key"], "text": text_of(props), "about": about},
    }


# a question asking for something ("Where doesn't Noa work?", "In which city ..."), not whether
# something holds ("Is Maia not a nurse?", which a fact said in the affirmative answers)
_ASKS_WHAT = re.compile(
    r"^\W*(?:(?:in|at|for|from|to|with|by|of|on)\s+)?(?:what|which|where|who|whom|whose|when|why|how)\b",
    re.IGNORECASE,
)


def other_polarity_answer(words: QuestionWords, question: str, props: dict) -> Optional[dict]:
    """A question asking for something in the negative ("Where doesn't Noa Brandt work?") led by
    a fact said in the affirmative ("Noa Brandt works at Kelso Labs."): the fact says what holds,
    not what does not, so no alive belief answers; the fact is named as what is stored, never as
    the answer. None when the question asks whether, or in the affirmative, or the fact is negative."""
    if not words.negated or negated(text_of(props)) or not _ASKS_WHAT.match(question):
        return None
    return {
        "answer": "no alive belief answers it: none says it in the negative, as the question asks; "
        f"stored, in the affirmative: {props['key']} ({text_of(props).rstrip('.')})",
        "nodes": [],
        "sources": [],
        "context": [],
        "kind": None,
        "untimed": [],
    }


def said_as_asked(words: QuestionWords, facts: list[BeliefHit]) -> Optional[BeliefHit]:
    """Among the relevant facts (best first), the first said in the question's polarity that
    holds a word of each entity the question names and a word besides ("Ines never worked for the
    Harlan Group." for "Where doesn't Ines Vale work?"), or None."""
    names = _name_words(words)
    for h in facts:
        if polarity_differs(words, h.props):
            continue
        holds = covered(words, said(h.props))
        if holds - names and all(set(name) & holds for name in words.names):
            return h
    return None


def not_then_answer(
    hits: list[BeliefHit], slice_: Slice, in_scope, words: QuestionWords, question: str, lead: BeliefHit
) -> Optional[dict]:
    """At an as-of date, a fact with no valid time said in the other polarity than the question
    ("Carl Diaz was never CEO of Orbex." for "Who was CEO of Orbex?") leads only because the facts
    that answer in the question's polarity are not valid then: no belief valid then answers, the
    fact that would (not refuted: the one holding most of the question's words, then the
    nearest) is named with its valid time, the undated one only as undated. None otherwise, and
    for a question asking whether ("Was Carl Diaz ever CEO of Orbex?"), which either answers."""
    node = slice_.node(lead.props)
    if (
        slice_.as_of is None
        or node is None
        or not validity.untimed(node)
        or not polarity_differs(words, lead.props)
        or not _ASKS_WHAT.match(question)
    ):
        return None
    held = held_by(words, lead.props)
    best, best_key = None, None
    for h in hits:
        if h.kind not in ("evidence", "conclusion") or not in_scope(h) or polarity_differs(words, h.props):
            continue
        if state_of(h.props) not in (ALIVE, SUPERSEDED):  # refuted: it would answer at no date
            continue
        other = slice_.node(h.props)
        if other is None or not validity.outside((other.valid_from, other.valid_to), slice_.as_of):
            continue
        holds = held_by(words, h.props)
        if holds >= held:
            key = (-len(holds), _nearness(h))
            if best_key is None or key < best_key:
                best, best_key = h, key
    if best is None:
        return None
    mine = dead_answer(slice_, best)
    mine["answer"] += (
        f"; {lead.props['key']} ({text_of(lead.props).rstrip('.')}) has no valid time recorded "
        "and does not say it as the question asks"
    )
    return mine


def _dead_hypothesis(
    hits: list[BeliefHit], slice_: Slice, inquiry: str, words: QuestionWords, unheld: frozenset[str]
) -> Optional[dict]:
    """The dead hypothesis of ``inquiry`` found for the question that holds most of the question's
    words its leader does not (then the nearest): ``{"key", "text", "state", "holds"}``, or None."""
    best, best_key = None, None
    for h in hits:
        if h.kind != "hypothesis" or inquiry_of(h.props) != inquiry or slice_.state(h.props) == ALIVE:
            continue
        holds = covered(words, text_of(h.props)) & unheld
        if holds and (best_key is None or (-len(holds), _nearness(h)) < best_key):
            best, best_key = (h, holds), (-len(holds), _nearness(h))
    if best is None:
        return None
    hit, holds = best
    state = slice_.said_state(hit.props)
    return {"key": hit.props["key"], "text": text_of(hit.props), "state": state, "holds": sorted(holds)}


def dead_answer(slice_: Slice, dead: BeliefHit) -> dict:
    """No alive belief answers: the dead fact that would have, and its state."""
    state = _state_said(slice_, dead.props)
    return {
        "answer": f"no alive belief answers it{f' {validity.said(slice_.as_of)}' if slice_.as_of else ''}: "
        f"{dead.props['key']} ({text_of(dead.props).rstrip('.')}) would, but it is {state}",
        "nodes": [],
        "sources": [],
        "context": [],
        "kind": None,
        "untimed": [],
        "dead_match": {"key": dead.props["key"], "text": text_of(dead.props), "state": state},
    }


def _state_said(slice_: Slice, props: dict) -> str:
    """A dead belief's state as the answer says it: "refuted", or at a date outside its valid
    time, "not valid on DATE (valid FROM to TO)"."""
    node, day = slice_.node(props), slice_.as_of
    if day is not None and node is not None and (node.valid_from or node.valid_to):
        if validity.outside((node.valid_from, node.valid_to), day):
            return f"not valid {validity.said(day)} (valid {node.valid_from or '...'} to {node.valid_to or '...'})"
    return str(slice_.state(props))


def _name_words(words: QuestionWords) -> frozenset[str]:
    """The question's content words that are words of the entities it names."""
    return frozenset(w for name in words.names for w in name if w in words)


async def answer_replacing(
    stores,
    slice_: Slice,
    dead: BeliefHit,
    words: QuestionWords,
    pinned: Optional[str] = None,
    told: bool = True,
) -> Optional[dict]:
    """The question is about a dead fact: its alive replacement answers, saying what it replaces
    (``replaces``); with none, None. Not ``told``: the dead fact only shares the question's
    entity, its replacement answers as an alive fact, saying nothing of the dead one."""
    found = await replacement(stores, slice_, dead.props["key"], dead.props, pinned)
    node = slice_.node(dead.props)
    if (
        told
        and (words.ever or words.when)
        # read now (or again as of today): a question naming a date is answered for that date
        and slice_.as_of in (None, today())
        and slice_.state(dead.props) == SUPERSEDED
        and node is not None
        and node.valid_to
    ):
        # asked whether it ever held, or when: it did, over its valid time (and every other
        # period its value held, asked when), not what took its place
        mine = await answer_from_facts(stores, slice_, dead, [])
        periods = await periods_of(stores, slice_, dead.props) if words.when else [(node, dead.props)]
        # superseded by a revision, or a period that simply ended (a fact loaded with its end:
        # alive in the stored states, nothing took its place)
        superseded = (
            state_of(dead.props) == SUPERSEDED or dead.props["key"] in revision_marks(stores.journal).replaced
        )
        last = periods[-1][1]["key"] == dead.props["key"]
        mine["answer"] = (
            f"{text_of(dead.props).rstrip('.')}: it held, {'; '.join(_interval_said(n) for n, _ in periods)}"
            + (
                (" (superseded since)." if superseded else f" (its period ended {node.valid_to}).")
                if last
                else "."
            )
            + (f" Now: {text_of(found)}" if found is not None else "")
        )
        mine["nodes"] = mine["nodes"] + [p["key"] for _, p in periods if p["key"] not in mine["nodes"]]
        if found is not None and found["key"] not in mine["nodes"]:
            mine["nodes"] = mine["nodes"] + [found["key"]]
        mine["unheld"] = sorted(set(words) - held_by(words, dead.props) - _timed_held(words, dead.props))
        mine["held_then"] = {
            "key": dead.props["key"],
            "valid_from": node.valid_from,
            "valid_to": node.valid_to,
            "superseded": superseded,
        }
        return mine
    if found is None:
        return None
    kind = KIND_BY_TYPE.get(found.get("type", ""))
    lead = BeliefHit(node_id=found["id"], kind=kind.value if kind else "evidence", props=found)
    mine = await answer_from_facts(stores, slice_, lead, [])
    mine["unheld"] = sorted(
        set(words)
        - covered(words, said(found))
        - covered(words, said(dead.props))
        - _timed_held(words, found)
    )
    if not told:
        return mine
    mine["replaces"] = {
        "key": dead.props["key"],
        "text": text_of(dead.props),
        "state": _state_said(slice_, dead.props),
    }
    held = (  # its valid time, unless its state already says it
        f" ({_interval_said(node)})"
        if node is not None and node.valid_to and "valid" not in mine["replaces"]["state"]
        else ""
    )
    mine["answer"] += (
        f" It replaces {dead.props['key']} ({text_of(dead.props).rstrip('.')}), {mine['replaces']['state']}{held}."
    )
    # replaced in turn: what took its place first (at a date outside its valid time, the value
    # valid then answers, which took no one's place: what later replaced it is no step to it)
    in_its_time = (
        slice_.as_of is None
        or node is None
        or not validity.outside((node.valid_from, node.valid_to), slice_.as_of)
    )
    first = revision_marks(stores.journal).replaced.get(dead.props["key"]) if in_its_time else None
    if first is not None and first != found["key"]:
        between = (await stores.store.find_keys([first])).get(first)
        if between is not None:
            mine["replaces"]["by"] = first
            state = _state_said(slice_, between)
            mine["answer"] += f" {first} ({text_of(between).rstrip('.')}) took its place first, {state}"
            # its valid time, unless its state already says it
            timed = between.get("valid_to") and "valid" not in state
            mine["answer"] += f" ({_interval_said(to_node(between))})." if timed else "."
    return mine


CHAIN_STARTS = 8  # the alive facts holding most of a question's words that a chain of hops may start from
NEAR_STARTS = 4  # and the nearest in meaning, and the best ranked by the hybrid search
CHAIN_VISITS = 256  # hops added to chains at most for one question
CHAIN_CHECKED = 3  # the best chains whose joined text is embedded to test its relevance


def said(props: dict) -> str:
    """What a fact says, for the question's words it holds: its text and its triple ("Alice
    moved to Berlin." under "lives in" holds "live"; "I just moved to Munich." stored as
    user|lives in|Munich holds "user")."""
    triple = " ".join(props.get(k) or "" for k in ("subject", "predicate", "object"))
    return f"{text_of(props)} {triple}".strip()


def relation_said(props: dict) -> str:
    """What a fact says of the relation between its subject and its object: its text and
    predicate without the words naming the two ("Maria Lopez is married to Jorge Silva."
    under spouse: "is married to spouse")."""
    names = set(query_words(f"{props.get('subject') or ''} {props.get('object') or ''}"))
    return " ".join(
        w for w in query_words(f"{text_of(props)} {props.get('predicate') or ''}") if w not in names
    )


async def hop_chain(
    store,
    slice_: "Slice",
    question: str,
    words: QuestionWords,
    starts: list[BeliefHit],
    best_single: int,
    floor: float,
    pinned,
) -> Optional[list[dict]]:
    """A question no single fact holds enough of ("the official language of the country of
    citizenship of the manager of Hey Jude's performer"), answered through stored triples.

    From each of ``starts`` (alive facts with an object, most relevant first, whose relation the
    question asks about; each read from the entity the question names: from its subject to its
    object, or from its object back to its subject) every chain is followed where each next hop
    is an alive fact whose subject is the last hop's object and which holds one of the
    question's content words that the chain does not hold yet (in its claim or its triple:
    :func:`held_by`: a name the question gives only by a hop about that entity, so "Nigel
    Pearson" holds nothing of "Nigel Martyn"); a chain ends where no hop adds one. The chain
    holding the most of the question's words wins (then the fewer hops, then the one whose
    predicates hold more of them, then the more relevant start), only when it holds more of
    them than the best single fact (``best_single`` words) and is relevant: its hops' claims
    read together lie within the floor of the question, or hold every content word, or it
    starts at a fact about an entity the question names (a long chain read as one text lies
    farther from the question than any of its hops); a question naming entities is answered
    only through a chain with a hop about one of them. Its last hop's object is the answer.
    None: no chain does better than one fact. One store lookup per hop level."""
    if not words or not starts or best_single >= len(words):
        return None
    # each growing chain: (its rank's fixed part: the place of its start, 1 when the start is read
    # backwards; its hops; the question's words it holds; the subject its next hop must have)
    frontier = []
    for order, h in enumerate(starts):
        if not covered(words, relation_said(h.props)):
            continue  # a relation the question does not ask about ("married to" for Jorge's employer)
        held = held_by(words, h.props)
        names_subject = bool(covered(words, h.props.get("subject") or ""))
        names_object = bool(covered(words, h.props.get("object") or ""))
        # read from the entity the question names: from its subject to its object ("Hey Jude's
        # performer" on to the performer's manager), unless it names the object only
        if names_subject or not names_object:
            frontier.append(((order, 0), [h.props], held, normalise_term(h.props.get("object") or "")))
        # the start read from its object back to its subject ("Bob is the CEO of Acme." for the
        # CEO of Acme), then on from the subject's other facts: only when the question names the
        # object (else the next hop is a sibling of the start, not a step on from it)
        if names_object:
            frontier.append(((order, 1), [h.props], held, normalise_term(h.props.get("subject") or "")))
    ended: list[tuple[tuple, list[dict]]] = []
    visits = 0
    for _ in range(MAX_HOPS):
        ended += [((-len(held), len(chain)) + fixed, chain) for fixed, chain, held, at in frontier if not at]
        frontier = [f for f in frontier if f[3]]
        if not frontier:
            break
        subjects = {at for _, _, _, at in frontier}
        found = [
            p
            for p in await store.nodes_by_subjects(subjects)
            if normalise_term(p.get("subject") or "") in subjects
            and (pinned is None or inquiry_of(p) == pinned)
        ]
        if slice_.as_of is not None:
            await slice_.load(inquiry_of(p) for p in found)
        by_subject: dict[str, list[tuple[dict, frozenset]]] = {}
        for p in sorted(found, key=lambda p: p.get("key") or ""):
            if slice_.state(p) == ALIVE:  # each fact's words read once, however many chains reach it
                by_subject.setdefault(normalise_term(p["subject"]), []).append((p, held_by(words, p)))
        grown = []
        for fixed, chain, held, at in frontier:
            used = {p.get("key") for p in chain}
            options = [
                (p, new)
                for p, holds in by_subject.get(at, [])
                if p.get("key") not in used and (new := holds - held)
            ]
            if not options or visits >= CHAIN_VISITS:
                ended.append(((-len(held), len(chain)) + fixed, chain))
            for p, new in sorted(options, key=lambda o: -len(o[1])):
                if visits < CHAIN_VISITS:
                    visits += 1
                    grown.append((fixed, chain + [p], held | new, normalise_term(p.get("object") or "")))
        frontier = grown
    ended += [((-len(held), len(chain)) + fixed, chain) for fixed, chain, held, _ in frontier]
    best = sorted(
        (
            (rank, chain)
            for rank, chain in ended
            if len(chain) > 1
            and -rank[0] > best_single
            # a question naming entities is answered through one of them, never through another
            # entity's facts ("Bertil Moss" for "Bertil Askew"), as a single fact is
            and (not words.names or any(names_held(words, p) for p in chain))
        ),
        # as many words in as many hops: the chain whose relations (the hops' predicates) name
        # more of them ("capital" under capital, not "located" in a continent's claim)
        key=lambda c: (c[0][:2], -len(relations_named(c[1], words)), c[0][2:]),
    )[:CHAIN_CHECKED]
    if not best:
        return None
    # each chain read as one text twice: its claims, and its triples ("Ken Ito switched allegiance
    # to the Yomiuri Giants." says as "Ken Ito supports team Yomiuri Giants." what a question asks)
    joined = [" ".join(text_of(p) for p in chain) for _, chain in best]
    triples = [" ".join(_triple_said(p) for p in chain) for _, chain in best]
    vectors = await store.embed([question] + joined + triples)
    claims_near, triples_near = vectors[1 : 1 + len(best)], vectors[1 + len(best) :]
    for (_, chain), by_claims, by_triples in zip(best, claims_near, triples_near):
        if (
            min(cosine_distance(vectors[0], by_claims), cosine_distance(vectors[0], by_triples)) <= floor
            or chain_held(chain, words) == frozenset(words)
            or names_held(words, chain[0])
        ):
            return chain
    return None


def relations_named(chain: list[dict], words: QuestionWords) -> frozenset[str]:
    """The question's content words the hops' predicates hold: the relations it names."""
    return frozenset().union(*(covered(words, p.get("predicate") or "") for p in chain))


def _triple_said(props: dict) -> str:
    """A fact as its triple says it ("Yomiuri Giants home city Chiba."), or its text without one."""
    if not (props.get("subject") and props.get("predicate") and props.get("object")):
        return text_of(props)
    return f"{props['subject']} {props['predicate']} {props['object']}."


def _quoted(words: list[str]) -> str:
    return ", ".join(repr(w) for w in words)


def chain_held(chain: list[dict], words: QuestionWords) -> frozenset[str]:
    """The question's content words some hop of ``chain`` holds (:func:`held_by`: a name only
    by a hop about that entity)."""
    return frozenset().union(*(held_by(words, p) for p in chain))


async def answer_through(stores, slice_: "Slice", chain: list[dict], words: QuestionWords) -> dict:
    """The answer a chain of hops reaches: its last hop (with what it rests on, as
    :func:`answer_from_facts` gives it), then the hops that led there, and the question's
    content words no hop holds (``unheld``: a chain that stopped short, or a word the claims
    say otherwise)."""
    last = chain[-1]
    view, unread = await chain_view(stores, slice_, dict(last, id=node_id("evidence", last["key"])))
    tree = why_alive(view, last["key"], unread)
    unheld = sorted(set(words) - chain_held(chain, words) - _timed_held(words, last))
    keys = [p["key"] for p in chain]
    nodes = [keys[-1]] + keys[:-1]
    sources = list(dict.fromkeys(p["source_id"] for p in chain if p.get("source_id")))
    in_period = validity.period(slice_.as_of or "") is not None
    timed = lambda p: (  # noqa: E731  a hop's valid time, when asked about a year or a month
        f" [{_interval_said(node)}]"
        if in_period and (node := slice_.node(p)) is not None and not validity.untimed(node)
        else ""
    )
    answer = (
        text_of(last)
        + _source(last)
        + timed(last)
        + " Reached through: "
        + " -> ".join(f"{p['key']}: {text_of(p).rstrip('.')}{timed(p)}" for p in chain[:-1])
        + "."
    )
    if unheld:
        answer += f" No hop holds the question's {_quoted(unheld)}."
    untimed = []
    context = [text_of(p) for p in chain]
    if slice_.as_of is not None:
        untimed = [p["key"] for p in chain if (n := slice_.node(p)) is not None and validity.untimed(n)]
        if untimed:
            answer += f" [{', '.join(untimed)}: no valid time recorded, taken as holding {validity.said(slice_.as_of)}]"
        others = await chains_in_period(stores, slice_, chain)
        if others:
            found = await stores.store.find_keys([r["key"] for other in others for r in other])
            hop = lambda r: (
                f"{r['key']}: {text_of(found.get(r['key']) or r).rstrip('.')}"
                + (  # noqa: E731
                    f" [{_interval_said(slice_.node(found[r['key']]))}]"
                    if r["key"] in found and not validity.untimed(slice_.node(found[r["key"]]))
                    else ""
                )
            )
            answer += f" {validity.said(slice_.as_of).capitalize()} also: " + "; ".join(
                " -> ".join(hop(r) for r in other) for other in others
            )
            nodes += [r["key"] for other in others for r in other if r["key"] not in nodes]
            context += [text_of(found.get(r["key"]) or r) for other in others for r in other]
    return {
        "answer": answer,
        "nodes": list(dict.fromkeys(nodes)),
        "sources": sources,
        "context": context,
        "kind": "evidence",
        "rests_on": tree or {"key": keys[-1]},
        "through": [
            {k: p.get(k) for k in ("key", "subject", "predicate", "object", "claim")} | {"state": ALIVE}
            for p in chain
        ],
        "unheld": unheld,
        "untimed": untimed,
        "more": [],
    }


async def chains_in_period(stores, slice_: Slice, chain: list[dict]) -> list[list[dict]]:
    """Asked about a year or a month, the chain's other paths through the same predicates that
    held at some time of it (Alan Reed was CEO until May 2016, Beth Cole from then: each one's
    birthplace), each as its hops' rows (:func:`follow`)."""
    if validity.period(slice_.as_of or "") is None or not chain[0].get("subject"):
        return []
    predicates = [p.get("predicate") or "" for p in chain]
    if not all(predicates):
        return []
    walked = await follow(stores.store, slice_, chain[0]["subject"], predicates, inquiry_of(chain[0]))
    if not walked["complete"]:
        return []
    paths: list[list[dict]] = [[]]
    for hop in walked["hops"]:
        paths = [
            path + [row]
            for path in paths
            for row in hop["values"]
            if not path or normalise_term(row["subject"] or "") == normalise_term(path[-1]["object"] or "")
        ][:MAX_FAN_OUT]
    own = [p["key"] for p in chain]
    return [path for path in paths if len(path) == len(chain) and [r["key"] for r in path] != own]


def unsupported_of(view: BeliefView) -> list[dict]:
    return [
        {"key": k, "text": n.text}
        for k, n in sorted(view.nodes.items())
        if n.kind == "hypothesis" and n.alive and not (view.alive_supporters(k) and view.support(k) > 0)
    ]


def _nearness(hit: BeliefHit) -> tuple:
    return (hit.distance if hit.distance is not None else 2.0, hit.rank)


def match_row(hit: BeliefHit) -> RecallMatch:
    return {
        # the stored node's properties, as the graph store returned them (untyped): a belief has its key
        "key": cast(str, hit.props.get("key")),
        "type": hit.kind,
        "text": text_of(hit.props),
        "investigation": inquiry_of(hit.props),
        "distance": None if hit.distance is None else round(hit.distance, 4),
        "rank": hit.rank,
    }


BASELINE_KINDS = ("evidence", "conclusion")


async def baseline_side(stores, text: str, searched=None) -> dict:
    """Plain RAG: the ``BASELINE_K`` nearest rows of the collections of facts and findings by
    cosine distance, whatever their truth state (``searched``: the same vector search already
    made for FALSIFY's side, :func:`memory_core.judging.retrieval.search_beliefs`)."""
    if searched is not None:
        hits = [r for r in searched.rows if r[2] in BASELINE_KINDS]
    else:
        hits = []
        for kind in BASELINE_KINDS:
            for hit in await stores.store.search(collection(kind), text, BASELINE_K):
                hits.append((float(hit.score), str(hit.id), kind, (hit.payload or {}).get("text", "")))
    hits.sort()
    hits = hits[:BASELINE_K]
    found = await stores.store.raw_nodes(h[1] for h in hits)
    nodes, sources, states, context, props = [], [], {}, [], {}
    for _, i, kind, text_ in hits:
        found_props = found.get(i)
        key = found_props["key"] if found_props else f"?{i[:8]}"
        nodes.append(key)
        states[key] = state_of(found_props) if found_props else "missing"
        if found_props:
            props[key] = found_props
        context.append(text_)
        if found_props and found_props.get("source_id"):
            sources.append(found_props["source_id"])
    if not hits:
        return {
            "answer": "no stored facts match",
            "nodes": [],
            "sources": [],
            "context": [],
            "states": {},
            "props": {},
        }
    lead = found.get(hits[0][1]) or {}
    answer = hits[0][3] + _source(lead)
    return {
        "answer": answer,
        "nodes": nodes,
        "sources": sources,
        "context": context,
        "states": states,
        "distances": [round(h[0], 4) for h in hits],
        "props": props,
    }


async def llm_answer(question: str, context: list[str], settings) -> str:
    result = await structured_output(
        answer_input(question, context),
        ANSWER_PROMPT,
        Answer,
        "the LLM answer",
        "answer",
        timeout=settings.judge_timeout,
        settings=settings,
    )
    return result.answer


async def _check(stores, question, as_of, inquiry, path) -> tuple:
    """Every argument validated before anything else is read (an InputError, exit 2)."""
    if as_of is not None:
        as_of = validity.check_when(as_of, "--as-of")
    if inquiry is not None:
        if not isinstance(inquiry, str) or not inquiry.strip():
            raise InputError(
                f"--inquiry must be the key of a stored question, got {inquiry!r}", field="inquiry"
            )
        inquiry = about("inquiry", check_text, inquiry, "inquiry", "key", 200)
    if path is not None:
        path = parse_path(path)
        if question is not None and isinstance(question, str) and question.strip():
            raise InputError("give a question or a path, not both", field="path")
    if question is None or (isinstance(question, str) and not question.strip()):
        question = ""  # no question: the inquiry's own (pinned, or the root's only one)
    else:  # bounded and free of control characters, as a claim is
        question = about("question", check_text, question, "question", "text")
    return question, as_of, inquiry, path


def about(field: str, check, *args):
    """``check(*args)``, its InputError carrying ``field`` (the argument it is about), as every
    shell reports it: the viewer's 400 body names it, as it does a revision's fields."""
    try:
        return check(*args)
    except InputError as error:
        if error.field is None:
            error.field = field
        raise


async def _stored_by_then(stores, past, inquiry: str) -> None:
    """An inquiry asked at a past epoch that stores hold now but did not then: refused as a
    question not loaded yet at that epoch, not as one the data root has no such question."""
    then = await past.store.question_keys()
    if any(normalise_key(k) == normalise_key(inquiry) for k in then):
        return
    if any(normalise_key(k) == normalise_key(inquiry) for k in await stores.store.question_keys()):
        raise InputError(
            f"--inquiry {inquiry!r}: that question was not loaded yet at epoch {past.journal.epoch()} "
            f"(stored then: {', '.join(then) or 'none'})",
            field="inquiry",
        )


async def _pinned(stores, inquiry: Optional[str]) -> tuple[Optional[str], list[str]]:
    keys = await stores.store.question_keys()
    if inquiry is None:
        return None, keys
    found = [k for k in keys if normalise_key(k) == normalise_key(inquiry)]
    if not found:
        stored = ", ".join(keys) or "none"
        raise InputError(
            f"--inquiry {inquiry!r}: no such question in this data root (stored: {stored})", field="inquiry"
        )
    return found[0], keys


async def stored_questions(stores, keys: list[str]) -> list[dict]:
    found = await stores.store.raw_nodes(node_id("question", k) for k in keys)
    return sorted(
        ({"key": p["key"], "question": p.get("question", "")} for p in found.values() if "key" in p),
        key=lambda r: r["key"],
    )


async def recall(
    stores,
    question,
    epoch=None,
    as_of: Optional[str] = None,
    inquiry: Optional[str] = None,
    path: Optional[str] = None,
) -> RecallResult:
    """``epoch``: answer from the beliefs as they stood after that epoch (labels as stored
    then; :mod:`memory_core.ops.history`), with ``"epoch": N`` in the result. ``as_of``: an
    ISO date; FALSIFY answers from the beliefs valid then (:func:`memory_core.core.validity.as_of`),
    with ``"as_of": DATE`` in the result (both together: valid at DATE as believed after N).
    ``inquiry``: the key of the question whose beliefs alone answer. ``path``:
    ``"SUBJECT|PREDICATE|PREDICATE..."`` followed hop by hop (:func:`recall_path`).

    A question that names the time it asks about ("Where did Maria live in 2018?", "... as of
    2018-03-01") is answered as of that time when no ``as_of`` is given: the words naming it
    are left out of the question and given as ``"as_of_from_question"``."""
    question, as_of, inquiry, path = await _check(stores, question, as_of, inquiry, path)
    order = validity.order_in_question(question) if as_of is None and path is None and epoch is None else None
    if order is not None:
        ordered = await answer_ordered(stores, question, order, inquiry)
        if ordered is not None:
            return ordered
    if as_of is None and path is None and epoch is None:
        first = await answer_first(stores, question, inquiry)
        if first is not None:
            return first
    read = validity.when_in_question(question, today()) if as_of is None and path is None else None
    if read is not None:
        words, when = read
        shorter = _left_out(question, words)
        if re.search(r"\w", shorter):
            result = await _answer(stores, shorter, epoch, when, inquiry, path)
            return {**result, "question": question, "as_of_from_question": words}
    result = await _answer(stores, question, epoch, as_of, inquiry, path)
    if as_of is None and epoch is None:
        # a question asking when is answered from the timeline of its value (its valid time,
        # whether the period ended or not), not from what holds today
        timeline = bool(question) and content_words(question).when
        result = await answered_today(stores, question, result, inquiry, path, timeline)
    return result


async def answered_today(
    stores, question: str, result: RecallResult, inquiry, path, timeline: bool = False
) -> RecallResult:
    """An answer read from the stored states, read again from the beliefs valid today when it
    needs to be. The stored states are the revisions' (a value dated in the future ends today's
    at once, a value whose valid time ended stays alive): an answer resting on a fact not valid
    today is answered again from the beliefs valid today, unless the question asks for the
    ``timeline`` (when): the fact's valid time is its answer, whether it holds today or not."""
    day = today()
    outside = None if timeline else await not_valid_on(stores, result, day)
    if outside is not None:
        return {**await _answer(stores, question, None, day, inquiry, path), "as_of_today": outside}
    if (result["falsify"].get("dead_match") or {}).get("state") == SUPERSEDED:
        # no alive belief answers from the stored states, the fact the question is about being
        # superseded: ended in time (or resting on a fact ended), perhaps at a date still to
        # come, so it may hold today; what is valid today answers when anything does
        now = await _answer(stores, question, None, day, inquiry, path)
        if now["falsify"]["nodes"]:
            why = await held_today(stores, result, now, day)
            return {**now, "as_of_today": why}
    return result


# "the first mayor", "her earliest employer", "the original owner": the first value of a timeline
_FIRST = re.compile(r"\b(?:first|earliest|original|initial)\b")


async def answer_first(stores, question: str, inquiry) -> Optional[RecallResult]:
    """A question about the first value of a subject and predicate ("Who was the first mayor of
    Brisketon?"): the question without that word finds the value that holds today, and it is
    answered as of the earliest start among the values of its slot that held (a refuted one was
    never true). None when the question asks no such thing, or its slot has no earlier timed
    value than today's: it is then read as it is."""
    found = _FIRST.search(_QUOTED.sub(lambda m: " " * len(m.group(0)), question))
    if found is None:
        return None
    shorter = _left_out(question, found.group(0))
    if not re.search(r"\w", shorter):
        return None
    today_slot = await _today_and_slot(stores, shorter, inquiry)
    if today_slot is None:
        return None
    _, props, slot = today_slot
    lead = props["key"]
    held = [p for p in slot if p.get("valid_from") and state_of(p) != REFUTED]
    first = min(held, key=lambda p: validity.moment(p["valid_from"]), default=None)
    if first is None or first["key"] == lead or not props.get("valid_from"):
        return None
    result = await _answer(stores, shorter, None, first["valid_from"], inquiry, None)
    return {**result, "question": question, "as_of_from_question": found.group(0)}


async def _today_and_slot(stores, question: str, inquiry) -> Optional[tuple[RecallResult, dict, list[dict]]]:
    """The answer to ``question`` today (a value whose valid time ended is no value of today,
    however the stored states read), the stored fact of its value, and every value of that
    fact's subject and predicate, it first; None when no fact with a subject and predicate answers."""
    now = await answered_today(
        stores, question, await _answer(stores, question, None, None, inquiry, None), inquiry, None
    )
    lead = _value_key(now)
    props = (await stores.store.find_keys([lead])).get(lead) if lead is not None else None
    if props is None or sp_key(props.get("subject"), props.get("predicate")) is None:
        return None
    return now, props, [props] + await values_of(stores, Slice(stores.store, None), props)


def _left_out(question: str, words: str) -> str:
    """The question without ``words`` (the ones naming its time or order)."""
    return re.sub(r"\s+([?.!,;:])", r"\1", " ".join(question.replace(words, " ").split()))


def _value_key(result: RecallResult) -> Optional[str]:
    """The fact an answer reads its value from: a chain's last hop, or the fact that leads."""
    mine = result["falsify"]
    if mine.get("through"):
        return mine["through"][-1]["key"]
    return mine["nodes"][0] if mine["nodes"] and mine.get("kind") in ("evidence", "conclusion") else None


async def answer_ordered(stores, question: str, order: validity.Ordered, inquiry) -> Optional[RecallResult]:
    """A question about the value before or after another one. Before (or after) a time: the
    question without those words, as of the day before it (the first moment after it). Before
    or after a value ("Who was CEO before Beth Cole?"), or before the one that holds now ("the
    previous CEO"): the value of the same subject and predicate that preceded (followed) it. In
    valid time, as of the day before the anchor's ``valid_from`` (its ``valid_to``); without
    valid time, as believed just before the revision that recorded the anchor (at the revision
    that replaced it). None when the anchor names no value of the answer's subject and predicate
    ("Who looks after the garden?"): the question is then read as it is."""
    shorter = _left_out(question, order.words)
    if not re.search(r"\w", shorter):
        return None
    if order.when is not None:
        result = await _answer(stores, shorter, None, order.when, inquiry, None)
        return {**result, "question": question, "as_of_from_question": order.words}
    # the value that holds now, as a question without the order is answered (a value whose valid
    # time ended is no value of today, however the stored states read)
    today_slot = await _today_and_slot(stores, shorter, inquiry)
    if today_slot is None:
        return None
    now, props, slot = today_slot
    anchor: Optional[dict] = props
    if order.anchor is not None:
        named = content_words(order.anchor)
        anchor = next(
            (
                p
                for p in slot
                if (value := content_words(p.get("object") or "")) and covered(value, order.anchor) == value
            ),
            None,
        )
        anchor = anchor or next((p for p in slot if named and covered(named, said(p)) == named), None)
        if anchor is None:
            return None
    assert anchor is not None
    marks_ = revision_marks(stores.journal)
    key, start, end = anchor["key"], anchor.get("valid_from"), anchor.get("valid_to")
    read: dict = {}
    began = lambda p, edge: p.get("valid_from") and validity.moment(p["valid_from"]) < edge  # noqa: E731
    held = [p for p in slot if p["key"] != key and state_of(p) in (ALIVE, SUPERSEDED)]  # never refuted
    if order.before and start:
        if any(began(p, validity.moment(start)) for p in slot) or key in marks_.replaced.values():
            read["as_of"] = validity.just_before(start)
            # a gap between the two: the value before is the last one that ended before it began
            # (Pellet Mills until 2014, Gorse Farms from 2016: Pellet Mills, not nothing in 2015)
            ended = [
                p["valid_to"]
                for p in held
                if p.get("valid_to") and validity.moment(p["valid_to"]) < validity.moment(start)
            ]
            if (
                ended
                and read["as_of"]
                and not any(
                    validity.holds_at((p.get("valid_from"), p.get("valid_to")), read["as_of"]) for p in held
                )
            ):
                read["as_of"] = validity.just_before(max(ended, key=validity.moment))
    elif order.before and any(w == key for w in marks_.replaced.values()) and marks_.recorded.get(key):
        read["epoch"] = marks_.recorded[key] - 1
    elif not order.before and end:
        if any(p.get("valid_from") and not began(p, validity.moment(end)) for p in slot):
            read["as_of"] = end
            # a gap after it: the value after is the first one that began after it ended
            later = [
                p["valid_from"]
                for p in held
                if p.get("valid_from") and validity.moment(p["valid_from"]) > validity.moment(end)
            ]
            if later and not any(
                validity.holds_at((p.get("valid_from"), p.get("valid_to")), end) for p in held
            ):
                read["as_of"] = min(later, key=validity.moment)
    elif not order.before and not start and marks_.replaced.get(key) in marks_.recorded:
        read["epoch"] = marks_.recorded[marks_.replaced[key]]
    text = text_of(anchor).rstrip(".")
    order_said = {
        "words": order.words,
        "before": order.before,
        "anchor": {"key": key, "text": text_of(anchor), "state": state_of(anchor)},
        **read,
    }
    if not read.get("as_of") and read.get("epoch") is None:
        # nothing stored came before (after) it: the first value stored, or one that still holds
        why = (
            "it is the first value of its subject and predicate stored"
            if order.before
            else f"it ended on {end} and no value stored follows it"
            if end
            else (
                "it still holds"
                if state_of(anchor) == ALIVE
                else f"it is {state_of(anchor)} and nothing took its place"
            )
        )
        _, verdict = marks(
            stores.journal,
            {"nodes": [], "sources": []},
            now["baseline"],
            now["baseline_states"],
            now["mode"],
            None,
        )
        falsify: RecallSide = {
            **now["falsify"],
            "answer": f"nothing stored came {'before' if order.before else 'after'} {key} ({text}): {why}",
            "nodes": [],
            "sources": [],
            "kind": None,
            "rests_on": None,
        }
        return {
            **now,
            "question": question,
            "falsify": falsify,
            "verdict": verdict,
            "order_from_question": order_said,
        }
    result = await _answer(stores, shorter, read.get("epoch"), read.get("as_of"), inquiry, None)
    mine = result["falsify"]
    if (mine.get("replaces") or {}).get("key") == key:  # the anchor, not valid then: no news
        sentence = f" It replaces {key} ({text}), {mine['replaces']['state']}."
        mine["answer"] = mine["answer"].replace(sentence, "")
        del mine["replaces"]
    if mine["nodes"]:
        fact = mine["nodes"][0]
        found = (await stores.store.find_keys([fact])).get(fact) or {}
        interval = f" [{_interval_said(to_node(found))}]"
        if (found.get("valid_from") or found.get("valid_to")) and interval not in mine["answer"]:
            mine["answer"] += interval
        when = (
            f", valid from {start}"
            if order.before and start
            else (f", valid to {end}" if end and not order.before else "")
        )
        note = f"{'Before' if order.before else 'After'} {key} ({text}{when}): "
        if "epoch" in read:
            state = state_of(found)
            how = f"before {key} was recorded" if order.before else f"when {marks_.replaced[key]} replaced it"
            note += f"as believed at epoch {read['epoch']}, {how}: "
            mine["answer"] = note + mine["answer"] + (f" [{fact} is now {state}]" if state != ALIVE else "")
        else:
            mine["answer"] = note + mine["answer"]
    return {**result, "question": question, "order_from_question": order_said}


async def held_today(stores, stored: RecallResult, now: RecallResult, day: str) -> str:
    """Why a question whose fact is superseded in the stored states is answered as of ``day``:
    the fact, and the facts of the answer whose valid time ends after ``day`` (the future value
    that ended them at once)."""
    dead = stored["falsify"].get("dead_match") or {}
    keys = list(
        dict.fromkeys(list(now["falsify"]["nodes"]) + [h["key"] for h in now["falsify"].get("through") or []])
    )
    found = await stores.store.find_keys(keys)
    ending = [
        f"{key} valid {props.get('valid_from') or '...'} to {props['valid_to']}"
        for key in keys
        if (props := found.get(key) or {}).get("valid_to")
        and not validity.outside((props.get("valid_from"), props["valid_to"]), day)
    ]
    return (
        f"{dead.get('key')} ({str(dead.get('text') or '').rstrip('.')}) is superseded in the stored states"
        + (f", resting on {', '.join(ending)}" if ending else "")
        + f": answered from the beliefs valid on {day}"
    )


async def not_valid_on(stores, result: RecallResult, day: str) -> Optional[str]:
    """The first fact an answer uses that is not valid on ``day`` (its valid time, in words), or None."""
    keys = list(result["falsify"]["nodes"]) + [h["key"] for h in result["falsify"].get("through") or []]
    if not keys:
        return None
    found = await stores.store.find_keys(list(dict.fromkeys(keys)))
    for key in keys:
        props = found.get(key) or {}
        start, end = props.get("valid_from"), props.get("valid_to")
        if (start or end) and validity.outside((start, end), day):
            return (
                f"{key} ({text_of(props).rstrip('.')}), the answer from the stored states, is valid "
                f"{start or '...'} to {end or '...'}, not on {day}: answered from the beliefs valid on {day}"
            )
    return None


async def _answer(stores, question: str, epoch, as_of: Optional[str], inquiry, path) -> RecallResult:
    """:func:`recall` on checked arguments."""
    if epoch is not None:
        from memory_core.ops.history import stores_at

        past = await stores_at(stores, epoch)  # a bad epoch fails before the question is read
        if inquiry is not None:
            await _stored_by_then(stores, past, inquiry)
        return {
            **await recall(past, question, as_of=as_of, inquiry=inquiry, path=path and path["text"]),
            "epoch": past.journal.epoch(),
        }
    pinned, keys = await _pinned(stores, inquiry)
    if path is not None:
        return await recall_path(stores, path, as_of, pinned)
    slice_ = Slice(stores.store, as_of)
    floor = recall_floor(stores.settings)
    relevance: RecallRelevance = {"floor": floor, "best_distance": None, "matched": False}
    ranked: list[BeliefHit] = []
    own: Optional[str] = None  # the inquiry whose own question was asked
    if not question:
        own = pinned or (keys[0] if len(keys) == 1 else None)
        if own is not None:
            found = await stores.store.raw_nodes([node_id("question", own)])
            first: dict = next(iter(found.values()), {})
            question = str(first.get("question", ""))
    mine: Optional[dict] = None
    unsupported: list[dict] = []
    disputes: dict[str, list] = {"disputed": [], "disputes": []}
    chosen: Optional[str] = own
    matches: list[BeliefHit] = []
    words: QuestionWords = QuestionWords()
    through: Optional[list[dict]] = None  # the chain of hops that answers, when one does
    hits: list[BeliefHit] = []
    searched = None
    in_scope = lambda h: True  # noqa: E731
    if question:
        # the search goes as deep as it takes to hold as many beliefs the answer can use (of the
        # pinned inquiry, holding in the slice) as a search of those alone would: beliefs of other
        # inquiries, dead ones, or other dates' values of a long timeline can lie nearer
        searched = await search_beliefs_within(
            stores.store, question, lambda props: may_answer(props, pinned, as_of), RECALL_POOL
        )
        hits = list(searched.hits.values())
        if as_of is not None:
            await slice_.load(inquiry_of(h.props) for h in hits)
        in_scope = (lambda h: inquiry_of(h.props) == pinned) if pinned else in_scope
        ranked = fuse_beliefs(searched, lambda h: in_scope(h) and slice_.state(h.props) == ALIVE)
        if own is not None:
            ranked = [h for h in ranked if inquiry_of(h.props) == own]
        words = content_words(question)
        matches = [h for h in ranked if own is not None or relevant(h, floor, words)]
        distances = [h.distance for h in ranked if h.distance is not None]
        relevance["best_distance"] = round(min(distances), 4) if distances else None
        if ranked:
            relevance["nearest"] = min(ranked, key=_nearness).props["key"]
        relevance["matched"] = bool(matches)
        # the belief that answers holds most of the question's words; among those, the nearest
        # (then the one about more of the entities it names)
        # (then the one that says it in the question's polarity: "Which language does Odile not
        # speak?" is "Odile does not speak German.", not "Odile speaks French.", holding as much)
        order = lambda h: (  # noqa: E731
            -len(held_by(words, h.props)),
            -names_held(words, h.props),
            polarity_differs(words, h.props),
            _nearness(h),
        )
        matches.sort(key=order)
        matches = await by_triples_on_a_tie(stores.store, question, words, matches)
        facts = [h for h in matches if h.kind in ("evidence", "conclusion")]
        nearest = min(matches, key=_nearness) if matches else None
        own_question = (
            nearest is not None
            and nearest.kind in ("question", "hypothesis")
            and (nearest.distance or 0.0) <= OWN_SHARE * floor
        )
        if own is None:
            # a question no single fact holds: the stored triples' chain through it
            triples = [h for h in ranked if h.kind == "evidence" and h.props.get("object")]
            # the facts holding most of the question's words (often its last hop: "... is located in
            # the continent of ..."); the nearest in meaning and the best ranked (often its first
            # hop, about the entity it names: a rare word, or a name of no content word: "From Me
            # to You")
            starts = []
            for h in (
                sorted(triples, key=order)[:CHAIN_STARTS]
                + sorted(triples, key=_nearness)[:NEAR_STARTS]
                + triples[:NEAR_STARTS]
            ):
                if h not in starts:
                    starts.append(h)
            best_single = max(
                (len(held_by(words, h.props)) for h in ranked if h.kind in ("evidence", "conclusion")),
                default=0,
            )
            through = await hop_chain(
                stores.store, slice_, question, words, starts, best_single, floor, pinned
            )
            if own_question:
                # near an inquiry's question in form, but about something its question does not
                # name: a fact (or a chain of them) holding more of the question's words answers
                most = max((len(held_by(words, h.props)) for h in facts), default=0)
                if through is not None:
                    most = max(most, len(chain_held(through, words)))
                own_question = nearest is not None and most <= len(covered(words, text_of(nearest.props)))
        if through is not None and not own_question:
            chosen = inquiry_of(through[0])
            relevance["matched"] = True
        elif nearest is not None and own is None:
            if own_question or not facts:
                own = chosen = inquiry_of(nearest.props)  # its own question, or what its hypotheses are about
            else:
                chosen = inquiry_of(facts[0].props)
    else:
        relevance["matched"] = own is not None
    if chosen is not None:
        if own is not None:  # the inquiry's own question: its best-supported hypothesis leads
            mine = await answer_from_hypotheses(stores, slice_, own)
            if mine is not None and question:
                # what of the question neither the inquiry's question nor the answer holds ("What is
                # Alice's salary?" near "Where does Alice live and work?": 'salary')
                said_by = " ".join([mine["inquiry_question"]] + mine["context"])
                mine["unheld"] = sorted(set(words) - covered(words, said_by))
                if mine["unheld"]:
                    mine["answer"] += (
                        " The inquiry's question, the hypothesis and its evidence do not hold the question's "
                        f"{_quoted(mine['unheld'])}."
                    )
                    # a rival hypothesis holding what the leader does not is the one asked about
                    rival = max(
                        (
                            (len(holds), -i, key, text, support, sorted(holds))
                            for i, (key, text, by, support) in enumerate(mine["rivals"])
                            if (holds := covered(words, f"{text} {by}") & set(mine["unheld"]))
                        ),
                        default=None,
                    )
                    if rival is not None:
                        _, _, key, text, support, holding = rival
                        mine["rival"] = {
                            "key": key,
                            "text": text,
                            "support": round(support, 4),
                            "holds": holding,
                        }
                        mine["answer"] += (
                            f" {key} ({text.rstrip('.')}) holds {_quoted(holding)}, with support {support:.2f} "
                            f"against {mine['support']:.2f} for {mine['nodes'][0]}."
                        )
                    else:
                        # a hypothesis of the inquiry that died (its support refuted) holding what the
                        # leader does not is the one asked about: said with its state, never used
                        dead_rival = _dead_hypothesis(hits, slice_, own, words, frozenset(mine["unheld"]))
                        if dead_rival is not None:
                            mine["dead_rival"] = dead_rival
                            mine["answer"] += (
                                f" {dead_rival['key']} ({dead_rival['text'].rstrip('.')}) holds "
                                f"{_quoted(dead_rival['holds'])}, but it is {dead_rival['state']}."
                            )
        near = [h for h in matches if inquiry_of(h.props) == chosen]
        facts = [h for h in near if h.kind in ("evidence", "conclusion")]
        if mine is None and through is not None and inquiry_of(through[0]) == chosen:
            # a question about facts, or the inquiry's own whose hypotheses have no alive support
            mine = await answer_through(stores, slice_, through, words)
        elif mine is None and facts:
            nearest_fact = facts[0]
            mine_instead = own_value(words, nearest_fact.props, ranked) if question else None
            asked_about: Optional[str] = None  # "user's sister", when the question asks about her
            if question and mine_instead is None:
                mine_instead, asked_about = possessed_value(words, nearest_fact.props, ranked)
                if mine_instead is None and asked_about is None:
                    asked_about = kin_asked(question, words, nearest_fact.props)
            if mine_instead is not None:  # the named entity's own value answers, not another's
                facts = [mine_instead] + [h for h in facts if h is not mine_instead]
            mine = await answer_from_facts(stores, slice_, facts[0], facts[1 : 1 + LLM_EXTRA], words)
            if mine_instead is not None:
                mine["other_entity"] = {
                    "key": nearest_fact.props["key"],
                    "text": text_of(nearest_fact.props),
                    "about": _about(nearest_fact.props),
                }
            if question:  # what of the question the fact leaves unsaid (a part of a longer question)
                held = held_by(words, facts[0].props)
                if asked_about is not None:  # "Alice's brother": Alice is held, as his owner
                    held |= covered(words, facts[0].props.get("subject") or "")
                mine["unheld"] = sorted(set(words) - held - _timed_held(words, facts[0].props))
                # a dead fact holding more of the question is what it asks about: its alive
                # replacement answers, or none does
                dead = (
                    held_by_dead(hits, slice_, in_scope, words, held, facts[0].distance)
                    if mine["unheld"] and facts[0].distance is not None
                    else None
                )
                if dead is not None:
                    mine = await answer_replacing(stores, slice_, dead, words, pinned) or dead_answer(
                        slice_, dead
                    )
                elif asked_about is not None and mine_instead is None:
                    mine = other_entity_answer(words, facts[0].props, asked_about)
                elif words.names and not names_held(words, facts[0].props) and asked_about is None:
                    mine = other_entity_answer(words, facts[0].props)
                else:
                    sharing = same_value(facts[0].props, ranked, words)
                    if sharing:  # "Who lives in Oslo?": every alive subject found with that value
                        mine["answer"] += " Also: " + " ".join(text_of(p) for p in sharing)
                        mine["nodes"] += [p["key"] for p in sharing]
                        mine["context"] += [text_of(p) for p in sharing]
                if mine.get("unheld") and mine.get("nodes"):
                    mine["answer"] += f" The fact does not hold the question's {_quoted(mine['unheld'])}."
                if mine_instead is not None and mine.get("nodes") and "other_entity" in mine:
                    other = mine["other_entity"]
                    whose = nearest_fact.props["subject"]  # "user's mother": whose mother it is, said
                    mine["answer"] += f" {other['key']} ({other['text'].rstrip('.')}) is about {whose}."
                if (mine.get("nodes") or [None])[0] == facts[0].props["key"] and "replaces" not in mine:
                    # the fact leads in the other polarity than the question asks: it is no answer
                    instead = other_polarity_answer(words, question, facts[0].props) or not_then_answer(
                        hits, slice_, in_scope, words, question, facts[0]
                    )
                    # a fact in the question's polarity answers, though it holds less (or lies beyond
                    # the floor: "Ines never worked for the Harlan Group.")
                    alive_facts = sorted(
                        (
                            h
                            for h in hits
                            if h.kind in ("evidence", "conclusion")
                            and in_scope(h)
                            and slice_.state(h.props) == ALIVE
                            and h not in facts
                        ),
                        key=_nearness,
                    )
                    said_so = (
                        said_as_asked(words, facts + alive_facts)
                        if instead is not None and not slice_.as_of
                        else None
                    )
                    if said_so is not None:
                        instead = await answer_from_facts(stores, slice_, said_so, [], words)
                        instead["unheld"] = sorted(
                            set(words)
                            - covered(words, said(said_so.props))
                            - _timed_held(words, said_so.props)
                        )
                        if instead["unheld"]:
                            instead["answer"] += (
                                f" The fact does not hold the question's {_quoted(instead['unheld'])}."
                            )
                    mine = instead or mine
        near_keys = {h.props["key"] for h in near} | set(mine["nodes"] if mine else [])
        disputed_near = any(slice_.state(h.props) == DISPUTED and inquiry_of(h.props) == chosen for h in hits)
        if (
            own is not None
            or chosen in slice_.views
            or disputed_near
            or any(h.kind == "hypothesis" for h in near)
        ):
            view = await slice_.view(chosen)
            near_hypotheses = {k for k in near_keys if k in view.nodes and view.nodes[k].kind == "hypothesis"}
            if own is not None or near_hypotheses:  # support read across inquiries only when listed
                unsupported = [
                    u
                    for u in unsupported_of(await slice_.hypothesis_view(chosen))
                    if own is not None or u["key"] in near_keys
                ]
            disputes = disputes_of(view)
            if own is None:  # a question about some of its facts: the disputes among those relevant to it
                disputes = _near(
                    disputes,
                    near_keys
                    | {
                        h.props["key"]
                        for h in hits
                        if inquiry_of(h.props) == chosen and relevant(h, floor, words)
                    },
                )
    if mine is None and question and not unsupported:
        # no alive fact answers (no hypothesis to lead either): a dead one the question is about (it
        # holds all the question's words, or lies as near as a paraphrase: a distance within the
        # floor alone lets in unrelated text, "two basketball players talking" near "power forward
        # is associated with basketball"), and what took its place answers; with nothing alive in
        # its place, the answer names it and its state
        about = [
            h
            for h in hits
            if coverage(words, said(h.props)) == 1.0
            or (h.distance is not None and h.distance <= OWN_SHARE * floor)
        ]
        dead = held_by_dead(about, slice_, in_scope, words, frozenset())
        # a dead fact holding none of the question's words but the names it gives ("Who is Maia
        # Rowe married to?" near "Maia Rowe lives in Lisbon.") is about the entity, not about what
        # the question asks: what took its place is said as an alive fact that does not hold the
        # question's words, never as replacing a fact the question is not about
        told = dead is not None and (
            bool(held_by(words, dead.props) - _name_words(words)) or not (words - _name_words(words))
        )
        mine = await answer_replacing(stores, slice_, dead, words, pinned, told) if dead is not None else None
        if mine is not None and dead is not None:
            chosen = inquiry_of(dead.props)
            relevance["matched"] = True
            if mine["unheld"]:
                mine["answer"] += f" The fact does not hold the question's {_quoted(mine['unheld'])}."
        elif dead is not None and told:  # the question is about this fact, in its inquiry
            mine = dead_answer(slice_, dead)
            chosen = inquiry_of(dead.props) or chosen
            relevance["matched"] = True
    named = (mine or {}).get("dead_match") or {}
    if named.get("state") == DISPUTED and named["key"] not in disputes["disputed"]:
        # the disputed fact the question is about: its dispute, from its own inquiry
        found = (await stores.store.find_keys([named["key"]])).get(named["key"])
        if found is not None and inquiry_of(found) is not None:
            disputes = _near(disputes_of(await slice_.view(inquiry_of(found) or "")), {named["key"]})
    if mine is None:
        if chosen is not None:
            answer = (
                "no alive belief answers it"
                + (f" {validity.said(as_of)}" if as_of else "")
                + (": no hypothesis has alive support" if unsupported else "")
            )
        elif not question:
            answer = f"{NOTHING}: give a question, or pin an inquiry by its key"
        else:
            answer = NOTHING
        mine = {"answer": answer, "nodes": [], "sources": [], "context": [], "kind": None, "untimed": []}
    theirs: dict = (
        await baseline_side(stores, question, searched)
        if question
        else {
            "answer": "no question to search",
            "nodes": [],
            "sources": [],
            "context": [],
            "states": {},
            "props": {},
        }
    )
    mode = "extractive"
    # the settings of the stores (a past epoch's read-only store has none of its own: the process's)
    settings = stores.settings
    if settings.llm_key and question:
        try:
            if mine["nodes"]:
                context = mine["context"] + [text for _, text in mine.get("more", [])]
                mine["answer"] = await llm_answer(question, context, settings)
                mine["nodes"] = mine["nodes"] + [k for k, _ in mine.get("more", []) if k not in mine["nodes"]]
            theirs["answer"] = await llm_answer(question, theirs["context"], settings)
            mode = "llm"
        except Exception as error:  # keep the extractive answers, say why
            mode = f"extractive (LLM answer failed: {type(error).__name__})"
    if as_of is not None:
        await slice_.load(inquiry_of(p) for p in theirs["props"].values())
    states_b = {k: slice_.said_state(p) for k, p in theirs["props"].items()}
    states_b.update({k: v for k, v in theirs["states"].items() if k not in states_b})
    scoreboard, verdict = marks(stores.journal, mine, theirs, states_b, mode, as_of)
    if not relevance["matched"] and question:
        distance = (
            f" (nearest alive belief at cosine distance {relevance['best_distance']:.3f}; floor {floor:g})"
            if relevance["best_distance"] is not None
            else ""
        )
        verdict = f"FALSIFY: {NOTHING}{distance}; " + _baseline_words(theirs, states_b, mode)
    falsify: RecallSide = {
        **_stripped(mine),
        "disputed": disputes["disputed"],
        "disputes": disputes["disputes"],
        "kind": mine.get("kind"),
        "unsupported": unsupported,
        "rests_on": mine.get("rests_on"),
        "matches": [match_row(h) for h in matches[:MATCHES_SHOWN]],
    }
    if as_of is not None:
        falsify["untimed"] = mine.get("untimed", [])
    if "through" in mine:  # answered through a chain of hops
        falsify["through"] = mine["through"]
    if "unheld" in mine:
        falsify["unheld"] = mine["unheld"]
    if "rival" in mine:  # the inquiry's own question, asked about a hypothesis that does not lead
        falsify["rival"] = mine["rival"]
    if "dead_rival" in mine:  # or about one that died
        falsify["dead_rival"] = mine["dead_rival"]
    if "other_entity" in mine:  # the nearest fact is about another entity than the question names
        falsify["other_entity"] = mine["other_entity"]
    if "held_then" in mine:  # asked whether a superseded fact ever held: it did, then
        falsify["held_then"] = mine["held_then"]
    for name in DEAD_FACT_FIELDS:  # the question is about a dead fact: what replaced it, or none
        if name in mine:
            falsify[name] = mine[name]
    result: RecallResult = {
        "question": question,
        "falsify": falsify,
        "baseline": _stripped(theirs),
        "verdict": verdict,
        "mode": mode,
        "scoreboard": scoreboard,
        "baseline_states": states_b,
        "baseline_distances": theirs.get("distances", []),
        "relevance": relevance,
    }
    if chosen is not None:
        result["investigation"] = chosen
    if pinned is not None:
        result["inquiry"] = pinned
    if as_of is not None:
        result["as_of"] = as_of
    if not relevance["matched"]:
        result["stored_questions"] = await stored_questions(stores, keys)
    return result


# an answer about a dead fact: what replaced it, or the dead fact itself when nothing did
DEAD_FACT_FIELDS: tuple[Literal["replaces", "dead_match"], ...] = ("replaces", "dead_match")


def _stripped(side: dict) -> RecallSide:
    """What a side shows of the answer it worked out: the answer, its nodes and their sources."""
    return {"answer": side["answer"], "nodes": side["nodes"], "sources": side["sources"]}


def _baseline_words(theirs: dict, states: dict, mode: str) -> str:
    used = theirs["nodes"][:1] if mode != "llm" else theirs["nodes"]
    if not used:
        return "plain RAG found nothing either"
    return "plain RAG still answers from its nearest hit: " + ", ".join(
        f"{k} ({states.get(k, '?')})" for k in used
    )


def marks(
    journal, mine: Mapping[str, Any], theirs: Mapping[str, Any], states: dict, mode: str, as_of: Optional[str]
) -> tuple[dict, str]:
    """The scoreboard, computed from the nodes each answer used and their state on the slice
    the answer was read from: plain RAG is ``[STALE]`` when its answer rests on a belief that
    does not hold there; FALSIFY is ``[revised]`` when its answer leads with a hypothesis a
    revision promoted, or a fact a revision recorded over a stored belief."""
    promoted, winners = revision_marks(journal)[:2]
    lead_f = mine["nodes"][0] if mine["nodes"] else None
    used_b = theirs["nodes"][:1] if mode != "llm" else theirs["nodes"]
    dead_b = [k for k in used_b if states.get(k) != ALIVE]
    stale = bool(dead_b)
    # a disputed belief is not dead, only not settled: say which
    belief = "a dead belief" if any(states.get(k) != DISPUTED for k in dead_b) else "a disputed belief"
    if as_of is not None:
        belief = belief.replace("a dead belief", f"a belief that does not hold {validity.said(as_of)}")
    how = None
    if lead_f in promoted:
        how = f"promoted at epoch {promoted[lead_f]}"
    elif lead_f in winners:
        how = f"recorded over a stored belief at epoch {winners[lead_f]}"
    revised = how is not None
    cited = ", ".join(f"{k} ({states[k]})" for k in dead_b)
    held_then = mine.get("held_then")
    # asked whether (or when) a fact held that holds no more: it answers, and is not alive
    lead_state = (
        f"{'superseded' if held_then.get('superseded') else ENDED}: it held then"
        if held_then is not None and held_then.get("key") == lead_f
        else None
    )
    if lead_f is None and stale:
        verdict = f"FALSIFY uses no belief; plain RAG answers from {belief}: {cited}"
    elif lead_f is None:
        verdict = (
            "FALSIFY uses no belief; plain RAG's answer rests on alive beliefs"
            if used_b
            else "nothing to compare"
        )
    elif stale and revised:
        verdict = (
            f"FALSIFY answers from {lead_f} ({lead_state or 'alive'}, {how}); plain RAG answers from {cited}: "
            f"it still cites {belief}"
        )
    elif stale:
        verdict = f"plain RAG answers from {belief}: {cited}"
        if lead_state is not None:
            verdict = f"FALSIFY answers from {lead_f} ({lead_state}); {verdict}"
    elif revised and lead_state is None:
        verdict = f"FALSIFY answers from {lead_f}, {how}; plain RAG's answer rests on alive beliefs"
    elif lead_state is not None:
        said_how = ", ".join(w for w in (lead_state, how) if w)
        verdict = f"FALSIFY answers from {lead_f} ({said_how}); plain RAG's answer rests on alive beliefs"
    else:
        verdict = "both answers rest on alive beliefs"
    return {
        "falsify_mark": "[revised]" if revised else "",
        "baseline_mark": "[STALE]" if stale else "",
    }, verdict


# ---- structured paths ------------------------------------------------------------------


def parse_path(value) -> dict:
    """``"SUBJECT|PREDICATE|PREDICATE..."``: a subject and one predicate per hop."""
    if not isinstance(value, str):
        raise InputError(f"path must be a string SUBJECT|PREDICATE|PREDICATE..., got {value!r}", field="path")
    text = about("path", check_text, value, "path", "path")
    parts = [p.strip() for p in text.split("|")]
    if len(parts) < 2 or any(not p for p in parts):
        raise InputError(
            f"path {text!r}: give a subject and at least one predicate, SUBJECT|PREDICATE|PREDICATE..., "
            "none empty",
            field="path",
        )
    if len(parts) - 1 > MAX_HOPS:
        raise InputError(f"path {text!r}: {len(parts) - 1} hops (at most {MAX_HOPS})", field="path")
    return {"text": text, "subject": parts[0], "predicates": parts[1:]}


async def follow(
    store, slice_: Optional[Slice], subject: str, predicates: list[str], pinned: Optional[str]
) -> dict:
    """Hop by hop from ``subject``: at each hop the stored triples (evidence) under every
    current subject and the hop's predicate; with a slice, only those alive on it (without
    one, every stored triple: what a store without truth state follows). Each value's object
    is a subject of the next hop; several values fan out."""
    subjects = [subject]
    hops, used = [], []
    declared_cache: dict = {}
    for predicate in predicates:
        by_sp = {sp_key(s, predicate): s for s in subjects}
        found = [p for p in await store.nodes_by_sps(by_sp) if pinned is None or inquiry_of(p) == pinned]
        if slice_ is not None and slice_.as_of is not None:
            await slice_.load(inquiry_of(p) for p in found)
        values, skipped = [], []
        for props in sorted(found, key=lambda p: (p.get("name", ""), p.get("key", ""))):
            state = slice_.state(props) if slice_ is not None else state_of(props)
            row = {
                "subject": props.get("subject"),
                "object": props.get("object"),
                "key": props.get("key"),
                "claim": props.get("claim"),
                "sources": [props["source_id"]] if props.get("source_id") else [],
                "state": state,
            }
            if slice_ is None or state == ALIVE:
                if slice_ is not None and slice_.as_of is not None:
                    node = slice_.node(props)
                    row["untimed"] = bool(node and validity.untimed(node))
                values.append(row)
            else:
                skipped.append({k: row[k] for k in ("key", "object", "state")})
        values = values[:MAX_FAN_OUT]
        declared = {}
        for q in {inquiry_of(p) for p in found} - set(declared_cache):
            declared_cache[q] = await store.declared_predicates([{"question_key": q}])
        for q in {inquiry_of(p) for p in found}:
            declared.update(declared_cache[q].get(q, {}))
        hops.append(
            {
                "predicate": predicate,
                "subjects": list(subjects),
                "values": values,
                "not_used": skipped,
                "cardinality": declared.get(normalise_term(predicate), "one"),
            }
        )
        used += [v["key"] for v in values]
        subjects = list(dict.fromkeys(v["object"] for v in values if v.get("object")))
        if not subjects:
            break
    complete = len(hops) == len(predicates) and bool(hops[-1]["values"]) if hops else False
    return {"hops": hops, "values": subjects if complete else [], "complete": complete, "nodes": used}


def _path_answer(subject: str, walked: dict) -> str:
    if not walked["complete"]:
        stuck = len(walked["hops"])
        at = walked["hops"][-1] if walked["hops"] else None
        where = f" at hop {stuck} ({', '.join(at['subjects'])} | {at['predicate']})" if at else ""
        return f"the path ends{where}: no alive stored triple continues it"
    steps = [subject] + [
        " / ".join(dict.fromkeys(v["object"] for v in hop["values"])) for hop in walked["hops"]
    ]
    arrows = steps[0] + "".join(
        f" -{hop['predicate']}-> {steps[i + 1]}" for i, hop in enumerate(walked["hops"])
    )
    last = walked["hops"][-1]["values"]
    said = "; ".join(v["claim"] or v["key"] for v in last)
    return f"{', '.join(walked['values'])} ({arrows}; last hop: {said})"


async def recall_path(stores, path: dict, as_of: Optional[str], pinned: Optional[str]) -> RecallResult:
    slice_ = Slice(stores.store, as_of)
    mine = await follow(stores.store, slice_, path["subject"], path["predicates"], pinned)
    plain = await follow(stores.store, None, path["subject"], path["predicates"], pinned)
    raw = await stores.store.raw_nodes(node_id("evidence", k) for k in mine["nodes"] + plain["nodes"])
    props = {p["key"]: p for p in raw.values() if "key" in p}
    if as_of is not None:
        await slice_.load(inquiry_of(p) for p in props.values())
    states_b = {k: slice_.said_state(props[k]) if k in props else "missing" for k in plain["nodes"]}
    sources = lambda walked: list(
        dict.fromkeys(
            s
            for hop in walked["hops"]
            for v in hop["values"]  # noqa: E731
            for s in v["sources"]
        )
    )
    falsify: RecallSide = {
        "answer": _path_answer(path["subject"], mine),
        "nodes": mine["nodes"],
        "sources": sources(mine),
        "values": mine["values"],
        "disputed": [],
        "disputes": [],
        "kind": "path",
        "unsupported": [],
    }
    if as_of is not None:
        falsify["untimed"] = [v["key"] for hop in mine["hops"] for v in hop["values"] if v.get("untimed")]
    theirs: RecallSide = {
        "answer": _path_answer(path["subject"], plain),
        "nodes": plain["nodes"],
        "sources": sources(plain),
        "values": plain["values"],
    }
    stale = [k for k in plain["nodes"] if states_b.get(k) != ALIVE]
    dead = f"a belief that does not hold {validity.said(as_of)}" if as_of else "a dead belief"
    promoted, winners = revision_marks(stores.journal)[:2]
    revised = [k for k in mine["nodes"] if k in winners or k in promoted]
    if stale:
        verdict = f"plain RAG's path runs through {dead}: " + ", ".join(f"{k} ({states_b[k]})" for k in stale)
    else:
        verdict = "both paths rest on alive beliefs"
    result: RecallResult = {
        "question": path["text"],
        "path": {
            "subject": path["subject"],
            "predicates": path["predicates"],
            "hops": mine["hops"],
            "values": mine["values"],
            "complete": mine["complete"],
        },
        "falsify": falsify,
        "baseline": theirs,
        "verdict": verdict,
        "mode": "extractive",
        "scoreboard": {
            "falsify_mark": "[revised]" if revised else "",
            "baseline_mark": "[STALE]" if stale else "",
        },
        "baseline_states": states_b,
        "baseline_distances": [],
    }
    if pinned is not None:
        result["inquiry"] = pinned
    if as_of is not None:
        result["as_of"] = as_of
    return result


SEARCH_KINDS = ("evidence", "conclusion")
MAX_TOP_K = 100


async def search(stores, query: str, top_k: int = 5, include_dead: bool = False) -> list[SearchHit]:
    """FALSIFY's retriever: the nearest evidence and conclusions to ``query``, alive ones
    only unless ``include_dead`` (which is what a plain vector search returns)."""
    query = check_text(query, "search", "query")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InputError(f"search: 'top_k' must be an integer from 1 to {MAX_TOP_K}, got {top_k!r}")
    hits = []
    # dead hits are skipped, so ask for more than top_k: enough to fill it from the alive ones
    limit = top_k if include_dead else min(MAX_TOP_K * 4, top_k * 4 + 20)
    for kind in SEARCH_KINDS:
        for hit in await stores.store.search(collection(kind), query, limit):
            hits.append((float(hit.score), str(hit.id), kind))
    hits.sort()
    found = await stores.store.raw_nodes(h[1] for h in hits)
    result: list[SearchHit] = []
    for distance, node_id_, kind in hits:
        props = found.get(node_id_)
        if props is None:
            continue  # a vector row without its node (check reports it)
        node = to_node(props)
        if node is None or (not include_dead and not node.alive):
            continue
        result.append(
            {
                "key": node.key,
                "type": node.kind,
                "text": node.text,
                "state": node.state,
                "distance": round(distance, 4),
                "sources": [props["source_id"]] if props.get("source_id") else [],
            }
        )
        if len(result) == top_k:
            break
    return result

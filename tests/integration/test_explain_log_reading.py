"""explain reads only the revision log's lines that can bear on the key it explains
(memory_core.ops.explain.entries_about): the history it gives is the one the whole log gives,
for every key of generated logs -- keys spelled in other cases, with quotes and spaces that
normalise away, outside ASCII (escaped as json.dumps writes them, or not), with a Kelvin sign
that lower-cases into ASCII, with backslashes and double quotes; undos, forgotten and restored
nodes, disputes and values kept dead whose words read who attacked them when."""

from __future__ import annotations

import json
import random

import pytest

from memory_core.core import why
from memory_core.core.identity import node_id
from memory_core.ops.explain import entries_about
from memory_core.store.journal import FileJournal

# each family: spellings that normalise to one key (keys.normalise_key), then its own others
FAMILIES = [
    ["E1", "e1", "E'1", "\u212a1"],  # the Kelvin sign lower-cases to 'k': not E1, a key of its own
    ["k1", "K1", "\u212a1", "k'1"],
    ["E_2", "e 2", "E 2", "e_2"],
    ["Café", "CAFÉ", "café"],
    ["ΟΔΟΣ", "οδος", "οδοσ"],
    ["İx", "i̇x"],
    ['quo"te', 'QUO"TE'],
    ["back\\slash", "BACK\\SLASH"],
    ["F3", "f3"],
    ["F4"],
    ["undo", "UNDO"],  # a key spelled as the undo entry's kind
    ["H5", "h5"],
    ["Q"],
]
RULES = [
    "contradicted",
    "superseded_by_fact",
    "justification_lost",
    "reinstated",
    "disputed",
    "not_reinstated",
    "support_lost",
    "promoted",
    "resolved",
]
STATES = ["alive", "refuted", "invalidated", "superseded", "disputed"]
SLOT = "F4 holds another value of the single-valued 'p' of 's': 'o', not 'x'"


def spell(rng: random.Random) -> str:
    return rng.choice(rng.choice(FAMILIES))


def change(rng: random.Random, key: str, epoch: int) -> dict:
    rule = rng.choice(RULES)
    detail = ""
    if rule == "disputed" and rng.random() < 0.6:
        detail = why.THROUGH_DISPUTED
    elif rule == "not_reinstated":
        detail = rng.choice(
            [
                f"not reinstated: {SLOT} (structured, confidence 0.90)",
                "not reinstated: F3 contradicts it (structured, confidence 0.90)",
            ]
        )
    return {
        "key": key,
        "rule": rule,
        "cause": [spell(rng) for _ in range(rng.randint(0, 2))],
        "detail": detail,
        "epoch": epoch,
        "before": {"state": rng.choice(STATES), "weight": 0.5, "confidence": None},
        "after": {"state": rng.choice(STATES), "weight": 0.5, "confidence": None},
    }


def ident(key: str) -> str:
    return node_id("evidence", key)


def edge(rng: random.Random) -> list:
    return [ident(spell(rng)), ident(spell(rng)), rng.choice(["supersedes", "disputes", "depends_on"]), {}]


def intent(rng: random.Random, epoch: int, adding: list[str]) -> dict:
    return {
        "epoch": epoch,
        "add_nodes": [
            {
                "id": ident(k),
                "key": k,
                "kind": "evidence",
                "state": rng.choice(STATES),
                "edges": [edge(rng) for _ in range(rng.randint(0, 2))],
            }
            for k in adding
        ],
        "add_edges": [edge(rng) for _ in range(rng.randint(0, 2))],
        "del_edges": [edge(rng) for _ in range(rng.randint(0, 1))],
        "del_nodes": [{"id": ident(spell(rng)), "key": "-"} for _ in range(rng.randint(0, 1))],
    }


def generated_log(seed: int) -> list[dict]:
    rng = random.Random(seed)
    entries: list[dict] = []
    for epoch in range(1, rng.randint(20, 60)):
        kind = rng.choice(["load", "revise", "revise", "resolve", "undo"])
        at = f"2026-01-01T00:{epoch % 60:02d}:00Z"
        if kind == "undo" and entries:
            target = rng.choice(entries)
            entry = {
                "epoch": epoch,
                "kind": "undo",
                "at": at,
                "undoes": target["epoch"],
                "undoes_kind": target["kind"],
                "changes": [change(rng, spell(rng), epoch) for _ in range(rng.randint(0, 2))],
                "removed": [spell(rng) for _ in range(rng.randint(0, 1))],
                "restored": [spell(rng) for _ in range(rng.randint(0, 1))],
                "intent": intent(rng, epoch, []),
            }
        elif kind == "load":
            added = [spell(rng) for _ in range(rng.randint(1, 3))]
            entry = {
                "epoch": epoch,
                "kind": "load",
                "at": at,
                "question": "Q",
                "added": added,
                "intent": intent(rng, epoch, added),
            }
        else:
            new = spell(rng)
            entry = {
                "epoch": epoch,
                "kind": kind,
                "at": at,
                "fact": f"a fact about {spell(rng)}",
                "new_evidence": new if rng.random() < 0.7 else None,
                "changes": [change(rng, spell(rng), epoch) for _ in range(rng.randint(1, 4))],
                "forgotten": [spell(rng) for _ in range(rng.randint(0, 2))],
                "restored": [spell(rng) for _ in range(rng.randint(0, 1))],
                "intent": intent(rng, epoch, [new]),
            }
        entries.append(entry)
    return entries


def write(tmp_path, entries: list[dict], rng: random.Random) -> FileJournal:
    lines = []
    for entry in entries:
        r = rng.random()
        if r < 0.15:  # a writer keeping characters outside ASCII as they are
            lines.append(json.dumps(entry, sort_keys=True, ensure_ascii=False))
        elif r < 0.25:  # other separators: an undo then says its epoch otherwise
            lines.append(json.dumps(entry, sort_keys=True, separators=(",", ":")))
        elif r < 0.3:  # an ASCII letter escaped
            lines.append(json.dumps(entry, sort_keys=True).replace('"E', '"\\u0045'))
        else:
            lines.append(json.dumps(entry, sort_keys=True))
    journal = FileJournal(tmp_path)
    journal.log_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return journal


@pytest.mark.parametrize("seed", range(40))
def test_explain_reading_part_of_the_log_gives_the_whole_logs_history(tmp_path, seed):
    journal = write(tmp_path, generated_log(seed), random.Random(seed))
    entries = list(journal.entries())
    for key in sorted({k for family in FAMILIES for k in family}):
        whole = why.history(entries, key, {"F3"})
        part, undone = entries_about(journal, key)
        assert why.history(part, key, {"F3"}, undone) == whole, key


def test_a_long_log_is_read_in_part(tmp_path):
    """The point of it: on a log of many revisions of other keys, a key's history is read from
    the few lines that name it (and the undos)."""
    entries = generated_log(7)
    other = [
        {
            "epoch": len(entries) + i,
            "kind": "revise",
            "new_evidence": f"G{i}",
            "changes": [
                {
                    "key": f"G{i}",
                    "rule": "contradicted",
                    "cause": [],
                    "epoch": len(entries) + i,
                    "before": {"state": "alive"},
                    "after": {"state": "refuted"},
                }
            ],
        }
        for i in range(1, 500)
    ]
    journal = FileJournal(tmp_path)
    journal.log_path.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in entries + other))
    part, undone = entries_about(journal, "F4")
    assert len(list(part)) < len(entries) + 1
    assert why.history(part, "F4", (), undone) == why.history(journal.entries(), "F4")

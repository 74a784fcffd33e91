"""MQuAKE-hard as investigation files: the data set, its keys, its scenarios' groups."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from bench.common import REPO

DEFAULT_DATA = REPO.parent / "shared" / "bench" / "out_mquake_hard_beliefs.json"
QUESTION = "mquake-hard"


def data_path(arg: Optional[str] = None) -> Path:
    return Path(arg or os.environ.get("FALSIFY_BENCH_DATA") or DEFAULT_DATA)


def suffix(replica: int) -> str:
    return f"-r{replica}" if replica else ""


def _as_key(node_id: str) -> str:
    """Investigation keys hold only letters, digits, '_', '-' and '.': ``ev:Q1|P2|Q3`` ->
    ``ev_Q1-P2-Q3`` (one-to-one on the benchmark's ids)."""
    return node_id.replace(":", "_").replace("|", "-")


def ev_key(node_id: str, replica: int = 0) -> str:
    return _as_key(node_id) + suffix(replica)


def concl_key(node_id: str, replica: int = 0) -> str:
    return _as_key(node_id) + suffix(replica)


def question_key(replica: int = 0) -> str:
    return QUESTION + suffix(replica)


@dataclass
class Group:
    """Edits applied together from the loaded graph, and what must die."""

    name: str
    apply: list[str]
    expected: set[str]  # pre-edit conclusion ids (dataset ids) expected not alive


class Dataset:
    def __init__(self, raw: dict, predicate_labels: bool = False):
        """``predicate_labels``: store each triple's relation by its Wikidata label ("spouse")
        instead of its id ("P26"), as a person writing triples would."""
        self.raw = raw
        self.labels: dict[str, str] = {}
        if predicate_labels:
            for n in raw["nodes"]:
                labelled = n.get("triple_labeled")
                if n.get("triple") and labelled and labelled[1] != n["triple"][1]:
                    self.labels[n["triple"][1]] = labelled[1]
        self.nodes = {n["id"]: n for n in raw["nodes"]}
        self.evidence = [n for n in raw["nodes"] if n["kind"] == "Evidence" and n.get("initially_asserted")]
        self.conclusions = [
            n for n in raw["nodes"] if n["kind"] == "Conclusion" and n.get("phase") == "pre_edit"
        ]
        pre = {n["id"] for n in self.conclusions}
        self.edges = [e for e in raw["edges"] if e["type"] == "depends_on" and e["from"] in pre]
        self.edits = {e["id"]: e for e in raw["edits"]}
        self.skipped = {
            "edit_new_evidence": sum(
                1 for n in raw["nodes"] if n["kind"] == "Evidence" and not n.get("initially_asserted")
            ),
            "post_edit_conclusions": sum(
                1 for n in raw["nodes"] if n["kind"] == "Conclusion" and n.get("phase") != "pre_edit"
            ),
            "post_edit_edges": len(raw["edges"]) - len(self.edges),
        }
        asserted = {n["id"] for n in self.evidence}
        bad = [e for e in self.edges if e["to"] not in asserted]
        if bad:
            raise ValueError(
                f"a pre-edit conclusion rests on evidence that is not initially asserted: {bad[0]}"
            )

    @classmethod
    def read(cls, path: Path) -> "Dataset":
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    @property
    def node_count(self) -> int:
        return 1 + len(self.evidence) + len(self.conclusions)

    def investigation(self, replica: int = 0, trusted: Optional[float] = None) -> dict:
        """The investigation file of one replica (the product's own format). ``trusted``: list
        the stored facts' sources with that trust, policy trust_ranked."""
        sfx = suffix(replica)
        if trusted is not None:
            inv = self.investigation(replica)
            inv["sources"] = [
                {"id": f"mquake:{o}", "trust": trusted} for o in sorted({n["origin"] for n in self.evidence})
            ]
            inv["policy"] = "trust_ranked"
            return inv
        return {
            "question": {
                "key": question_key(replica),
                "text": "MQuAKE-hard: answers of 429 four-hop "
                f"questions{' (replica ' + str(replica) + ')' if replica else ''}",
            },
            "evidence": [
                {
                    "key": ev_key(n["id"], replica),
                    "claim": n["claim"],
                    "subject": n["triple"][0] + sfx,
                    "predicate": self.predicate(n["triple"][1]),
                    "object": n["triple"][2],
                    "source_id": f"mquake:{n['origin']}",
                }
                for n in self.evidence
            ],
            "conclusions": [
                {"key": concl_key(n["id"], replica), "statement": n["claim"]} for n in self.conclusions
            ],
            "edges": [
                {
                    "type": "depends_on",
                    "from": concl_key(e["from"], replica),
                    "to": ev_key(e["to"], replica),
                    "critical": True,
                    "group": "chain",
                }
                for e in self.edges
            ],
        }

    def fact(self, edit_id: str, replica: int = 0) -> tuple[str, str, str]:
        """(claim, 'S|P|O', key) of an edit's new fact."""
        new = self.edits[edit_id]["new_fact"]
        s, p, o = new["triple"]
        return new["claim"], f"{s}{suffix(replica)}|{self.predicate(p)}|{o}", ev_key(new["id"], replica)

    def predicate(self, relation: str) -> str:
        """How a relation is stored: its id, or its label with ``predicate_labels``."""
        return self.labels.get(relation, relation)

    def groups(self, scenario: str, limit: Optional[int] = None) -> list[Group]:
        sc = self.raw["scenarios"]
        if scenario == "per_case":
            cases = sc["per_case"][:limit] if limit else sc["per_case"]
            return [
                Group(f"case {c['case_id']}", list(c["apply"]), set(c["expected_invalidated"])) for c in cases
            ]
        if scenario == "all_edits":
            apply = [e["id"] for e in self.raw["edits"]]
            if limit:  # a prefix: expected set from the dataset's own rule
                return [Group("all_edits", apply[:limit], self.expected_for(apply[:limit]))]
            return [Group("all_edits", apply, set(sc["all_edits"]["expected_invalidated_pre_edit"]))]
        for batch in sc["batches"]:
            if batch["name"] == scenario:
                return [Group(scenario, list(batch["apply"]), set(batch["expected_invalidated"]))]
        raise SystemExit(f"unknown scenario {scenario!r}")

    def expected_for(self, apply: list[str]) -> set[str]:
        """The dataset's rule (for a prefix of all_edits): a conclusion dies iff
        a hop has the (subject, relation) of an applied edit and another object."""
        keys = {}
        for eid in apply:
            s, r, o = self.edits[eid]["new_fact"]["triple"]
            keys.setdefault((s, r), set()).add(o)
        dead = set()
        for e in self.edges:
            s, r, o = self.nodes[e["to"]]["triple"]
            if (s, r) in keys and o not in keys[(s, r)]:
                dead.add(e["from"])
        return dead

"""The fields of a revision request, declared once.

Every surface reads them from here: the CLI builds ``revise``'s flags from them
(:mod:`memory_core.shell.commands`), the MCP server the ``revise`` tool's arguments and
their descriptions (:mod:`memory_core.mcp.server`), the viewer's ``POST /api/revise`` the
fields it takes (:mod:`memory_core.web.routes`), ``revise --file`` lines, ``revise_many``
items and the cognee Tasks' data the keys of a fact object
(:mod:`memory_core.core.requests`), and the errors how each surface names them
(:mod:`memory_core.core.errors`: a message names a field by its CLI flag, each shell
renders it in its own words). ``Falsify.revise`` takes the same names as keywords
(``tests/test_requests.py`` holds the two together). Pure: no imports of FALSIFY.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    name: str  # the Python keyword, the MCP argument, the JSON field (viewer, --file lines, Tasks' data)
    flag: str  # the CLI's flag ("" for the positional FACT)
    kind: str  # text | key | date | unit (0..1) | policy | triple | bool
    help: str  # one line: --help, the MCP input schema, the docs
    per_fact: bool = True  # a field of each fact (a --file line, a revise_many item); else of the call

    @property
    def metavar(self) -> str:
        return {"key": "KEY", "date": "DATE", "unit": "0..1", "policy": "POLICY", "triple": "S|P|O"}.get(
            self.kind, self.name.upper()
        )


FIELDS: tuple[Field, ...] = (
    Field("fact", "", "text", "the new fact, one sentence in words"),
    Field(
        "triple",
        "--triple",
        "triple",
        "the fact as 'subject|predicate|object' (enables the offline structured judge)",
    ),
    Field(
        "target",
        "--target",
        "key",
        "the key of the stored evidence the fact contradicts (the caller's decision: skips both gates)",
    ),
    Field("key", "--key", "key", "the key of the new evidence (default: derived from the fact's text)"),
    Field("source", "--source", "text", "the source id of the new fact"),
    Field("asserted_at", "--asserted-at", "date", "the ISO date the fact was asserted"),
    Field(
        "trust",
        "--trust",
        "unit",
        "the trust (0..1) of the fact's source, registered if the source is not known yet (needs source)",
    ),
    Field(
        "policy",
        "--policy",
        "policy",
        "who wins a contradiction in this revision: latest_wins | trust_ranked "
        "| preserve_both (default: the question's policy)",
    ),
    Field(
        "valid_from",
        "--valid-from",
        "date",
        "the ISO date from which the fact is true in the world (valid time)",
    ),
    Field(
        "valid_to",
        "--valid-to",
        "date",
        "the ISO date from which the fact is no longer true (default: still true)",
    ),
    Field(
        "record",
        "--record",
        "bool",
        "the caller's decision that the fact contradicts none of the candidates: "
        "record it as new evidence, without judging (offline: the answer to to_decide when no candidate is "
        "contradicted)",
    ),
    Field(
        "supports",
        "--supports",
        "key",
        "the key of a hypothesis the recorded fact supports (a supports edge from the new evidence)",
    ),
    Field(
        "refutes",
        "--refutes",
        "key",
        "the key of a hypothesis the recorded fact refutes (a refutes edge from the new evidence)",
    ),
    Field("weight", "--weight", "unit", "the weight (0..1) of the supports or refutes edge (default 0.5)"),
    Field(
        "inquiry",
        "--inquiry",
        "key",
        "the key of the stored question the new fact belongs to: it is compared with that question's evidence "
        "only and recorded there (default: every question's evidence; recorded in the question of the evidence "
        "it contradicts, of the hypothesis it bears on or of the nearest candidate, else the root's default or "
        "only question)",
    ),
    Field(
        "dry_run",
        "--dry-run",
        "bool",
        "preview: run the whole revision (both gates, cascade, promotion, "
        "forgetting) and give the plan it would apply, marked as a preview; write nothing",
        per_fact=False,
    ),
)

FACT_FIELDS: tuple[str, ...] = tuple(f.name for f in FIELDS if f.per_fact)

# the other arguments a message may name: CLI flag -> the argument's name elsewhere
OTHER_ARGUMENTS = {
    "--winner": "winner",
    "--root": "root",
    "--epoch": "epoch",
    "--as-of": "as_of",
    "--repair": "repair",
}

"""Edge names of the belief graph (cognee ``relationship_name`` values)."""

DEPENDS_ON = "depends_on"  # Conclusion|Evidence -> Evidence|Conclusion {critical, group}
SUPPORTS = "supports"  # Evidence -> Hypothesis {weight}
REFUTES = "refutes"  # Evidence -> Hypothesis {weight}
SUPERSEDES = "supersedes"  # Evidence(new) -> Evidence(old) {confidence}
PART_OF = "part_of"  # every node -> its InvestigationQuestion (one-call subgraph reads)

BELIEF_EDGES = (DEPENDS_ON, SUPPORTS, REFUTES, SUPERSEDES)

# (source kinds, target kinds) each edge type may join.
ENDPOINTS = {
    DEPENDS_ON: ({"conclusion", "evidence"}, {"conclusion", "evidence"}),
    SUPPORTS: ({"evidence"}, {"hypothesis"}),
    REFUTES: ({"evidence"}, {"hypothesis"}),
    SUPERSEDES: ({"evidence"}, {"evidence"}),
}

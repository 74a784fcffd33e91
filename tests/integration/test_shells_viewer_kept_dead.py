"""The viewer's status line after a revision (``static/model.js`` ``summary``, run by Node on the
module as the page loads it) never calls a disputed node kept dead.

A refuted value whose refuter is put in dispute by the revision (the same value asserted again
under ``preserve_both``: E1 refuted by F1, then E1's value again, disputed with F1) is
``not_reinstated`` in the result and ``disputed`` too: it is disputed now (``explain``: "not
reinstated: its refuter F1 is in dispute, but ...", then "disputed"). The line said "disputed
C1, E1, F1, F2; kept dead E1": E1 both disputed and dead. The result below is the one the real
revision returned (probed on a root: ``revise`` with ``policy=preserve_both``)."""

from __future__ import annotations

from test_viewer_summary import summaries


def test_a_node_left_in_dispute_is_not_said_kept_dead():
    (line,) = summaries(
        {
            "epoch": 4,
            "refuted": [],
            "disputed": ["C1", "E1", "F1", "F2"],
            "restored": ["C1"],
            "not_reinstated": ["E1"],
        }
    )
    assert line == "Revised: disputed C1, E1, F1, F2; restored C1.", line
    (kept,) = summaries({"epoch": 7, "refuted": ["EB"], "disputed": ["F1"], "not_reinstated": ["EA", "F1"]})
    assert kept == "Revised: refuted EB; disputed F1; kept dead EA.", kept

"""The CLI's text (memory_core.shell.report) says what its ``--json`` says, on results unlike
the demo's:

* ``status`` names every node by its whole key (two long keys, a viewer's readable key among
  them, were cut to the column's width and read as one);
* ``revise`` says how valid time read each judged contradiction (``validity``): a stored value
  valid at other times than the fact (``disjoint``) is left as it is, which the text must say, or
  "judge says contradicts" reads as a contradiction ignored;
* the commands ``revise`` prints for the caller to decide run as printed, for a key starting
  with ``-`` too (``--target -E1`` was read by the parser as a flag of its own: exit 2);
* ``check --repair`` says what no repair may do (``cannot_restore``: a lost log, two overlapping
  values of one slot) and, when a repair fixed some problems, which are left.
"""

from __future__ import annotations

import contextlib
import io

import shlex

from memory_core.core.requests import revision_request
from memory_core.shell.commands import build_parser
from memory_core.shell.report import flags_of, print_check, print_revision, print_status


def printed(fn, result: dict) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn(result)
    return out.getvalue()


def test_status_names_every_node_by_its_whole_key():
    keys = [
        "E_very_long_key_number_one",
        "E_very_long_key_number_two",
        "F_forensic_audit_march_qa_68e7",
        "Eä1",
    ]
    rows = [
        {
            "key": k,
            "type": "evidence",
            "state": "alive",
            "feedback_weight": 0.5,
            "epoch": 1,
            "text": f"claim {k}",
            "question": "Q",
        }
        for k in keys
    ]
    lines = printed(print_status, {"nodes": rows, "edges": []}).splitlines()
    assert [line.split()[0] for line in lines[1:]] == keys, lines
    # the columns stay aligned: every row's type starts where the header's TYPE does
    at = lines[0].index("TYPE")
    assert all(line[at:].startswith("evidence") for line in lines[1:]), lines


def revision(validity: dict) -> dict:
    return {
        "fact": "Crane owned the mill from 2005 to 2008.",
        "new_evidence": "G9",
        "judge": "structured",
        "candidates": [
            {
                "key": k,
                "distance": 0.3,
                "relation": "contradicts",
                "confidence": 0.9,
                "rationale": "same slot",
            }
            for k in validity
        ],
        **{
            name: [] for name in ("refuted", "superseded", "invalidated", "weakened", "promoted", "forgotten")
        },
        "epoch": 9,
        "elapsed_ms": 5.0,
        "validity": validity,
        "intervals": {"G9": {"valid_from": "2005-01-01", "valid_to": "2008-01-01"}},
    }


def test_revise_says_a_judged_contradiction_valid_at_other_times_is_none():
    text = printed(print_revision, revision({"F2": "disjoint", "F1": "disjoint", "G3": "ends_stored"}))
    said = [line for line in text.splitlines() if "valid time read" in line]
    assert any("F2, F1" in line and "(disjoint)" in line and "no contradiction" in line for line in said), (
        text
    )
    assert any("G3 held until the fact starts (ends_stored)" in line for line in said), text
    # a contradiction with no valid time on either side is one as any other: no line
    assert "valid time read" not in printed(print_revision, revision({"F2": "untimed"}))


def test_check_repair_says_what_it_cannot_restore_and_what_is_left():
    overlap = (
        "E00 and E02 are two values of single-valued 'gamma|value0' that both held (overlapping validity)"
    )
    wrong = "E7 is stored refuted, but the labelling makes it alive"
    cannot = "cannot repair: E00 and E02 ...; which one's dates are wrong is not for check to guess"
    text = printed(
        print_check,
        {
            "clean": False,
            "problems": [overlap, wrong],
            "repaired": ["E7 relabelled alive"],
            "clean_after_repair": False,
            "problems_after_repair": [overlap],
            "cannot_restore": [cannot],
        },
    )
    lines = text.splitlines()
    assert f"  {cannot}" in lines, text
    assert "  after repair: problems remain" in lines and f"    still: {overlap}" in lines, text
    assert not any(line.startswith("    still:") and wrong in line for line in lines), text


def test_the_commands_printed_to_decide_run_for_a_key_starting_with_a_dash():
    asked = revision_request("The crane lifts 20 t.", source="-lab", supports="-H", weight=0.5)
    result = dict(revision({}), new_evidence=None, epoch=None, to_decide=["-E1", "E2"])
    text = printed(lambda r: print_revision(r, again="python main.py", keep=flags_of(asked)), result)
    commands = [
        line.strip() for line in text.splitlines() if line.strip().startswith("python main.py revise")
    ]
    assert len(commands) == 3, text
    parsed = [build_parser().parse_args(shlex.split(c)[2:]) for c in commands]
    assert [a.target for a in parsed] == ["-E1", "E2", None], text
    assert all(a.source == "-lab" and a.supports == "-H" and a.weight == "0.5" for a in parsed), text
    assert parsed[-1].record is True
    assert "add --supports H" not in text, text  # the caller's --supports=-H is part of the decision


def test_the_resolve_printed_to_decide_runs_for_keys_starting_with_a_dash():
    """The hints revise gives when the caller decides between two stored facts print a
    ``resolve`` the CLI's parser reads back as given, a key starting with '-' included (before:
    'resolve -E1 --winner ...', which the parser took for an option of its own, exit 2)."""
    from memory_core.core.keys import resolve_words

    for loser, winner in (("E3", "F_x"), ("-E1", "F"), ("E1", "-F"), ("-E1", "-F")):
        args = build_parser().parse_args(shlex.split(resolve_words(loser, winner)))
        assert (args.loser, args.winner) == (loser, winner), resolve_words(loser, winner)
    assert resolve_words("E3", "F_x") == "resolve E3 --winner 'F_x'"  # the form printed so far

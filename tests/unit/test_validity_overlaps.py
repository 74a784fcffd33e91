"""Overlapping validity (``validity.overlaps``, what ``check`` reports): two values of one
single-valued slot that both held over a shared period. A value in dispute (undecided) may
not have held at all, so a pair with one is an open question, not an overlap."""

from memory_core.core import validity

SLOT = "crane|lifts"


def test_two_values_that_held_over_one_period_overlap():
    held = [("B1", SLOT, "10 t", ("2012-01-01", None)), ("B2", SLOT, "50 t", ("2015-01-01", None))]
    assert validity.overlaps(held) == [("B1", "B2", SLOT, ("2015-01-01", None))]


def test_an_alive_value_and_one_in_dispute_over_one_period_are_an_open_question():
    # B2 (from 2015) is disputed with an untimed third value: had it held, B1 would have ended in
    # 2015; whether it held is what the dispute leaves open
    held = [("B1", SLOT, "10 t", ("2012-01-01", None)), ("B2", SLOT, "50 t", ("2015-01-01", None))]
    assert validity.overlaps(held, undecided=["B2"]) == []
    assert validity.overlaps(held, undecided=["B1"]) == []


def test_an_undecided_value_does_not_hide_two_others_that_overlap():
    held = [
        ("A", SLOT, "10 t", ("2010-01-01", None)),
        ("B", SLOT, "20 t", ("2012-01-01", "2014-01-01")),
        ("C", SLOT, "30 t", ("2013-01-01", None)),
    ]
    pairs = validity.overlaps(held, undecided=["C"])
    assert pairs == [("A", "B", SLOT, ("2012-01-01", "2014-01-01"))]

"""The pure argument checks every surface shares (memory_core.core.requests), the flags the
CLI repeats in the commands it prints for a decision, and what the lock file says of its
holder. No store, no process."""

from __future__ import annotations

import os

import pytest

from memory_core.core.errors import InputError, render
from memory_core.core.requests import (
    check_count,
    check_epoch,
    check_string,
    check_switch,
    fact_key,
    fact_lines,
    kept_for_decision,
    readable_key,
    requests_from,
    revision_request,
)


@pytest.mark.parametrize("value", ["no", "true", 1, 0, None, 1.0])
def test_a_switch_is_exactly_true_or_false(value):
    with pytest.raises(InputError) as caught:
        check_switch(value, "dry_run")
    assert caught.value.field == "dry_run" and str(caught.value).startswith("dry_run: must be true or false")
    assert check_switch(False, "dry_run") is False


@pytest.mark.parametrize("value", ["1", 1.0, True, -1, None])
def test_a_count_is_a_whole_number_in_range(value):
    with pytest.raises(InputError) as caught:
        check_count(value, "top_k", 1, 100)
    assert caught.value.field == "top_k"
    assert check_count(7, "top_k", 1, 100) == 7


@pytest.mark.parametrize("value", ["1", 1.0, True, -1])
def test_an_epoch_is_a_whole_number_named_in_each_vocabulary(value):
    with pytest.raises(InputError) as caught:
        check_epoch(value)
    assert caught.value.field == "epoch"
    assert render(str(caught.value), "cli").startswith("--epoch: must be a whole number")
    assert render(str(caught.value), "python").startswith("epoch: must be a whole number")
    assert check_epoch(None) is None and check_epoch(0) == 0


def test_text_arguments_name_their_flag_or_keyword():
    with pytest.raises(InputError) as caught:
        check_string(5, "--as-of", optional=True)
    assert (
        caught.value.field == "as_of"
        and render(str(caught.value), "python") == "as_of: must be a string, got 5"
    )
    assert check_string(None, "--as-of", optional=True) is None
    with pytest.raises(InputError):
        check_string(None, "key")


@pytest.mark.parametrize("field", ["target", "key", "source", "policy", "supports", "refutes", "valid_from"])
def test_every_text_field_of_a_request_refuses_another_type(field):
    with pytest.raises(InputError) as caught:
        revision_request("a fact", **{field: 5})
    assert caught.value.field == field and "must be a string, got 5" in str(caught.value)


@pytest.mark.parametrize("fact", ["The audit found it back-dated \ud800", "bad\x00fact", "   ", 5, None])
def test_no_key_is_derived_from_a_fact_no_request_may_carry(fact):
    """A key is derived from a fact's text only once it is checked: the viewer derives a
    readable key before the request is checked, so a bad fact there is refused naming it, in
    the words the request's own check uses (a lone surrogate once crashed the hash)."""
    with pytest.raises(InputError) as asked:
        revision_request(fact)
    for derive in (readable_key, fact_key):
        with pytest.raises(InputError) as caught:
            derive(fact)
        assert caught.value.field == "fact" and str(caught.value) == str(asked.value)
    assert readable_key("  The March QA report.  ") == readable_key("The March QA report.")


@pytest.mark.parametrize("facts", ["abc", b"abc", {"fact": "a"}, None, 5])
def test_many_facts_are_a_list(facts):
    with pytest.raises(InputError) as caught:
        requests_from(facts)
    assert caught.value.field == "facts" and str(caught.value).startswith("facts: must be a list of facts")


def test_a_file_line_names_its_fields_once_rendered_for_json():
    with pytest.raises(InputError) as caught:
        fact_lines(b'{"fact": "a"}\n{"fact": "b", "source": "s", "trust": "0.5"}\n', "f.jsonl")
    assert (
        render(str(caught.value), "viewer")
        == "f.jsonl line 2: trust: must be a number from 0 to 1, got '0.5'"
    )
    with pytest.raises(InputError) as caught:
        fact_lines(b'{"fact": "b", "record": "yes"}\n', "f.jsonl")
    assert str(caught.value) == "f.jsonl line 1: record: must be true or false, got 'yes'"


def test_a_hypothesis_given_before_the_decision_is_kept_in_the_note():
    request = revision_request("a fact", supports="B", weight=0.7)
    result = {"note": "no judge could decide on E1", "to_decide": ["E1"]}
    kept_for_decision(result, request)
    kept_for_decision(result, request)  # said once
    assert result["note"].count("part of your decision") == 1
    assert render(result["note"], "python").endswith(
        "supports='B' (weight 0.7) is part of your decision: nothing was recorded, so no supports edge "
        "either; give it again with target=KEY (the candidate the fact contradicts) or record=True (none of them)"
    )
    assert "supports 'B'" in render(result["note"], "mcp")
    decided = {"note": "recorded", "epoch": 3}
    assert kept_for_decision(decided, request) == {"note": "recorded", "epoch": 3}


def test_the_printed_decision_commands_repeat_every_other_flag():
    from memory_core.shell.report import flags_of

    request = revision_request(
        "a fact", triple="S|p|O", source="lab x", trust=0.9, refutes="C", weight=0.25, valid_from="2020-01-01"
    )
    assert flags_of(request) == (
        "--triple 'S|p|O' --source 'lab x' --trust 0.9 --valid-from 2020-01-01 --refutes C --weight 0.25"
    )
    assert flags_of(revision_request("a fact", target="E1")) == ""


def test_the_lock_names_the_program_that_holds_it():
    from memory_core.store.lock import holder_record

    assert holder_record("python main.py load") == f"pid {os.getpid()} (python main.py load)"
    record = holder_record("falsify")
    assert record.startswith(f"pid {os.getpid()} (falsify: python ") and record.endswith(")")
    assert len(record.encode()) <= 400


def test_an_mcp_list_item_is_numbered_as_every_other_message_numbers_it():
    pytest.importorskip("mcp")
    from pydantic import BaseModel, ValidationError

    from memory_core.mcp.server import argument_problems

    class Arguments(BaseModel):
        facts: list[str]

    data = {"facts": ["a", 7]}
    with pytest.raises(ValidationError) as caught:
        Arguments.model_validate(data, strict=True)
    schema = {"properties": {"facts": {"type": "array", "items": {"type": "string"}}}}
    assert argument_problems(caught.value, "revise_many", schema, data) == [
        "error: facts line 2: must be a string, got the number 7"
    ]


def test_an_epoch_past_the_root_names_itself_up_to_20_digits_and_never_prints_a_huge_one():
    from memory_core.ops.history import parse_epoch

    for value, said in (
        (99999999999999999999, "epoch 99999999999999999999 does not exist"),  # 20 digits, as a number
        ("99999999999999999999", "epoch 99999999999999999999 does not exist"),
        (10**20, "epoch (a number with more than 20 digits) does not exist"),
        (10**5000, "epoch (a number with more than 20 digits) does not exist"),  # str() would refuse it
    ):
        with pytest.raises(InputError) as refused:
            parse_epoch(value, 3)
        assert said in str(refused.value), str(refused.value)

"""key_refusal (pure: memory_core.core.investigation), which check asks of every stored key: it
refuses exactly what check_key refuses or spells otherwise, its fast path for plain ASCII keys
included (letters, digits, '_', '-', '.': accepted at once, without check_key's script lookups)."""

from __future__ import annotations

import random

from memory_core.core.errors import InputError
from memory_core.core.investigation import MAX_KEY, check_key, key_refusal, named


def accepted_as_is(key: str) -> bool:
    try:
        return check_key(key, "key") == key
    except InputError:
        return False


def test_key_refusal_refuses_exactly_what_check_key_refuses_or_spells_otherwise():
    rng = random.Random(7)
    letters = "abcXYZ019_-. '|}/)\t\n\x00\u00e9\u0410\ufb01\u202e"
    keys = ["".join(rng.choice(letters) for _ in range(rng.randint(0, 7))) for _ in range(20_000)]
    keys += [".", "..", "-_", "a" * MAX_KEY, "a" * (MAX_KEY + 1), " E1", "E1 ", "E_qa"]
    for key in keys:
        assert (key_refusal(key) is None) == accepted_as_is(key), repr(key)


def test_the_reasons_name_the_refused_character_or_the_other_spelling():
    assert "U+0027 APOSTROPHE" in key_refusal("x'}) DETACH DELETE n //")
    assert key_refusal("\ufb01nch") == "FALSIFY's input reads it as 'finch', another key"
    assert key_refusal("E\x00") == "'key' contains a control character (U+0000 at position 1)"
    assert named("E\u202eqa") == "'E\\u202eqa'" and named("k" * 300).endswith("... (300 characters)")

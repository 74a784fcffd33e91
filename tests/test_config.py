"""The settings: one parser, every FALSIFY_* variable read into one typed object, bad values
named (exit 2) instead of silently replaced by a default, secrets never in the repr."""

from __future__ import annotations

import pytest

from memory_core.store import config
from memory_core.store.config import SettingsError


def test_defaults_when_nothing_is_set():
    s = config.read({})
    assert s == config.Settings()
    assert (s.backend, s.lock_timeout, s.gate1_k, s.gate1_threshold, s.llm_concurrency) == ("ladybug", 30.0, 8, None, 4)
    assert s.verdict_cache is True and s.no_server is False and s.arrow_pool == "system"


def test_values_are_parsed_and_typed():
    s = config.read({"FALSIFY_BACKEND": "PostgreSQL", "FALSIFY_LOCK_TIMEOUT": "0.5", "FALSIFY_GATE1_K": "3",
                     "FALSIFY_GATE1_THRESHOLD": "1.5", "FALSIFY_VERDICT_CACHE": "off", "FALSIFY_NO_SERVER": "1",
                     "FALSIFY_ARROW_POOL": "", "LLM_API_KEY": "sk-x", "FALSIFY_HOME": " /tmp/r "})
    assert (s.backend, s.lock_timeout, s.gate1_k, s.gate1_threshold) == ("postgres", 0.5, 3, 1.5)
    assert s.verdict_cache is False and s.no_server is True and s.arrow_pool == "" and s.llm_key is True
    assert s.home == "/tmp/r"


@pytest.mark.parametrize("name, value", [
    ("FALSIFY_BACKEND", "mysql"), ("FALSIFY_LOCK_TIMEOUT", "soon"), ("FALSIFY_LOCK_TIMEOUT", "-1"),
    ("FALSIFY_GATE1_K", "0"), ("FALSIFY_GATE1_K", "2.5"), ("FALSIFY_GATE1_THRESHOLD", "3"),
    ("FALSIFY_LLM_CONCURRENCY", "many"), ("FALSIFY_LLM_BUDGET_USD", "-0.1"), ("FALSIFY_JUDGE_TIMEOUT", "0"),
    ("FALSIFY_VERDICT_CACHE", "maybe"), ("FALSIFY_RUN_HISTORY_KEEP", "-3"), ("FALSIFY_ARROW_POOL", "tcmalloc"),
])
def test_a_bad_value_names_the_variable(name, value):
    with pytest.raises(SettingsError) as caught:
        config.read({name: value})
    assert str(caught.value).startswith(f"{name}=") and "expected" in str(caught.value)
    assert caught.value.exit_code == 2


def test_the_repr_holds_no_secret():
    s = config.read({"FALSIFY_TOKEN": "t0ken-0123456789abcdef", "FALSIFY_DATABASE_URL": "postgresql://a:PW@h/db"})
    assert s.token == "t0ken-0123456789abcdef"
    assert "t0ken" not in repr(s) and "PW" not in repr(s)


def test_replace_changes_this_process_only(monkeypatch):
    monkeypatch.delenv("FALSIFY_BACKEND", raising=False)
    monkeypatch.delenv("FALSIFY_DATABASE_URL", raising=False)
    before = config.reload()
    try:
        after = config.replace(backend="postgres", database_url="postgresql://a:b@h/d")
        assert config.current() is after and after.backend == "postgres" and before.backend == "ladybug"
    finally:
        config.reload()

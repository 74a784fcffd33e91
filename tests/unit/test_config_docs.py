"""docs/configuration.md documents exactly the settings memory_core/store/settings.py parses.

Every ``FALSIFY_*`` variable the parser reads is in the page's table and every one the page
names is read by the parser (a variable only the tests or benchmarks read belongs in
docs/tests.md, not here); and the package names no ``FALSIFY_*`` variable the parser does
not read (one parser: a module reading a variable of its own would bypass it). Read from
the source text, nothing imported.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "memory_core" / "store" / "settings.py"
PAGE = ROOT / "docs" / "configuration.md"
VARIABLE = re.compile(r"\bFALSIFY_[A-Z0-9_]*[A-Z0-9]\b")


def named(text: str) -> set[str]:
    return set(VARIABLE.findall(text))


def parsed() -> set[str]:
    """The variables settings.py reads: the quoted names (its comments may mention others)."""
    return set(re.findall(r"[\"'](FALSIFY_[A-Z0-9_]*[A-Z0-9])[\"']", CONFIG.read_text(encoding="utf-8")))


def table_rows(text: str) -> set[str]:
    """The variables in the first column of the page's settings table."""
    return {m.group(1) for m in re.finditer(r"^\| `([A-Z][A-Z0-9_]*)` \|", text, re.MULTILINE)}


def test_the_parser_reads_the_settings_it_is_known_for():
    found = parsed()
    assert {"FALSIFY_HOME", "FALSIFY_LLM_CONCURRENCY", "FALSIFY_TOKEN_FILE", "FALSIFY_GATE1_K"} <= found, (
        found
    )
    assert len(found) >= 20, found


def test_every_setting_is_in_the_table_and_the_page_names_no_other():
    text = PAGE.read_text(encoding="utf-8")
    settings = parsed()
    rows = {v for v in table_rows(text) if v.startswith("FALSIFY_")}
    assert sorted(settings - rows) == [], "settings missing from the table in docs/configuration.md"
    assert sorted(rows - settings) == [], (
        "rows in docs/configuration.md for variables settings.py does not read"
    )
    assert sorted(named(text) - settings) == [], (
        "docs/configuration.md names variables settings.py does not read (tests' variables go in docs/tests.md)"
    )


def test_the_table_has_the_two_llm_settings_config_keeps():
    rows = table_rows(PAGE.read_text(encoding="utf-8"))
    assert {"LLM_API_KEY", "LLM_MODEL"} <= rows, rows


def test_the_page_says_a_bad_value_is_an_error_naming_it():
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert "A value that does not parse is an error, exit 2, naming the variable" in text


def test_the_package_names_no_variable_the_parser_does_not_read():
    settings = parsed()
    stray = {}
    for path in sorted((ROOT / "memory_core").rglob("*.py")):
        for name in named(path.read_text(encoding="utf-8")) - settings:
            stray.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert stray == {}, stray


def test_the_checks_see_a_missing_row():
    """The table check can fail: a page without one row is reported."""
    text = PAGE.read_text(encoding="utf-8")
    cut = "\n".join(line for line in text.splitlines() if not line.startswith("| `FALSIFY_GATE1_K`"))
    assert "FALSIFY_GATE1_K" in parsed() - table_rows(cut)

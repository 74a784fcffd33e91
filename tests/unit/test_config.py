"""The settings: one parser, every FALSIFY_* variable read into one typed object, bad values
named (exit 2) instead of silently replaced by a default, secrets never in the repr."""

from __future__ import annotations

import pytest

from memory_core.store import settings
from memory_core.store.settings import SettingsError


def test_defaults_when_nothing_is_set():
    s = settings.read({})
    assert s == settings.Settings()
    assert (s.backend, s.lock_timeout, s.gate1_k, s.gate1_threshold, s.llm_concurrency) == (
        "ladybug",
        30.0,
        8,
        None,
        4,
    )
    assert s.verdict_cache is True and s.no_server is False and s.arrow_pool == "system"


def test_values_are_parsed_and_typed():
    s = settings.read(
        {
            "FALSIFY_BACKEND": "PostgreSQL",
            "FALSIFY_LOCK_TIMEOUT": "0.5",
            "FALSIFY_GATE1_K": "3",
            "FALSIFY_GATE1_THRESHOLD": "1.5",
            "FALSIFY_VERDICT_CACHE": "off",
            "FALSIFY_NO_SERVER": "1",
            "FALSIFY_ARROW_POOL": "",
            "LLM_API_KEY": "sk-x",
            "FALSIFY_HOME": " /tmp/r ",
        }
    )
    assert (s.backend, s.lock_timeout, s.gate1_k, s.gate1_threshold) == ("postgres", 0.5, 3, 1.5)
    assert s.verdict_cache is False and s.no_server is True and s.arrow_pool == "" and s.llm_key is True
    assert s.home == "/tmp/r"


@pytest.mark.parametrize(
    "name, value",
    [
        ("FALSIFY_BACKEND", "mysql"),
        ("FALSIFY_LOCK_TIMEOUT", "soon"),
        ("FALSIFY_LOCK_TIMEOUT", "-1"),
        ("FALSIFY_GATE1_K", "0"),
        ("FALSIFY_GATE1_K", "2.5"),
        ("FALSIFY_GATE1_THRESHOLD", "3"),
        ("FALSIFY_LLM_CONCURRENCY", "many"),
        ("FALSIFY_LLM_BUDGET_USD", "-0.1"),
        ("FALSIFY_JUDGE_TIMEOUT", "0"),
        ("FALSIFY_VERDICT_CACHE", "maybe"),
        ("FALSIFY_RUN_HISTORY_KEEP", "-3"),
        ("FALSIFY_ARROW_POOL", "tcmalloc"),
    ],
)
def test_a_bad_value_names_the_variable(name, value):
    with pytest.raises(SettingsError) as caught:
        settings.read({name: value})
    assert str(caught.value).startswith(f"{name}=") and "expected" in str(caught.value)
    assert caught.value.exit_code == 2


def test_the_repr_holds_no_secret():
    s = settings.read(
        {"FALSIFY_TOKEN": "t0ken-0123456789abcdef", "FALSIFY_DATABASE_URL": "postgresql://a:PW@h/db"}
    )
    assert s.token == "t0ken-0123456789abcdef"
    assert "t0ken" not in repr(s) and "PW" not in repr(s)


def test_replace_changes_this_process_only(monkeypatch):
    monkeypatch.delenv("FALSIFY_BACKEND", raising=False)
    monkeypatch.delenv("FALSIFY_DATABASE_URL", raising=False)
    before = settings.reload()
    try:
        after = settings.replace(backend="postgres", database_url="postgresql://a:b@h/d")
        assert settings.current() is after and after.backend == "postgres" and before.backend == "ladybug"
    finally:
        settings.reload()


def test_every_setting_is_one_row_of_the_table():
    """Each field names its variable and parser once; its default is the field's own (read() of
    nothing gives the class's defaults, field by field)."""
    import dataclasses

    fields = dataclasses.fields(settings.Settings)
    variables = [f.metadata.get("variable") for f in fields]
    assert all(variables) and len(set(variables)) == len(variables), variables
    assert all(callable(f.metadata.get("parse")) for f in fields)
    nothing = settings.read({})
    assert {f.name: getattr(nothing, f.name) for f in fields} == {f.name: f.default for f in fields}
    assert settings.variables()["lock_timeout"] == "FALSIFY_LOCK_TIMEOUT"


def test_the_postgres_variables_are_read_with_the_rest_and_the_password_is_kept_out_of_the_repr():
    from memory_core.store.backends.postgres import database_url

    env = {
        "DB_HOST": " db.example ",
        "DB_PORT": "6543",
        "DB_USERNAME": "u@x",
        "DB_PASSWORD": "p/w-SECRET",
        "DB_NAME": "beliefs",
    }
    s = settings.read(env)
    assert (s.db_host, s.db_port, s.db_username, s.db_password, s.db_name) == (
        "db.example",
        "6543",
        "u@x",
        "p/w-SECRET",
        "beliefs",
    )
    assert "SECRET" not in repr(s)
    assert database_url(s) == "postgresql://u%40x:p%2Fw-SECRET@db.example:6543/beliefs"
    assert database_url(settings.read(dict(env, DB_PORT=""))).endswith("@db.example:5432/beliefs")
    url = "postgresql://a:b@h:1/d"
    assert database_url(settings.read(dict(env, FALSIFY_DATABASE_URL=url))) == url  # the URL wins
    from memory_core.core.errors import InputError

    with pytest.raises(InputError) as caught:  # naming what is missing
        database_url(settings.read({"DB_HOST": "h"}))
    assert "missing: DB_USERNAME, DB_PASSWORD, DB_NAME" in str(caught.value)


def test_the_postgres_backend_reads_no_variable_itself():
    """postgres.py builds its URL from the settings it is given: the environment is not read there."""
    from pathlib import Path

    backends = Path(__file__).resolve().parents[2] / "memory_core" / "store" / "backends"
    text = (backends / "postgres.py").read_text()
    assert "os.environ" not in text and "getenv" not in text


# the shells and the API's opening: the only modules that ask for this process's settings
ALLOWED_TO_FETCH = (
    "memory_core/store/settings.py",
    "memory_core/api.py",
    "memory_core/shell/",
    "memory_core/web/",
    "memory_core/mcp/",
)


CONFIG_MODULE = "memory_core.store.settings"  # the module holding the process's settings


def fetches(source: str) -> list[int]:
    """The lines of ``source`` that ask for this process's settings: ``current()`` or
    ``reload()`` of the settings module, however it was imported and named."""
    import ast

    parent, _, leaf = CONFIG_MODULE.rpartition(".")
    tree = ast.parse(source)
    modules, functions = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == parent:
            modules |= {a.asname or a.name for a in node.names if a.name == leaf}
        elif isinstance(node, ast.ImportFrom) and node.module == CONFIG_MODULE:
            functions |= {a.asname or a.name for a in node.names if a.name in ("current", "reload")}
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name == CONFIG_MODULE and a.asname}
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and f.attr in ("current", "reload")
            and isinstance(f.value, ast.Name)
            and f.value.id in modules
        ):
            lines.append(node.lineno)
        elif isinstance(f, ast.Name) and f.id in functions:
            lines.append(node.lineno)
    return lines


def test_settings_are_passed_below_the_shells_never_fetched():
    """core, store, judging, tasks and ops (and the session) receive the stores' settings as an
    argument: only the shells and the API's opening call settings.current() / settings.reload()."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    found = {}
    for path in sorted((root / "memory_core").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name.startswith(ALLOWED_TO_FETCH):
            continue
        lines = fetches(path.read_text(encoding="utf-8"))
        if lines:
            found[name] = lines
    assert found == {}, f"these modules fetch the process's settings instead of receiving them: {found}"
    assert fetches((root / "memory_core" / "api.py").read_text(encoding="utf-8"))  # the opening does


def test_the_fetch_check_can_fail():
    fallback = "from memory_core.store import settings\ndef f(s=None):\n    return s or settings.current()\n"
    assert fetches(fallback) == [3]
    assert fetches("from memory_core.store.settings import reload as again\nagain()\n") == [2]
    assert fetches("def f(settings):\n    return settings.lock_timeout\n") == []


def test_every_variable_of_the_table_is_in_the_documented_table():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = [line.split(" | ")[0] for line in page.splitlines() if line.startswith("| `")]
    missing = [v for v in settings.variables().values() if not any(f"`{v}`" in row for row in rows)]
    assert missing == [], f"settings missing from the table in docs/configuration.md: {missing}"


def test_cognee_gets_the_user_and_password_it_pastes_into_its_url_percent_encoded():
    """cognee builds ``postgresql+asyncpg://{user}:{password}@{host}:{port}/{db}`` from the values
    FALSIFY hands it: a password holding ``@ : / # ? %`` (percent-encoded in FALSIFY's URL, as
    libpq wants) reaches SQLAlchemy whole, and the decoded password is masked in messages."""
    from sqlalchemy.engine import make_url

    from memory_core.core.redaction import redact
    from memory_core.store.backends.postgres import cognee_values

    values = cognee_values("postgresql://we%40ird:p%40ss%3Aw%2Frd%2540%23%3FLong@db.example:6543/beliefs")
    for prefix in ("GRAPH_DATABASE_", "VECTOR_DB_"):
        url = make_url(
            f"postgresql+asyncpg://{values[prefix + 'USERNAME']}:{values[prefix + 'PASSWORD']}"
            f"@{values[prefix + 'HOST']}:{values[prefix + 'PORT']}/{values[prefix + 'NAME']}"
        )
        assert (url.username, url.password, url.host, url.port, url.database) == (
            "we@ird",
            "p@ss:w/rd%40#?Long",
            "db.example",
            6543,
            "beliefs",
        )
    assert "rd%40#?Long" not in redact("auth failed for p@ss:w/rd%40#?Long")

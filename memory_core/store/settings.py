"""FALSIFY's own settings, read from the environment once into one typed object.

Every ``FALSIFY_*`` variable (and the cognee variables FALSIFY decides by: ``LLM_API_KEY``,
``LLM_MODEL`` and the PostgreSQL ``DB_*``) is parsed here and nowhere else, from one table:
each field of :class:`Settings` names its variable, its default (written there only) and
its parser. A value that does not parse is a :class:`SettingsError` (exit 2) naming the
variable and what it accepts, never a silent fallback to the default.

Only the shells and the API's opening (``Falsify.open``/``attach``, the CLI's entry, the
MCP and web servers' start, the benchmarks' entry points) ask for this process's settings:
:func:`current` returns the object read the first time it is asked for; :func:`reload`
reads the environment again (once per opening, so a variable set before opening a root
counts); :func:`replace` changes fields in-process (``--database URL``) without touching
the environment. Everything below receives the opened stores' ``Settings`` as an argument
(tests/unit/test_config.py holds the line).

The meaning of each setting is documented in docs/configuration.md.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, TypeVar

from memory_core.core.errors import InputError

T = TypeVar("T")

_BACKEND_NAMES = {
    "": "ladybug",
    "ladybug": "ladybug",
    "embedded": "ladybug",
    "postgres": "postgres",
    "postgresql": "postgres",
    "pgvector": "postgres",
}
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


class SettingsError(InputError):
    """A ``FALSIFY_*`` variable holds a value FALSIFY cannot use (the message names it)."""


def _text(env: Mapping[str, str], name: str, default: Optional[str] = None) -> Optional[str]:
    value = env.get(name, "").strip()
    return value or default


def _shown(raw: str) -> str:
    """A setting's value as an error line shows it: short (a 5,000-digit value is not echoed)."""
    return repr(raw) if len(raw) <= 40 else repr(raw[:37] + "...")


def _number(kind: Callable[[str], T], accepts: Callable[[T], bool], says: str) -> Callable[..., T]:
    """A parser of a number within its bounds: finite (no inf, nan), not longer than 30
    characters (a whole number of 5,000 digits is no setting), and accepted by ``accepts``."""

    def parse(env: Mapping[str, str], name: str, default: T) -> T:
        raw = env.get(name, "").strip()
        if not raw:
            return default
        try:
            if len(raw) > 30:
                raise ValueError(raw)
            value = kind(raw)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(raw)
        except (ValueError, OverflowError):
            raise SettingsError(f"{name}={_shown(raw)}: expected {says}") from None
        if not accepts(value):
            raise SettingsError(f"{name}={_shown(raw)}: expected {says}")
        return value

    return parse


# upper bounds: beyond them a value is a mistake (an overflow in a store, a wait of centuries)
DAY_S = 86_400.0
MAX_GATE1_K = 10_000
MAX_CONCURRENCY = 256
MAX_COMMITS = 1_000_000_000
FAULT_AT = re.compile(r"[a-z][a-z_]{0,39}(?::[1-9][0-9]{0,5})?")
WHOLE = "a whole number"


def _fault_at(env: Mapping[str, str], name: str, default: Optional[str]) -> Optional[str]:
    raw = _text(env, name, default)
    if raw is not None and not FAULT_AT.fullmatch(raw):
        raise SettingsError(
            f"{name}={_shown(raw)}: expected step or step:n (a write step's name, "
            "n a whole number 1 to 999999)"
        )
    return raw


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise SettingsError(f"{name}={_shown(raw)}: expected 1 or 0 (true/false, yes/no, on/off)")


def _backend(env: Mapping[str, str], name: str, default: str) -> str:
    raw = env.get(name, "").strip().lower()
    if raw not in _BACKEND_NAMES:
        raise SettingsError(f"{name}={_shown(raw)}: expected 'ladybug' (embedded, the default) or 'postgres'")
    return _BACKEND_NAMES[raw] if raw else default


def _lower(env: Mapping[str, str], name: str, default: Optional[str]) -> Optional[str]:
    return (_text(env, name) or "").lower() or default


def _present(env: Mapping[str, str], name: str, default: bool) -> bool:
    return bool(env.get(name, "").strip()) or default


def _stripped(env: Mapping[str, str], name: str, default: str) -> str:
    return env.get(name, "").strip() or default


def _arrow_pool(env: Mapping[str, str], name: str, default: str) -> str:
    if name not in env:
        return default
    pool = env[name].strip().lower()
    if pool not in ("", "system", "jemalloc", "mimalloc"):
        raise SettingsError(f"{name}={_shown(pool)}: expected system, jemalloc, mimalloc or empty")
    return pool


def setting(variable: str, default, parse: Callable = _text, *, secret: bool = False):
    """One setting: the variable it is read from, its default (written here only) and its
    parser ``parse(env, variable, default)``. A secret is never shown in a repr."""
    return dataclasses.field(
        default=default, repr=not secret, metadata={"variable": variable, "parse": parse}
    )


@dataclass(frozen=True)
class Settings:
    """The one table of FALSIFY's settings: each field's variable, default and parser."""

    # where the data lives
    home: Optional[str] = setting("FALSIFY_HOME", None)  # else ./.falsify
    backend: str = setting("FALSIFY_BACKEND", "ladybug", _backend)  # ladybug | postgres
    database_url: Optional[str] = setting("FALSIFY_DATABASE_URL", None)  # secret: shown as <set>
    # cognee's PostgreSQL variables (the database when FALSIFY_DATABASE_URL is not set)
    db_host: Optional[str] = setting("DB_HOST", None)
    db_port: str = setting("DB_PORT", "5432")
    db_username: Optional[str] = setting("DB_USERNAME", None)
    db_password: Optional[str] = setting("DB_PASSWORD", None, secret=True)
    db_name: Optional[str] = setting("DB_NAME", None)
    embedder: Optional[str] = setting("FALSIFY_EMBEDDER", None, _lower)  # "local" forces the bundled model
    # writing
    lock_timeout: float = setting(
        "FALSIFY_LOCK_TIMEOUT", 30.0, _number(float, lambda v: 0 <= v <= DAY_S, f"seconds, 0 to {DAY_S:g}")
    )
    fault_at: Optional[str] = setting("FALSIFY_FAULT_AT", None, _fault_at)  # step[:n] (crash tests only)
    # judging
    gate1_k: int = setting(
        "FALSIFY_GATE1_K", 8, _number(int, lambda v: 1 <= v <= MAX_GATE1_K, f"{WHOLE}, 1 to {MAX_GATE1_K}")
    )
    gate1_threshold: Optional[float] = setting(
        "FALSIFY_GATE1_THRESHOLD",
        None,
        _number(float, lambda v: 0.0 < v <= 2.0, "a cosine distance in (0, 2]"),
    )
    recall_floor: Optional[float] = setting(
        "FALSIFY_RECALL_FLOOR",
        None,  # None: the measured default
        _number(float, lambda v: 0.0 < v <= 2.0, "a cosine distance in (0, 2]"),
    )
    llm_concurrency: int = setting(
        "FALSIFY_LLM_CONCURRENCY",
        4,
        _number(int, lambda v: 1 <= v <= MAX_CONCURRENCY, f"{WHOLE}, 1 to {MAX_CONCURRENCY}"),
    )
    llm_per_candidate: bool = setting("FALSIFY_LLM_PER_CANDIDATE", False, _flag)
    llm_budget_usd: Optional[float] = setting(
        "FALSIFY_LLM_BUDGET_USD",
        None,
        _number(float, lambda v: 0 <= v <= 1e9, "a number of US dollars, 0 to 1e9"),
    )
    judge_timeout: float = setting(
        "FALSIFY_JUDGE_TIMEOUT",
        60.0,
        _number(float, lambda v: 0 < v <= DAY_S, f"seconds, more than 0 and at most {DAY_S:g}"),
    )
    verdict_cache: bool = setting("FALSIFY_VERDICT_CACHE", True, _flag)
    llm_key: bool = setting("LLM_API_KEY", False, _present)  # set or not (the value is never kept here)
    llm_model: str = setting("LLM_MODEL", "", _stripped)
    # housekeeping after commits
    graph_reopen_every: int = setting(
        "FALSIFY_GRAPH_REOPEN_EVERY",
        20,
        _number(  # commits (0 = never)
            int, lambda v: 0 <= v <= MAX_COMMITS, f"{WHOLE} of commits, 0 to {MAX_COMMITS}"
        ),
    )
    graph_compact_ratio: float = setting(
        "FALSIFY_GRAPH_COMPACT_RATIO",
        2.0,
        _number(  # 0 = never
            float, lambda v: 0 <= v <= 1e6, "a ratio, 0 (never compact) to 1e6"
        ),
    )
    vector_prune_every: int = setting(
        "FALSIFY_VECTOR_PRUNE_EVERY",
        50,
        _number(  # commits (0 = never)
            int, lambda v: 0 <= v <= MAX_COMMITS, f"{WHOLE} of commits, 0 to {MAX_COMMITS}"
        ),
    )
    vector_prune_age_s: float = setting(
        "FALSIFY_VECTOR_PRUNE_AGE_S",
        30.0,
        _number(float, lambda v: 0 <= v <= 365 * DAY_S, f"seconds, 0 to {365 * DAY_S:g}"),
    )
    vector_reconnect: bool = setting("FALSIFY_VECTOR_RECONNECT", True, _flag)
    run_history_keep: int = setting(
        "FALSIFY_RUN_HISTORY_KEEP",
        200,
        _number(  # 0 = keep all
            int, lambda v: 0 <= v <= MAX_COMMITS, f"{WHOLE}, 0 to {MAX_COMMITS}"
        ),
    )
    malloc_arena_max: int = setting(
        "FALSIFY_MALLOC_ARENA_MAX",
        2,
        _number(  # 0 = glibc's default
            int, lambda v: 0 <= v <= 1024, f"{WHOLE}, 0 to 1024"
        ),
    )
    arrow_pool: str = setting("FALSIFY_ARROW_POOL", "system", _arrow_pool)  # empty = pyarrow's default
    # shells
    token: Optional[str] = setting("FALSIFY_TOKEN", None, secret=True)
    token_file: Optional[str] = setting("FALSIFY_TOKEN_FILE", None)
    no_server: bool = setting(
        "FALSIFY_NO_SERVER", False, _flag
    )  # the CLI never forwards to a server or launcher
    launcher: bool = setting("FALSIFY_LAUNCHER", True, _flag)  # commands start warm through the launcher
    launcher_idle_s: float = setting(
        "FALSIFY_LAUNCHER_IDLE_S", 900.0, _number(float, lambda v: v > 0, "seconds, more than 0")
    )
    runtime_dir: Optional[str] = setting("FALSIFY_RUNTIME_DIR", None)  # the launcher's private directory

    def __repr__(self) -> str:  # never prints a secret
        values = dataclasses.asdict(self)
        shown = {f.name: values[f.name] for f in dataclasses.fields(self) if f.repr}
        if shown.get("database_url"):
            shown["database_url"] = "<set>"
        return "Settings(" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + ")"


def variables() -> dict[str, str]:
    """Each setting's variable, by field name (the table above, in its order)."""
    return {f.name: f.metadata["variable"] for f in dataclasses.fields(Settings)}


def read(env: Optional[Mapping[str, str]] = None) -> Settings:
    """Parse the settings from ``env`` (default: the process environment), field by field."""
    env = os.environ if env is None else env
    return Settings(
        **{
            f.name: f.metadata["parse"](env, f.metadata["variable"], f.default)
            for f in dataclasses.fields(Settings)
        }
    )


_current: Optional[Settings] = None


def current() -> Settings:
    """The settings of this process, read from the environment the first time."""
    global _current
    if _current is None:
        _current = read()
        _register_secrets()
    return _current


def reload() -> Settings:
    """Read the environment again (at the start of a command or an ``open``)."""
    global _current
    _current = read()
    _register_secrets()
    return _current


# secrets never written to a log or printed in an error line: the values of these variables
# (with a URL's password and the provider-key shapes: one redaction, memory_core.core.redaction)
SECRET_VARIABLES = (
    "FALSIFY_TOKEN",
    "LLM_API_KEY",
    "EMBEDDING_API_KEY",
    "FALSIFY_DATABASE_URL",
    "DB_PASSWORD",
    "VECTOR_DB_KEY",
    "GRAPH_DATABASE_PASSWORD",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "AZURE_API_KEY",
    "HUGGINGFACE_API_KEY",
    "PGPASSWORD",
)


def register_secrets(env: Optional[Mapping[str, str]] = None) -> None:
    """Hand the secret values of ``env`` (default: the process environment) to the one redaction."""
    from memory_core.core.redaction import register

    env = os.environ if env is None else env
    register(env.get(name, "") for name in SECRET_VARIABLES)


def _register_secrets() -> None:
    register_secrets()


def replace(**changes) -> Settings:
    """Change some settings of this process (``--database URL``), keeping the rest."""
    global _current
    _current = dataclasses.replace(current(), **changes)
    return _current

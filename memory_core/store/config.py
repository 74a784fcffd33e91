"""FALSIFY's own settings, read from the environment once into one typed object.

Every ``FALSIFY_*`` variable (and the two of cognee's FALSIFY decides by: ``LLM_API_KEY``,
``LLM_MODEL``) is parsed here and nowhere else. :func:`current` returns the object read
the first time it is asked for; :func:`reload` reads the environment again (``Falsify.open``
and the CLI do, once per command, so a variable set before opening a root counts);
:func:`replace` changes fields in-process (``--database URL``) without touching the
environment. A value that does not parse is a :class:`SettingsError` (exit 2) naming the
variable and what it accepts, never a silent fallback to the default.

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

BACKENDS = ("ladybug", "postgres")
_BACKEND_NAMES = {"": "ladybug", "ladybug": "ladybug", "embedded": "ladybug",
                  "postgres": "postgres", "postgresql": "postgres", "pgvector": "postgres"}
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


class SettingsError(InputError):
    """A ``FALSIFY_*`` variable holds a value FALSIFY cannot use (the message names it)."""


@dataclass(frozen=True)
class Settings:
    # where the data lives
    home: Optional[str] = None                  # FALSIFY_HOME (else ./.falsify)
    backend: str = "ladybug"                    # FALSIFY_BACKEND: ladybug | postgres
    database_url: Optional[str] = None          # FALSIFY_DATABASE_URL (secret)
    embedder: Optional[str] = None              # FALSIFY_EMBEDDER ("local" forces the bundled model)
    # writing
    lock_timeout: float = 30.0                  # FALSIFY_LOCK_TIMEOUT, seconds >= 0
    fault_at: Optional[str] = None              # FALSIFY_FAULT_AT=step[:n] (crash tests only)
    # judging
    gate1_k: int = 8                            # FALSIFY_GATE1_K >= 1
    gate1_threshold: Optional[float] = None     # FALSIFY_GATE1_THRESHOLD in (0, 2]
    recall_floor: Optional[float] = None        # FALSIFY_RECALL_FLOOR in (0, 2] (None: the measured default)
    llm_concurrency: int = 4                    # FALSIFY_LLM_CONCURRENCY >= 1
    llm_per_candidate: bool = False             # FALSIFY_LLM_PER_CANDIDATE
    llm_budget_usd: Optional[float] = None      # FALSIFY_LLM_BUDGET_USD >= 0
    judge_timeout: float = 60.0                 # FALSIFY_JUDGE_TIMEOUT, seconds > 0
    verdict_cache: bool = True                  # FALSIFY_VERDICT_CACHE
    llm_key: bool = False                       # LLM_API_KEY is set (the value is never kept here)
    llm_model: str = ""                         # LLM_MODEL
    # housekeeping after commits
    graph_reopen_every: int = 100               # FALSIFY_GRAPH_REOPEN_EVERY, commits (0 = never)
    graph_compact_ratio: float = 2.0            # FALSIFY_GRAPH_COMPACT_RATIO (0 = never)
    vector_prune_every: int = 50                # FALSIFY_VECTOR_PRUNE_EVERY, commits (0 = never)
    vector_prune_age_s: float = 30.0            # FALSIFY_VECTOR_PRUNE_AGE_S
    vector_reconnect: bool = True               # FALSIFY_VECTOR_RECONNECT
    run_history_keep: int = 200                 # FALSIFY_RUN_HISTORY_KEEP (0 = keep all)
    malloc_arena_max: int = 2                   # FALSIFY_MALLOC_ARENA_MAX (0 = glibc's default)
    arrow_pool: str = "system"                  # FALSIFY_ARROW_POOL (empty = pyarrow's default)
    # shells
    token: Optional[str] = dataclasses.field(default=None, repr=False)  # FALSIFY_TOKEN (secret)
    token_file: Optional[str] = None            # FALSIFY_TOKEN_FILE
    no_server: bool = False                     # FALSIFY_NO_SERVER: the CLI never forwards to a server or launcher
    launcher: bool = True                       # FALSIFY_LAUNCHER: commands start warm through the launcher
    launcher_idle_s: float = 900.0              # FALSIFY_LAUNCHER_IDLE_S, seconds > 0
    runtime_dir: Optional[str] = None           # FALSIFY_RUNTIME_DIR (the launcher's private directory)

    def __repr__(self) -> str:  # never prints a secret
        values = dataclasses.asdict(self)
        shown = {f.name: values[f.name] for f in dataclasses.fields(self) if f.repr}
        if shown.get("database_url"):
            shown["database_url"] = "<set>"
        return "Settings(" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + ")"


def _text(env: Mapping[str, str], name: str) -> Optional[str]:
    value = env.get(name, "").strip()
    return value or None


def _shown(raw: str) -> str:
    """A setting's value as an error line shows it: short (a 5,000-digit value is not echoed)."""
    return repr(raw) if len(raw) <= 40 else repr(raw[:37] + "...")


def _number(env: Mapping[str, str], name: str, kind: Callable[[str], T], default: T,
            accepts: Callable[[T], bool], says: str) -> T:
    """A number within its bounds: finite (no inf, nan), not longer than 30 characters (a
    whole number of 5,000 digits is no setting), and accepted by ``accepts``."""
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


# upper bounds: beyond them a value is a mistake (an overflow in a store, a wait of centuries)
DAY_S = 86_400.0
MAX_GATE1_K = 10_000
MAX_CONCURRENCY = 256
MAX_COMMITS = 1_000_000_000
FAULT_AT = re.compile(r"[a-z][a-z_]{0,39}(?::[1-9][0-9]{0,5})?")


def _fault_at(env: Mapping[str, str]) -> Optional[str]:
    raw = _text(env, "FALSIFY_FAULT_AT")
    if raw is not None and not FAULT_AT.fullmatch(raw):
        raise SettingsError(f"FALSIFY_FAULT_AT={_shown(raw)}: expected step or step:n (a write step's name, "
                            "n a whole number 1 to 999999)")
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


def read(env: Optional[Mapping[str, str]] = None) -> Settings:
    """Parse the settings from ``env`` (default: the process environment)."""
    env = os.environ if env is None else env
    raw_backend = env.get("FALSIFY_BACKEND", "").strip().lower()
    if raw_backend not in _BACKEND_NAMES:
        raise SettingsError(f"FALSIFY_BACKEND={_shown(raw_backend)}: expected 'ladybug' (embedded, the default) "
                            "or 'postgres'")
    whole = "a whole number"
    return Settings(
        home=_text(env, "FALSIFY_HOME"),
        backend=_BACKEND_NAMES[raw_backend],
        database_url=_text(env, "FALSIFY_DATABASE_URL"),
        embedder=(_text(env, "FALSIFY_EMBEDDER") or "").lower() or None,
        lock_timeout=_number(env, "FALSIFY_LOCK_TIMEOUT", float, 30.0, lambda v: 0 <= v <= DAY_S,
                             f"seconds, 0 to {DAY_S:g}"),
        fault_at=_fault_at(env),
        gate1_k=_number(env, "FALSIFY_GATE1_K", int, 8, lambda v: 1 <= v <= MAX_GATE1_K, f"{whole}, 1 to {MAX_GATE1_K}"),
        gate1_threshold=_number(env, "FALSIFY_GATE1_THRESHOLD", float, None, lambda v: 0.0 < v <= 2.0,
                                "a cosine distance in (0, 2]"),
        recall_floor=_number(env, "FALSIFY_RECALL_FLOOR", float, None, lambda v: 0.0 < v <= 2.0,
                             "a cosine distance in (0, 2]"),
        llm_concurrency=_number(env, "FALSIFY_LLM_CONCURRENCY", int, 4, lambda v: 1 <= v <= MAX_CONCURRENCY,
                                f"{whole}, 1 to {MAX_CONCURRENCY}"),
        llm_per_candidate=_flag(env, "FALSIFY_LLM_PER_CANDIDATE", False),
        llm_budget_usd=_number(env, "FALSIFY_LLM_BUDGET_USD", float, None, lambda v: 0 <= v <= 1e9,
                               "a number of US dollars, 0 to 1e9"),
        judge_timeout=_number(env, "FALSIFY_JUDGE_TIMEOUT", float, 60.0, lambda v: 0 < v <= DAY_S,
                              f"seconds, more than 0 and at most {DAY_S:g}"),
        verdict_cache=_flag(env, "FALSIFY_VERDICT_CACHE", True),
        llm_key=bool(env.get("LLM_API_KEY", "").strip()),
        llm_model=env.get("LLM_MODEL", "").strip(),
        graph_reopen_every=_number(env, "FALSIFY_GRAPH_REOPEN_EVERY", int, 100, lambda v: 0 <= v <= MAX_COMMITS,
                                   f"{whole} of commits, 0 to {MAX_COMMITS}"),
        graph_compact_ratio=_number(env, "FALSIFY_GRAPH_COMPACT_RATIO", float, 2.0, lambda v: 0 <= v <= 1e6,
                                    "a ratio, 0 (never compact) to 1e6"),
        vector_prune_every=_number(env, "FALSIFY_VECTOR_PRUNE_EVERY", int, 50, lambda v: 0 <= v <= MAX_COMMITS,
                                   f"{whole} of commits, 0 to {MAX_COMMITS}"),
        vector_prune_age_s=_number(env, "FALSIFY_VECTOR_PRUNE_AGE_S", float, 30.0, lambda v: 0 <= v <= 365 * DAY_S,
                                   f"seconds, 0 to {365 * DAY_S:g}"),
        vector_reconnect=_flag(env, "FALSIFY_VECTOR_RECONNECT", True),
        run_history_keep=_number(env, "FALSIFY_RUN_HISTORY_KEEP", int, 200, lambda v: 0 <= v <= MAX_COMMITS,
                                 f"{whole}, 0 to {MAX_COMMITS}"),
        malloc_arena_max=_number(env, "FALSIFY_MALLOC_ARENA_MAX", int, 2, lambda v: 0 <= v <= 1024,
                                 f"{whole}, 0 to 1024"),
        arrow_pool=_arrow_pool(env),
        token=_text(env, "FALSIFY_TOKEN"),
        token_file=_text(env, "FALSIFY_TOKEN_FILE"),
        no_server=_flag(env, "FALSIFY_NO_SERVER", False),
        launcher=_flag(env, "FALSIFY_LAUNCHER", True),
        launcher_idle_s=_number(env, "FALSIFY_LAUNCHER_IDLE_S", float, 900.0, lambda v: v > 0, "seconds, more than 0"),
        runtime_dir=_text(env, "FALSIFY_RUNTIME_DIR"),
    )


def _arrow_pool(env: Mapping[str, str]) -> str:
    if "FALSIFY_ARROW_POOL" not in env:
        return "system"
    pool = env["FALSIFY_ARROW_POOL"].strip().lower()
    if pool not in ("", "system", "jemalloc", "mimalloc"):
        raise SettingsError(f"FALSIFY_ARROW_POOL={_shown(pool)}: expected system, jemalloc, mimalloc or empty")
    return pool


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
SECRET_VARIABLES = ("FALSIFY_TOKEN", "LLM_API_KEY", "EMBEDDING_API_KEY", "FALSIFY_DATABASE_URL", "DB_PASSWORD",
                    "VECTOR_DB_KEY", "GRAPH_DATABASE_PASSWORD", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
                    "GEMINI_API_KEY", "AZURE_API_KEY", "HUGGINGFACE_API_KEY", "PGPASSWORD")


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

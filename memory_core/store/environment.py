"""What the process environment asks for (through the settings, or read at call time for cognee's
own embedding variables; no side effects)."""

from __future__ import annotations

import os

from memory_core.store import config


def llm_key_configured() -> bool:
    """``LLM_API_KEY`` is set (as the settings read it)."""
    return config.current().llm_key


def hosted_embeddings_configured() -> bool:
    """The user asked for cognee's own embedding providers (key or EMBEDDING_*)."""
    if config.current().embedder == "local":
        return False
    if any(os.environ.get(k, "").strip() for k in ("EMBEDDING_PROVIDER", "EMBEDDING_MODEL", "EMBEDDING_ENDPOINT",
                                                   "EMBEDDING_API_KEY")):
        return True
    return llm_key_configured()


# secrets never written to a log or printed in an error line: a URL's password, a
# ``--token`` argument, and the values of these variables
SECRET_VARIABLES = ("FALSIFY_TOKEN", "LLM_API_KEY", "EMBEDDING_API_KEY", "FALSIFY_DATABASE_URL", "DB_PASSWORD",
                    "VECTOR_DB_KEY", "GRAPH_DATABASE_PASSWORD")
_MASK = "***"


def redact(text: str, argv: "list[str] | None" = None) -> str:
    """``text`` with every secret it may carry masked: the password of any
    ``scheme://user:password@host`` URL, the value after ``--token`` / ``--token=`` (and
    ``--secret``), the secret values of :data:`SECRET_VARIABLES`, and the bearer secrets
    of ``Authorization`` headers."""
    import re

    text = re.sub(r"(?i)\b([a-z][a-z0-9+.\-]*://[^:/?#@\s]*):[^@/\s]*@", rf"\1:{_MASK}@", text)
    text = re.sub(r"(--(?:token|secret|password)(?:=|\s+))(?:'[^']*'|\"[^\"]*\"|\S+)", rf"\1{_MASK}", text)
    text = re.sub(r"(?i)(\b(?:bearer|token=)\s*)[A-Za-z0-9._~+/=\-]{8,}", rf"\1{_MASK}", text)
    for name in SECRET_VARIABLES:
        value = os.environ.get(name, "")
        if len(value) >= 4:
            text = text.replace(value, _MASK)
            if "://" in value and "@" in value:  # the URL's password on its own, too
                secret = value.split("://", 1)[1].rsplit("@", 1)[0].partition(":")[2]
                if len(secret) >= 4:
                    text = text.replace(secret, _MASK)
    return text


def redact_argv(argv: "list[str]") -> "list[str]":
    """A command line with its secrets masked (see :func:`redact`): ``--token T`` -> ``--token ***``."""
    out, hide = [], False
    for arg in argv:
        if hide:
            out.append(_MASK)
            hide = False
            continue
        if arg in ("--token", "--secret", "--password"):
            hide = True
            out.append(arg)
            continue
        out.append(redact(arg))
    return out

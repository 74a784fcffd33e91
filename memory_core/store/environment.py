"""What the process environment asks for (read at call time; no side effects)."""

from __future__ import annotations

import os


def llm_key_configured() -> bool:
    return bool(os.environ.get("LLM_API_KEY", "").strip())


def hosted_embeddings_configured() -> bool:
    """The user asked for cognee's own embedding providers (key or EMBEDDING_*)."""
    if os.environ.get("FALSIFY_EMBEDDER", "").strip().lower() == "local":
        return False
    if any(os.environ.get(k, "").strip() for k in ("EMBEDDING_PROVIDER", "EMBEDDING_MODEL", "EMBEDDING_ENDPOINT",
                                                   "EMBEDDING_API_KEY")):
        return True
    return llm_key_configured()

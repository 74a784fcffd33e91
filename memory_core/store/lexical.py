"""Lexical (full-text) search over a vector collection's text, per backend.

Gate 1 fuses this ranking with the vector one (``memory_core.judging.retrieval``):
claims that share a new fact's decisive words ("March", "QA report") but embed far
apart are still found. Each hit carries the row's vector, so the caller can give
every candidate its cosine distance, however it was found.

* LanceDB (the embedded default): LanceDB's own full-text index (``FTS``, BM25) on
  the ``payload.text`` column cognee writes; made the first time a collection is
  searched (rows added later are searched unindexed until the next ``optimize()``,
  which the store's vector housekeeping runs).
* PostgreSQL: ``ts_rank_cd`` of the row's ``to_tsvector('english', payload->>'text')``
  against an OR of the query's words (a GIN expression index is made by the
  backend's housekeeping).

The query is reduced to its words (letters and digits) first: neither engine's query
syntax ever sees the user's punctuation.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Optional, Sequence

TEXT_COLUMN = "payload.text"  # where cognee's LanceDB adapter keeps an indexed field's text
MAX_QUERY_WORDS = 64
CONCURRENT_QUERIES = 4  # a batch's full-text queries in flight at once (LanceDB)


def query_words(text: str) -> list[str]:
    """The words of ``text`` (letters and digits, lower-cased, each once, in order)."""
    return list(dict.fromkeys(w.lower() for w in re.findall(r"[^\W_]+", text)))[:MAX_QUERY_WORDS]


Hit = tuple[str, float, Optional[Sequence[float]]]  # (row id, lexical score, the row's vector)


_indexed: set[tuple[str, str]] = set()  # (database uri, table) with an FTS index, this process


async def search_lancedb(vector, name: str, texts: list[str], limit: int) -> list[list[Hit]]:
    """For each text, up to ``limit`` rows of LanceDB collection ``name`` by lexical score (best
    first). A text with no words, or a collection that does not exist, finds nothing."""
    if not await vector.has_collection(name):
        return [[] for _ in texts]
    conn = await vector.get_connection()
    table = await conn.open_table(name)
    if not hasattr(table, "query"):
        return [[] for _ in texts]  # a remote table: no lexical ranking
    await _ensure_fts_index(table, (str(getattr(conn, "uri", id(conn))), name))
    # a batch's queries run side by side (LanceDB runs each on its own threads; the answers are
    # the ones asked one at a time), a few at once so a large batch never floods the engine
    running = asyncio.Semaphore(CONCURRENT_QUERIES)

    async def one(text: str) -> list[Hit]:
        words = query_words(text)
        if not words:
            return []
        async with running:
            rows = await (
                table.query()
                .nearest_to_text(" ".join(words), columns=TEXT_COLUMN)
                .select(["id", "vector", "_score"])
                .limit(limit)
                .to_arrow()
            )
        ids, scores = rows["id"].to_pylist(), rows["_score"].to_pylist()
        return [(str(i), float(s), v) for i, s, v in zip(ids, scores, _rows_of(rows["vector"]))]

    return list(await asyncio.gather(*(one(text) for text in texts)))


def _rows_of(column) -> list:
    """A fixed-size-list vector column as one numpy row per vector (a view of Arrow's buffer: no
    Python float per component, as a row list would need: 384 x 32 rows x each fact of a batch)."""
    import numpy as np

    column = column.combine_chunks()
    if len(column) == 0 or column.null_count:
        return column.to_pylist()
    return list(np.asarray(column.flatten()).reshape(len(column), -1))


async def _ensure_fts_index(table, where: tuple[str, str]) -> None:
    if where in _indexed:
        return
    from lancedb.index import FTS

    indices = await table.list_indices()
    if not any(
        TEXT_COLUMN in list(getattr(i, "columns", [])) and str(getattr(i, "index_type", "")) == "FTS"
        for i in indices
    ):
        await table.create_index(TEXT_COLUMN, config=FTS(with_position=False))
    _indexed.add(where)


def fts_index_name(collection: str) -> str:
    return f"{collection}_falsify_fts"


def postgres_fts_index_sql(collection: str) -> str:
    """The GIN expression index the PostgreSQL search uses (made by the backend's housekeeping)."""
    return (
        f'CREATE INDEX IF NOT EXISTS "{fts_index_name(collection)}" ON "{collection}" '
        "USING gin (to_tsvector('english', payload->>'text'))"
    )


async def search_postgres(vector, name: str, texts: list[str], limit: int) -> list[list[Hit]]:
    """:func:`search_lancedb` on a pgvector collection (the GIN index of :func:`postgres_fts_index_sql`)."""
    from sqlalchemy import text as sql

    if not await vector.has_collection(name):
        return [[] for _ in texts]
    out: list[list[Hit]] = []
    async with vector.engine.connect() as conn:
        for text in texts:
            words = query_words(text)
            if not words:
                out.append([])
                continue
            rows = (
                await conn.execute(
                    sql(
                        f"SELECT id, ts_rank_cd(to_tsvector('english', payload->>'text'), q) AS score, vector::text "
                        f"FROM \"{name}\", to_tsquery('english', :q) AS q "
                        "WHERE to_tsvector('english', payload->>'text') @@ q ORDER BY score DESC, id LIMIT :n"
                    ),
                    {"q": " | ".join(words), "n": limit},
                )
            ).all()
            out.append([(str(r[0]), float(r[1]), json.loads(r[2]) if r[2] else None) for r in rows])
    return out

"""FALSIFY's facade: one object per data root, used by the CLI, the viewer
server and the benchmark. Every method is async (cognee's engines are).

    app = await Falsify.open(root)        # configure cognee, lock, recover
    await app.load_file("examples/company_x.json")
    result = await app.revise("Forensic audit: ...", target="E_qa")
    await app.close()
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Optional

from . import settings


class Falsify:
    def __init__(self, paths, store, journal, lock, recovered):
        self.paths = paths
        self.store = store
        self.journal = journal
        self._lock = lock
        self.recovered = recovered
        self.hook = None  # fault-injection / progress hook: called with a step name

    # ---- lifecycle -------------------------------------------------------
    @classmethod
    async def open(cls, root=None, lock: bool = True, purpose: str = "falsify") -> "Falsify":
        start = time.perf_counter()
        paths = settings.configure(root)
        from .embedder import check_root
        from .journal import Journal
        from .lock import WriterLock

        held = WriterLock(paths.lock, purpose).acquire() if lock else None
        try:
            check_root(paths.meta)
            settings.import_cognee()
            from .store import BeliefStore
            from . import writer

            store = await BeliefStore.open(repair_torn_checkpoint=held is not None)
            journal = Journal(paths.root)
            recovered = await writer.recover(store, journal)
            if store.repaired:
                recovered = "; ".join(filter(None, [store.repaired, recovered]))
        except BaseException:
            if held:
                held.release()
            raise
        app = cls(paths, store, journal, held, recovered)
        app.hook = fault_hook(os.environ.get("FALSIFY_FAULT_AT"))
        app.opened_ms = (time.perf_counter() - start) * 1000
        return app

    async def warm_up(self) -> float:
        """Load the embedding model, create cognee's relational tables and start its pipeline runner once
        (the first pipeline run of a process costs ~1 s; migrations print to
        stdout, which is kept off ours). Returns the milliseconds it took."""
        from .tasks import run_pipeline, noop_tasks

        start = time.perf_counter()
        from cognee.infrastructure.databases.vector.embeddings import get_embedding_engine

        await run_pipeline(noop_tasks(), [{}], "falsify_warm_up")
        await get_embedding_engine().embed_text(["warm up"])  # loads the embedding model
        from cognee.tasks.storage import add_data_points  # noqa: F401  (cognee imports the write path lazily)
        from .models import collection

        await self.store.search(collection("evidence"), "warm up", 1)  # opens the vector table
        return (time.perf_counter() - start) * 1000

    async def close(self) -> None:
        if self._lock:
            self._lock.release()
            self._lock = None

    # ---- loading ---------------------------------------------------------
    async def load_file(self, path) -> dict:
        from .investigation import InputError

        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise InputError(f"cannot read {path}: {error.strerror}") from None
        return await self.load(data, what=str(path))

    async def load(self, data: bytes | str, what: str = "investigation") -> dict:
        from .investigation import parse
        from .loader import plan_load
        from . import writer

        keys_in_file = _peek_keys(data)
        existing = await self.store.find_keys(keys_in_file) if keys_in_file else {}
        known = {k: _kind(p) for k, p in existing.items()}
        inv = parse(data, known=known, what=what)
        existing = await self.store.find_keys([n.key for n in inv.nodes])
        epoch = self.journal.epoch() + 1
        intent, entry = await plan_load(self.store, inv, existing, self.forgotten(), epoch)
        result = {"question": inv.question.key, "added": entry["added"], "edges_added": entry["edges_added"],
                  "invalidated": [c["key"] for c in entry["changes"] if c["rule"] == "justification_lost"],
                  "notes": entry["notes"], "epoch": None}
        if not intent["add_nodes"] and not intent["add_edges"] and not intent["updates"]:
            result["notes"] = result["notes"] + ["nothing new: every node and edge is already stored"]
            return result
        await writer.run(self.store, self.journal, intent, entry, self.hook)
        result["epoch"] = epoch
        return result

    def forgotten(self) -> dict[str, int]:
        """Currently forgotten keys (normalised) → the epoch that forgot them."""
        from .models import normalise_key

        gone: dict[str, int] = {}
        by_epoch = {}
        for entry in self.journal.entries():
            by_epoch[entry["epoch"]] = entry
            if entry.get("kind") == "undo":
                undone = by_epoch.get(entry.get("undoes"), {})
                for key in undone.get("forgotten", []):
                    gone.pop(normalise_key(key), None)
                continue
            for key in entry.get("forgotten", []):
                gone[normalise_key(key)] = entry["epoch"]
        return gone

    # ---- revising --------------------------------------------------------
    async def revise(self, fact: str, triple: Optional[str] = None, target: Optional[str] = None,
                     key: Optional[str] = None, source: Optional[str] = None, asserted_at: Optional[str] = None,
                     dry_run: bool = False, pin_reason: str = "--target") -> dict:
        from .revise import revise

        return await revise(self, fact, triple=triple, target=target, key=key, source=source,
                            asserted_at=asserted_at, dry_run=dry_run, pin_reason=pin_reason)

    # ---- reading ---------------------------------------------------------
    async def status(self) -> dict:
        from .status import status

        return await status(self.store)

    async def snapshot(self) -> dict:
        from .status import snapshot

        return await snapshot(self)

    def revision_log(self) -> list[dict]:
        keep = ("epoch", "kind", "at", "fact", "new_evidence", "judge", "question", "undoes")
        result = []
        for entry in self.journal.entries():
            base = {k: entry[k] for k in keep if k in entry}
            for change in entry.get("changes", []):
                result.append(dict(base, key=change["key"], rule=change["rule"], cause=change["cause"],
                                   detail=change.get("detail", ""), **{"from": change["before"]["state"], "to": change["after"]["state"]}))
            for gone in entry.get("forgotten", []):
                result.append(dict(base, key=gone, rule="orphaned", cause=[], detail="forgotten from graph and vector store",
                                   **{"from": None, "to": "forgotten"}))
        return result

    def explain(self, key: str) -> dict:
        from .explain import explain

        return explain(self.journal, key)

    def default_question(self) -> Optional[str]:
        meta = self.journal.meta()
        return meta.get("default_question")

    async def recall(self, question: Optional[str] = None) -> dict:
        from .recall import recall

        return await recall(self, question or self.default_question() or "")

    async def undo(self) -> dict:
        from .undo import undo

        return await undo(self)

    async def check(self, repair: bool = False) -> dict:
        from .check import check

        return await check(self, repair=repair)


def fault_hook(spec: Optional[str]):
    """Fault injection for crash tests: ``FALSIFY_FAULT_AT=step[:n]`` kills this
    process with SIGKILL when a journalled write reaches ``step`` for the n-th
    time (steps: journalled, nodes, node_edges, edges, updates,
    del_edges, del_nodes, committed). Unset in normal use."""
    if not spec:
        return None
    import signal

    step, _, nth = spec.partition(":")
    count = {"n": 0}
    target = int(nth or 1)

    def hook(name: str) -> None:
        if name == step:
            count["n"] += 1
            if count["n"] == target:
                os.kill(os.getpid(), signal.SIGKILL)
    return hook


def fact_key(fact: str) -> str:
    digest = hashlib.sha1(" ".join(fact.split()).casefold().encode("utf-8")).hexdigest()[:10]
    return f"F_{digest}"


def _kind(props: dict) -> str:
    from .models import KIND_BY_TYPE

    return KIND_BY_TYPE.get(props.get("type", ""), "evidence")


def _peek_keys(data) -> list[str]:
    """Keys an investigation file mentions (best effort, before validation)."""
    from .investigation import loads_json, InputError

    try:
        raw = loads_json(data, "investigation")
    except InputError:
        return []
    keys = []
    if isinstance(raw, dict):
        for edge in raw.get("edges", []) if isinstance(raw.get("edges"), list) else []:
            if isinstance(edge, dict):
                keys += [v for v in (edge.get("from"), edge.get("to")) if isinstance(v, str) and v.strip()]
    return list(dict.fromkeys(k.strip() for k in keys))[:10000]

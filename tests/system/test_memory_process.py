"""Process-level housekeeping of a long-lived process (``memory_core.store.process``):
the allocator settings applied when FALSIFY configures a process, and dropping cognee's
LanceDB connection between commits without losing anything a reader sees.

Each case runs in its own subprocess (a process serves one root, and allocator settings are
process-wide): the allocator cases start cold (the settings are applied at a process's start);
the reconnection case is forked from the test session's fork server (``tests/support/forkserver.py``).
Memory figures are measured by ``python -m bench.soak``, never asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import forkserver
from harness import REPO, clean_env, copy_root, loaded_root

CONFIGURE = textwrap.dedent("""
    import json, sys
    from memory_core.store import backends, data_root, settings
    from memory_core.store.backends import housekeeping as memory
    data_root.configure(sys.argv[1], backends.choose(settings.current()))
    import pyarrow
    print(json.dumps({"process": memory.stats()["process"],
                      "pool": pyarrow.default_memory_pool().backend_name}))
""")

# cognee imported as a FALSIFY process (argv[2] "own": claim_process) or a host program does it
IMPORT_COGNEE = textwrap.dedent("""
    import gc, json, logging, sys
    from memory_core.store import backends, data_root, settings
    if sys.argv[2] == "own":
        data_root.claim_process()
    data_root.configure(sys.argv[1], backends.choose(settings.current()))
    collections = []
    gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
    frozen = gc.get_freeze_count()
    data_root.import_cognee()
    print(json.dumps({"collections": len(collections), "full": collections.count(2), "enabled": gc.isenabled(),
                      "frozen": gc.get_freeze_count() - frozen, "cognee": "cognee" in sys.modules,
                      "root_level": logging.getLogger().level}))
""")

RECONNECT = textwrap.dedent("""
    import asyncio, json, sys
    from memory_core.api import Falsify
    from memory_core.store.backends import housekeeping as memory

    FACT = "Forensic audit: the March QA report was back-dated."

    async def main(root):
        seen = {}
        async with Falsify.open(root) as fx:
            vector = fx.stores.store.vector
            query = "QA report documented the brake-valve defect"
            seen["before"] = await fx.search(query, include_dead=True)
            first = await vector.get_connection()
            seen["pruned"] = await memory.prune_vector_versions(
                vector, [name for name in await first.table_names()], older_than_s=0)
            seen["dropped"] = await memory.reconnect_vector(vector)
            second = await vector.get_connection()
            seen["new_connection"] = second is not first
            seen["after"] = await fx.search(query, include_dead=True)
            seen["revise"] = await fx.revise(FACT, target="E_qa", key="F_audit")
            seen["dropped_again"] = await memory.reconnect_vector(vector)
            seen["search_revised"] = await fx.search(FACT)
            seen["undo"] = await fx.undo()
            seen["dropped_third"] = await memory.reconnect_vector(vector)
            seen["after_undo"] = await fx.search(query, include_dead=True)
            seen["check"] = await fx.check()
        print(json.dumps(seen, default=str))

    asyncio.run(main(sys.argv[1]))
""")


def run(code: str, root, cold: bool = True, *args: str, **extra) -> dict:
    """``cold``: a new interpreter (what the allocator settings need); else a child forked
    from the fork server (third-party imports done, cognee and FALSIFY imported by the child)."""
    env = clean_env(**extra)
    if "ARROW_DEFAULT_MEMORY_POOL" not in extra:  # set in this process by conftest's configure()
        env.pop("ARROW_DEFAULT_MEMORY_POOL", None)
    proc = (subprocess.run if cold else forkserver.run)(
        [sys.executable, "-c", code, str(root), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_configure_caps_malloc_arenas_and_uses_the_system_arrow_pool(tmp_path):
    seen = run(CONFIGURE, tmp_path / "root")
    assert seen["process"]["malloc_arena_max"] == 2 and seen["process"]["malloc_arena_max_set"] is True
    assert seen["pool"] == "system"
    # both can be turned off; the caller's own ARROW_DEFAULT_MEMORY_POOL is left alone
    off = run(CONFIGURE, tmp_path / "root2", FALSIFY_MALLOC_ARENA_MAX="0", FALSIFY_ARROW_POOL="")
    assert off["process"]["malloc_arena_max"] is None and "malloc_arena_max_set" not in off["process"]
    assert off["pool"] != "system"
    theirs = run(CONFIGURE, tmp_path / "root3", ARROW_DEFAULT_MEMORY_POOL="jemalloc")
    assert theirs["pool"] == "jemalloc"


@pytest.mark.slow
def test_cognees_import_runs_without_the_collector_and_a_falsify_process_freezes_it(tmp_path):
    """No cyclic collection while cognee is imported (each would walk the hundreds of thousands of
    objects the import builds); the collector is on again afterwards; FALSIFY's own process freezes
    what the import built, a host program's objects are never frozen."""
    own = run(IMPORT_COGNEE, tmp_path / "own", False, "own")
    host = run(IMPORT_COGNEE, tmp_path / "host", False, "host")
    for seen in (own, host):  # a cold import collects hundreds of times, a few of them full
        assert seen["cognee"] is True and seen["full"] == 0 and seen["enabled"] is True, seen
    assert own["collections"] == 0, own
    assert host["collections"] <= 1, host  # the young objects, once, as the collector comes back on
    # a child of the fork server: the third-party packages were frozen there already
    assert own["frozen"] > 50_000, own
    # the root logger (only cognee's handlers on it) at LOG_LEVEL in FALSIFY's process: no record
    # below it is built; a host's root logger is left as cognee left it
    assert own["root_level"] == 40 and host["root_level"] == 0, (own, host)
    assert host["frozen"] <= 0, host  # (below 0: preloaded modules the stand-ins replaced were freed)


def test_the_collector_pause_leaves_a_caller_managed_collector_alone():
    import gc

    from memory_core.store import process

    frozen = gc.get_freeze_count()
    gc.disable()
    try:
        with process.collector_paused(freeze=True):
            assert not gc.isenabled()
        assert not gc.isenabled() and gc.get_freeze_count() == frozen  # the caller's choice stands
    finally:
        gc.enable()
    with pytest.raises(KeyError):
        with process.collector_paused(freeze=False):
            assert not gc.isenabled()
            raise KeyError("an import failed")
    assert gc.isenabled() and gc.get_freeze_count() == frozen  # on again, nothing frozen


@pytest.mark.slow
def test_dropping_the_vector_connection_keeps_every_reader_whole(tmp_path_factory):
    if os.environ.get("FALSIFY_TEST_BACKEND") == "postgres":
        pytest.skip("LanceDB only")
    root = copy_root(loaded_root(tmp_path_factory), tmp_path_factory.mktemp("reconnect") / "root")
    seen = run(RECONNECT, root, cold=False)
    assert seen["pruned"] >= 1
    assert seen["dropped"] is True and seen["new_connection"] is True
    assert seen["before"] and seen["after"] == seen["before"]
    assert seen["revise"]["refuted"] == ["E_qa"]
    assert seen["dropped_again"] is True and seen["dropped_third"] is True
    assert any(hit["key"] == "F_audit" for hit in seen["search_revised"])
    assert seen["after_undo"] == seen["before"]
    assert seen["check"].get("ok", True) is not False

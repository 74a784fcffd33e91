"""Soak: one long-lived process revising and undoing N times (the server's code path).

    python -m bench.soak --revisions N [--every 500] [--baseline 200] [--root DIR] [--keep DIR]
                         [--probe] [--tracemalloc] [--json]

One process opens a copy of the MQuAKE-hard graph through ``memory_core.api.Falsify``
(the object the viewer and the MCP server hold for their whole life) and repeats:
``revise`` one MQuAKE edit (its claim, ``--triple``, its key; the structured judge,
no LLM) then ``undo`` it, cycling through the 1,716 edits. Every ``--every``
revisions (and after the first 200, the baseline) it records the resident set size
(VmRSS from /proc/self/status) as a server sits between two requests (``rss_mb``: after the
idle trim, :data:`memory_core.store.backends.base.IDLE_TRIM_S` without a commit; and
``rss_busy_mb``, right after the revision) and the data root's size on disk. It prints
``rss_growth_mb`` (RSS at the end minus RSS after the first 200 revisions) and
``root_mb`` (the root's size at the end), with the machine and the date.

The graph is loaded once through ``Falsify.load`` into ``--root`` (default: a temporary
directory); with ``--root`` pointing at an already loaded root, a copy of it is used
(``--keep DIR`` keeps the loaded root there for later runs). ``--probe`` adds to each
sample where the memory is (``native``: /proc/self/smaps by kind -- glibc's main heap,
its other arenas, Ladybug's buffer pool and other 1 GiB+ reservations, other anonymous
mappings, files -- and mallinfo2's in-use and free-but-held bytes; ``python``: gc
objects, pyarrow's pool, the housekeeping counters); ``--tracemalloc`` also traces
Python's allocations and prints the sites that grew most after the baseline. Every
figure printed is measured in the run that prints it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .mquake import REPO, Dataset, data_path, disk_usage, machine, stdout_to_stderr


def rss_mb(field: str = "VmRSS") -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def native_breakdown() -> dict:
    """Where the resident memory is, from /proc/self/smaps and glibc's mallinfo2 (MB):
    ``rss_anon``/``rss_file`` (VmRSS split), ``heap`` (glibc's main arena, [heap]),
    ``arenas`` (glibc's other arenas: anonymous 64 MB-reserved regions), ``pool``
    (anonymous reservations of 1 GiB or more: Ladybug's buffer pool and its max_db_size
    region, and pyarrow's mimalloc arena when that pool is in use), ``anon_other``
    (other anonymous mappings: thread stacks, large mallocs, Rust allocators), ``files``
    (file-backed pages: libraries, mapped data files); ``malloc_in_use``/``malloc_free``
    (mallinfo2 uordblks/fordblks: bytes malloc has handed out / keeps free)."""
    out = {"heap": 0.0, "arenas": 0.0, "pool": 0.0, "anon_other": 0.0, "files": 0.0}
    try:
        with open("/proc/self/smaps") as f:
            size = 0
            name = ""
            for line in f:
                head = line.split()
                if "-" in head[0] and len(head[0]) > 8 and not head[0].endswith(":"):
                    lo, hi = (int(x, 16) for x in head[0].split("-"))
                    size = hi - lo
                    name = head[5] if len(head) > 5 else ""
                elif head[0] == "Rss:":
                    kb = int(head[1]) / 1024
                    if name == "[heap]":
                        out["heap"] += kb
                    elif name.startswith("/"):
                        out["files"] += kb
                    elif size >= 1 << 30:
                        out["pool"] += kb
                    elif size == 1 << 26 or (size < 1 << 26 and lo % (1 << 26) == 0):
                        out["arenas"] += kb
                    else:
                        out["anon_other"] += kb
    except OSError:
        pass
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("RssAnon:", "RssFile:", "Threads:")):
                key, value = line.split(":")
                value = value.split()[0]
                out[{"RssAnon": "rss_anon", "RssFile": "rss_file", "Threads": "threads"}[key]] = (
                    int(value) if key == "Threads" else int(value) / 1024
                )
    try:
        import ctypes

        class Mallinfo2(ctypes.Structure):
            _fields_ = [
                (n, ctypes.c_size_t)
                for n in (
                    "arena",
                    "ordblks",
                    "smblks",
                    "hblks",
                    "hblkhd",
                    "usmblks",
                    "fsmblks",
                    "uordblks",
                    "fordblks",
                    "keepcost",
                )
            ]

        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = Mallinfo2
        info = libc.mallinfo2()
        out["malloc_in_use"] = (info.uordblks + info.hblkhd) / 2**20
        out["malloc_free"] = info.fordblks / 2**20
    except Exception:  # noqa: BLE001  (not glibc)
        pass
    return {k: round(v, 1) if isinstance(v, float) else v for k, v in out.items()}


def python_breakdown() -> dict:
    """Python-side figures: objects the collector tracks, pyarrow's pool, tracemalloc
    (when started with --tracemalloc)."""
    import gc
    import tracemalloc

    out = {"gc_objects": len(gc.get_objects())}
    with contextlib.suppress(Exception):
        import pyarrow as pa

        out["pyarrow_mb"] = round(pa.total_allocated_bytes() / 2**20, 1)
    if tracemalloc.is_tracing():
        out["traced_mb"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 1)
    with contextlib.suppress(Exception):
        from memory_core.store.backends import housekeeping as memory

        out["housekeeping"] = memory.stats()
    return out


def _snapshot():
    import tracemalloc

    return tracemalloc.take_snapshot() if tracemalloc.is_tracing() else None


def _top_growth(before, after, limit: int = 12) -> list:
    """The Python allocation sites that grew most between two tracemalloc snapshots."""
    if before is None or after is None:
        return []
    stats = after.compare_to(before, "lineno")
    return [
        {"where": str(s.traceback[0]), "kb": round(s.size_diff / 1024, 1), "count": s.count_diff}
        for s in stats[:limit]
    ]


def log(*parts) -> None:
    print("[soak]", *parts, file=sys.stderr, flush=True)


def prepare(root: Path, data: Dataset) -> float:
    """Load the graph with the CLI in a child process (this process then opens the
    loaded root, as a server does; cognee's engines are bound to one event loop)."""
    start = time.perf_counter()
    inv = root.parent / "mquake_investigation.json"
    inv.write_text(json.dumps(data.investigation(0)))
    proc = subprocess.run(
        [sys.executable, "main.py", "--root", str(root), "load", str(inv), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"loading the MQuAKE graph failed: {proc.stderr[-2000:]}")
    return time.perf_counter() - start


async def at_rest(n: int, root: Path, start: float, probe: bool, rested: list) -> dict:
    """A sample as a server sits between two requests: ``rss_busy_mb`` right after the last revision,
    then ``rss_mb`` once the process has given back what it freed (after ``IDLE_TRIM_S`` without a
    commit); the wait is counted in ``rested`` and left out of the timings."""
    from memory_core.store.backends.base import IDLE_TRIM_S

    busy = round(rss_mb(), 1)
    began = time.perf_counter()
    await asyncio.sleep(IDLE_TRIM_S + 0.25)
    rested[0] += time.perf_counter() - began
    sample = sample_of(n, root, start + rested[0], probe)
    sample["rss_busy_mb"] = busy
    return sample


def sample_of(n: int, root: Path, start: float, probe: bool) -> dict:
    # rss_peak_mb (VmHWM, the highest RSS so far) shows the top of the saw-tooth too
    usage = disk_usage(root)
    sample = {
        "revisions": n,
        "rss_mb": round(rss_mb(), 1),
        "rss_peak_mb": round(rss_mb("VmHWM"), 1),
        "root_mb": round(usage["total"] / 2**20, 1),
        "seconds": round(time.perf_counter() - start, 1),
        # the root by part (the graph file, cognee's relational database, the vectors, the revision log)
        "root_parts_mb": {k: round(v / 2**20, 2) for k, v in usage.items() if k != "total"},
    }
    if probe:
        sample["native"] = native_breakdown()
        sample["python"] = python_breakdown()
    return sample


def edit_facts(data: Dataset) -> list[tuple]:
    """Every edit as the (claim, triple, key) a revise takes, in the dataset's order."""
    return [data.fact(e["id"]) for e in data.raw["edits"]]


async def soak(
    root: Path, facts: list[tuple], revisions: int, every: int, baseline_at: int = 200, probe: bool = False
) -> dict:
    from memory_core.api import Falsify
    from memory_core.store.data_root import claim_process

    claim_process()  # a server's process: FALSIFY's own
    samples = []
    baseline = None
    snap = None
    out = {"revisions": 0, "undos": 0, "recorded": 0, "failed": None}
    rested = [0.0]  # seconds spent waiting for a sample at rest, left out of the timings
    start = time.perf_counter()
    app = await Falsify.open(root, purpose="bench.soak")
    try:
        await app.warm_up()
        samples.append(sample_of(0, root, start, probe))
        log(samples[-1])
        for i in range(revisions):
            claim, triple, key = facts[i % len(facts)]
            result = await app.revise(claim, triple=triple, key=key)
            out["revisions"] += 1
            if result.get("epoch") is not None:
                out["recorded"] += 1
                await app.undo()
                out["undos"] += 1
            n = i + 1
            if n == baseline_at or n % every == 0 or n == revisions:
                sample = await at_rest(n, root, start, probe, rested)
                if n == baseline_at:
                    baseline = sample
                    snap = _snapshot()
                samples.append(sample)
                log(sample)
    except Exception as error:  # noqa: BLE001  (reported, with how far it got)
        out["failed"] = f"{type(error).__name__}: {str(error)[:300]}"
        samples.append(sample_of(out["revisions"], root, start, probe))
    finally:
        await app.close()
    end = samples[-1]
    if snap is not None:
        out["tracemalloc_top_growth"] = _top_growth(snap, _snapshot())
    out["samples"] = samples
    out["baseline"] = baseline
    out["rss_growth_mb"] = round(end["rss_mb"] - baseline["rss_mb"], 1) if baseline else None
    out["rss_growth_mb_per_1000"] = (
        round(out["rss_growth_mb"] / (end["revisions"] - baseline_at) * 1000, 1)
        if baseline and end["revisions"] > baseline_at
        else None
    )
    out["root_mb"] = end["root_mb"]
    out["rss_peak_mb"] = round(rss_mb("VmHWM"), 1)
    # by part: the vector and graph stores should stay bounded; revisions.jsonl is the undo history
    # (one entry per change, with its intent) and grows by design
    out["root_parts_mb"] = {k: round(v / 2**20, 1) for k, v in disk_usage(root).items() if k != "total"}
    out["root_mb_at_start"] = samples[0]["root_mb"]
    out["seconds"] = round(time.perf_counter() - start - rested[0], 1)
    out["ms_per_revision_and_undo"] = round(out["seconds"] * 1000 / max(out["revisions"], 1), 1)
    return out


def housekeeping_settings() -> dict:
    from memory_core.store import settings
    from memory_core.store.backends import housekeeping as memory

    return memory.settings(settings.current())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n\n")[0])
    p.add_argument("--revisions", type=int, default=3000)
    p.add_argument("--every", type=int, default=500, help="record RSS and root size every N revisions")
    p.add_argument("--root", help="an already loaded MQuAKE root to copy (else the graph is loaded first)")
    p.add_argument("--keep", help="keep the loaded (pristine) root here for later --root runs")
    p.add_argument("--data", help="the MQuAKE-hard beliefs file (default ../shared/bench/...)")
    p.add_argument("--baseline", type=int, default=200, help="growth is measured from this revision on")
    p.add_argument(
        "--probe",
        action="store_true",
        help="each sample also says where the memory is (smaps by kind, malloc, pyarrow, gc objects)",
    )
    p.add_argument(
        "--tracemalloc", action="store_true", help="trace Python allocations (slower; implies --probe)"
    )
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    data = Dataset.read(data_path(args.data))
    temp = Path(tempfile.mkdtemp(prefix="falsify-soak-"))
    out = {"machine": machine()}
    try:
        root = temp / "root"
        with stdout_to_stderr(args.json):
            if args.root:
                shutil.copytree(args.root, root, symlinks=True)
                with contextlib.suppress(FileNotFoundError):
                    (root / "writer.lock").unlink()
                out["load_seconds"] = None
            else:
                log("loading the MQuAKE-hard graph ...")
                out["load_seconds"] = round(prepare(root, data), 1)
                if args.keep:
                    shutil.rmtree(args.keep, ignore_errors=True)
                    shutil.copytree(root, args.keep, symlinks=True)
            out["housekeeping"] = housekeeping_settings()
            if args.tracemalloc:
                import tracemalloc

                tracemalloc.start()
            # the process keeps only the edits' facts (a server holds no benchmark data set)
            facts = edit_facts(data)
            del data
            gc.collect()
            out.update(
                asyncio.run(
                    soak(
                        root, facts, args.revisions, args.every, args.baseline, args.probe or args.tracemalloc
                    )
                )
            )
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for s in out["samples"]:
            print(
                f"{s['revisions']:>6} revisions: RSS {s['rss_mb']:8.1f} MB at rest"
                + (f" ({s['rss_busy_mb']:.1f} busy)" if "rss_busy_mb" in s else "")
                + f", root {s['root_mb']:7.1f} MB, "
                f"{s['seconds']:7.1f} s"
            )
        print(
            f"RSS growth after the first {args.baseline}: {out['rss_growth_mb']} MB; root {out['root_mb']} "
            "MB at the end "
            f"({out['root_mb_at_start']} MB at the start)"
        )
        if out["failed"]:
            print(f"the process failed: {out['failed']}")
    return 0 if not out["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())

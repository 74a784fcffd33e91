"""How long one process survives Ladybug's checkpoint accounting (LadybugDB/ladybug#924).

    python -m bench.checkpoint_budget [--max-db-size BYTES] [--cases N]

Ladybug 0.19.0 (the version cognee 1.6.5 pins) charges every ``CHECKPOINT``
a fixed slice of its ``max_db_size`` budget for the life of the process and
never gives it back; cognee's Ladybug adapter checkpoints after every graph
write. This script loads the MQuAKE-hard graph into a temporary root through
``Falsify.load``, then applies per_case edits with ``Falsify.revise`` and
reverts them with ``Falsify.undo`` until the budget runs out (or the cases
do), counting the checkpoints each operation issued. The count comes from a
wrapper around ``LadybugAdapter.checkpoint`` that only counts and then calls
the original. It runs with a small budget (default 2 GiB) so the wall comes
quickly; the figures scale linearly to cognee's 32 GiB default. It also
measures resident memory: what 100 bare CHECKPOINTs add, and the growth over
the revisions and undos (Python's own heap stays flat; see bench/RESULTS.md).

Every figure printed is measured in this run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time

from bench.common import rss_mb

DEFAULT_BUDGET = 1 << 31
BARE_CHECKPOINTS = 100  # 800 MiB of the 2 GiB default budget


async def run(cases: int, root: str) -> dict:
    from memory_core.api import Falsify

    from bench.mquake import Dataset, data_path

    app = await Falsify.open(root, purpose="bench.checkpoint_budget")
    from cognee.infrastructure.databases.graph.ladybug.adapter import LadybugAdapter

    counter = {"n": 0}
    original = LadybugAdapter.checkpoint

    async def counting(self):
        counter["n"] += 1
        return await original(self)

    LadybugAdapter.checkpoint = counting
    data = Dataset.read(data_path())
    out = {
        "load_checkpoints": 0,
        "revisions": 0,
        "undos": 0,
        "revision_checkpoints": 0,
        "undo_checkpoints": 0,
        "failed": None,
    }
    start = time.perf_counter()
    try:
        await app.warm_up()
        before = counter["n"]
        await app.load(json.dumps(data.investigation(0)))
        out["load_checkpoints"] = counter["n"] - before
        # resident memory per checkpoint, alone: CHECKPOINT with nothing to write
        rss = rss_mb()
        for _ in range(BARE_CHECKPOINTS):
            await app.store.graph.checkpoint()
        out["rss_mb_per_bare_checkpoint"] = round((rss_mb() - rss) / BARE_CHECKPOINTS, 3)
        out["rss_mb_before_revisions"] = round(rss_mb(), 1)
        for group in data.groups("per_case", cases):
            recorded = 0
            for edit in group.apply:
                claim, triple, key = data.fact(edit)
                before = counter["n"]
                res = await app.revise(fact=claim, triple=triple, key=key)
                out["revision_checkpoints"] += counter["n"] - before
                out["revisions"] += 1
                recorded += res.get("epoch") is not None
            for _ in range(recorded):
                before = counter["n"]
                await app.undo()
                out["undo_checkpoints"] += counter["n"] - before
                out["undos"] += 1
    except Exception as error:  # noqa: BLE001  (the point of the exercise)
        out["failed"] = f"{type(error).__name__}: {str(error)[:240]}"
    finally:
        out["rss_mb_after_revisions"] = round(rss_mb(), 1)
        await app.close()
    out["checkpoints"] = counter["n"]
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench.checkpoint_budget", description=__doc__.split("\n\n")[0]
    )
    p.add_argument(
        "--max-db-size",
        type=int,
        default=DEFAULT_BUDGET,
        help=f"KUZU_MAX_DB_SIZE for this run, a power of two (default {DEFAULT_BUDGET})",
    )
    p.add_argument("--cases", type=int, default=60, help="per_case cases to apply and undo at most")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    os.environ["KUZU_MAX_DB_SIZE"] = str(args.max_db_size)
    temp = tempfile.mkdtemp(prefix="falsify-ckpt-")
    try:
        out = asyncio.run(run(args.cases, os.path.join(temp, "root")))
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    out["max_db_size"] = args.max_db_size
    done = out["revisions"] + out["undos"]
    if out["failed"] and out["checkpoints"]:
        per = args.max_db_size / out["checkpoints"]
        out["budget_bytes_per_checkpoint"] = round(per)
        rev = out["revision_checkpoints"] / max(out["revisions"], 1)
        out["revisions_per_process_at_32GiB"] = round((1 << 35) / per / rev) if rev else None
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(
            f"max_db_size {args.max_db_size:,} bytes: {out['checkpoints']} checkpoints in all "
            f"(load {out['load_checkpoints']}); {out['revisions']} revisions "
            f"({out['revision_checkpoints'] / max(out['revisions'], 1):.2f} checkpoints each), {out['undos']} undos "
            f"({out['undo_checkpoints'] / max(out['undos'], 1):.2f} each); {done} operations in {out['seconds']} s"
        )
        if out["failed"]:
            print(f"the process failed: {out['failed']}")
            print(
                f"=> {out['budget_bytes_per_checkpoint'] / 2**20:.1f} MiB of budget per checkpoint; with cognee's "
                f"32 GiB default a process survives ~{out['revisions_per_process_at_32GiB']:,} revisions (no undos)"
            )
        else:
            print("the budget was not exhausted")
        if "rss_mb_per_bare_checkpoint" in out:
            print(
                f"resident memory: +{out['rss_mb_per_bare_checkpoint']:.3f} MB per bare CHECKPOINT "
                f"({BARE_CHECKPOINTS} in a row); {out['rss_mb_before_revisions']:,.0f} MB before the revisions, "
                f"{out['rss_mb_after_revisions']:,.0f} MB after {done} revisions and undos"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

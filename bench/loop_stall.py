"""How long a host's event loop stalls while a facade call runs on a large root.

    python -m bench.loop_stall [--evidence N | --root DIR] [--json] [--out FILE]

A root of ``N`` evidence nodes (default 6,000), ``N/2`` conclusions resting on two of them,
five hypotheses each supported by a fifth of the evidence, and the question: 9,006 nodes and
~21,000 edges for the default, loaded in one batch by ``python main.py load`` in a child
process (``--root DIR``: a copy of that root instead, e.g. one built before; never the root
itself). In this process the root is opened, one revision recorded (so epoch 1 is a past
epoch), then each facade call below runs once while two things are measured:

* the longest loop stall: how late a ticker task (``asyncio.sleep(0.005)`` in a loop) woke up,
  at worst, between the call's start and its end -- what a host's other tasks feel;
* the longest callback: the CPU time (``time.thread_time``) of the longest single callback the
  loop ran meanwhile -- the part of a stall spent in code on the loop thread, which does not
  grow with the machine's load (a stall also counts waiting for the GIL held by a worker
  thread, and on a loaded machine waiting for a CPU at all).

Calls: ``status``, ``status(epoch=1)``, ``snapshot``, ``snapshot(epoch=1)``, ``recall``,
``recall(epoch=1)``, ``search``, ``explain`` (a conclusion, a hypothesis), ``check``, ``revise``,
``revise_many`` (10 facts), ``undo`` (twice). The header is the machine, the date, the commit
and the load average at the start and the end (:func:`bench.common.machine`); figures are
measured in this run, nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import REPO, log, machine, save, stdout_to_stderr

TICK = 0.005  # the ticker's sleep (s)


def investigation(evidence: int) -> dict:
    """The benchmark's investigation (/tmp/hb/gen.py's shape): evidence supporting five
    hypotheses, conclusions resting on two evidence nodes each."""
    hypotheses = [
        {"key": f"H{i}", "statement": f"Hypothesis {i}: the culprit is suspect number {i}.", "prior": 0.2}
        for i in range(5)
    ]
    nodes, conclusions, edges = [], [], []
    for i in range(evidence):
        nodes.append(
            {
                "key": f"E{i}",
                "claim": f"Witness {i} saw suspect {i % 5} at location {i} on day {i % 28 + 1}.",
                "subject": f"witness {i} sighting",
                "predicate": "is located at",
                "object": f"location {i}",
                "source_id": f"src{i % 7}",
                "asserted_at": "2021-03-15",
            }
        )
        edges.append({"type": "supports", "from": f"E{i}", "to": f"H{i % 5}", "weight": 0.5})
    for j in range(evidence // 2):
        statement = f"Conclusion {j}: suspect {j % 5} was near location {2 * j}."
        conclusions.append({"key": f"K{j}", "statement": statement, "confidence": 0.7})
        edges += [
            {"type": "depends_on", "from": f"K{j}", "to": f"E{2 * j + k}", "critical": True} for k in (0, 1)
        ]
    return {
        "question": {"key": "Q", "text": "Who is the culprit?"},
        "hypotheses": hypotheses,
        "evidence": nodes,
        "conclusions": conclusions,
        "edges": edges,
    }


def build(root: Path, evidence: int) -> float:
    """Load the investigation into a new root with the CLI, in a child process; seconds taken."""
    data = root.parent / "investigation.json"
    data.write_text(json.dumps(investigation(evidence)))
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, str(REPO / "main.py"), "--root", str(root), "load", str(data)],
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


class Loop:
    """The ticker and the loop thread's longest callback, over one call at a time."""

    def __init__(self) -> None:
        self.stall = 0.0
        self.callback = 0.0
        self.measuring = False
        self.running = True
        self._last = time.perf_counter()

    async def tick(self) -> None:
        self._last = time.perf_counter()
        while self.running:
            await asyncio.sleep(TICK)
            now = time.perf_counter()
            if self.measuring:
                self.stall = max(self.stall, now - self._last - TICK)
            self._last = now

    def watch_callbacks(self) -> None:
        """Time (CPU) every callback this thread's loop runs while a call is measured (not those
        of the event loops other threads run: LanceDB keeps one in a thread of its own)."""
        run = asyncio.events.Handle._run
        loop = self
        mine = threading.get_ident()

        def timed(handle) -> None:
            if not loop.measuring or threading.get_ident() != mine:
                return run(handle)
            start = time.thread_time()
            try:
                return run(handle)
            finally:
                loop.callback = max(loop.callback, time.thread_time() - start)

        asyncio.events.Handle._run = timed  # type: ignore[method-assign]

    async def measure(self, make) -> dict:
        await asyncio.sleep(0.2)  # the ticker settles
        self.stall = self.callback = 0.0
        self._last = time.perf_counter()
        self.measuring = True
        start = time.perf_counter()
        try:
            await make()
        finally:
            took = time.perf_counter() - start
            await asyncio.sleep(2 * TICK)  # a stall at the call's very end is seen too
            self.measuring = False
        return {
            "seconds": round(took, 3),
            "longest_stall_ms": round(self.stall * 1000, 1),
            "longest_callback_cpu_ms": round(self.callback * 1000, 1),
        }


def calls(fx) -> list:
    facts = [
        {
            "fact": f"Witness {i} saw them at location {1000 + i}.",
            "triple": f"witness {i} sighting|is located at|location {1000 + i}",
        }
        for i in range(10, 20)
    ]
    return [
        ("status", lambda: fx.status()),
        ("status(epoch=1)", lambda: fx.status(epoch=1)),
        ("snapshot", lambda: fx.snapshot()),
        ("snapshot(epoch=1)", lambda: fx.snapshot(epoch=1)),
        ("recall", lambda: fx.recall("Where was suspect 4?")),
        ("recall(epoch=1)", lambda: fx.recall("Where was suspect 4?", epoch=1)),
        ("search", lambda: fx.search("suspect location", top_k=10)),
        ("explain K2", lambda: fx.explain("K2")),
        ("explain H2", lambda: fx.explain("H2")),
        ("check", lambda: fx.check()),
        (
            "revise",
            lambda: fx.revise(
                "Witness 4 actually saw suspect 4 at location 999.",
                triple="witness 4 sighting|is located at|location 999",
            ),
        ),
        ("revise_many (10 facts)", lambda: fx.revise_many(facts)),
        ("undo", lambda: fx.undo()),
        ("undo", lambda: fx.undo()),
    ]


async def run(root: Path) -> dict:
    from memory_core import Falsify

    loop = Loop()
    loop.watch_callbacks()
    ticker = asyncio.ensure_future(loop.tick())
    try:
        fx = await Falsify.open(root)
        try:
            nodes = len((await fx.status())["nodes"])
            # one revision, so that epoch 1 (the load) is in the past
            await fx.revise("Forensic audit: witness 1 was elsewhere that day.", target="E1")
            measured = []
            for name, make in calls(fx):
                figures = await loop.measure(make)
                measured.append(dict(call=name, **figures))
                log(f"{name}: {figures}")
        finally:
            await fx.close()
    finally:
        loop.running = False
        await ticker
    return {"nodes": nodes, "calls": measured}


def text(report: dict) -> str:
    m = report["machine"]
    lines = [
        f"bench.loop_stall: {m['cpu_count']} CPU(s) {m['cpu_model']}, {m['date']}, commit {m['commit']}, "
        f"load average {m['load_average_at_start']} -> {m['load_average_at_end']}",
        f"root: {report['nodes']:,} nodes ({report['root']}); ticker every {TICK * 1000:.0f} ms",
        f"{'call':24s} {'duration':>9s} {'longest stall':>14s} {'longest callback (CPU)':>23s}",
    ]
    for c in report["calls"]:
        lines.append(
            f"{c['call']:24s} {c['seconds']:8.2f}s {c['longest_stall_ms']:11.0f} ms "
            f"{c['longest_callback_cpu_ms']:20.0f} ms"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--evidence", type=int, default=6000, help="evidence nodes of the root built (default 6000)"
    )
    parser.add_argument("--root", type=Path, help="copy this root instead of building one")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--out", help="also save the JSON report here")
    args = parser.parse_args(argv)
    report: dict = {"machine": machine()}
    with tempfile.TemporaryDirectory(prefix="falsify-loop-stall-") as work:
        root = Path(work) / "root"
        if args.root:
            shutil.copytree(args.root, root, symlinks=True)
            report["root"] = f"a copy of {args.root}"
        else:
            log(f"building a root of {args.evidence} evidence nodes ...")
            report["root"] = f"built: {args.evidence} evidence, loaded in {build(root, args.evidence):.0f} s"
        with stdout_to_stderr(args.json):
            report.update(asyncio.run(run(root)))
    report["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    save(report, args.out)
    print(json.dumps(report, indent=2) if args.json else text(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

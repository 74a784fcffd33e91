"""A host program for the lifecycle tests: ``python tests/support/lifecycle_host.py MODE --root DIR``
prints one JSON object on its last line (cognee's notes go to stderr).

MODE ``loop``: a 5 ms ticker runs on the event loop while the program opens a root (cognee
not imported yet), loads, revises, searches and closes; an audit hook and a profile on the
loop's thread record every import of cognee's stack and every engine construction or model
run that happens there. Prints the longest pause of the loop per phase and what ran on it.

MODE ``release``: open a root, load it, close it, print ``closed`` and wait for a line on
standard input (another process uses the root meanwhile); then open it again and print
what it reads.

MODE ``shared``: a host that shares its process with FALSIFY the rough way: it cancels the
process's first revise while cognee sets itself up, then calls again; runs a load and an undo,
a revise and an undo, two revises, at once on one facade; and prints from a task of its own
while a revision runs (its lines must reach its standard output).

MODE ``cancel_open``: ``asyncio.wait_for(Falsify.open(root), 0.3)`` times out while cognee is
imported (held up 2 s part-way, as on a cold disk); the host opens the root again at once (that
opening waits for the import under way).

MODE ``host_config``: configure cognee the way a host program does (its own roots), then
``Falsify.open``: must refuse, change nothing and create nothing. MODE ``host_imported``: a
host that imported cognee on its defaults, then ``Falsify.open``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "company_x.json"
AUDIT = "Forensic audit: the March QA report was back-dated."

# what must never run on the loop's thread: importing cognee's stack, building an engine, running the model
HEAVY = (
    "cognee",
    "litellm",
    "lancedb",
    "ladybug",
    "onnxruntime",
    "fastembed",
    "alembic",
    "aiosqlite",
    "mako",
    "tokenizers",
    "tiktoken",
)
BUILDS = {
    ("ladybug/adapter.py", "__init__"),
    ("LanceDBAdapter.py", "__init__"),
    ("FastembedEmbeddingEngine.py", "__init__"),
    ("fastembed/text/text_embedding.py", "__init__"),
    ("fastembed/text/text_embedding.py", "embed"),
    ("onnxruntime_inference_collection.py", "run"),
    ("onnxruntime_inference_collection.py", "__init__"),
}


async def loop_mode(root: Path) -> dict:
    loop_thread = threading.get_ident()
    phase = ["start"]
    on_loop: list = []

    def audit(event, args):
        if event == "import" and threading.get_ident() == loop_thread and str(args[0]).split(".")[0] in HEAVY:
            on_loop.append([phase[0], "import " + str(args[0])])

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            for suffix, name in BUILDS:
                if code.co_name == name and code.co_filename.endswith(suffix):
                    on_loop.append([phase[0], f"{suffix} {name}"])

    sys.addaudithook(audit)
    from memory_core import Falsify

    gaps: dict = {}
    ticks: dict = {}
    last = [time.perf_counter()]

    async def ticker():
        while True:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps[phase[0]] = max(gaps.get(phase[0], 0.0), now - last[0])
            ticks[phase[0]] = ticks.get(phase[0], 0) + 1
            last[0] = now

    beat = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)

    async def run(name, make):
        phase[0] = name
        last[0] = time.perf_counter()
        started = time.perf_counter()
        sys.setprofile(profile)
        try:
            result = await make()
        finally:
            sys.setprofile(None)
        await asyncio.sleep(0.03)  # the ticker reports the last pause of the phase
        took[name] = round((time.perf_counter() - started) * 1000)
        return result

    took: dict = {}
    fx = await run("open", lambda: Falsify.open(root))
    await run("load", lambda: fx.load(str(EXAMPLE)))
    await run("revise", lambda: fx.revise(AUDIT, target="E_qa"))
    await run("revise_words", lambda: fx.revise("The supplier email about the valve was forged."))
    await run("search", lambda: fx.search("QA report brake valve"))
    await run("close", lambda: fx.close())

    async def on_the_loop():  # the control: the model run on the loop's thread is seen
        from cognee.infrastructure.databases.vector.embeddings import get_embedding_engine

        list(get_embedding_engine().embedding_model.embed(["run on the event loop's thread"]))

    await run("control", on_the_loop)
    beat.cancel()
    return {
        "gaps_ms": {k: round(v * 1000, 1) for k, v in gaps.items()},
        "phase_ms": took,
        "ticks": ticks,
        "on_loop": on_loop,
        "load": os.getloadavg(),
    }


async def release_mode(root: Path) -> dict:
    from memory_core import FacadeClosed, Falsify

    fx = await Falsify.open(root)
    await fx.load(str(EXAMPLE))
    epoch = fx.journal.epoch()
    await fx.close()
    refused = []
    for name, call in (
        ("revise", lambda: fx.revise(AUDIT, target="E_qa")),
        ("load", lambda: fx.load(str(EXAMPLE))),
        ("undo", lambda: fx.undo()),
        ("status", lambda: fx.status()),
    ):
        try:
            await call()
        except FacadeClosed:
            refused.append(name)
    print("closed", flush=True)
    await asyncio.to_thread(sys.stdin.readline)  # another process uses the root now
    async with Falsify.open(root) as again:
        status = await again.status()
        out = {
            "refused": refused,
            "epoch_at_close": epoch,
            "epoch_now": again.journal.epoch(),
            "states": {n["key"]: n["state"] for n in status["nodes"]},
        }
    return out


def host_config_mode(root: Path, imported: bool) -> dict:
    host = root / "host_cognee"
    if imported:
        import cognee  # noqa: F401  (a host that uses cognee on its defaults)
    else:
        for name, sub in (("SYSTEM_ROOT_DIRECTORY", "system"), ("DATA_ROOT_DIRECTORY", "data")):
            os.environ[name] = str(host / sub)
    before = dict(os.environ)
    from memory_core import Falsify, FalsifyError

    async def attempt():
        try:
            await Falsify.open(root / "falsify_root")
            return {"raised": False}
        except FalsifyError as error:
            return {
                "raised": True,
                "class": type(error).__name__,
                "exit_code": error.exit_code,
                "message": str(error),
            }

    out = asyncio.run(attempt())
    after = dict(os.environ)
    out["environment_changed"] = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    out["created"] = (root / "falsify_root").exists()
    if imported:
        from cognee.infrastructure.databases.relational.config import get_relational_config

        out["cognee_databases"] = get_relational_config().db_path
    return out


async def shared_mode(root: Path) -> dict:
    import memory_core
    from memory_core import Falsify
    from memory_core.store import pipeline

    out: dict = {}
    async with Falsify.open(root) as fx:
        await fx.load(memory_core.demo_investigation())
        first = asyncio.create_task(fx.revise(AUDIT, target="E_qa"))
        while not any(not t.done() for t in pipeline._setting_up.values()):  # cognee's set-up runs
            await asyncio.sleep(0.001)
        first.cancel()
        try:
            await first
            out["first"] = "finished"
        except asyncio.CancelledError:
            out["first"] = "cancelled"
        out["epoch_after_cancel"] = fx.journal.epoch()
        out["again"] = [(await fx.revise(AUDIT, target="E_qa", dry_run=True))["refuted"]]
        memo = {"question": {"key": "Q"}, "evidence": [{"key": "E_memo", "claim": "A memo was found."}]}
        note = {"question": {"key": "Q"}, "evidence": [{"key": "E_note", "claim": "A note was found."}]}
        pairs = [  # in either order each pair leaves a whole root
            (fx.load(memo), fx.revise(AUDIT, target="E_qa")),
            (fx.undo(), fx.load(note)),
            (fx.revise("The Valtec email was forged.", target="E_email"), fx.undo()),
        ]
        out["epochs"] = []
        for a, b in pairs:
            results = await asyncio.gather(a, b)
            out["epochs"].append([r["epoch"] for r in results])
        out["check"] = (await fx.check())["problems"]
        out["log_epochs"] = [e["epoch"] for e in fx.journal.entries()]
        stop, printed = asyncio.Event(), []

        async def ticker() -> None:
            while not stop.is_set():
                printed.append(f"host tick {len(printed)}")
                print(printed[-1], flush=True)
                await asyncio.sleep(0.005)

        tick = asyncio.create_task(ticker())
        await asyncio.gather(
            fx.revise("The report was signed late.", target="E_qa", dry_run=True),
            fx.revise("The email was read late.", target="E_email", dry_run=True),
        )
        stop.set()
        await tick
        print("host after", flush=True)
        out["printed"] = len(printed)
    return out


async def cancel_open_mode(root: Path) -> dict:
    import importlib.abc
    import time

    from memory_core import Falsify

    class Slow(importlib.abc.MetaPathFinder):
        """cognee's import held up part-way (a cold disk), so the timeout falls inside it."""

        def find_spec(self, name, path, target=None):
            if name == "cognee.api.v1.update":
                sys.meta_path.remove(self)
                time.sleep(2)
            return None

    sys.meta_path.insert(0, Slow())
    out = {}
    try:
        fx = await asyncio.wait_for(Falsify.open(root), 0.3)
        out["first"] = "opened"
        await fx.close()
    except asyncio.TimeoutError:
        out["first"] = "timed out"
    except BaseException as error:  # noqa: BLE001  (what reached the host is the finding)
        out["first"] = f"{type(error).__name__}: {error}"
    async with Falsify.open(root) as fx:
        out["again"] = len((await fx.status())["nodes"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "mode", choices=("loop", "release", "host_config", "host_imported", "shared", "cancel_open")
    )
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    root = Path(args.root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    with contextlib.redirect_stdout(sys.stderr):
        if args.mode == "loop":
            out = asyncio.run(loop_mode(root / "root"))
        elif args.mode == "release":
            with contextlib.redirect_stdout(sys.__stdout__):
                out = asyncio.run(release_mode(root / "root"))
        elif args.mode == "shared":  # the host's own standard output: what it prints must reach it
            with contextlib.redirect_stdout(sys.__stdout__):
                out = asyncio.run(shared_mode(root / "root"))
        elif args.mode == "cancel_open":
            out = asyncio.run(cancel_open_mode(root / "root"))
        else:
            out = host_config_mode(root, imported=args.mode == "host_imported")
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()

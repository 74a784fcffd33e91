"""The two-session demo (``python main.py --demo``, ``--session 1|2``).

Session 1 loads the Company X investigation and shows that FALSIFY and plain
RAG agree. Session 2, in a new process, takes one line — "Forensic audit: the
March QA report was back-dated." — revises, and shows the scoreboard. ``--demo``
runs both as child processes (a real restart between them) and times them.

Offline, gate 1's ranked candidates for the fact are shown (no judge can decide
them: the caller does), then the demo's pin decides (``DEMO_MODE``: ``REFUTED_ID``,
default ``E_qa``) and the output says so. With ``LLM_API_KEY`` the real two-gate judge runs; the
pin is used only if it fails or finds nothing, and the output says which.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from memory_core.api import Falsify
from memory_core.core.errors import JudgeError
from memory_core.store.journal import write_atomic
from memory_core.store import settings
from memory_core.store.data_root import PROJECT_DIR

# the demo's investigation is package data (examples/company_x.json in a checkout links to it)
SEED = Path(__file__).resolve().parent / "demo_data" / "company_x.json"
# each session runs in a new process on this same memory_core, installed or in a checkout (whose
# folder goes first on the path, as `python main.py` puts it; an installed one's is already there)
_SESSION = (
    "import sys\nhome = {path!r}\nif home not in sys.path: sys.path.insert(0, home)\n"
    "from memory_core.shell.cli import main\nsys.exit(main())"
).format(path=str(Path(__file__).resolve().parents[2]))
QUESTION = "Did Company X know about the defect before the recall?"
FACT = "Forensic audit: the March QA report was back-dated."
EXIT_USAGE = 2
# how the hints spell the command: the checkout's entry point, else the installed console script
PROG = "python main.py" if (PROJECT_DIR / "main.py").is_file() else "falsify"


def demo_root(root) -> Path:
    if root:
        return Path(root).expanduser().resolve()
    base = settings.current().home
    return (Path(base) / "demo").resolve() if base else (Path.cwd() / ".falsify-demo").resolve()


def say(text: str = "") -> None:
    print(text, flush=True)


def _ms(value: float) -> str:
    return f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


def print_scoreboard(r: dict, title: str) -> None:
    say(f"[SCOREBOARD{title}]")
    f, b = r["falsify"], r["baseline"]
    say(f"  FALSIFY recall : {f['answer']} {r['scoreboard']['falsify_mark']}".rstrip())
    say(f"                   uses {', '.join(f['nodes'])}")
    say(f"  Plain-RAG      : {b['answer']} {r['scoreboard']['baseline_mark']}".rstrip())
    states = r.get("baseline_states", {})
    used = ", ".join(f"{k} ({states.get(k, '?')})" for k in b["nodes"])
    say(f"                   uses {used}")
    say(f"  verdict: {r['verdict']}")
    if r["scoreboard"]["baseline_mark"]:
        say('  "AI revised, not forgot."')


async def run_session(number: int, root) -> int:
    root = demo_root(root)
    app = await Falsify.open(root, purpose=f"demo session {number}")
    try:
        if number == 1:
            return await session_one(app)
        return await session_two(app)
    finally:
        await app.close()


async def session_one(app) -> int:
    start = time.perf_counter()
    result = await app.load_file(SEED)
    meta = app.journal.meta()
    meta["default_question"] = QUESTION
    write_atomic(app.journal.meta_path, json.dumps(meta, indent=2))
    status = await app.status()
    by_key = {n["key"]: n for n in status["nodes"]}
    took = (time.perf_counter() - start) * 1000
    if result["epoch"]:
        say(f'[FALSIFY] Session 1: built belief graph for "{by_key["Q"]["text"]}"')
        say(
            f"  root {app.paths.root}; {len(result['added'])} nodes, {len(result['edges_added'])} edges, "
            f"epoch {result['epoch']}, {_ms(took)}"
        )
    else:
        say(f"[FALSIFY] Session 1: the belief graph is already in {app.paths.root}; nothing new to load")
    hyps = [n for n in status["nodes"] if n["type"] == "hypothesis"]
    say("  Hypotheses: " + "  ".join(f"{h['key']}({h['text'].split(':')[0]}) [{h['state']}]" for h in hyps))
    for e in status["edges"]:
        if e["type"] == "depends_on":
            say(
                f"  Conclusion {e['from']} depends_on {e['to']}"
                + (" (critical)" if e.get("critical") else "")
            )
    print_scoreboard(await app.recall(QUESTION), " before revision")
    return 0


async def session_two(app) -> int:
    if "Q" not in await app.store.find_keys(["Q"]):
        say(f"[FALSIFY] Session 2: no demo investigation in {app.paths.root}.")
        say(
            f"  Run session 1 first:  {PROG} --session 1"
            + (f" --root {app.paths.root}" if app.store.settings.home is None else "")
        )
        return EXIT_USAGE
    warm = await app.warm_up()
    say(f'[FALSIFY] Session 2 (new process {os.getpid()}): new fact -> "{FACT}"')
    say(
        f"  start-up: cognee import + engines {app.opened_ms / 1000:.1f} s, embedding model + pipeline "
        f"runner {_ms(warm)} (not part of the revision)"
    )
    pin = os.environ.get("REFUTED_ID", "E_qa")
    how = ""
    result = None
    if app.store.settings.llm_key and os.environ.get("DEMO_MODE", "").strip() not in ("1", "true", "yes"):
        try:
            # previewed first (a dry run writes nothing; the verdicts are cached for the real run): a fact
            # the judge finds unrelated would be recorded, and the pin could then no longer apply to it
            preview = await app.revise(FACT, dry_run=True)
            if preview.get("already_applied") or preview.get("refuted") or preview.get("superseded"):
                result = await app.revise(FACT)
                how = "two-gate judge (hybrid gate 1 + LLM)"
            else:
                how = (
                    f"two-gate judge found no contradiction ({preview.get('note', '')}); fell back to the pin"
                )
                result = None
        except JudgeError as error:
            how = f"LLM judge failed ({error}); fell back to the pin"
    if result is None:
        reason = "DEMO_MODE pin, REFUTED_ID=" + pin
        if not how:  # offline: gate 1 ranks the candidates, no judge can decide them, the caller does
            offline = await app.revise(FACT)
            if not offline.get("already_applied"):
                show_candidates(offline, pin)
        result = await app.revise(FACT, target=pin, pin_reason=reason)
        how = how or f"judge pinned (offline: no LLM_API_KEY; {reason}): the pin decides"
    say(f"  detection: {how}")
    if result.get("already_applied"):
        say(f"  {result['note']}: session 2 already ran on this root (use --demo for a clean run)")
    else:
        tell_revision(result)
    print_scoreboard(await app.recall(QUESTION), "")
    return 0


def show_candidates(r: dict, pin: str) -> None:
    """Offline, what the caller decides from: gate 1's ranked candidates (nothing recorded)."""
    cands = r.get("candidates", [])
    say(
        f"  gate 1 (vector + lexical, fused): {len(cands)} candidate(s); offline no judge can decide them, "
        "the caller does:"
    )
    for c in cands:
        lexical = f", lexical {c['lexical']:.2f}" if c.get("lexical") is not None else ""
        dist = "-" if c["distance"] is None else f"{c['distance']:.3f}"
        say(f"    #{c.get('rank') or '-'} {c['key']} (cosine distance {dist}{lexical}): {c.get('claim', '')}")
    first = cands[0]["key"] if cands else None
    agrees = (
        "ranked first"
        if first == pin
        else (
            f"ranked #{next((c.get('rank') for c in cands if c['key'] == pin), '-')}"
            if first
            else "not among them"
        )
    )
    say(f"  the caller's decision here is the demo's pin: {pin} ({agrees}) is contradicted")


def tell_revision(r: dict) -> None:
    for c in r["candidates"]:
        dist = "not in gate-1 top hits" if c["distance"] is None else f"cosine distance {c['distance']:.3f}"
        if (
            r.get("judge") == "pinned"
        ):  # decided by the pin, not detected: gate 1's distance is shown, not used
            say(
                f"  contradiction (pinned, gates skipped): {c['key']} ({dist}, shown only; judge=pinned "
                f"conf={c['confidence']:.2f})"
            )
        else:
            say(f"  contradiction: {c['key']} ({dist}; judge={c['relation']} conf={c['confidence']:.2f})")
    if r["refuted"]:
        say(f"  refuted: {', '.join(r['refuted'])}")
    say(f"  forward cascade: {', '.join(r['invalidated']) or 'nothing'} invalidated")
    losers = [k for k in r["superseded"] if k not in r["refuted"]]
    if losers or r["promoted"]:
        say(
            f"  {', '.join(losers) or '-'} superseded -> {', '.join(r['promoted']) or 'no rival'} ignites "
            "(new frontier)"
        )
    if r["weakened"]:
        say(f"  weakened: {', '.join(r['weakened'])}")
    n = len(r["forgotten"])
    say(
        f"  forgot {n} orphan{'s' if n != 1 else ''} ({', '.join(r['forgotten']) or '-'}) from graph + vector"
    )
    say(
        f"  recorded new evidence {r['new_evidence']} (supersedes "
        f"{', '.join(r['refuted'] + [k for k in r['superseded'] if k.startswith('E')]) or '-'}), epoch {r['epoch']}"
    )
    steps = ", ".join(f"{name.split('_')[0]} {_ms(ms)}" for name, ms in r.get("timings", {}).items())
    say(f"  timings: {steps}; revision total {_ms(r['elapsed_ms'])}")


def run_demo(root, keep: bool = False) -> int:
    root = demo_root(root)
    started = time.perf_counter()
    if root.exists() and not keep:
        if any(root.iterdir()) and not (root / "falsify.json").exists():
            print(
                f"error: {root} exists and is not a FALSIFY data root; refusing to clear it (pick another --root)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        shutil.rmtree(root)
        say(f"[FALSIFY] demo root {root} (started clean; --keep reuses it)")
    else:
        say(f"[FALSIFY] demo root {root}" + (" (reused: --keep)" if keep and root.exists() else ""))
    for session in (1, 2):
        t = time.perf_counter()
        code = subprocess.call(
            [sys.executable, "-c", _SESSION, "--root", str(root), "--session", str(session)]
        )
        say(f"  (session {session}: separate process, {time.perf_counter() - t:.1f} s wall)")
        if code != 0:
            return code
    say(
        f"[FALSIFY] demo finished in {time.perf_counter() - started:.1f} s wall "
        f"(2 processes, {os.cpu_count()} CPU core(s), {time.strftime('%Y-%m-%d')})"
    )
    say(f"  view it in the browser:  {PROG} --root {root} serve   then open http://127.0.0.1:8765")
    say(f"  why is K gone?           {PROG} --root {root} explain K")
    return 0

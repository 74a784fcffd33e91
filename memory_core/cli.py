"""Command line: ``python main.py [--root DIR] COMMAND ...``.

Exit codes (also in the README):
  0  success (including "nothing to do" and "no judge could decide")
  1  ``check`` found problems, or an unexpected internal error
  2  bad input: invalid file, fact, key, flag or JSON; nothing was written
  3  the data root is busy (another writer held the lock past the timeout)
  4  the data root was built with another embedder
  5  the judge failed (LLM timeout, error status, malformed verdict); nothing was written
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

EXIT_OK, EXIT_PROBLEMS, EXIT_INPUT, EXIT_BUSY, EXIT_EMBEDDER, EXIT_JUDGE = 0, 1, 2, 3, 4, 5

DEMO_FACT = "Forensic audit: the March QA report was back-dated."


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python main.py",
        description="FALSIFY: belief-revision research memory on cognee. Drop one contradicting fact; "
                    "dependent conclusions die, a rival hypothesis rises, dead ends are forgotten.",
        epilog="Data root: --root DIR, else $FALSIFY_HOME, else ./.falsify. Exit codes: 0 ok, 1 problems found / "
               "internal error, 2 bad input (nothing written), 3 data root busy, 4 embedder mismatch, 5 judge failed.")
    p.add_argument("--root", help="data root (default: $FALSIFY_HOME or ./.falsify)")
    p.add_argument("--demo", action="store_true", help="run the two-session demo offline (session 1, then session 2 in a new process)")
    p.add_argument("--session", type=int, choices=(1, 2), help="run one demo session: 1 builds the graph, 2 revises it")
    p.add_argument("--keep", action="store_true", help="with --demo: reuse the demo root instead of starting clean")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("load", help="load an investigation file (JSON); re-loading adds only what is new")
    s.add_argument("file")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("status", help="every node (key, type, state, weight, epoch, confidence, text) and edge")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("revise", help="revise the beliefs with a new fact (two-gate detection, cascade, forget)")
    s.add_argument("fact", nargs="?", help="the new fact, in words")
    s.add_argument("--triple", help="the fact as 'subject|predicate|object' (enables the offline structured judge)")
    s.add_argument("--target", help="pin the contradicted evidence by key (skips both gates)")
    s.add_argument("--key", help="key for the new evidence (default: derived from the fact's text)")
    s.add_argument("--source", help="source id of the new fact")
    s.add_argument("--asserted-at", help="ISO date of the new fact")
    s.add_argument("--dry-run", action="store_true", help="run both gates and print candidates and verdicts; change nothing")
    s.add_argument("--file", help="JSONL file of facts ({\"fact\", \"triple\", \"target\", \"key\", \"source\", \"asserted_at\"} per line), applied in order")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("explain", help="why a node (forgotten ones included) is in its state")
    s.add_argument("key")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("recall", help="answer a question twice: FALSIFY (alive beliefs only) vs plain RAG")
    s.add_argument("question", nargs="?", help="default: the demo question")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("undo", help="revert the last revision (or load) completely; again reverts the one before")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("check", help="verify graph/vector agreement, revision rules and the journal")
    s.add_argument("--repair", action="store_true", help="fix what can be fixed and say what was done")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("serve", help="browser viewer of the belief graph (http://127.0.0.1:8765)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8765)
    return p


def emit(data, as_json: bool, human) -> None:
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        human(data)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from .settings import llm_key_configured, load_dotenv_file

    load_dotenv_file()
    if args.demo or args.session:
        from .demo import run_demo, run_session

        if args.demo:
            return run_demo(args.root, keep=args.keep)
        return run(run_session(args.session, args.root))
    if args.command is None:
        if not llm_key_configured():
            print("FALSIFY runs offline by default, no key needed:\n"
                  "  python main.py --demo          the two-session demo (offline, deterministic judge pin)\n"
                  "  python main.py --help          every command\n"
                  "For LLM judging and LLM answers, set LLM_API_KEY (and optionally LLM_PROVIDER, LLM_MODEL,\n"
                  "LLM_ENDPOINT) in the environment or in .env (see .env.template).")
            return EXIT_OK
        from .demo import run_demo

        return run_demo(args.root, keep=args.keep)
    if args.command == "serve":
        return serve(args)
    return run(COMMANDS[args.command](args))


def run(coro) -> int:
    from .embedder import EmbedderMismatch
    from .investigation import InputError
    from .judges import JudgeError
    from .lock import RootBusy

    try:
        return asyncio.run(coro)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_INPUT
    except RootBusy as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BUSY
    except EmbedderMismatch as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_EMBEDDER
    except JudgeError as error:
        print(f"error: {error}; the revision was aborted and nothing was written", file=sys.stderr)
        return EXIT_JUDGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


async def _open(args, purpose="cli"):
    from .app import Falsify

    app = await Falsify.open(args.root, purpose=f"python main.py {purpose}")
    if app.recovered:
        print(f"[recovery] {app.recovered}", file=sys.stderr)
    return app


async def _simple(args, name: str, call, printer: str) -> dict:
    """Open the root, run ``call(app)``, close, print (JSON or the human form)."""
    import inspect

    from . import report

    app = await _open(args, name)
    try:
        result = call(app)
        if inspect.isawaitable(result):
            result = await result
    finally:
        await app.close()
    emit(result, args.json, getattr(report, printer))
    return result


async def cmd_load(args) -> int:
    await _simple(args, "load", lambda app: app.load_file(args.file), "print_load")
    return EXIT_OK


async def cmd_status(args) -> int:
    await _simple(args, "status", lambda app: app.status(), "print_status")
    return EXIT_OK


async def cmd_revise(args) -> int:
    from . import report
    from .investigation import InputError
    from .judges import JudgeError

    if args.file and args.fact:
        raise InputError("give either a FACT or --file, not both")
    if not args.file and args.fact is None:
        raise InputError("revise needs a FACT (or --file FACTS.jsonl)")
    requests = [dict(fact=args.fact, triple=args.triple, target=args.target, key=args.key, source=args.source,
                     asserted_at=args.asserted_at)]
    if args.file:
        if any(getattr(args, f) for f in ("triple", "target", "key", "source", "asserted_at")):
            raise InputError("with --file, put triple/target/key/source/asserted_at on each line")
        requests = read_facts(args.file)
    else:
        from .revise import validate

        validate(**requests[0])  # reject bad input before waiting for the lock or importing cognee
    app = await _open(args, "revise")
    try:
        if args.file:
            await preflight(app, args.file, requests)
        applied: list[str] = []
        for request in requests:
            line = request.pop("line", None)
            try:
                result = await app.revise(dry_run=args.dry_run, pin_reason="--target", **request)
            except (InputError, JudgeError) as error:
                if line is None:
                    raise
                done = (f"the lines before it were applied (epochs {', '.join(applied)})" if applied
                        else "no line before it changed anything")
                raise type(error)(f"{args.file} line {line}: {error} [{done}; this line and the ones after it were not applied]") from None
            if result.get("epoch") is not None:
                applied.append(str(result["epoch"]))
            if args.json:
                print(json.dumps(result, ensure_ascii=False) if args.file else json.dumps(result, indent=2, ensure_ascii=False))
            else:
                report.print_revision(result)
    finally:
        await app.close()
    return EXIT_OK


async def preflight(app, path: str, requests: list[dict]) -> None:
    """Check a whole --file against the data root before anything is revised:
    every --target names stored evidence (or the key of an earlier line), and no
    line's key is already used by another node or by another line."""
    from .app import fact_key
    from .investigation import InputError
    from .models import normalise_key

    keys = {r["line"]: (r.get("key") or "").strip() or fact_key(r["fact"].strip()) for r in requests}
    facts = {r["line"]: " ".join(r["fact"].split()) for r in requests}
    wanted = set(keys.values()) | {r["target"].strip() for r in requests if r.get("target")}
    stored = await app.store.find_keys(sorted(wanted))
    earlier: dict[str, int] = {}  # normalised key -> the first line that uses it
    for request in requests:
        line, key = request["line"], keys[request["line"]]
        target = (request.get("target") or "").strip()
        if target:
            props = stored.get(target)
            if normalise_key(target) not in earlier and (props is None or props.get("type") != "Evidence"):
                raise InputError(f"{path} line {line}: --target {target!r}: no evidence with that key in this data root "
                                 "or on an earlier line; nothing was revised")
        norm = normalise_key(key)
        if norm in earlier:
            if facts[earlier[norm]] != facts[line]:
                raise InputError(f"{path} line {line}: key {key!r} is also the key of line {earlier[norm]} (another fact); "
                                 "nothing was revised")
            continue  # the same fact again: recorded once, then "already recorded"
        props = stored.get(key)
        if props is not None and not (props.get("type") == "Evidence" and
                                      " ".join(props.get("claim", "").split()) == facts[line]):
            raise InputError(f"{path} line {line}: key {key!r} is already used by another node; nothing was revised")
        earlier[norm] = line


FACT_FIELDS = {"fact", "triple", "target", "key", "source", "asserted_at"}


def read_facts(path: str) -> list[dict]:
    """Parse and validate a whole JSONL file before anything is revised."""
    from .investigation import InputError, loads_json
    from .revise import validate

    try:
        data = open(path, "rb").read()
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not valid UTF-8 (byte {error.start})") from None
    requests = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        obj = loads_json(line, f"{path} line {number}")
        if not isinstance(obj, dict):
            raise InputError(f"{path} line {number}: each line must be a JSON object")
        unknown = sorted(set(obj) - FACT_FIELDS)
        if unknown:
            raise InputError(f"{path} line {number}: unknown field(s) {', '.join(unknown)}")
        if "fact" not in obj:
            raise InputError(f"{path} line {number}: missing 'fact'")
        request = {k: obj.get(k) for k in FACT_FIELDS}
        try:
            validate(**request)
        except InputError as error:
            raise InputError(f"{path} line {number}: {error}") from None
        request["line"] = number
        requests.append(request)
    if not requests:
        raise InputError(f"{path}: no facts")
    return requests


async def cmd_explain(args) -> int:
    await _simple(args, "explain", lambda app: app.explain(args.key), "print_explain")
    return EXIT_OK


async def cmd_recall(args) -> int:
    await _simple(args, "recall", lambda app: app.recall(args.question), "print_recall")
    return EXIT_OK


async def cmd_undo(args) -> int:
    await _simple(args, "undo", lambda app: app.undo(), "print_undo")
    return EXIT_OK


async def cmd_check(args) -> int:
    result = await _simple(args, "check", lambda app: app.check(repair=args.repair), "print_check")
    return EXIT_OK if result["clean"] or (args.repair and result.get("clean_after_repair")) else EXIT_PROBLEMS


def serve(args) -> int:
    from .server import run_server

    return run_server(args.root, args.host, args.port)


COMMANDS = {"load": cmd_load, "status": cmd_status, "revise": cmd_revise, "explain": cmd_explain,
            "recall": cmd_recall, "undo": cmd_undo, "check": cmd_check}

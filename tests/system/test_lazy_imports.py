"""Packages imported on first use (memory_core/store/lazy_imports.py), checked in real processes.

cognee imports litellm, dlt, pypdf, networkx and dateparser at ``import cognee``; a FALSIFY process puts a
stand-in in their place (litellm offline only) and never imports the real packages. Each test
runs one child of the fork server, which preloads litellm: the child first drops it from
``sys.modules`` so that it starts as a cold process would.

* offline: ``import cognee`` and every command (open, warm-up, status, recall, explain, revise,
  undo) leave every stand-in unresolved; and what the litellm stand-in answered while cognee
  was imported (its flags, the names it has not, the exception classes cognee's decorators name)
  is what the real litellm has -- the contract that fails loudly when cognee or litellm changes;
* cognee only ever calls the functions and classes a stand-in hands out in the package's place
  (read from cognee's source), and each is callable in the real package;
* cognee's own uses of a deferred package still work through the stand-ins: dlt's date parsing,
  pypdf's reader, networkx's graphs, dateparser's parser and search (cognee's temporal hints) -- each
  imports its real package, which takes the stand-in's place;
* a key set in a process that has the stand-in: the LLM judge (cognee's adapters, litellm,
  the local stub endpoint) works through it, the real module takes its place, the flags cognee
  set reach it, and the placeholders match the real exception classes;
* a keyed process imports the real litellm with cognee, as before, and still defers the rest;
* pyarrow runs without pandas in FALSIFY's own process until something imports pandas, and
  then converts pandas objects as usual;
* the launcher preloads none of the packages a command defers.
"""

from __future__ import annotations

import ast
import json
import sys
import textwrap
from pathlib import Path

import forkserver
import pytest
from harness import EXAMPLE, REPO, clean_env, copy_root, loaded_root
from llm_stub import StubLLM

pytestmark = pytest.mark.slow

FACT = "Forensic audit: the March QA report was back-dated."
FACT_LANDS = (
    "Company X's internal QA report on the brake-valve defect was back-dated; "
    "it was written in 2022, not on 15 March 2021."
)
# this process starts as a cold one would: without the fork server's preloaded litellm (nor any
# other package a FALSIFY process defers)
COLD = """
import asyncio, json, logging, sys
from memory_core.store import lazy_imports
DEFERRED = [d.name for d in lazy_imports.DEFERRED] + ["instructor"]
for name in [m for m in sys.modules if m.split(".")[0] in DEFERRED]:
    del sys.modules[name]
for logger in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]:  # what its import installed
    for attr in ("filters", "handlers"):
        kept = [x for x in getattr(logger, attr, []) if not type(x).__module__.startswith("litellm")]
        if hasattr(logger, attr):
            setattr(logger, attr, kept)
root = sys.argv[1]
"""
# a FALSIFY process's import of cognee (one line: it goes into the children's code as it is)
IMPORTED = (
    "from memory_core.store import backends, data_root, settings; "
    "data_root.configure(root, backends.choose(settings.current())); data_root.import_cognee()"
)
STATE = (
    "{d.name: [lazy_imports.installed(d.name), lazy_imports.loaded(d.name)] for d in lazy_imports.DEFERRED}"
)
# every offline command once, in the child (``opened`` runs right after the root is opened);
# returns what the revise refuted
EVERY_COMMAND = f"""
from memory_core.api import Falsify
async def every_command(opened=lambda: None):
    app = await Falsify.open(root)
    opened()
    await app.warm_up()
    await app.status()
    await app.recall()
    await app.explain("E_qa")
    result = await app.revise({FACT!r}, target="E_qa")
    await app.undo()
    await app.close()
    return result["refuted"]
"""


def child(code: str, root, env: dict) -> dict:
    proc = forkserver.run(
        [sys.executable, "-c", textwrap.dedent(COLD) + textwrap.dedent(code), str(root)],
        cwd=REPO,
        env=env,
        capture_output=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-4000:]
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return loaded_root(tmp_path_factory)


def test_offline_commands_never_import_litellm_and_the_stand_in_answers_as_litellm(base, tmp_path):
    root = copy_root(base, tmp_path / "root")
    out = child(
        EVERY_COMMAND
        + textwrap.dedent(
            f"""
        out = {{}}
        def opened():
            out["opened"] = {STATE}
            out["type"] = type(sys.modules["litellm"]).__name__
        out["refuted"] = asyncio.run(every_command(opened))
        out["after"] = {STATE}
        out["loaded_by"] = [lazy_imports.loaded_by(d.name) for d in lazy_imports.DEFERRED]
        answered = {{
            "flags": dict(lazy_imports.LITELLM.flags),
            "absent": sorted(lazy_imports.LITELLM.absent),
            "exceptions": lazy_imports.answered("litellm"),
        }}
        # the real litellm, imported afresh in this process: does it have what the stand-in said?
        for name in [m for m in sys.modules if m.split(".")[0] == "litellm"]:
            del sys.modules[name]
        import litellm
        out["answered"] = answered
        out["real"] = {{
            "flags": {{k: getattr(litellm, k) for k in answered["flags"]}},
            "absent": sorted(n for n in answered["absent"] if not hasattr(litellm, n)),
            "exceptions": sorted(
                n for n in answered["exceptions"]
                if isinstance(getattr(litellm.exceptions, n, None), type)
                and issubclass(getattr(litellm.exceptions, n), Exception)
            ),
            "turn_on_debug": callable(getattr(litellm, "_turn_on_debug", None)),
        }}
        print(json.dumps(out))
        """
        ),
        root,
        clean_env(),
    )
    every = {
        "litellm": [True, False],
        "dlt": [True, False],
        "pypdf": [True, False],
        "networkx": [True, False],
        "dateparser": [True, False],
    }
    assert out["opened"] == every and out["type"] == "_Standin", out
    assert out["refuted"] == ["E_qa"], out
    assert out["after"] == every, out  # no command needed a real package
    assert out["loaded_by"] == [None] * len(every)
    answered, real = out["answered"], out["real"]
    assert answered["exceptions"], (
        "cognee's import named no litellm exception class: update lazy_imports' docs"
    )
    assert real["flags"] == answered["flags"]
    assert real["absent"] == answered["absent"]
    assert real["exceptions"] == answered["exceptions"]
    assert real["turn_on_debug"]


def test_a_key_reaches_the_real_litellm_through_the_stand_in(base, tmp_path):
    root = copy_root(base, tmp_path / "root")
    qa = next(e["claim"] for e in json.loads(EXAMPLE.read_text())["evidence"] if e["key"] == "E_qa")
    with StubLLM() as stub:
        stub.verdict_by_stored = {
            json.dumps(qa, ensure_ascii=False): {
                "rationale": "the report was back-dated",
                "relation": "contradicts",
                "confidence": 0.9,
            }
        }
        stub.verdict = {"rationale": "different claims", "relation": "unrelated", "confidence": 0.9}
        env = stub.judge_env()
        out = child(
            f"""
            lazy_imports.install()  # as a process that started offline has it
            from memory_core.api import Falsify
            out = {{}}
            async def main():
                app = await Falsify.open(root)
                out["before"] = lazy_imports.loaded("litellm")
                result = await app.revise({FACT_LANDS!r})
                out["judge"], out["refuted"] = result["judge"], result["refuted"]
                await app.close()
            asyncio.run(main())
            real = sys.modules["litellm"]
            placeholder = lazy_imports.placeholder("litellm", "NotFoundError")
            error = real.exceptions.NotFoundError("gone", model="m", llm_provider="openai")
            retry = sys.modules["cognee.infrastructure.llm.retry_config"]
            out["after"] = [type(real).__name__, lazy_imports.loaded("litellm"), lazy_imports.loaded_by() is not None]
            out["flag_applied"] = real.suppress_debug_info
            out["placeholder_matches"] = [isinstance(error, placeholder), isinstance(ValueError(), placeholder)]
            out["forwarded"] = retry.litellm.exceptions.NotFoundError is real.exceptions.NotFoundError
            out["retry_decision"] = retry.should_retry_llm_exception(error)
            print(json.dumps(out))
            """,
            root,
            env,
        )
        calls = stub.calls()
    assert out["before"] is False, out
    assert calls >= 1
    assert "llm" in out["judge"] and out["refuted"] == ["E_qa"], out
    assert out["after"] == ["module", True, True], out
    assert out["flag_applied"] is True  # cognee's suppress_debug_info = True, set while it was imported
    assert out["placeholder_matches"] == [True, False]
    assert out["forwarded"] is True
    assert out["retry_decision"] is False  # cognee does not retry a NotFoundError, as with an eager import


def test_a_keyed_process_imports_litellm_with_cognee(base, tmp_path):
    root = copy_root(base, tmp_path / "root")
    out = child(
        f"""
        {IMPORTED}
        print(json.dumps({STATE}))
        """,
        root,
        clean_env(
            LLM_API_KEY="test",
            LLM_PROVIDER="custom",
            LLM_ENDPOINT="http://127.0.0.1:9",
            LLM_MODEL="openai/stub",
        ),
    )
    assert out == {
        "litellm": [False, True],
        "dlt": [True, False],
        "pypdf": [True, False],
        "networkx": [True, False],
        "dateparser": [True, False],
    }


def _calls_only(source: str, names: set) -> list[str]:
    """Each use of ``names`` in a module that imports them other than as the function of a call."""
    tree = ast.parse(source)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return [
        f"line {node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id in names and id(node) not in called
    ]


def test_cognee_only_calls_what_a_stand_in_hands_out():
    """A stand-in hands out, in place of a function or class cognee takes from a package at import,
    a function that imports the package and calls the real one: right only while cognee does
    nothing but call it (no isinstance, no subclass, no attribute). Read from cognee's source."""
    import cognee

    from memory_core.store import lazy_imports

    site = Path(cognee.__file__).resolve().parent
    found = {}
    for path in site.rglob("*.py"):
        if "tests" in path.relative_to(site).parts:
            continue
        source = path.read_text(encoding="utf-8")
        for deferral in lazy_imports.DEFERRED:
            for module, names in deferral.callables.items():
                if module == deferral.name and module == "litellm":
                    continue  # litellm's own helper is reached as an attribute (litellm._turn_on_debug)
                if f"from {module} import" not in source:
                    continue
                tree = ast.parse(source)
                taken = {
                    alias.asname or alias.name
                    for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module == module
                    for alias in node.names
                    if alias.name in names
                }
                if taken:
                    found.setdefault(f"{module}", []).append(str(path.relative_to(site)))
                    assert not _calls_only(source, taken), (
                        f"cognee's {path.relative_to(site)} uses {sorted(taken)} other than by calling it: "
                        "lazy_imports' deferred callable would not stand for it; drop it from Deferral.callables"
                    )
    assert set(found) == {m for d in lazy_imports.DEFERRED for m in d.callables if m != "litellm"}, found
    # and the real package has each, callable (litellm's helper: checked in a fresh import above,
    # since cognee sets litellm._turn_on_debug = False once it has probed it)
    import importlib

    for deferral in lazy_imports.DEFERRED:
        for module, names in deferral.callables.items():
            for name in names:
                if module != "litellm":
                    assert callable(getattr(importlib.import_module(module), name)), (module, name)


DEFERRED_HERE = ("dlt", "pypdf", "networkx", "dateparser")  # deferred with a key too


def test_cognees_uses_of_a_deferred_package_work_through_its_stand_in(base, tmp_path):
    root = copy_root(base, tmp_path / "root")
    out = child(
        f"""
        {IMPORTED}
        out = {{"before": {STATE}}}
        import io, importlib
        temporal = importlib.import_module("cognee.tasks.ingestion.dlt_temporal")
        out["dlt"] = str(temporal.ensure_pendulum_datetime_utc("2021-03-15T10:00:00+02:00"))
        pdf = importlib.import_module("cognee.modules.data.processing.document_types.PdfDocument")
        try:
            pdf.PdfReader(io.BytesIO(b"%PDF-1.4 not really"))
        except Exception as error:
            out["pypdf"] = type(error).__module__
        import networkx
        out["networkx"] = networkx.path_graph(3).number_of_edges()
        hints = importlib.import_module("cognee.modules.engine.utils.temporal_hints")
        out["dateparser"] = [
            hints.normalize_absolute_date("23 March 1947"),
            hints.hint_lines("It rained in March 1947. Two days later it snowed.", None)[1].year,
        ]
        out["after"] = {STATE}
        out["loaded_by"] = [lazy_imports.loaded_by(name) for name in {list(DEFERRED_HERE)!r}]
        out["types"] = [
            type(sys.modules[name]).__name__
            for name in (
                "dlt", "dlt.common.time", "pypdf", "networkx", "dateparser", "dateparser.date", "dateparser.search"
            )
        ]
        print(json.dumps(out))
        """,
        root,
        clean_env(),
    )
    assert all(out["before"][name] == [True, False] for name in DEFERRED_HERE), out
    assert out["dlt"] == "2021-03-15 08:00:00+00:00"  # dlt's own parsing, to UTC
    assert out["pypdf"].startswith("pypdf")  # pypdf's own error for bytes that are no PDF
    assert out["networkx"] == 2
    assert out["dateparser"] == ["1947-03-23", 1947]  # dateparser's parser, then its search
    assert all(out["after"][name] == [True, True] for name in DEFERRED_HERE), out
    assert out["loaded_by"] == [
        "dlt.common.time.ensure_pendulum_datetime_utc",
        "pypdf.PdfReader",
        "path_graph",
        "dateparser.date.DateDataParser",
    ]
    assert out["types"] == ["module"] * 7


def test_pyarrow_runs_without_pandas_until_something_imports_it(base, tmp_path):
    """pandas (which pyarrow imports on its first conversion) stays out of FALSIFY's own process:
    the fork server's preload (the launcher's) and every command leave it unimported; once
    something imports it, pyarrow's pandas integration works; the C++ converter's sentinels stay
    as the docstring of lazy_imports.defer_pandas says."""
    root = copy_root(base, tmp_path / "root")
    out = child(
        EVERY_COMMAND
        + textwrap.dedent(
            f"""
        out = {{"preloaded": ["pandas" in sys.modules, lazy_imports.pandas_deferred()]}}
        data_root = __import__("memory_core.store.data_root", fromlist=["x"])
        data_root.claim_process()
        {IMPORTED}
        out["refuted"] = asyncio.run(every_command())
        out["after_commands"] = ["pandas" in sys.modules, "pandas" in data_root.defer_unused_packages()]
        import importlib.util, math
        importlib.util.find_spec("pandas")  # a look, as LanceDB's lazy modules take one: imports nothing
        out["looked"] = ["pandas" in sys.modules, lazy_imports.pandas_deferred()]
        import pandas as pd
        import pyarrow as pa
        out["told"] = not lazy_imports.pandas_deferred()
        # first, what only the shim decides (nothing has asked pyarrow for pandas explicitly yet)
        out["series_nan_is_null"] = pa.array(pd.Series([1.0, math.nan])).null_count
        frame = pd.DataFrame({{"a": [1.0, None], "s": ["x", None], "t": [pd.Timestamp("2021-03-15"), pd.NaT]}})
        table = pa.Table.from_pandas(frame)
        out["frame"] = [table.column("a").null_count, table.column("t").null_count, table.to_pandas().equals(frame)]
        try:
            pa.array([pd.DateOffset(days=1)])
            out["date_offset_in_a_list"] = "converted"
        except pa.ArrowInvalid:
            out["date_offset_in_a_list"] = "not recognised"
        out["again"] = lazy_imports.defer_pandas()
        print(json.dumps(out))
        """
        ),
        root,
        clean_env(),
    )
    assert out["preloaded"] == [False, True], out  # the preload imported no pandas, and pyarrow was told
    assert out["refuted"] == ["E_qa"], out
    assert out["after_commands"] == [False, True], out
    assert out["looked"] == [False, True], out
    assert out["told"] is True
    assert out["frame"] == [1, 1, True], out
    assert out["series_nan_is_null"] == 1  # pandas' semantics, as when pyarrow imports pandas itself
    # the documented remainder: pyarrow's C++ converter looked for pandas once, and keeps its answer
    assert out["date_offset_in_a_list"] == "not recognised", (
        "pyarrow now converts a DateOffset in a list after all: update lazy_imports.defer_pandas' docstring"
    )
    assert out["again"] is False  # pandas imported: left as it is


def test_the_launcher_preloads_nothing_a_command_defers():
    from memory_core.shell import launcher
    from memory_core.store import lazy_imports

    preloaded = {name.split(".")[0] for name in launcher.PRELOAD}
    assert not preloaded & {d.name for d in lazy_imports.DEFERRED if not d.offline_only}
    assert lazy_imports.PANDAS not in preloaded
    assert {d.name for d in lazy_imports.DEFERRED if d.offline_only} <= set(launcher.HOSTED_ONLY)


def test_a_graph_and_log_opening_leaves_the_vectors_and_the_model_to_their_first_use(base, tmp_path):
    """``Falsify.open(warm=False)`` (the CLI's status and explain): the graph and the log are read
    without the vector store or the embedding model; a later use loads them, the model built as a
    warm opening builds it (the stored vector of E_qa, written by the CLI's load, bit for bit), and
    a revision through that facade works as through any other."""
    root = copy_root(base, tmp_path / "root")
    out = child(
        f"""
        import numpy
        from memory_core.api import Falsify

        def loaded():
            made = sys.modules["cognee.infrastructure.databases.vector.embeddings.get_embedding_engine"]
            return {{"lancedb": "lancedb" in sys.modules, "models": made.create_embedding_engine.cache_info().currsize}}

        async def main():
            out = {{}}
            app = await Falsify.open(root, warm=False)
            out["cli"] = cli
            from memory_core.store.models import collection, node_id

            status = await app.status()
            explained = await app.explain("E_qa")
            out["read"] = [len(status["nodes"]), explained["key"], explained["state"]]
            out["after_reads"] = loaded()
            claim = (await app.store.find_keys(["E_qa"]))["E_qa"]["claim"]
            [vector] = await app.store.embed([claim])
            ids, rows = await app.store.backend.all_vectors(collection("evidence"))
            stored = rows[ids.index(node_id("evidence", "E_qa"))]
            # LanceDB keeps float32: the query's vector, rounded as the row was, bit for bit
            as_stored = [numpy.asarray(v, dtype=numpy.float32).tobytes() for v in (stored, vector)]
            out["same_vector"] = as_stored[0] == as_stored[1]
            out["after_embed"] = loaded()
            out["refuted"] = (await app.revise({FACT!r}, target="E_qa"))["refuted"]
            await app.close()
            return out

        # the CLI's status and explain open so (the CLI's entry point, in this process)
        import contextlib, io
        from memory_core.shell import cli as shell

        def run(*argv):
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                code = shell.main(["--root", root, *argv])
            return code, printed.getvalue()

        (status_code, status), (explain_code, _) = run("status", "--json"), run("explain", "E_qa")
        cli = {{"codes": [status_code, explain_code], "nodes": len(json.loads(status)["nodes"]), **loaded()}}
        print(json.dumps(asyncio.run(main())))
        """,
        root,
        clean_env(),
    )
    assert out["cli"] == {"codes": [0, 0], "nodes": 7, "lancedb": False, "models": 0}, out
    assert out["read"] == [7, "E_qa", "alive"], out
    assert out["after_reads"] == {"lancedb": False, "models": 0}, out
    assert out["same_vector"] is True
    assert out["after_embed"] == {"lancedb": True, "models": 1}, out
    assert out["refuted"] == ["E_qa"]

"""litellm imported on first use (memory_core/store/lazy_litellm.py), checked in real processes.

cognee imports litellm at ``import cognee``; an offline FALSIFY process puts a stand-in in its place
and never imports the real module. Each test runs one child of the fork server, which preloads
litellm: the child first drops it from ``sys.modules`` so that it starts as a cold process would.

* offline: ``import cognee`` and every command (open, warm-up, status, recall, explain, revise,
  undo) leave the stand-in unresolved; and what the stand-in answered for litellm while cognee
  was imported (its flags, the names it has not, the exception classes cognee's decorators name)
  is what the real litellm has -- the contract that fails loudly when cognee or litellm changes;
* a key set in a process that has the stand-in: the LLM judge (cognee's adapters, litellm,
  the local stub endpoint) works through it, the real module takes its place, the flags cognee
  set reach it, and the placeholders match the real exception classes;
* a keyed process imports the real litellm with cognee, as before.
"""

from __future__ import annotations

import json
import sys
import textwrap

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
# this process starts as a cold one would: without the fork server's preloaded litellm
COLD = """
import asyncio, json, logging, sys
for name in [m for m in sys.modules if m.split(".")[0] in ("litellm", "instructor")]:
    del sys.modules[name]
for logger in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]:  # what its import installed
    for attr in ("filters", "handlers"):
        kept = [x for x in getattr(logger, attr, []) if not type(x).__module__.startswith("litellm")]
        if hasattr(logger, attr):
            setattr(logger, attr, kept)
from memory_core.store import lazy_litellm
root = sys.argv[1]
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
        f"""
        from memory_core.api import Falsify
        out = {{}}
        async def main():
            app = await Falsify.open(root)
            out["opened"] = [lazy_litellm.installed(), lazy_litellm.loaded(), type(sys.modules["litellm"]).__name__]
            await app.warm_up()
            await app.status()
            await app.recall()
            await app.explain("E_qa")
            result = await app.revise({FACT!r}, target="E_qa")
            out["refuted"] = result["refuted"]
            await app.undo()
            await app.close()
        asyncio.run(main())
        out["after"] = [lazy_litellm.installed(), lazy_litellm.loaded(), lazy_litellm.loaded_by()]
        answered = {{
            "flags": dict(lazy_litellm.FLAGS),
            "absent": sorted(lazy_litellm.ABSENT),
            "exceptions": sorted(lazy_litellm._placeholders),
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
        """,
        root,
        clean_env(),
    )
    assert out["opened"] == [True, False, "_Standin"], out
    assert out["refuted"] == ["E_qa"], out
    assert out["after"] == [True, False, None], out  # no command needed the real module
    answered, real = out["answered"], out["real"]
    assert answered["exceptions"], (
        "cognee's import named no litellm exception class: update lazy_litellm's docs"
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
            lazy_litellm.install()  # as a process that started offline has it
            from memory_core.api import Falsify
            out = {{}}
            async def main():
                app = await Falsify.open(root)
                out["before"] = lazy_litellm.loaded()
                result = await app.revise({FACT_LANDS!r})
                out["judge"], out["refuted"] = result["judge"], result["refuted"]
                await app.close()
            asyncio.run(main())
            real = sys.modules["litellm"]
            placeholder = lazy_litellm._placeholders["NotFoundError"]
            error = real.exceptions.NotFoundError("gone", model="m", llm_provider="openai")
            retry = sys.modules["cognee.infrastructure.llm.retry_config"]
            out["after"] = [type(real).__name__, lazy_litellm.loaded(), lazy_litellm.loaded_by() is not None]
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
        """
        from memory_core.store import backends, data_root, settings
        data_root.configure(root, backends.choose(settings.current()))
        data_root.import_cognee()
        print(json.dumps([lazy_litellm.installed(), lazy_litellm.loaded()]))
        """,
        root,
        clean_env(
            LLM_API_KEY="test",
            LLM_PROVIDER="custom",
            LLM_ENDPOINT="http://127.0.0.1:9",
            LLM_MODEL="openai/stub",
        ),
    )
    assert out == [False, True]

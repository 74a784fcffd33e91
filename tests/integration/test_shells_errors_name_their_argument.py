"""A recall or a status refused for its inquiry, path or epoch names that argument in each shell's
words and carries it as the error's field, as a revision's refusals do (``InputError.field``; the
viewer's 400 body has ``"field"``).

On the session's root, in process: the Python API (its keyword, ``inquiry='X'``), the CLI's words
(``--inquiry 'X'``, as ``revise --inquiry`` says it), the MCP tool (``inquiry 'X'``) and the
viewer's JSON routes (a 400 naming ``inquiry``, ``path`` or ``epoch``). Recall's "no such question"
and "not loaded yet at epoch N" named no argument (the CLI printed ``inquiry 'X'`` where revise
prints ``--inquiry 'X'``, a Python caller read the MCP's words) and carried no field.
"""

from __future__ import annotations

import pytest

from conftest import investigation
from memory_core import InputError
from memory_core.core.errors import VOCABULARY
from memory_core.mcp.server import build_server
from memory_core.session import Gate
from memory_core.web import routes
from memory_core.web.guard import HTTPError

pytestmark = pytest.mark.slow


async def refusal(call) -> InputError:
    with pytest.raises(InputError) as raised:
        await call()
    return raised.value


async def in_cli_words(call) -> InputError:
    """The refusal as the CLI's commands get it (they speak in the CLI's words)."""
    token = VOCABULARY.set("cli")
    try:
        return await refusal(call)
    finally:
        VOCABULARY.reset(token)


async def test_recall_and_status_refusals_name_their_argument_in_every_shell(app, prefix):
    before = app.journal.epoch()
    await app.load(investigation(prefix, evidence=[{"key": "E", "claim": f"The {prefix} mill grinds rye."}]))
    question, missing, stored = f"What does the {prefix} mill grind?", f"{prefix}NOPE", f"{prefix}Q"

    error = await refusal(lambda: app.recall(question, inquiry=missing))
    assert error.field == "inquiry" and str(error).startswith(f"inquiry={missing!r}: no such question"), error
    error = await in_cli_words(lambda: app.recall(question, inquiry=missing))
    assert str(error).startswith(f"--inquiry {missing!r}: no such question"), error
    # at an epoch before the question was loaded
    error = await refusal(lambda: app.recall(question, inquiry=stored, epoch=before))
    assert error.field == "inquiry" and str(error).startswith(f"inquiry={stored!r}: that question"), error
    error = await in_cli_words(lambda: app.recall(question, inquiry=stored, epoch=before))
    assert str(error).startswith(f"--inquiry {stored!r}: that question was not loaded yet"), error
    assert (await refusal(lambda: app.recall(path="only a subject"))).field == "path"
    assert (await refusal(lambda: app.recall(question, path=f"{prefix} mill|grinds"))).field == "path"
    assert (await refusal(lambda: app.status(epoch=10**6))).field == "epoch"
    assert (await refusal(lambda: app.recall(question, epoch=10**6))).field == "epoch"

    tool = await build_server(Gate(app)).call_tool("recall", {"question": question, "inquiry": missing})
    assert tool.is_error and tool.content[0].text.startswith(f"error: inquiry {missing!r}: no such"), tool

    gate = Gate(app)
    asked = {
        "inquiry": lambda: routes.scoreboard(gate, {"q": [question], "inquiry": [missing]}),
        "epoch": lambda: routes.scoreboard(gate, {"q": [question], "epoch": [str(10**6)]}),
    }
    for field, call in asked.items():
        with pytest.raises(HTTPError) as raised:
            await call()
        assert raised.value.status == 400 and raised.value.field == field, (field, raised.value.message)
    with pytest.raises(HTTPError) as raised:
        await routes.graph(gate, {"epoch": [str(10**6)]})
    assert raised.value.field == "epoch", raised.value.message
    with pytest.raises(HTTPError) as raised:
        await routes.scoreboard(gate, {"q": [question], "inquiry": [missing]})
    assert raised.value.message.startswith(f"inquiry {missing!r}: no such question"), raised.value.message

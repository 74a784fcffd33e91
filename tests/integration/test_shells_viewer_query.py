"""The viewer's JSON routes answer what they are asked, as recall's other shells do.

In process, on the session's root (the routes of ``memory_core.web.routes`` over a gate of the
session's facade):

* ``/api/scoreboard?path=S|P`` follows the alive triples as ``recall --path`` and the MCP tool's
  ``path`` do: the route took no path and answered the default question instead;
* a query parameter a route does not take (``?question=`` for ``?q=``, ``as_of`` on the graph) or
  one given twice (``?q=a&q=b``) is a 400 naming it, as a revision's unknown field is and an MCP
  tool's unknown argument: it was dropped without a word, and the answer shown was to another
  question (or the graph at another time) than the one asked.
"""

from __future__ import annotations

import json

import pytest

from memory_core.session import Gate
from memory_core.web import routes
from memory_core.web.guard import HTTPError

pytestmark = pytest.mark.slow


async def test_the_scoreboard_takes_a_path_and_refuses_what_it_does_not_take(app, prefix):
    span = f"span {prefix}"
    await app.load(
        json.dumps(
            {
                "question": {"key": f"{prefix}Q", "text": f"What may cross the {span}?"},
                "evidence": [
                    {
                        "key": f"{prefix}E",
                        "claim": f"The posted weight limit of the {span} is 40 tonnes.",
                        "subject": span,
                        "predicate": "posted weight limit",
                        "object": "40 tonnes",
                    }
                ],
            }
        )
    )
    gate = Gate(app)
    walked = await routes.scoreboard(gate, {"path": [f"{span}|posted weight limit"]})
    asked = await app.recall(path=f"{span}|posted weight limit")
    assert walked["path"]["values"] == asked["path"]["values"] == ["40 tonnes"], walked
    assert walked["falsify"]["nodes"] == asked["falsify"]["nodes"] == [f"{prefix}E"], walked["falsify"]

    refused = {
        "question": lambda: routes.scoreboard(gate, {"question": [f"What may cross the {span}?"]}),
        "q": lambda: routes.scoreboard(gate, {"q": ["first", "second"]}),
        "as_of": lambda: routes.graph(gate, {"as_of": ["2016"]}),
        "epoch": lambda: routes.log(gate, {"epoch": ["1"]}),
        "path": lambda: routes.scoreboard(gate, {"q": ["What?"], "path": [f"{span}|posted weight limit"]}),
    }
    for field, call in refused.items():
        with pytest.raises(HTTPError) as raised:
            await call()
        assert raised.value.status == 400 and raised.value.field == field, (field, raised.value.message)

"""The viewer's timeline in a real headless Chromium against the real facade.

The real server on a root seeded with examples/company_x.json (epoch 1); three
revisions through the page's own API (epoch 2 refutes E_qa and forgets K; 3 refutes
E_email; 4 withdraws that, reinstating E_email). The page opened after them steps
back to epoch 1 (K alive again, rebuilt from the log by GET /api/graph?epoch=N),
then forward to epoch 2 (K goes), while the live stream keeps the timeline growing.
"""

from __future__ import annotations

import pytest

from browser import open_page
from test_viewer_browser import (DEMO_FACT, real_problems, settle, start_viewer, states, stop_viewer, tooltip_of,
                                 wait_for)

pytestmark = pytest.mark.slow  # a viewer process and Chromium

R2_FACT = "Discovery showed the Valtec email of 12 January 2021 was fabricated after the recall."
WITHDRAWN = "The fabrication finding was itself withdrawn by the court."

POST = """async ([fact, target]) => {
  const res = await fetch('/api/revise', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                          body: JSON.stringify({fact, target})});
  return [res.status, await res.json()];
}"""


@pytest.fixture(scope="module")
def viewer(tmp_path_factory):
    proc, url = start_viewer(tmp_path_factory.mktemp("falsify-timeline-root"))
    try:
        yield url
    finally:
        stop_viewer(proc)


def shown(page) -> str:
    return page.get_attribute("#timeline", "data-shown")


def test_step_back_to_epoch_1_and_forward_again(viewer):
    with open_page() as (page, _, problems):
        page.goto(viewer)
        page.wait_for_selector("#node-list li", timeout=30000)
        status, first = page.evaluate(POST, [DEMO_FACT, "E_qa"])
        assert status == 200 and "K" in first["forgotten"], first
        status, second = page.evaluate(POST, [R2_FACT, "E_email"])
        assert status == 200 and second["refuted"] == ["E_email"], second
        status, third = page.evaluate(POST, [WITHDRAWN, second["new_evidence"]])
        assert status == 200 and "E_email" in third["reinstated"], third

        page.reload()  # the page opened after three revisions
        wait_for(page, "() => document.querySelectorAll('#epochs li').length === 5")  # epochs 0..4
        settle(page)
        assert shown(page) == "4" and page.get_attribute("#timeline", "data-current") == "4"
        assert "K" not in states(page)
        rows = page.inner_text("#epochs")
        assert "Forensic audit" in rows and "load" in rows and "judge pinned" in rows

        for _ in range(3):  # step back to epoch 1
            page.click("#epoch-back")
            settle(page)
        wait_for(page, "() => document.querySelector('#timeline').dataset.shown === '1'")
        wait_for(page, "() => !!document.querySelector('#node-list li[data-key=\"K\"]:not([data-forgotten])')")
        assert states(page)["K"] == "alive" and states(page)["E_qa"] == "alive"
        assert "history" in page.inner_text("#epoch")
        assert window_shown(page) == 1
        wait_for(page, "() => document.querySelector('#scoreboard .used')?.textContent.includes('E_qa')")

        page.click("#epoch-forward")  # epoch 2: the audit refutes E_qa, K is forgotten
        wait_for(page, "() => document.querySelector('#timeline').dataset.shown === '2'")
        wait_for(page, "() => !document.querySelector('#node-list li[data-key=\"K\"]')")
        assert states(page)["E_qa"] == "refuted" and "K" not in states(page)

        # a revision arriving while the past is shown: the timeline follows, the graph stays at epoch 2
        status, fourth = page.evaluate(POST, ["The QA report's back-dating was confirmed by a second auditor.", first["new_evidence"]])
        assert status == 200, fourth
        wait_for(page, "() => !!document.querySelector('#epochs li[data-epoch=\"5\"]')")
        assert shown(page) == "2" and "K" not in states(page)

        page.click("#epoch-now")  # back to the live graph
        wait_for(page, "() => window.__falsify.shownEpoch === null && window.__falsify.snapshot.epoch === 5")
        assert shown(page) == "5"
        assert not real_problems(problems), problems


def window_shown(page):
    return page.evaluate("() => window.__falsify.shownEpoch")


def test_a_missing_epoch_is_a_400(viewer):
    with open_page() as (page, _, _problems):
        page.goto(viewer)
        page.wait_for_selector("#node-list li", timeout=30000)
        for bad in ("99", "-1", "x"):
            status = page.evaluate("async (e) => (await fetch('/api/graph?epoch=' + e)).status", bad)
            assert status == 400, bad


TIMED = {"question": {"key": "Q"},
         "evidence": [{"key": "E_ceo", "claim": "Alice was the chief executive of Company X.",
                       "valid_from": "2010-01-01", "valid_to": "2016-12-31"}]}


def test_evidence_shows_its_validity_and_the_scoreboard_takes_an_as_of_date(tmp_path):
    import json

    fragment = tmp_path / "timed.json"
    fragment.write_text(json.dumps(TIMED))
    proc, url = start_viewer(tmp_path / "root", "--seed", str(fragment))
    try:
        with open_page() as (page, _, problems):
            page.goto(url)
            page.wait_for_selector('#node-list li[data-key="E_ceo"]', timeout=30000)
            assert "2010-01-01 – 2016-12-31" in page.inner_text('#node-list li[data-key="E_ceo"]')
            assert "valid 2010-01-01 – 2016-12-31" in tooltip_of(page, "E_ceo")
            settle(page)
            page.fill("#as-of", "2012-06-30")
            wait_for(page, "() => document.querySelector('#as-of-note')?.textContent.includes('2012-06-30')")
            page.click("#as-of-clear")
            wait_for(page, "() => !document.querySelector('#as-of-note')")
            assert not real_problems(problems), problems
    finally:
        stop_viewer(proc)

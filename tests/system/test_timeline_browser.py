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
from test_viewer_browser import (
    DEMO_FACT,
    SEED,
    START_TIMEOUT,
    real_problems,
    settle,
    start_viewer,
    states,
    stop_viewer,
    tooltip_of,
    wait_for,
)

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
        wait_for(
            page, "() => !!document.querySelector('#node-list li[data-key=\"K\"]:not([data-forgotten])')"
        )
        assert states(page)["K"] == "alive" and states(page)["E_qa"] == "alive"
        assert "history" in page.inner_text("#epoch")
        assert window_shown(page) == 1
        wait_for(page, "() => document.querySelector('#scoreboard .used')?.textContent.includes('E_qa')")

        page.click("#epoch-forward")  # epoch 2: the audit refutes E_qa, K is forgotten
        wait_for(page, "() => document.querySelector('#timeline').dataset.shown === '2'")
        wait_for(page, "() => !document.querySelector('#node-list li[data-key=\"K\"]')")
        assert states(page)["E_qa"] == "refuted" and "K" not in states(page)

        # a revision arriving while the past is shown: the timeline follows, the graph stays at epoch 2
        status, fourth = page.evaluate(
            POST, ["The QA report's back-dating was confirmed by a second auditor.", first["new_evidence"]]
        )
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
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
    for bad in ("99", "-1", "x"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            opener.open(viewer.rstrip("/") + "/api/graph?epoch=" + bad, timeout=60)
        assert refused.value.code == 400, bad


TIMED = {
    "key": "E_ceo",
    "claim": "Alice was the chief executive of Company X.",
    "valid_from": "2010-01-01",
    "valid_to": "2016-12-31",
}


def test_evidence_shows_its_validity_and_the_scoreboard_takes_an_as_of_date(epochs_viewer):
    """E_ceo (valid 2010-01-01 to 2016-12-31, loaded at epoch 3 of the epochs root below)."""
    _root, _at, url = epochs_viewer
    with open_page() as (page, _, problems):
        page.goto(url)
        page.wait_for_selector('#node-list li[data-key="E_ceo"]', timeout=30000)
        assert "[2010-01-01, 2016-12-31)" in page.inner_text('#node-list li[data-key="E_ceo"]')
        assert "valid [2010-01-01, 2016-12-31)" in tooltip_of(page, "E_ceo")
        settle(page)
        page.fill("#as-of", "2012-06-30")
        wait_for(page, "() => document.querySelector('#as-of-note')?.textContent.includes('2012-06-30')")
        page.click("#as-of-clear")
        wait_for(page, "() => !document.querySelector('#as-of-note')")
        assert not real_problems(problems), problems


# ---- the timeline shows exactly the graph of every epoch, in both directions ----------------

LIMITS = {
    "question": {"key": "QL", "text": "What is the bridge weight limit?"},
    "hypotheses": [{"key": "HL", "statement": "Trucks of 38 t may cross the bridge.", "prior": 0.5}],
    "evidence": [
        {
            "key": "L40",
            "claim": "The bridge weight limit is 40 t.",
            "subject": "bridge",
            "predicate": "weight limit",
            "object": "40 t",
            "valid_from": "2010-01-01",
        },
        TIMED,
    ],
    "conclusions": [{"key": "KL", "statement": "The 38 t truck route over the bridge is allowed."}],
    "edges": [
        {"type": "depends_on", "from": "KL", "to": "L40"},
        {"type": "supports", "from": "L40", "to": "HL", "weight": 0.8},
    ],
}
MORE = {
    "question": {"key": "Q"},
    "conclusions": [{"key": "K_late", "statement": "The recall notice rests on the March finding."}],
    "edges": [{"type": "depends_on", "from": "K_late", "to": "K"}],
}


def limit(value: str, start: str, key: str) -> list:
    return [
        "revise",
        f"The bridge weight limit is {value}.",
        "--triple",
        f"bridge|weight limit|{value}",
        "--valid-from",
        start,
        "--key",
        key,
        "--json",
    ]


@pytest.fixture(scope="module")
def epochs_viewer(tmp_path_factory):
    """A root of nine epochs built by the real CLI (loads, revisions that forget, values that
    arrive late, an undo, a fragment resting on a forgotten node) and ``status --epoch N`` of each,
    then the real viewer server on it -- the same process, once the commands are done (tests/support/
    cli_batch.py's ``serve``): (root, {N: {key: state}}, URL)."""
    import json
    import subprocess

    from harness import EXAMPLE, popen_batch, viewer_url

    work = tmp_path_factory.mktemp("falsify-epochs")
    limits, more = work / "limits.json", work / "more.json"
    limits.write_text(json.dumps(LIMITS))
    more.write_text(json.dumps(MORE))
    root = work / "root"
    steps = [
        ["load", str(EXAMPLE), "--json"],  # 1
        ["revise", DEMO_FACT, "--target", "E_qa", "--key", "F_audit", "--json"],  # 2: refutes E_qa, forgets K
        ["load", str(limits), "--json"],  # 3
        limit("30 t", "2018-03-01", "L30"),  # 4: 40 t held until 2018
        limit("45 t", "2005-01-01", "L45"),  # 5: arrives late: held until 2010
        limit("35 t", "2014-01-01", "L35"),  # 6: 40 t now held until 2014
        ["undo", "--json"],  # 7: 35 t goes, 40 t's end back to 2018
        ["load", str(more), "--json"],  # 8: K_late rests on the forgotten K: invalidated
        ["revise", R2_FACT, "--target", "E_email", "--key", "F_fabricated", "--json"],
    ]  # 9
    plan = [{"name": f"e{i}", "op": "cli", "argv": argv} for i, argv in enumerate(steps, 1)]
    plan += [
        {"name": f"status{n}", "op": "cli", "argv": ["status", "--epoch", str(n), "--json"]}
        for n in range(len(steps) + 1)
    ]
    log = work / "server.log"
    with open(log, "w") as stderr:
        proc, out = popen_batch(
            root, plan, work / "batch", serve={"seeds": [str(SEED)]}, stdout=subprocess.PIPE, stderr=stderr
        )
    try:
        url = viewer_url(proc, START_TIMEOUT)
        results = [json.loads(line) for line in out.read_text().split("\n") if line] if out.exists() else []
        assert url is not None and len(results) == len(plan), (
            f"{len(results)}/{len(plan)} steps, then the viewer did not start; its stderr:\n"
            + log.read_text()[-4000:]
        )
        for r in results:
            assert r["code"] == 0, (r["name"], r["stderr"][-2000:])
        at = {
            n: {node["key"]: node["state"] for node in json.loads(results[len(steps) + n]["stdout"])["nodes"]}
            for n in range(len(steps) + 1)
        }
        assert (
            "K" in at[1]
            and "K" not in at[2]
            and at[8]["K_late"] == "invalidated"
            and "L35" in at[6]
            and "L35" not in at[7]
        )
        yield root, at, url
    finally:
        stop_viewer(proc)


def shows_exactly(page, epoch: int, want: dict, vanished: bool = False) -> None:
    """The page shows epoch ``epoch`` (``None``: now) and draws and lists exactly ``want``
    (key -> state): the keys painted in the last frame, the keys handed to the graph and the
    node list, leaving nodes (struck through until their animation ends) aside; with
    ``vanished``, once they are gone too."""
    target = "null" if epoch is None else str(epoch)
    wait_for(
        page,
        f"() => window.__falsify.shownEpoch === {target} && window.__falsify.pending === 0"
        + (" && window.__falsify.ghosts === 0" if vanished else ""),
    )
    keys = sorted(want)
    wait_for(
        page,
        """(keys) => JSON.stringify(window.__falsify.painted.filter((k) => !k.endsWith(' (forgotten)')))
                                === JSON.stringify(keys)""",
        keys,
    )
    assert (
        sorted(k for k in page.evaluate("() => window.__falsify.drawn") if not k.endswith(" (forgotten)"))
        == keys
    )
    listed = page.eval_on_selector_all(
        "#node-list li:not([data-forgotten])",
        "els => Object.fromEntries(els.map(e => [e.dataset.key, e.dataset.state]))",
    )
    assert listed == want, (epoch, listed, want)
    if vanished:
        assert states(page) == want and page.evaluate("() => window.__falsify.painted") == keys


def test_every_epoch_shows_exactly_its_graph_stepping_back_forward_scrubbing_and_now_and_rows_say_what_changed(
    epochs_viewer,
):
    _root, at, url = epochs_viewer
    last = max(at)
    with open_page() as (page, _, problems):
        page.goto(url)
        page.wait_for_selector("#node-list li", timeout=30000)
        settle(page)
        shows_exactly(page, None, at[last])
        assert page.get_attribute("#timeline", "data-current") == str(last)
        for n in range(last - 1, -1, -1):  # back, one epoch at a time, to the empty root
            page.click("#epoch-back")
            shows_exactly(page, n, at[n])
        for n in range(1, last):  # forward again: every node an epoch added is drawn
            page.click("#epoch-forward")
            shows_exactly(page, n, at[n])
        page.click("#epoch-forward")  # the last epoch is the live graph
        shows_exactly(page, None, at[last])
        for n in (1, last - 2, 0, 5, 3):  # scrubbing jumps, then Now
            page.eval_on_selector(
                "#epoch-scrub",
                """(el, n) => {
                const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
                set.call(el, String(n)); el.dispatchEvent(new Event('input', {bubbles: true})); }""",
                n,
            )
            shows_exactly(page, n, at[n])
            page.click("#epoch-now")
            shows_exactly(page, None, at[last])
        page.click("#epoch-back")  # once back, then Now: the whole graph of now again
        shows_exactly(page, last - 1, at[last - 1], vanished=True)
        page.click("#epoch-now")
        shows_exactly(page, None, at[last], vanished=True)
        for n in (2, 0):  # nodes that left are gone once their animation ends
            page.click(f'#epochs li[data-epoch="{n}"]')
            shows_exactly(page, n, at[n], vanished=True)
        page.click("#epoch-now")
        shows_exactly(page, None, at[last], vanished=True)
        assert problems == [], problems
        rows_list_what_each_epoch_added_changed_and_forgot(page, problems)


def rows_list_what_each_epoch_added_changed_and_forgot(page, problems) -> None:
    """Each timeline row lists what its epoch added, changed (a state, or a weight or a valid_to
    without one) and forgot; and the viewer refuses a forgotten node's key (400)."""
    wait_for(page, "() => document.querySelectorAll('#epochs li').length === 10")
    row = lambda n: page.inner_text(f'#epochs li[data-epoch="{n}"] .cause')  # noqa: E731
    assert "added F_audit" in row(2) and "E_qa alive→refuted" in row(2) and "forgot K" in row(2)
    assert "promoted" in row(2) and "weight" in row(2), row(2)  # the rival it promoted
    assert "added L45" in row(5) and "L45" in row(5)
    assert "L40 valid to 2018-03-01→2014-01-01" in row(6), row(6)
    assert "removed L35" in row(7), row(7)
    assert "added K_late" in row(8) and "K_late" in row(8)
    assert problems == [], problems
    # K is forgotten: the viewer may not give its key to a new fact (a 400 naming it, nothing written)
    status, body = page.evaluate("""async () => {
      const res = await fetch('/api/revise', {method: 'POST',
          headers: {'Content-Type': 'application/json'},
          body: JSON.stringify({fact: 'Another thing.', key: 'K', target: 'E_email'})});
      return [res.status, await res.json()]; }""")
    assert status == 400 and "'K' is reserved" in body["error"], body
    assert page.get_attribute("#timeline", "data-current") == "9"
    assert [p for p in problems if "status of 400" not in p] == [], problems  # only that refusal


def test_a_fact_decided_in_the_viewer_gets_a_readable_key(viewer):
    """Offline, a fact in words with no triple is decided by the person: its key is readable
    (from its words), or the one typed in the form."""
    with open_page() as (page, _, problems):
        page.goto(viewer)
        page.wait_for_selector("#node-list li", timeout=30000)
        settle(page)
        page.fill("#fact", "The valve supplier recalled its batch seven certificate.")
        page.click("#revise")
        page.wait_for_selector("#candidates li", timeout=60000)
        settle(page)
        page.click('#candidates li button[data-relation="contradicts"]')  # the first ranked candidate
        wait_for(
            page,
            "() => window.__falsify.lastRevision && window.__falsify.lastRevision.epoch != null",
            timeout_ms=60000,
        )
        key = page.evaluate("() => window.__falsify.lastRevision.new_evidence")
        assert key.startswith("F_valve_supplier_recalled_batch_") and len(key) < 40, key
        settle(page)
        page.fill("#fact", "The certificate recall was itself withdrawn a week later.")
        page.fill("#target", key)
        page.fill("#new-key", "F_recall_withdrawn")
        page.click("#revise")
        wait_for(
            page,
            "() => window.__falsify.lastRevision?.new_evidence === 'F_recall_withdrawn'",
            timeout_ms=60000,
        )
        assert problems == [], problems

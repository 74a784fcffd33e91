"""The viewer in a real headless Chromium against the real facade.

One server process (``python -m memory_core.web.server``: one process serves one
data root) runs the real ``Falsify`` facade on a fresh root seeded with
``examples/company_x.json``; the page is driven through Debian's chromium."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

try:
    from tests.browser import canvas_pixels, foreign, open_page, require_chromium
except ImportError:  # tests/ is not a package: pytest put tests/ itself on sys.path
    from browser import canvas_pixels, foreign, open_page, require_chromium

import forkserver
from harness import viewer_url
from memory_core.web.vendor import FIX, missing as missing_vendor_files

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "examples" / "company_x.json"
DEMO_FACT = "Forensic audit: the March QA report was back-dated."
SEED_KEYS = {"Q", "A", "B", "C", "E_qa", "E_email", "K"}

pytestmark = pytest.mark.slow  # a viewer process and Chromium
GREEN = "rgb(46, 157, 79)"  # #2e9d4f
COLOURS = {"alive": "#2e9d4f", "refuted": "#d62828", "invalidated": "#9e9e9e", "superseded": "#d9a441"}
START_TIMEOUT = 240


def start_viewer(root, *extra):
    """The real server (``python -m memory_core.web.server``) on a seeded root; returns
    (process, printed URL, log path)."""
    log = root.parent / f"server-{root.name}.log"
    env = {k: v for k, v in os.environ.items() if k != "LLM_API_KEY" and not k.startswith("EMBEDDING_")}
    env["PYTHONUNBUFFERED"] = "1"
    proc = forkserver.popen(
        [
            sys.executable,
            "-m",
            "memory_core.web.server",
            "--root",
            str(root),
            "--seed",
            str(SEED),
            "--port",
            "0",
            *extra,
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=open(log, "w"),
        text=True,
    )
    url = viewer_url(proc, START_TIMEOUT)
    if url is None:
        stop_viewer(proc)
        pytest.fail(f"the viewer server did not start; its stderr:\n{log.read_text()[-4000:]}")
    return proc, url


def stop_viewer(proc) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)  # serve() closes the facade on KeyboardInterrupt
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.fixture(scope="module")
def viewer(tmp_path_factory):
    """The real server on a seeded root; yields its URL."""
    require_chromium()
    missing = missing_vendor_files()
    if missing:
        pytest.fail(f"the viewer's vendored scripts are missing ({', '.join(missing)}): {FIX}")
    proc, url = start_viewer(tmp_path_factory.mktemp("falsify-root"))
    try:
        yield url
    finally:
        stop_viewer(proc)


def states(page) -> dict:
    return page.eval_on_selector_all(
        "#node-list li", "els => Object.fromEntries(els.map(e => [e.dataset.key, e.dataset.state]))"
    )


def real_problems(problems) -> list[str]:
    """Page errors and console errors: every one counts (the Content-Security-Policy allows
    the <style> elements force-graph injects by hash, so it refuses nothing the page does)."""
    return list(problems)


def wait_for(page, predicate_js: str, arg=None, timeout_ms: int = 30000) -> None:
    """Wait for a condition (generously: the machine may be loaded; nothing here is a timing claim)."""
    page.wait_for_function(predicate_js, arg=arg, timeout=timeout_ms)


def settle(page) -> None:
    """Wait until no API call is in flight (the panels stop moving)."""
    wait_for(page, "() => window.__falsify.pending === 0 && !window.__falsify.busy", timeout_ms=15000)


def rests(page) -> None:
    """Wait until the canvas stops drawing (nothing moves: the layout cooled down, no highlight, no node
    on its way out) -- an idle viewer paints no frames -- and check its last frame is of the graph shown."""
    wait_for(page, "() => !window.__falsify.moving", timeout_ms=15000)
    wait_for(
        page,
        """() => {  // no new frame for 0.7 s
            const f = window.__falsify, now = performance.now();
            if (f.restFrames !== f.frames) [f.restFrames, f.restSince] = [f.frames, now];
            return now - f.restSince > 700;
        }""",
        timeout_ms=15000,
    )
    assert page.evaluate("window.__falsify.painted") == sorted(states(page)), (
        "the last frame is not the graph shown"
    )
    flash = canvas_pixels(page, (255, 31, 31), within=7)  # the refutation's flash red (#ff1f1f)
    assert flash == 0, f"the canvas rests on a frame of the animation ({flash} flash-red pixels)"


def tooltip_of(page, key: str) -> str:
    """Show a node's tooltip from the list (keyboard focus, the mouse parked away)."""
    settle(page)
    page.mouse.move(1, 1)
    page.focus(f'#node-list li[data-key="{key}"]')
    return page.inner_text("#tooltip")


def test_seed_graph_then_demo_revision(viewer, tmp_path):
    with open_page() as (page, requests, problems):
        page.goto(viewer)
        page.wait_for_selector("#node-list li", timeout=15000)
        wait_for(page, "n => document.querySelectorAll('#node-list li').length === n", len(SEED_KEYS))

        # the seed: every node alive and green, in the list and on the canvas
        assert states(page) == {key: "alive" for key in SEED_KEYS}
        for li in page.query_selector_all("#node-list li"):
            assert li.get_attribute("data-color") == COLOURS["alive"]
            assert li.eval_on_selector(".swatch", "e => getComputedStyle(e).backgroundColor") == GREEN
        types = page.eval_on_selector_all(
            "#node-list li", "els => Object.fromEntries(els.map(e => [e.dataset.key, e.dataset.type]))"
        )
        assert types == {
            "Q": "question",
            "A": "hypothesis",
            "B": "hypothesis",
            "C": "hypothesis",
            "E_qa": "evidence",
            "E_email": "evidence",
            "K": "conclusion",
        }
        snap = page.evaluate("window.__falsify.snapshot")
        assert {n["key"] for n in snap["nodes"]} == SEED_KEYS
        page.wait_for_timeout(1500)  # let the layout settle before looking at the canvas
        green_pixels = canvas_pixels(page, (46, 157, 79))
        assert green_pixels > 200, "no alive-green nodes drawn on the canvas"
        assert page.inner_text("#scoreboard-caption") == "AI revised, not forgot"

        # hovering a node shows its full text and sources (as text)
        e_qa = next(e for e in json.loads(SEED.read_text())["evidence"] if e["key"] == "E_qa")
        tip = tooltip_of(page, "E_qa")
        assert e_qa["claim"] in tip and e_qa["source_id"] in tip
        page.screenshot(path=str(tmp_path / "seed.png"))

        # paste the demo fact, pinned to E_qa
        page.evaluate(RECORD_EFFECTS)
        page.fill("#fact", DEMO_FACT)
        page.fill("#target", "E_qa")
        with page.expect_response(lambda r: r.url.endswith("/api/revise")) as answer:
            page.click("#revise")
        assert answer.value.status == 200, answer.value.text()
        result = answer.value.json()
        assert result["refuted"] == ["E_qa"] and "K" in result["forgotten"]
        assert result["superseded"] == ["A"] and result["promoted"] == ["B"]

        # E_qa refuted (flashing red), A superseded, B promoted (glowing), K struck through
        wait_for(
            page,
            """() => {
            const s = k => (document.querySelector(`#node-list li[data-key="${k}"]`) || {dataset: {}}).dataset;
            return s('E_qa').state === 'refuted' && s('A').state === 'superseded' && s('B').state === 'alive'; }""",
        )
        lis = {k: page.query_selector(f'#node-list li[data-key="{k}"]') for k in ("E_qa", "A", "B")}
        assert lis["E_qa"].get_attribute("data-color") == COLOURS["refuted"]
        assert lis["A"].get_attribute("data-color") == COLOURS["superseded"]
        page.screenshot(path=str(tmp_path / "revision.png"))
        # ... and then K is gone, after showing struck through on its way out
        wait_for(page, "() => !document.querySelector('#node-list li[data-key=\"K\"]')")
        seen = set(page.evaluate("window.__seen"))
        assert {
            "E_qa:refuted:flash",
            "B:alive:glow",
            "A:superseded:dim",
            "K:invalidated:strike",
            "K:struck",
        } <= seen, sorted(seen)
        assert page.evaluate("window.__falsify.lastRevision.forgotten").count("K") == 1
        after = states(page)
        assert (
            after["E_qa"] == "refuted"
            and after["A"] == "superseded"
            and after["B"] == "alive"
            and after["C"] == "alive"
        )
        assert "K" not in after and result["new_evidence"] in after

        # the scoreboard: FALSIFY revised, plain RAG stale
        wait_for(
            page,
            "() => /\\[revised\\]/.test(document.querySelector('#scoreboard').innerText)",
            timeout_ms=10000,
        )
        board = page.inner_text("#scoreboard")
        assert "AI revised, not forgot" in board and "[revised]" in board and "[STALE]" in board
        assert "E_qa" in page.inner_text("#log")

        # replay: K comes back (alive, as before), is struck through, then goes again
        page.evaluate("window.__seen = []")
        page.click("#replay")
        wait_for(page, "() => window.__seen.includes('K:invalidated:strike')")
        wait_for(page, "() => !document.querySelector('#node-list li[data-key=\"K\"]')")
        assert "K:alive:" in page.evaluate("window.__seen")
        assert states(page) == after
        rests(page)  # the animation over, the canvas stops drawing: an open viewer idles
        page.screenshot(path=str(tmp_path / "after.png"), full_page=True)
        assert (tmp_path / "after.png").stat().st_size > 10000

        assert foreign(requests) == []
        assert real_problems(problems) == []


def test_untrusted_text_is_shown_as_text(viewer, tmp_path):
    payload = (
        "Memo <img src=x onerror=window.__pwned=1> says "
        "<script>window.__pwned=2</script> and <b onmouseover=window.__pwned=3>bold</b>."
    )
    with open_page() as (page, requests, problems):
        page.goto(viewer)
        page.wait_for_selector("#node-list li", timeout=15000)
        scripts_before = page.eval_on_selector_all("script", "els => els.length")
        page.fill("#fact", payload)
        page.fill("#target", "E_email")  # pinned, so the claim is recorded as new evidence
        with page.expect_response(lambda r: r.url.endswith("/api/revise")) as answer:
            page.click("#revise")
        assert answer.value.status == 200, answer.value.text()
        key = answer.value.json()["new_evidence"]
        item = f'#node-list li[data-key="{key}"]'
        page.wait_for_selector(item, timeout=30000)
        assert page.inner_text(f"{item} .txt") == payload
        assert payload in tooltip_of(page, key)
        page.hover(f"{item} .txt")
        page.wait_for_timeout(300)
        assert page.evaluate("window.__pwned") is None
        assert page.eval_on_selector_all("img", "els => els.length") == 0
        assert page.eval_on_selector_all("#app b, #app script", "els => els.length") == 0
        assert page.eval_on_selector_all("script", "els => els.length") == scripts_before
        page.screenshot(path=str(tmp_path / "untrusted.png"))
        assert foreign(requests) == []
        assert real_problems(problems) == []


TOKEN = "browser-test-token-42"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """``serve --mcp --token``: the viewer and MCP (streamable HTTP) in one process."""
    require_chromium()
    proc, url = start_viewer(tmp_path_factory.mktemp("falsify-shared"), "--mcp", "--token", TOKEN)
    try:
        assert url.endswith("/") and TOKEN not in url  # the printed address never carries the token
        yield url + f"?token={TOKEN}"  # the way in the server prints: the address, once with ?token=
    finally:
        stop_viewer(proc)


async def revise_through_mcp(base: str, fact: str, target: str) -> dict:
    import httpx2
    from mcp.client import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {TOKEN}"}, timeout=httpx2.Timeout(300)
    ) as client:
        async with streamable_http_client(base + "mcp", http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("revise", {"fact": fact, "target": target})
                assert not result.is_error, result.content[0].text
                return result.structured_content


# Records every "key:state:effect" the node list shows, however briefly (and "key:struck"
# while a key is drawn struck through), so no assertion depends on the animation's timing.
RECORD_EFFECTS = """() => {
    window.__seen = [];
    const note = () => document.querySelectorAll('#node-list li').forEach(li => {
        window.__seen.push(`${li.dataset.key}:${li.dataset.state}:${li.dataset.effect}`);
        const k = li.querySelector('.k');
        if (k && getComputedStyle(k).textDecorationLine === 'line-through')
            window.__seen.push(`${li.dataset.key}:struck`);
    });
    new MutationObserver(note).observe(document.getElementById('root'),
        {subtree: true, childList: true, attributes: true, attributeFilter: ['data-effect', 'data-state']});
}"""


def test_an_agents_revision_through_mcp_shows_up_in_an_open_page(shared, tmp_path):
    import anyio

    base = shared.split("?", 1)[0]
    with open_page() as (page, requests, problems):
        page.goto(shared)  # ?token= sets the HttpOnly cookie and comes back without it
        assert page.url == base
        page.wait_for_selector("#node-list li", timeout=15000)
        wait_for(
            page,
            "n => document.querySelectorAll('#node-list li').length === n",
            len(SEED_KEYS),
            timeout_ms=15000,
        )
        wait_for(page, "() => window.__falsify.live === true", timeout_ms=30000)  # the event stream is open
        assert states(page) == {key: "alive" for key in SEED_KEYS}
        page.evaluate(RECORD_EFFECTS)

        with ThreadPoolExecutor(
            1
        ) as agent:  # the agent, not the page (its own thread: playwright owns this loop)
            result = agent.submit(anyio.run, revise_through_mcp, base, DEMO_FACT, "E_qa").result(600)
        assert result["refuted"] == ["E_qa"] and result["promoted"] == ["B"]

        wait_for(
            page,
            """() => {
            const s = k => (document.querySelector(`#node-list li[data-key="${k}"]`) || {dataset: {}}).dataset;
            return s('E_qa').state === 'refuted' && s('A').state === 'superseded' && s('B').state === 'alive'; }""",
            timeout_ms=60000,
        )
        # played as a revision (its result drove the animation), not just reloaded
        wait_for(
            page,
            "e => window.__falsify.lastRevision && window.__falsify.lastRevision.epoch === e",
            result["epoch"],
            timeout_ms=30000,
        )
        seen = set(page.evaluate("window.__seen"))
        assert "E_qa:refuted:flash" in seen and "B:alive:glow" in seen, sorted(seen)
        wait_for(page, "() => !document.querySelector('#node-list li[data-key=\"K\"]')", timeout_ms=30000)
        wait_for(page, "() => document.querySelector('#log').innerText.includes('E_qa')", timeout_ms=30000)
        page.screenshot(path=str(tmp_path / "mcp-revision.png"))
        assert foreign(requests) == []
        assert real_problems(problems) == []


def test_without_the_token_the_page_says_so(shared):
    base = shared.split("?", 1)[0]
    with open_page() as (page, requests, problems):
        response = page.goto(base)
        assert response.status == 401
        assert "access token" in page.inner_text("body").lower()
        assert page.query_selector("#node-list") is None


def test_offline_candidates_marked_and_decided_in_the_viewer(tmp_path):
    """Offline, a fact in words: the viewer marks gate 1's candidates on the graph and the list,
    offers contradicts / supersedes / unrelated per candidate; contradicts completes the revision;
    "none of these" records the next fact, supporting a hypothesis chosen in the panel."""
    require_chromium()
    proc, url = start_viewer(tmp_path / "root")
    try:
        with open_page() as (page, requests, problems):
            page.goto(url)
            page.wait_for_selector("#node-list li", timeout=15000)
            page.fill("#fact", DEMO_FACT)
            with page.expect_response(lambda r: r.url.endswith("/api/revise")) as answer:
                page.click("#revise")
            offered = answer.value.json()
            assert offered["epoch"] is None and offered["to_decide"][0] == "E_qa"
            page.wait_for_selector('#candidates li[data-key="E_qa"]', timeout=15000)
            listed = page.eval_on_selector_all("#candidates li", "els => els.map(e => e.dataset.key)")
            assert listed == offered["to_decide"]
            effects = page.eval_on_selector_all(
                "#node-list li", "els => Object.fromEntries(els.map(e => [e.dataset.key, e.dataset.effect]))"
            )
            assert {k for k, v in effects.items() if v == "candidate"} == set(offered["to_decide"])
            assert states(page)["E_qa"] == "alive"  # nothing recorded yet
            # supersedes explains itself; unrelated marks the candidate
            page.click('#candidates li[data-key="E_email"] button[data-relation="supersedes"]')
            assert "supersedes means" in page.inner_text("#decide-note")
            page.click('#candidates li[data-key="E_email"] button[data-relation="unrelated"]')
            assert page.get_attribute('#candidates li[data-key="E_email"]', "data-marked") == "unrelated"
            # contradicts completes the revision with target E_qa
            with page.expect_response(lambda r: r.url.endswith("/api/revise")) as done:
                page.click('#candidates li[data-key="E_qa"] button[data-relation="contradicts"]')
            result = done.value.json()
            assert result["refuted"] == ["E_qa"] and result["judge"] == "pinned"
            wait_for(
                page,
                "() => (document.querySelector('#node-list li[data-key=\"E_qa\"]') || "
                "{dataset: {}}).dataset.state === 'refuted'",
            )
            wait_for(page, "() => !document.querySelector('#candidates')")
            # none of these: the fact is recorded as new evidence, supporting a hypothesis chosen in the panel
            page.fill("#fact", "The supplier email about the valve turned out to be genuine.")
            with page.expect_response(lambda r: r.url.endswith("/api/revise")) as answer:
                page.click("#revise")
            assert answer.value.json()["to_decide"]
            page.wait_for_selector("#record", timeout=15000)
            page.select_option("#bears", "supports")
            page.select_option("#hypothesis", "B")
            page.fill("#weight", "0.7")
            with page.expect_response(lambda r: r.url.endswith("/api/revise")) as done:
                page.click("#record")
            recorded = done.value.json()
            assert recorded["judge"] == "caller" and recorded["edges_added"] == [
                f"supports {recorded['new_evidence']} -> B"
            ]
            wait_for(page, "() => !document.querySelector('#candidates')")
            wait_for(
                page,
                f"() => !!document.querySelector('#node-list li[data-key=\"{recorded['new_evidence']}\"]')",
            )
            assert foreign(requests) == []
            assert real_problems(problems) == []
    finally:
        stop_viewer(proc)

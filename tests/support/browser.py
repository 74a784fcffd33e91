"""Headless Chromium for the viewer tests: Debian's /usr/bin/chromium driven by
the playwright package (never ``playwright install``: nothing is downloaded)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

CHROMIUM = Path(os.environ.get("FALSIFY_CHROMIUM", "/usr/bin/chromium"))
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def require_chromium() -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's package with `apt-get install -y chromium`")


# One Chromium for the consecutive tests of one test module (tests/conftest.py closes it when
# the next test is in another file, or none follows): each page gets a new browser context, so
# no cookie, storage or cache passes from one test to the next.
_shared: tuple | None = None


def _browser():
    global _shared
    if _shared is None:
        from playwright.sync_api import sync_playwright

        pw = sync_playwright().start()
        try:
            _shared = (pw, pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS))
        except BaseException:
            pw.stop()
            raise
    return _shared[1]


def close_shared() -> None:
    """Close this process's Chromium, if one is open."""
    global _shared
    if _shared is not None:
        pw, browser = _shared
        _shared = None
        try:
            browser.close()
        finally:
            pw.stop()


@contextlib.contextmanager
def open_page(viewport=(1400, 900)):
    """Yield ``(page, requests, problems)``: every URL the page asked for, and its
    page errors / console errors (CSP violations show up there). The page lives in a new
    browser context (its own cookies and storage), closed afterwards."""
    require_chromium()
    context = _browser().new_context(viewport={"width": viewport[0], "height": viewport[1]})
    try:
        page = context.new_page()
        requests: list[str] = []
        problems: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        yield page, requests, problems
    finally:
        context.close()


def foreign(requests: list[str]) -> list[str]:
    """The requests that went anywhere but this machine."""
    out = []
    for url in requests:
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            continue
        if parts.hostname not in LOCAL_HOSTS:
            out.append(url)
    return out


def canvas_pixels(page, rgb: tuple[int, int, int] | None = None, within: int = 8) -> int:
    """How many pixels of the viewer's graph canvas are of colour ``rgb`` (each channel less than
    ``within`` away), or drawn at all (not transparent) when ``rgb`` is None; 0 without a canvas."""
    return page.evaluate(
        """([rgb, within]) => {
            const c = document.querySelector('#graph canvas');
            if (!c) return 0;
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let n = 0;
            for (let i = 0; i < d.length; i += 4)
                if (rgb ? [0, 1, 2].every((k) => Math.abs(d[i + k] - rgb[k]) < within) : d[i + 3] > 0) n++;
            return n;
        }""",
        [list(rgb) if rgb else None, within],
    )

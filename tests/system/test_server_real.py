"""Readers never see half a revision — on the real facade and real stores.

The real viewer server (``python -m memory_core.web.server``) runs on a seeded root;
while one client posts the demo revision, several clients read ``/api/graph`` as fast
as they can. Every snapshot must be wholly the state before (epoch 1: E_qa alive, K
present, A alive) or wholly the state after (epoch 2: E_qa refuted, K forgotten, A
superseded, B promoted) — never a mixture."""

from __future__ import annotations

import http.client
import json
import threading
from urllib.parse import urlsplit

import pytest

from test_viewer_browser import DEMO_FACT, start_viewer, stop_viewer

pytestmark = pytest.mark.slow


def request(url: str, method: str, path: str, body=None):
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, json.loads(data)


def shape(snapshot: dict) -> tuple:
    states = {n["key"]: n["state"] for n in snapshot["nodes"]}
    return (snapshot["epoch"], states.get("E_qa"), states.get("K", "gone"), states.get("A"), states.get("B"))


BEFORE = (1, "alive", "alive", "alive", "alive")
AFTER = (2, "refuted", "gone", "superseded", "alive")


def test_readers_see_whole_revisions_only(tmp_path):
    proc, url = start_viewer(tmp_path / "root")
    try:
        status, first = request(url, "GET", "/api/graph")
        assert status == 200 and shape(first) == BEFORE
        seen: list[tuple] = []
        done = threading.Event()
        errors: list[str] = []

        def reader():
            while not done.is_set():
                code, snap = request(url, "GET", "/api/graph")
                if code != 200:
                    errors.append(f"GET /api/graph -> {code}")
                    return
                seen.append(shape(snap))

        readers = [threading.Thread(target=reader) for _ in range(3)]
        for r in readers:
            r.start()
        code, result = request(url, "POST", "/api/revise", {"fact": DEMO_FACT, "target": "E_qa"})
        for _ in range(3):  # a few reads after the revision landed
            seen.append(shape(request(url, "GET", "/api/graph")[1]))
        done.set()
        for r in readers:
            r.join(600)
        assert code == 200, result
        assert result["refuted"] == ["E_qa"] and result["epoch"] == 2
        assert not errors, errors
        assert len(seen) >= 4
        mixed = [s for s in seen if s not in (BEFORE, AFTER)]
        assert not mixed, f"half a revision was visible: {mixed[:3]}"
        assert seen[-1] == AFTER
    finally:
        stop_viewer(proc)

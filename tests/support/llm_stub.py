"""A real local HTTP server speaking the OpenAI chat-completions protocol, for
the LLM judge tests (the only external endpoint FALSIFY talks to).

``StubLLM`` runs ``http.server`` in a thread on 127.0.0.1:<free port>. What it
answers is set per test through ``stub.mode`` (or over HTTP with
``POST /control {"mode": ...}`` from another process):

* ``verdict``   200, a well-formed ``ContradictionJudgement`` in ``message.content``
                (``stub.verdict`` = {"relation", "confidence", "rationale"}); a batch request
                (the judge's one call per fact: a ``STORED claims`` block of JSON lines) gets a
                ``BatchJudgement``, one verdict per stored key, each picked the same way;
                recall's answer requests get ``{"answer": "stub LLM answer from: <first context line>"}``
* ``slow``      sleeps ``stub.delay`` seconds before answering (judge timeout)
* ``status``    an OpenAI-style error body with HTTP ``stub.status`` (500, 401, ...); with
                ``stub.error_message`` set, its message is that text with ``{authorization}``
                replaced by the request's ``Authorization`` header (a hostile or careless
                endpoint echoing the key)
* ``status_once`` the first chat request gets ``status``'s error, and the mode turns ``verdict``
                (a transient failure the caller's retry gets past)
* ``malformed`` 200, but ``content`` is not a valid verdict
* ``garbage``   200 with a body that is not JSON at all

Every request is recorded in ``stub.requests`` (path, headers, parsed body, and
the current ``stub.tag``); ``stub.calls()`` counts the chat-completion requests.
``stub.latency`` (seconds) delays every answer (a fixed-latency endpoint for
``bench.judge``). ``usage`` reports prompt tokens as characters/4 of the messages
and completion tokens as characters/4 of the answer; with ``stub.cost`` set, it
also reports ``usage.cost`` (USD per call, as OpenRouter-style endpoints do).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StubLLM:
    def __init__(self):
        self.mode = "verdict"
        self.verdict = {"rationale": "stub", "relation": "unrelated", "confidence": 0.9}
        # first matching substring of the STORED claim picks the verdict (else ``verdict``)
        self.verdict_by_stored: dict[str, dict] = {}
        self.status = 500
        self.delay = 30.0
        self.malformed_content = '{"relation": "maybe", "confidence": "high"}'
        self.requests: list[dict] = []
        self.tag = ""  # recorded with each request (set over /control to group them by test step)
        self.latency = 0.0  # every answer waits this long (seconds)
        self.cost = None  # USD reported in usage.cost per call (None: not reported)
        self.error_message = None  # mode "status": the error's message ({authorization}: the header echoed)
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, code: int, body: bytes, ctype: str = "application/json", headers=None) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):  # litellm may probe /models; nothing else is served
                self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path.rstrip("/").endswith("/control"):
                    data = json.loads(raw or b"{}")
                    with stub._lock:
                        for key, value in data.items():
                            setattr(stub, key, value)
                    self._send(200, b"{}")
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                with stub._lock:
                    stub.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body, "tag": stub.tag}
                    )
                    mode = stub.mode
                    if mode == "status_once" and self.path.rstrip("/").endswith("/chat/completions"):
                        stub.mode, mode = "verdict", "status"
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                if stub.latency:
                    time.sleep(float(stub.latency))
                if mode == "slow":
                    time.sleep(stub.delay)
                    mode = "verdict"
                if mode == "status":
                    code = int(stub.status)
                    message = f"stub says HTTP {code}"
                    if stub.error_message:
                        message = str(stub.error_message).replace(
                            "{authorization}", self.headers.get("Authorization", "")
                        )
                    err = {
                        "error": {
                            "message": message,
                            "type": "server_error" if code >= 500 else "invalid_request_error",
                            "code": str(code),
                        }
                    }
                    # x-should-retry: false -- the OpenAI client then reports the error at once instead of
                    # retrying it twice itself first (cognee's own retry still applies)
                    self._send(code, json.dumps(err).encode(), headers={"x-should-retry": "false"})
                    return
                if mode == "garbage":
                    self._send(200, b"<html>this is not json</html>", "text/html")
                    return
                batch = stub.batch_claims(body)
                if batch is not None:
                    if mode == "malformed":
                        try:
                            bad = json.loads(stub.malformed_content)
                        except ValueError:
                            bad = None
                        content = (
                            json.dumps({"verdicts": [dict(bad, key=k) for k, _ in batch]})
                            if isinstance(bad, dict)
                            else stub.malformed_content
                        )
                    else:
                        content = json.dumps(
                            {"verdicts": [dict(stub.verdict_for(claim), key=k) for k, claim in batch]}
                        )
                else:
                    content = (
                        stub.malformed_content if mode == "malformed" else json.dumps(stub.pick_verdict(body))
                    )
                system = " ".join(
                    str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "system"
                )
                if mode == "verdict" and system.startswith("Answer the question"):
                    content = json.dumps({"answer": stub.answer_for(body)})
                reply = {
                    "id": "chatcmpl-stub",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "stub"),
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": content},
                        }
                    ],
                    "usage": stub.usage_for(body, content),
                }
                self._send(200, json.dumps(reply).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def pick_verdict(self, body: dict) -> dict:
        """The verdict for one request: by a substring of the user message's STORED line."""
        text = " ".join(
            str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user"
        )
        stored = next((line for line in text.splitlines() if line.startswith("STORED = ")), text)
        with self._lock:
            for needle, verdict in self.verdict_by_stored.items():
                if needle in stored:
                    return verdict
            return self.verdict

    def verdict_for(self, claim: str) -> dict:
        """A batch entry's verdict: by a substring of the claim as a JSON string (the same
        needles as :meth:`pick_verdict`, which sees ``STORED = "<claim>"``)."""
        quoted = json.dumps(claim, ensure_ascii=False)
        with self._lock:
            for needle, verdict in self.verdict_by_stored.items():
                if needle in quoted:
                    return verdict
            return self.verdict

    @staticmethod
    def batch_claims(body: dict):
        """The (key, claim) pairs of a batch judge request, or None for any other request."""
        text = "\n".join(
            str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user"
        )
        lines = text.splitlines()
        start = next((i for i, line in enumerate(lines) if line.startswith("STORED claims")), None)
        if start is None:
            return None
        pairs = []
        for line in lines[start + 1 :]:
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and "key" in item:
                pairs.append((str(item["key"]), str(item.get("claim", ""))))
        return pairs

    def usage_for(self, body: dict, content: str) -> dict:
        prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        usage = {"prompt_tokens": max(1, prompt // 4), "completion_tokens": max(1, len(content) // 4)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        with self._lock:
            if self.cost is not None:
                usage["cost"] = float(self.cost)
        return usage

    def calls(self, tag=None) -> int:
        """How many chat-completion requests arrived (with ``tag``: during that step)."""
        return len([r for r in self.chat_requests() if tag is None or r["tag"] == tag])

    def answer_for(self, body: dict) -> str:
        """recall's answer requests: echo the first context line, so a test can see
        which context each side's answer was written from."""
        text = " ".join(
            str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user"
        )
        first = next((line[2:] for line in text.splitlines() if line.startswith("- ")), "")
        return f"stub LLM answer from: {first}"

    def start(self) -> "StubLLM":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def chat_requests(self) -> list[dict]:
        with self._lock:
            return [r for r in self.requests if r["path"].rstrip("/").endswith("/chat/completions")]

    def judge_env(self, **extra) -> dict:
        """A child's environment with the LLM judge pointed at this stub: the clean test environment
        (``harness.clean_env``), cognee's LLM settings naming this endpoint (litellm routes
        ``openai/stub`` to it, never through a proxy), the offline embedder the roots were built with,
        a generous judge timeout; ``extra`` adds or overrides settings."""
        from harness import clean_env

        settings = dict(
            LLM_API_KEY="test",
            LLM_PROVIDER="custom",
            LLM_ENDPOINT=self.url,
            LLM_MODEL="openai/stub",
            FALSIFY_EMBEDDER="local",
            FALSIFY_JUDGE_TIMEOUT="60",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        return clean_env(**dict(settings, **extra))

    def control(self, name: str, **settings) -> dict:
        """A ``tests/support/cli_batch.py`` step setting what this stub answers next (``POST /control``)."""
        return {"name": name, "op": "control", "url": self.url + "/control", "json": settings}

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


if __name__ == "__main__":  # manual use: python tests/support/llm_stub.py
    s = StubLLM().start()
    print(s.url, flush=True)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        s.stop()

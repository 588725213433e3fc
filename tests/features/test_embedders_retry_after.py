"""The OpenAI-compatible embedder honours ``Retry-After`` within its time budget, and
reads ``OPENAI_BASE_URL``: against a local HTTP server answering 429 first."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from vectorport import TransientBackendError
from vectorport.embedders import HashingEmbedder, OpenAICompatibleEmbedder
from vectorport.embedders.openai_http import retry_after_seconds

pytest.importorskip("httpx")

BASE = HashingEmbedder(dimension=8)


class Server:
    """Answers ``throttle`` requests with 429 + ``Retry-After: retry_after``, then embeds."""

    def __init__(self, throttle: int, retry_after: str) -> None:
        self.throttle = throttle
        self.retry_after = retry_after
        self.arrivals: list[float] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.arrivals.append(time.monotonic())
                if len(server.arrivals) <= server.throttle:
                    payload, status = b'{"error": "rate limited"}', 429
                else:
                    data = [{"index": i, "embedding": [float(x) for x in v]}
                            for i, v in enumerate(BASE.embed(body["input"]))]
                    payload, status = json.dumps({"data": data}).encode(), 200
                self.send_response(status)
                if status == 429:
                    self.send_header("Retry-After", server.retry_after)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> Server:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield


def test_waits_as_told_then_succeeds(no_key: None) -> None:
    # four 429s: more than the backoff policy's attempts, which Retry-After overrides
    with Server(throttle=4, retry_after="0.3") as server:
        embedder = OpenAICompatibleEmbedder("m", base_url=server.url, retry_budget_seconds=20)
        vectors = embedder.embed(["a", "b"])
    assert len(vectors) == 2 and len(server.arrivals) == 5
    gaps = [b - a for a, b in zip(server.arrivals, server.arrivals[1:], strict=False)]
    assert all(gap >= 0.29 for gap in gaps), gaps


def test_gives_up_when_the_wait_would_pass_the_budget(no_key: None) -> None:
    with Server(throttle=100, retry_after="5") as server:
        embedder = OpenAICompatibleEmbedder("m", base_url=server.url, retry_budget_seconds=2)
        started = time.monotonic()
        with pytest.raises(TransientBackendError, match="retry budget"):
            embedder.embed(["a"])
    assert time.monotonic() - started < 1.5, "no sleep that overruns the budget"
    assert len(server.arrivals) == 1


def test_http_date_form_and_async(no_key: None) -> None:
    import asyncio

    assert retry_after_seconds(formatdate(1000.0 + 2, usegmt=True), now=1000.0) == 2.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None
    with Server(throttle=1, retry_after=formatdate(time.time() + 1, usegmt=True)) as server:
        embedder = OpenAICompatibleEmbedder("m", base_url=server.url)
        vectors = asyncio.run(embedder.aembed(["x"]))
    assert len(vectors) == 1 and len(server.arrivals) == 2


def test_base_url_from_the_environment(no_key: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with Server(throttle=0, retry_after="0") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        embedder = OpenAICompatibleEmbedder("m")
        assert embedder.base_url == server.url
        assert len(embedder.embed(["hello"])) == 1

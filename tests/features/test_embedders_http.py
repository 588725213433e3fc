"""The OpenAI-compatible HTTP embedder, against a tiny local server (never the internet).

The server speaks the ``POST /v1/embeddings`` shape, embeds with the hashing embedder,
records every request, and can be told to fail, to delay, or to answer out of order.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

import vectorport
from vectorport import BackendError, ConfigError, TransientBackendError
from vectorport.agent import RequestContext, create_vector_query_tool
from vectorport.core.retry import RetryPolicy
from vectorport.embedders import CachedEmbedder, HashingEmbedder, OpenAICompatibleEmbedder

pytest.importorskip("httpx")

BASE = HashingEmbedder(dimension=24)
API_KEY = "sk-test-abcdef0123456789"
FAST_RETRY = RetryPolicy(attempts=3, base_seconds=0.001, cap_seconds=0.002)


@dataclass
class ServerState:
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    failures: list[tuple[int, str]] = field(default_factory=list)
    """Responses to give before answering normally: (status, body)."""
    reverse: bool = False
    delay_first_text: str | None = None
    in_flight: int = 0
    peak: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def make_handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.requests.append(body)
                state.headers.append(dict(self.headers))
                failure = state.failures.pop(0) if state.failures else None
                state.in_flight += 1
                state.peak = max(state.peak, state.in_flight)
            try:
                if self.path != "/v1/embeddings":
                    self._send(404, '{"error": "not found"}')
                    return
                if failure:
                    self._send(*failure)
                    return
                texts = body["input"]
                if state.delay_first_text is not None and texts[0] == state.delay_first_text:
                    time.sleep(0.05)
                else:
                    time.sleep(0.005)
                dims = body.get("dimensions", BASE.dimension)
                data = [{"object": "embedding", "index": i,
                         "embedding": BASE.embed([t])[0].tolist()[:dims]}
                        for i, t in enumerate(texts)]
                if state.reverse:
                    data.reverse()
                self._send(200, json.dumps({"object": "list", "data": data,
                                            "model": body["model"]}))
            finally:
                with state.lock:
                    state.in_flight -= 1

    return Handler


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, ServerState]]:
    state = ServerState()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", state
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def state(server: tuple[str, ServerState]) -> ServerState:
    s = server[1]
    with s.lock:
        s.requests.clear()
        s.headers.clear()
        s.failures.clear()
        s.reverse = False
        s.delay_first_text = None
        s.peak = 0
    return s


@pytest.fixture
def url(server: tuple[str, ServerState], state: ServerState) -> str:
    return server[0]


def embedder(url: str, **kwargs: Any) -> OpenAICompatibleEmbedder:
    options: dict[str, Any] = {"base_url": url, "api_key": API_KEY, "retry": FAST_RETRY}
    options.update(kwargs)
    return OpenAICompatibleEmbedder("text-embedding-3-small", **options)


def expected(texts: list[str]) -> list[list[float]]:
    return [BASE.embed([t])[0].tolist() for t in texts]


def test_embeds_in_order_with_auth(url: str, state: ServerState) -> None:
    with embedder(url) as e:
        texts = ["alpha", "beta", "gamma"]
        out = e.embed(texts)
        assert [v.tolist() for v in out] == expected(texts)
        assert e.dimension == BASE.dimension
    assert state.requests == [{"model": "text-embedding-3-small", "input": texts,
                               "encoding_format": "float"}]
    assert state.headers[0]["Authorization"] == f"Bearer {API_KEY}"


def test_out_of_order_answers_are_sorted_by_index(url: str, state: ServerState) -> None:
    state.reverse = True
    texts = ["one", "two", "three"]
    assert [v.tolist() for v in embedder(url).embed(texts)] == expected(texts)


def test_chunks_run_concurrently_and_keep_order(url: str, state: ServerState) -> None:
    state.delay_first_text = "t0"  # the first chunk answers last
    texts = [f"t{i}" for i in range(9)]
    e = embedder(url, max_batch_size=2, max_concurrency=4)
    assert [v.tolist() for v in e.embed(texts)] == expected(texts)
    assert sorted(len(r["input"]) for r in state.requests) == [1, 2, 2, 2, 2]
    assert state.peak > 1


def test_async_chunks(url: str, state: ServerState) -> None:
    state.delay_first_text = "t0"
    texts = [f"t{i}" for i in range(7)]
    e = embedder(url, max_batch_size=3, max_concurrency=3)
    assert [v.tolist() for v in asyncio.run(e.aembed(texts))] == expected(texts)
    assert len(state.requests) == 3 and state.peak > 1
    assert asyncio.run(e.aembed([])) == []


def test_transient_failures_are_retried(url: str, state: ServerState) -> None:
    state.failures.extend([(503, '{"error": "overloaded"}'), (429, '{"error": "slow down"}')])
    assert [v.tolist() for v in embedder(url).embed(["x"])] == expected(["x"])
    assert len(state.requests) == 3


def test_transient_failures_give_up(url: str, state: ServerState) -> None:
    state.failures.extend([(503, "{}")] * 5)
    with pytest.raises(TransientBackendError, match="503"):
        embedder(url).embed(["x"])
    assert len(state.requests) == FAST_RETRY.attempts


def test_client_errors_fail_at_once_without_the_key(url: str, state: ServerState) -> None:
    state.failures.append((401, json.dumps({"error": f"Incorrect API key provided: {API_KEY}"})))
    with pytest.raises(BackendError) as caught:
        embedder(url).embed(["x"])
    assert not isinstance(caught.value, TransientBackendError)
    assert "401" in str(caught.value) and API_KEY not in str(caught.value)
    assert len(state.requests) == 1
    assert API_KEY not in repr(embedder(url))


def test_malformed_answers(url: str, state: ServerState) -> None:
    state.failures.append((200, '{"data": [{"index": 5, "embedding": [1, 2]}]}'))
    with pytest.raises(BackendError, match="index"):
        embedder(url).embed(["x"])
    state.failures.append((200, "not json"))
    with pytest.raises(BackendError, match="unexpected"):
        embedder(url).embed(["x"])


def test_wrong_dimension_is_a_backend_error(url: str, state: ServerState) -> None:
    with pytest.raises(BackendError, match="expected 30"):
        embedder(url, dimensions=30).embed(["x"])  # the server cuts at 24


def test_connection_errors_are_transient(state: ServerState) -> None:
    e = OpenAICompatibleEmbedder("m", base_url="http://127.0.0.1:9/v1", retry=FAST_RETRY,
                                 timeout=1.0)
    with pytest.raises(TransientBackendError, match="failed"):
        e.embed(["x"])


def test_provider_options(url: str, state: ServerState) -> None:
    e = embedder(url, user="base-user")
    smaller = e.with_options({"openai": {"dimensions": 8}, "google": {"task": "x"}})
    assert smaller.dimension == 8
    out = smaller.embed(["x"])
    assert out[0].tolist() == expected(["x"])[0][:8]
    assert state.requests[-1]["dimensions"] == 8 and state.requests[-1]["user"] == "base-user"
    assert e.with_options({"google": {}}) is e
    assert e.dimensions is None
    with pytest.raises(ConfigError, match="unknown provider_options"):
        e.with_options({"openai": {"outputDimensionality": 8}})
    with pytest.raises(ConfigError, match="positive int"):
        e.with_options({"openai": {"dimensions": 0}})


def test_configuration_errors() -> None:
    with pytest.raises(ConfigError, match="model"):
        OpenAICompatibleEmbedder("")
    with pytest.raises(ConfigError, match="base_url"):
        OpenAICompatibleEmbedder("m", base_url="ftp://x")
    with pytest.raises(ConfigError, match="max_batch_size"):
        OpenAICompatibleEmbedder("m", max_batch_size=0)


def test_api_key_from_the_environment(url: str, state: ServerState,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_EMBED_KEY", "from-env")
    OpenAICompatibleEmbedder("m", base_url=url, api_key_env="MY_EMBED_KEY").embed(["x"])
    assert state.headers[-1]["Authorization"] == "Bearer from-env"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    OpenAICompatibleEmbedder("m", base_url=url).embed(["x"])
    assert "Authorization" not in state.headers[-1]


def test_in_the_query_tool_with_cache_and_provider_options(url: str, state: ServerState) -> None:
    store = vectorport.connect("memory://")
    texts = ["create an index", "filters and operators", "namespaces for tenants"]
    index = store.create_index("http_docs", dimension=8)
    index.upsert([{"id": f"d{i}", "vector": BASE.embed([t])[0][:8], "document": t}
                  for i, t in enumerate(texts)])
    model = CachedEmbedder(embedder(url))
    tool = create_vector_query_tool(vector_store=store, index_name="http_docs", model=model,
                                    provider_options={"openai": {"dimensions": 8}})
    first = tool.execute({"query_text": "filters", "top_k": 1})
    again = tool.execute({"query_text": "filters", "top_k": 1})
    assert first == again and first.sources[0].id == "d1"
    assert len(state.requests) == 1  # the second query came from the cache
    assert state.requests[0]["dimensions"] == 8
    ctx = RequestContext(provider_options={"openai": {"dimensions": 24}})
    with pytest.raises(vectorport.DimensionMismatchError):
        tool.execute({"query_text": "filters"}, ctx)
    assert state.requests[-1]["dimensions"] == 24
    result = asyncio.run(tool.aexecute({"query_text": "tenants", "top_k": 1}))
    assert result.sources[0].id == "d2"
    q = np.asarray(expected(["tenants"])[0][:8])
    assert result.sources[0].score == pytest.approx(
        float(q @ BASE.embed(["namespaces for tenants"])[0][:8]
              / (np.linalg.norm(q) * np.linalg.norm(BASE.embed(["namespaces for tenants"])[0][:8]))),
        abs=1e-4)

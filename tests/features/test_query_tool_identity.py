"""Embedders are part of an index's identity (the agent query tool), on every backend.

The tool only reads: it compares its ``model`` with the embedder an index records for
the namespace it searches (written by the Workspace, SemanticRecall or
``record_identity``), refuses another one before embedding the query, and searches an
index without a record as before, saying so once in a log line. Expected results come
from a brute-force reference (the same embedder, exact cosine in numpy).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from tests.support import backends

import vectorport
from vectorport.agent import create_vector_query_tool
from vectorport.embedders import HashingEmbedder, OpenAICompatibleEmbedder
from vectorport.embedders.base import Vector
from vectorport.embedders.identity import (
    EmbedderMismatchError,
    identity_of,
    record_identity,
)
from vectorport.recall import Message, SemanticRecall
from vectorport.workspace import Workspace

OLD = HashingEmbedder(64)
OTHER = HashingEmbedder(64, ngram_range=(2, 3))

TEXTS = {
    "/cranes.txt": "harbour cranes lift containers off the ships",
    "/violin.txt": "violin strings need new rosin before the concert",
    "/taxes.txt": "tax forms are due at the end of april",
    "/trails.txt": "mountain trails close when the snow comes",
}


@pytest.fixture(scope="module", params=backends.ALL, ids=lambda b: b.name)
def store(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[vectorport.Store]:
    backend: backends.Backend = request.param
    launcher = backends.open_backend(backend, tmp_path_factory.mktemp(backend.name))
    with launcher as url, vectorport.connect(url) as opened:
        yield opened


@pytest.fixture
def name() -> str:
    return f"ident_{uuid.uuid4().hex[:12]}"


class Counting:
    """An embedder that counts its calls and states the identity of the one it wraps."""

    def __init__(self, inner: HashingEmbedder) -> None:
        self.inner = inner
        self.identity = identity_of(inner)
        self.calls = 0

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        self.calls += 1
        return self.inner.embed(texts)


def best(query: str, texts: dict[str, str], embedder: HashingEmbedder) -> str:
    """The id of the text nearest to ``query`` by exact cosine."""
    keys = sorted(texts)
    matrix = np.asarray(embedder.embed([texts[k] for k in keys]), dtype=np.float64)
    q = np.asarray(embedder.embed([query])[0], dtype=np.float64)
    scores = matrix @ q / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(q))
    return keys[int(np.argmax(scores))]


def workspace_index(store: vectorport.Store, name: str) -> str:
    workspace = Workspace(vector_store=store, embedder=OLD, search_index_name=name)
    for path, text in TEXTS.items():
        workspace.index(path, text)
    assert workspace.vector_index_name is not None
    return workspace.vector_index_name


def test_an_index_of_the_same_embedder_is_searched(store: vectorport.Store, name: str) -> None:
    index_name = workspace_index(store, name)
    tool = create_vector_query_tool(model=HashingEmbedder(64), vector_store=store,
                                    index_name=index_name)
    query = "rosin for the violin"
    result = tool.execute({"query_text": query, "top_k": 1})
    assert [s.metadata["ws_path"] for s in result.sources] == [best(query, TEXTS, OLD)]


def test_another_embedder_is_refused_before_the_query_is_embedded(store: vectorport.Store,
                                                                  name: str) -> None:
    index_name = workspace_index(store, name)
    model = Counting(OTHER)
    tool = create_vector_query_tool(model=model, vector_store=store, index_name=index_name)
    with pytest.raises(EmbedderMismatchError) as raised:
        tool.execute({"query_text": "violin"})
    message = str(raised.value)
    assert "ngram_range=(2, 3)" in message and "model that built" in message
    assert isinstance(raised.value, vectorport.ConfigError)
    with pytest.raises(EmbedderMismatchError):
        asyncio.run(tool.aexecute({"query_text": "violin"}))
    assert model.calls == 0


def test_an_index_built_by_semantic_recall_is_checked(store: vectorport.Store, name: str) -> None:
    recall = SemanticRecall(vector=store, embedder=OLD, index_name=name)
    recall.process_output([Message("user", text, id=path.strip("/").replace(".", "_"),
                                   thread_id="t1", resource_id="alice")
                           for path, text in TEXTS.items()])
    query = "snow on the mountain"
    found = create_vector_query_tool(model=OLD, vector_store=store, index_name=name).execute(
        {"query_text": query, "top_k": 1})
    assert [s.id for s in found.sources] == [
        best(query, TEXTS, OLD).strip("/").replace(".", "_")]
    other = create_vector_query_tool(model=HashingEmbedder(32), vector_store=store,
                                     index_name=name)
    with pytest.raises(EmbedderMismatchError, match="dimension=32"):
        other.execute({"query_text": query})


def test_an_index_without_a_record_is_searched_and_logged_once(
        store: vectorport.Store, name: str, caplog: pytest.LogCaptureFixture) -> None:
    index = store.create_index(name, 64, "cosine")
    index.upsert([{"id": k.strip("/").replace(".", "_"), "vector": v, "document": TEXTS[k]}
                  for k, v in zip(sorted(TEXTS), OLD.embed([TEXTS[k] for k in sorted(TEXTS)]),
                                  strict=True)])
    tool = create_vector_query_tool(model=OTHER, vector_store=store, index_name=name)
    query = "containers on the ships"
    with caplog.at_level(logging.INFO, logger="vectorport.agent"):
        for _ in range(2):
            result = tool.execute({"query_text": query, "top_k": 1})
            assert [s.id for s in result.sources] == [
                best(query, TEXTS, OTHER).strip("/").replace(".", "_")]
    lines = [r.getMessage() for r in caplog.records if "records no embedder" in r.getMessage()]
    assert len(lines) == 1 and name in lines[0]


def test_the_record_of_the_namespace_searched_decides(store: vectorport.Store, name: str) -> None:
    index = store.create_index(name, 64, "cosine")
    for namespace, embedder in (("acme", OTHER), ("globex", OLD)):
        index.upsert([{"id": f"{namespace}-1", "vector": embedder.embed(["tax forms"])[0],
                       "document": "tax forms"}], namespace=namespace)
        record_identity(index, identity_of(embedder), namespace)
    tool = create_vector_query_tool(model=OLD, vector_store=store, index_name=name,
                                    tenant_namespace=True)
    found = tool.execute({"query_text": "tax"}, {"tenant_id": "globex"})
    assert [s.id for s in found.sources] == ["globex-1"]
    with pytest.raises(EmbedderMismatchError, match="'acme'"):
        tool.execute({"query_text": "tax"}, {"tenant_id": "acme"})


def test_the_refusal_carries_no_secret(store: vectorport.Store, name: str) -> None:
    index_name = workspace_index(store, name)
    secret = "sk-do-not-leak-4417"
    model = OpenAICompatibleEmbedder("text-embedding-3-small", api_key=secret,
                                     base_url="http://127.0.0.1:9/v1")  # never reached
    tool = create_vector_query_tool(model=model, vector_store=store, index_name=index_name)
    with pytest.raises(EmbedderMismatchError) as raised:
        tool.execute({"query_text": "violin"})
    text = f"{raised.value!s} {raised.value!r}"
    assert "text-embedding-3-small" in text
    assert secret not in text and "127.0.0.1" not in text

"""The bridges' one batched write path (``vectorport.integrations._records.write``) on
every bridge backend: an add large enough to take ``Index.upsert_bulk`` keeps each
framework's meaning (ids kept and returned in order, metadata as given, the last of
repeated ids kept), and embeddings that do not form a numeric matrix are still refused
by the upsert's own validation."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import numpy as np
import pytest
from haystack import Document as HaystackDocument
from haystack.document_stores.types import DuplicatePolicy
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from llama_index.core.schema import TextNode

import vectorport
from vectorport.core.errors import ValidationError
from vectorport.integrations._records import BULK_MIN_RECORDS, dense_rows
from vectorport.integrations.haystack import VectorportDocumentStore
from vectorport.integrations.langchain import VectorportVectorStore
from vectorport.integrations.llama_index import VectorportVectorStore as LlamaStore

DIM = 8
ROWS = BULK_MIN_RECORDS + 37  # past the bulk threshold, not a multiple of any batch size


@pytest.fixture
def index(store: vectorport.Store) -> Iterator[vectorport.Index]:
    created = store.create_index(f"bw_{uuid.uuid4().hex[:12]}", DIM, "cosine")
    try:
        yield created
    finally:
        store.delete_index(created.name, missing_ok=True)


def _vectors(n: int, seed: int = 3) -> list[list[float]]:
    rows: list[list[float]] = np.random.default_rng(seed).normal(size=(n, DIM)).tolist()
    return rows


def _assert_stored(index: vectorport.Index, ids: list[str], vectors: list[list[float]],
                   texts: list[str], metas: list[dict[str, object]]) -> None:
    found = index.fetch(ids)
    assert list(found) == ids
    for n, rid in enumerate(ids):
        record = found[rid]
        assert record.document == texts[n]
        assert {k: list(v) if isinstance(v, tuple) else v
                for k, v in record.metadata.items()} == metas[n]
        assert record.vector is not None
        # float32 as stored; a backend may round-trip it through its own float format
        np.testing.assert_allclose(record.vector, vectors[n], rtol=1e-6, atol=1e-7)


def test_langchain_large_add_embeddings_keeps_ids_order_and_metadata(
        index: vectorport.Index) -> None:
    bridge = VectorportVectorStore(DeterministicFakeEmbedding(size=DIM), index=index)
    vectors = _vectors(ROWS)
    texts = [f"text {n}" for n in range(ROWS)]
    metas: list[dict[str, object]] = [{"n": n, "tags": ["a", str(n % 3)]} for n in range(ROWS)]
    given: list[str | None] = [f"id-{ROWS - n:05d}" if n % 5 else None for n in range(ROWS)]
    returned = bridge.add_embeddings(texts, vectors, metas, given)  # type: ignore[arg-type]
    assert len(returned) == ROWS
    assert all(r == g for r, g in zip(returned, given, strict=True) if g is not None)
    assert all(uuid.UUID(r) for r, g in zip(returned, given, strict=True) if g is None)
    _assert_stored(index, returned, vectors, texts, metas)
    assert index.count() == ROWS


def test_langchain_large_add_documents_keeps_the_last_of_repeated_ids(
        index: vectorport.Index) -> None:
    bridge = VectorportVectorStore(DeterministicFakeEmbedding(size=DIM), index=index)
    docs = [Document(id=f"d{n % (ROWS - 10)}", page_content=f"v{n}", metadata={"n": n})
            for n in range(ROWS)]
    returned = bridge.add_documents(docs)
    assert returned == [d.id for d in docs]
    assert index.count() == ROWS - 10
    assert [d.page_content for d in bridge.get_by_ids(["d0", "d9", "d10"])] == [
        f"v{ROWS - 10}", f"v{ROWS - 1}", "v10"]


async def test_langchain_large_async_add(index: vectorport.Index) -> None:
    bridge = VectorportVectorStore(DeterministicFakeEmbedding(size=DIM), index=index)
    vectors = _vectors(ROWS, seed=4)
    texts = [f"t{n}" for n in range(ROWS)]
    metas: list[dict[str, object]] = [{"n": n} for n in range(ROWS)]
    ids = [f"a{n}" for n in range(ROWS)]
    assert await bridge.aadd_embeddings(texts, vectors, metas, ids) == ids
    _assert_stored(index, ids, vectors, texts, metas)


@pytest.mark.parametrize("bad", [
    "ragged", "none", "text", "wide",
])
def test_embeddings_that_are_no_matrix_are_refused_by_the_upsert(
        index: vectorport.Index, bad: str) -> None:
    bridge = VectorportVectorStore(DeterministicFakeEmbedding(size=DIM), index=index)
    vectors: list[list[object]] = [list(v) for v in _vectors(ROWS)]
    at = ROWS // 2
    if bad == "ragged":
        vectors[at] = vectors[at][:-1]
    elif bad == "none":
        vectors[at][0] = None
    elif bad == "text":
        vectors[at][0] = "1.0"
    else:
        vectors = [[*v, 0.0] for v in vectors]
    with pytest.raises(ValidationError) as raised:
        bridge.add_embeddings([f"t{n}" for n in range(ROWS)], vectors)  # type: ignore[arg-type]
    assert f"record {at}" in str(raised.value) or bad == "wide"
    assert index.count() == 0  # all validated before the first write


def test_dense_rows_passes_non_matrices_through() -> None:
    assert dense_rows([]) == []
    ragged = [[1.0, 2.0], [3.0]]
    assert dense_rows(ragged) is ragged
    only_bools = [[True, False]]
    assert dense_rows(only_bools) is only_bools  # the upsert refuses a bool vector
    rows = dense_rows([[1, 2], [3.5, 4]])
    assert [r.dtype for r in rows] == [np.float32, np.float32]
    assert [r.tolist() for r in rows] == [[1.0, 2.0], [3.5, 4.0]]


def test_llama_index_large_add(index: vectorport.Index) -> None:
    bridge = LlamaStore(index)
    vectors = _vectors(ROWS, seed=5)
    nodes = [TextNode(id_=f"n{n}", text=f"node {n}", embedding=vectors[n], metadata={"n": n})
             for n in range(ROWS)]
    assert bridge.add(nodes) == [n.node_id for n in nodes]
    found = index.fetch([f"n{n}" for n in (0, ROWS - 1)])
    assert [r.document for r in found.values()] == ["node 0", f"node {ROWS - 1}"]
    assert found[f"n{ROWS - 1}"].metadata["n"] == ROWS - 1
    assert index.count() == ROWS


def test_haystack_large_write_mixes_embedded_and_plain_documents(
        index: vectorport.Index) -> None:
    doc_store = VectorportDocumentStore(index=index, embedding_dim=DIM)
    vectors = _vectors(ROWS, seed=6)
    docs = [HaystackDocument(id=f"h{n}", content=f"doc {n}", meta={"n": n},
                             embedding=vectors[n] if n % 4 else None) for n in range(ROWS)]
    assert doc_store.write_documents(docs, DuplicatePolicy.OVERWRITE) == ROWS
    back = {d.id: d for d in doc_store.filter_documents()}
    assert len(back) == ROWS
    for n in (0, 1, ROWS - 1):
        got, want = back[f"h{n}"], docs[n]
        assert (got.content, got.meta) == (want.content, want.meta)
        if want.embedding is None:
            assert got.embedding is None
        else:
            np.testing.assert_allclose(got.embedding, want.embedding, rtol=1e-6, atol=1e-7)

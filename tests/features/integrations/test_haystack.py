"""Haystack's own document-store suites (DocumentStoreBaseTests with FilterDocumentsTest,
the extended tests, and every async test class of haystack.testing.document_store_async)
against the Haystack bridge on several real backends, plus the embedding retriever in a
pipeline (sync and async) and the filter translation's edge cases."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import numpy as np
import pytest
from haystack import Document, Pipeline
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy
from haystack.errors import FilterError
from haystack.testing import document_store_async as hsa
from haystack.testing.document_store import (
    CountDocumentsByFilterTest,
    CountUniqueMetadataByFilterTest,
    DocumentStoreBaseExtendedTests,
    GetMetadataFieldMinMaxTest,
    GetMetadataFieldsInfoTest,
    GetMetadataFieldUniqueValuesTest,
)
from haystack.utils.filters import document_matches_filter

import vectorport
from vectorport.integrations.haystack import VectorportDocumentStore, VectorportEmbeddingRetriever


def _document_store(store: vectorport.Store) -> Iterator[VectorportDocumentStore]:
    name = f"hs_{uuid.uuid4().hex[:12]}"
    doc_store = VectorportDocumentStore(url=store, index_name=name, embedding_dim=768)
    try:
        yield doc_store
    finally:
        store.delete_index(name, missing_ok=True)


@pytest.fixture
def document_store(store: vectorport.Store) -> Iterator[VectorportDocumentStore]:
    yield from _document_store(store)


def _comparable(doc: Document) -> tuple[str, dict[str, object], list[float] | None]:
    data = doc.to_dict(flatten=False)
    embedding = data.pop("embedding")
    return doc.id, data, embedding


def _assert_documents_are_equal(received: list[Document], expected: list[Document]) -> None:
    # Haystack's suites invite this override: order is the store's own, and vectorport
    # keeps vectors as float32, so embeddings are equal to float32 precision.
    got = sorted((_comparable(d) for d in received), key=lambda t: t[0])
    want = sorted((_comparable(d) for d in expected), key=lambda t: t[0])
    assert [(i, d) for i, d, _ in got] == [(i, d) for i, d, _ in want]
    for (_, _, a), (_, _, b) in zip(got, want, strict=True):
        assert (a is None) == (b is None)
        if a is not None and b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


class TestHaystackSuite(
    DocumentStoreBaseExtendedTests,
    CountDocumentsByFilterTest,
    CountUniqueMetadataByFilterTest,
    GetMetadataFieldsInfoTest,
    GetMetadataFieldMinMaxTest,
    GetMetadataFieldUniqueValuesTest,
):
    """Haystack's suites, unchanged but for the hooks they ask stores to supply."""

    @pytest.fixture
    def document_store(self, store: vectorport.Store) -> Iterator[VectorportDocumentStore]:
        yield from _document_store(store)

    assert_documents_are_equal = staticmethod(_assert_documents_are_equal)

    def test_write_documents(self, document_store: VectorportDocumentStore) -> None:
        # the suite leaves the default policy to the store: NONE behaves as FAIL
        doc = Document(content="test doc")
        assert document_store.write_documents([doc]) == 1
        with pytest.raises(DuplicateDocumentError):
            document_store.write_documents([doc])
        self.assert_documents_are_equal(document_store.filter_documents(), [doc])


class TestHaystackAsyncSuite(
    hsa.CountDocumentsAsyncTest,
    hsa.CountDocumentsByFilterAsyncTest,
    hsa.CountUniqueMetadataByFilterAsyncTest,
    hsa.DeleteAllAsyncTest,
    hsa.DeleteByFilterAsyncTest,
    hsa.DeleteDocumentsAsyncTest,
    hsa.FilterDocumentsAsyncTest,
    hsa.GetMetadataFieldMinMaxAsyncTest,
    hsa.GetMetadataFieldsInfoAsyncTest,
    hsa.GetMetadataFieldUniqueValuesAsyncTest,
    hsa.UpdateByFilterAsyncTest,
    hsa.WriteDocumentsAsyncTest,
):
    """Every async test class the installed Haystack ships, with the same hooks."""

    @pytest.fixture
    def document_store(self, store: vectorport.Store) -> Iterator[VectorportDocumentStore]:
        yield from _document_store(store)

    assert_documents_are_equal = staticmethod(_assert_documents_are_equal)

    async def test_write_documents_async(self, document_store: VectorportDocumentStore) -> None:
        doc = Document(content="test doc")
        assert await document_store.write_documents_async([doc]) == 1
        with pytest.raises(DuplicateDocumentError):
            await document_store.write_documents_async([doc])
        self.assert_documents_are_equal(await document_store.filter_documents_async(), [doc])


# -- beyond the suite ---------------------------------------------------------------------


def _docs() -> list[Document]:
    rng = np.random.default_rng(7)
    metas: list[dict[str, object]] = [
        {"year": 2020, "tag": "a", "when": "2021-05-01T10:00:00"},
        {"year": 2021, "tag": "b", "tags": ["x", "y"]},
        {"year": 2022.5, "flag": True},
        {"tag": "a", "when": "1999-12-31T23:59:59"},
        {},
    ]
    return [Document(id=f"d{i}", content=f"text {i}", meta=m,
                     embedding=rng.normal(size=768).tolist()) for i, m in enumerate(metas)]


FILTERS = [
    {"field": "meta.year", "operator": "==", "value": None},
    {"field": "meta.year", "operator": "!=", "value": None},
    {"field": "meta.tag", "operator": "!=", "value": "a"},
    {"field": "meta.year", "operator": ">", "value": 2020},
    {"field": "meta.year", "operator": "<=", "value": 2022.5},
    {"field": "meta.when", "operator": ">=", "value": "2000-01-01T00:00:00"},
    {"field": "meta.year", "operator": "in", "value": [2020, None]},
    {"field": "meta.tag", "operator": "in", "value": ["b", 2021]},
    {"field": "meta.tag", "operator": "not in", "value": ["a", None]},
    {"field": "meta.year", "operator": "<", "value": None},
    {"operator": "AND", "conditions": []},
    {"operator": "OR", "conditions": []},
    {"operator": "NOT", "conditions": [{"field": "meta.tag", "operator": "==", "value": "a"},
                                       {"field": "meta.year", "operator": ">", "value": 2000}]},
    {"operator": "OR", "conditions": [
        {"field": "meta.flag", "operator": "==", "value": True},
        {"operator": "AND", "conditions": [{"field": "meta.tag", "operator": "==", "value": "a"},
                                           {"field": "meta.year", "operator": "==", "value": None}]}]},
]


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: str(f)[:60])
def test_filters_mean_what_haystack_means(document_store: VectorportDocumentStore,
                                          filters: dict[str, object]) -> None:
    docs = _docs()
    document_store.write_documents(docs)
    got = sorted(d.id for d in document_store.filter_documents(filters))
    # Haystack's own evaluator is the expectation (it is what its in-memory store runs)
    want = sorted(d.id for d in docs if document_matches_filter(filters, d))
    assert got == want


@pytest.mark.parametrize("filters", [
    {"field": "content", "operator": "==", "value": "x"},
    {"field": "meta.a.b", "operator": "==", "value": 1},
    {"field": "meta.tags", "operator": "==", "value": ["x", "y"]},
    {"field": "meta.tag", "operator": "~", "value": 1},
    {"operator": "XOR", "conditions": []},
    {"field": "meta.tag", "operator": ">", "value": "not a date"},
])
def test_what_cannot_be_expressed_raises_filter_error(document_store: VectorportDocumentStore,
                                                      filters: dict[str, object]) -> None:
    with pytest.raises(FilterError):
        document_store.filter_documents(filters)


def test_skip_policy_and_duplicates_in_one_batch(document_store: VectorportDocumentStore) -> None:
    a, b = Document(id="1", content="a"), Document(id="2", content="b")
    assert document_store.write_documents([a], DuplicatePolicy.SKIP) == 1
    assert document_store.write_documents([a, b, b], DuplicatePolicy.SKIP) == 1
    with pytest.raises(DuplicateDocumentError):
        document_store.write_documents([Document(id="3", content="c")] * 2, DuplicatePolicy.FAIL)
    assert document_store.count_documents() == 2


def test_retriever_in_a_pipeline(document_store: VectorportDocumentStore) -> None:
    docs = _docs()
    docs.append(Document(id="plain", content="no embedding", meta={"tag": "a"}))
    document_store.write_documents(docs)
    pipeline = Pipeline()
    pipeline.add_component("retriever", VectorportEmbeddingRetriever(document_store, top_k=3))
    query = docs[3].embedding
    assert query is not None
    result = pipeline.run({"retriever": {
        "query_embedding": query, "filters": {"field": "meta.tag", "operator": "==", "value": "a"}}})
    found = result["retriever"]["documents"]
    assert [d.id for d in found] == ["d3", "d0"]  # "plain" has no embedding: never retrieved
    assert found[0].score == pytest.approx(1.0, abs=1e-4)
    assert found[0].embedding is None


async def test_retriever_in_an_async_pipeline(document_store: VectorportDocumentStore) -> None:
    docs = _docs()
    await document_store.write_documents_async(docs)
    filters = {"field": "meta.tag", "operator": "==", "value": "a"}
    pipeline = Pipeline()  # Haystack 3: Pipeline.run_async calls the run_async of components
    pipeline.add_component("retriever", VectorportEmbeddingRetriever(document_store, top_k=3))
    result = await pipeline.run_async({"retriever": {"query_embedding": docs[0].embedding,
                                                     "filters": filters}})
    found = result["retriever"]["documents"]
    # the same answer as the sync path, which the pipeline test above checks against the data
    want = document_store.embedding_retrieval(docs[0].embedding or [], filters=filters, top_k=3)
    assert [(d.id, d.score) for d in found] == [(d.id, d.score) for d in want]
    assert found[0].id == "d0"


def test_embedding_less_documents_round_trip(document_store: VectorportDocumentStore) -> None:
    doc = Document(id="p", content="plain", meta={"n": 1})
    document_store.write_documents([doc])
    assert document_store.filter_documents() == [doc]


def test_metadata_vectorport_cannot_hold_raises_value_error(
        document_store: VectorportDocumentStore) -> None:
    with pytest.raises(ValueError):
        document_store.write_documents([Document(content="x", meta={"nested": {"a": 1}})])
    assert document_store.count_documents() == 0


# -- the same pipeline over pgvector and the Pinecone emulator --------------------------



def test_pipeline_gives_the_same_documents_on_pgvector_and_pinecone(
        pgvector_and_pinecone: list[vectorport.Store]) -> None:
    docs = _docs()
    filters = {"operator": "OR", "conditions": [
        {"field": "meta.tag", "operator": "==", "value": "a"},
        {"field": "meta.year", "operator": ">", "value": 2020}]}
    answers = []
    for opened in pgvector_and_pinecone:
        for doc_store in _document_store(opened):
            doc_store.write_documents(docs)
            pipeline = Pipeline()
            pipeline.add_component("retriever", VectorportEmbeddingRetriever(doc_store, top_k=3))
            result = pipeline.run({"retriever": {"query_embedding": docs[1].embedding, "filters": filters}})
            answers.append([d.id for d in result["retriever"]["documents"]])
    assert len(answers) == 2 and answers[0] == answers[1]
    allowed = {d.id for d in docs if document_matches_filter(filters, d)}
    assert answers[0][0] == "d1" and set(answers[0]) <= allowed  # the query is d1's own embedding

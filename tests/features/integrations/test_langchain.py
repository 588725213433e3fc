"""LangChain's own vector-store suite (sync and async) against the LangChain bridge,
on several real backends, plus the parts of the bridge the suite does not reach: exact
scores, relevance mapping, thresholds, filters, MMR, retrievers and embedder adapters."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from typing import ClassVar

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_tests.integration_tests import VectorStoreIntegrationTests

import vectorport
from vectorport.embedders import HashingEmbedder
from vectorport.integrations.langchain import VectorportVectorStore
from vectorport.integrations.langchain_embeddings import (
    EmbeddingsEmbedder,
    LangChainEmbeddings,
)

# The backends come from this folder's conftest (VECTORPORT_BRIDGE_BACKENDS narrows them).


def _fresh_index(store: vectorport.Store, dimension: int, metric: str = "cosine") -> vectorport.Index:
    return store.create_index(f"lc_{uuid.uuid4().hex[:12]}", dimension, metric)


class TestLangChainSuite(VectorStoreIntegrationTests):
    """LangChain's standard tests, unchanged, bound to the bridge."""

    @pytest.fixture
    def vectorstore(self, store: vectorport.Store) -> Iterator[VectorportVectorStore]:
        index = _fresh_index(store, 6)  # DeterministicFakeEmbedding(size=6) in the suite
        try:
            yield VectorportVectorStore(self.get_embeddings(), index=index)
        finally:
            store.delete_index(index.name, missing_ok=True)


# -- what the suite does not check --------------------------------------------------------


class _Axis(Embeddings):
    """Fixed, known vectors, so expected scores follow from the contract's formulas."""

    VECTORS: ClassVar[dict[str, list[float]]] = {
        "base": [1.0, 0.0, 0.0, 0.0], "opposite": [-1.0, 0.0, 0.0, 0.0],
        "orthogonal": [0.0, -1.0, -1.0, 0.0], "near": [0.9, 0.1, 0.0, 0.0]}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.VECTORS[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.VECTORS[text]


@pytest.fixture
def axis_store(store: vectorport.Store, request: pytest.FixtureRequest) -> Iterator[VectorportVectorStore]:
    metric = getattr(request, "param", "cosine")
    index = _fresh_index(store, 4, metric)
    vs = VectorportVectorStore(_Axis(), index=index)
    vs.add_texts(["base", "opposite", "orthogonal"], [{"n": 1}, {"n": 2}, {"n": 3}],
                 ids=["b", "o", "t"])
    try:
        yield vs
    finally:
        store.delete_index(index.name, missing_ok=True)


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _expected(metric: str, q: list[float], x: list[float]) -> float:
    if metric == "cosine":
        return _dot(q, x) / math.sqrt(_dot(q, q) * _dot(x, x))
    if metric == "dotproduct":
        return _dot(q, x)
    return 1.0 / (1.0 + math.dist(q, x))


@pytest.mark.parametrize("axis_store", ["cosine", "dotproduct", "euclidean"], indirect=True)
def test_scores_are_exact_for_the_metric(axis_store: VectorportVectorStore) -> None:
    metric = axis_store.index.metric
    if metric not in axis_store.index.store.capabilities.metrics:
        pytest.skip(f"{metric} not offered by this backend")
    got = {d.id: s for d, s in axis_store.similarity_search_with_score("base", k=3)}
    for record_id, text in (("b", "base"), ("o", "opposite"), ("t", "orthogonal")):
        assert got[record_id] == pytest.approx(_expected(metric, _Axis.VECTORS["base"],
                                                         _Axis.VECTORS[text]), abs=1e-3)


@pytest.mark.parametrize("axis_store", ["cosine", "euclidean"], indirect=True)
def test_relevance_scores_and_threshold(axis_store: VectorportVectorStore) -> None:
    metric = axis_store.index.metric
    pairs = axis_store.similarity_search_with_relevance_scores("base", k=3)
    relevance = {d.id: s for d, s in pairs}
    for record_id, text in (("b", "base"), ("o", "opposite"), ("t", "orthogonal")):
        raw = _expected(metric, _Axis.VECTORS["base"], _Axis.VECTORS[text])
        want = (raw + 1) / 2 if metric == "cosine" else raw
        assert relevance[record_id] == pytest.approx(want, abs=1e-3)
        assert 0.0 <= relevance[record_id] <= 1.0
    # the threshold is inclusive and applied inside the query (k=1 still finds the best)
    threshold = relevance["t"]
    kept = axis_store.similarity_search_with_relevance_scores(
        "base", k=3, score_threshold=threshold - 1e-6)
    assert [d.id for d, _ in kept] == ["b", "t"]
    retriever = axis_store.as_retriever(search_type="similarity_score_threshold",
                                        search_kwargs={"score_threshold": 0.99, "k": 3})
    assert [d.id for d in retriever.invoke("base")] == ["b"]


def test_filters_follow_the_vectorport_dialect(axis_store: VectorportVectorStore) -> None:
    got = axis_store.similarity_search("base", k=3, filter={"$or": [{"n": 2}, {"n": {"$gte": 3}}]})
    assert sorted(d.id for d in got) == ["o", "t"]
    # orthogonal (score 0) ranks above opposite (score -1)
    got = axis_store.similarity_search("base", k=3, filter={"n": {"$ne": 1}})
    assert [d.id for d in got] == ["t", "o"]
    retriever = axis_store.as_retriever(search_kwargs={"k": 3, "filter": {"n": {"$in": [1, 3]}}})
    assert [d.id for d in retriever.invoke("base")] == ["b", "t"]


async def test_async_filters_and_delete_by_filter(axis_store: VectorportVectorStore) -> None:
    got = await axis_store.asimilarity_search("base", k=3, filter={"n": {"$lt": 3}})
    assert [d.id for d in got] == ["b", "o"]
    await axis_store.adelete(filter={"n": 2})
    assert [d.id for d in await axis_store.aget_by_ids(["b", "o", "t"])] == ["b", "t"]


def test_mmr_prefers_diverse_documents(store: vectorport.Store) -> None:
    index = _fresh_index(store, 4)
    vs = VectorportVectorStore(_Axis(), index=index)
    try:
        vs.add_texts(["base", "near", "orthogonal"], ids=["b", "n", "t"])
        assert [d.id for d in vs.similarity_search("base", k=2)] == ["b", "n"]
        mmr = vs.max_marginal_relevance_search("base", k=2, fetch_k=3, lambda_mult=0.1)
        assert [d.id for d in mmr] == ["b", "t"]
        retriever = vs.as_retriever(search_type="mmr",
                                    search_kwargs={"k": 2, "fetch_k": 3, "lambda_mult": 0.1})
        assert [d.id for d in retriever.invoke("base")] == ["b", "t"]
    finally:
        store.delete_index(index.name, missing_ok=True)


async def test_async_mmr(store: vectorport.Store) -> None:
    index = _fresh_index(store, 4)
    vs = VectorportVectorStore(_Axis(), index=index)
    try:
        await vs.aadd_texts(["base", "near", "orthogonal"], ids=["b", "n", "t"])
        mmr = await vs.amax_marginal_relevance_search("base", k=2, fetch_k=3, lambda_mult=0.1)
        assert [d.id for d in mmr] == ["b", "t"]
    finally:
        store.delete_index(index.name, missing_ok=True)


def test_from_texts_creates_the_index_from_a_url(store: vectorport.Store) -> None:
    name = f"lc_{uuid.uuid4().hex[:12]}"
    vs = VectorportVectorStore.from_texts(
        ["alpha", "beta"], DeterministicFakeEmbedding(size=8), metadatas=[{"k": "a"}, {"k": "b"}],
        ids=["1", "2"], url=store, index_name=name)
    try:
        assert vs.index.dimension == 8
        assert vs.get_by_ids(["2"]) == [Document(id="2", page_content="beta", metadata={"k": "b"})]
        docs = vs.similarity_search("alpha", k=2, filter={"k": "a"})
        assert [d.id for d in docs] == ["1"]
    finally:
        store.delete_index(name, missing_ok=True)


def test_unsupported_filter_raises_instead_of_matching_everything(axis_store: VectorportVectorStore) -> None:
    with pytest.raises(vectorport.FilterError):
        axis_store.similarity_search("base", k=3, filter={"n": {"$regex": "x"}})


def test_embedder_adapters_round_trip() -> None:
    native = HashingEmbedder(dimension=16)
    as_langchain = LangChainEmbeddings(native)
    vectors = as_langchain.embed_documents(["a b", "c"])
    assert len(vectors) == 2 and len(vectors[0]) == 16
    assert as_langchain.embed_query("a b") == pytest.approx(vectors[0])
    back = EmbeddingsEmbedder(as_langchain)
    assert back.dimension is None
    assert back.embed(["a b"])[0].tolist() == pytest.approx(vectors[0])
    assert back.dimension == 16


async def test_embedder_adapters_async() -> None:
    as_langchain = LangChainEmbeddings(HashingEmbedder(dimension=8))
    assert len(await as_langchain.aembed_query("x")) == 8
    back = EmbeddingsEmbedder(DeterministicFakeEmbedding(size=5))
    assert (await back.aembed(["x", "y"]))[1].shape == (5,)


# -- the same retriever over pgvector and the Pinecone emulator -------------------------



def test_retriever_gives_the_same_documents_on_pgvector_and_pinecone(
        pgvector_and_pinecone: list[vectorport.Store]) -> None:
    emb = DeterministicFakeEmbedding(size=8)
    texts = [f"doc {i}" for i in range(12)]
    metas = [{"year": 2015 + i, "team": "a" if i % 3 else "b"} for i in range(12)]
    answers = []
    for opened in pgvector_and_pinecone:
        name = f"lc_{uuid.uuid4().hex[:12]}"
        vs = VectorportVectorStore.from_texts(texts, emb, metas, ids=[str(i) for i in range(12)],
                                              url=opened, index_name=name)
        try:
            retriever = vs.as_retriever(search_kwargs={
                "k": 4, "filter": {"$or": [{"team": "b"}, {"year": {"$gte": 2024}}]}})
            answers.append([d.id for d in retriever.invoke("doc 3")])
        finally:
            opened.delete_index(name, missing_ok=True)
    assert len(answers) == 2 and answers[0] == answers[1]

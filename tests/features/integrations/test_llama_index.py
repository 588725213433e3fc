"""The LlamaIndex bridge. LlamaIndex ships no standard vector-store suite, so every
filter operator and condition is checked two ways on real backends: against LlamaIndex's
own evaluator (what its SimpleVectorStore runs, extended to nesting) and against
vectorport's filter oracle applied to the translated filter. Then the store methods,
query modes, and a query engine over the store."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

import vectorport
from vectorport.core.filters.oracle import matches
from vectorport.embedders import BM25Encoder
from vectorport.integrations.llama_index import VectorportVectorStore
from vectorport.integrations.llama_index_filters import to_vectorport

DIM = 4



def _fresh(store: vectorport.Store, **kwargs: Any) -> Iterator[VectorportVectorStore]:
    name = f"li_{uuid.uuid4().hex[:12]}"
    vs = VectorportVectorStore.from_url(store, name, dimension=DIM, **kwargs)
    try:
        yield vs
    finally:
        store.delete_index(name, missing_ok=True)


@pytest.fixture
def vector_store(store: vectorport.Store) -> Iterator[VectorportVectorStore]:
    yield from _fresh(store)


METAS: list[dict[str, Any]] = [
    {"genre": "sf", "year": 1999, "rating": 4.5, "tags": ["a", "b"], "title": "Matrix"},
    {"genre": "drama", "year": 2010, "rating": 3.0, "tags": ["b"], "title": ""},
    {"genre": "sf", "year": 2020, "tags": ["c", "a"]},
    {"genre": "comedy", "rating": 5.0, "title": "Up"},
    {"year": 1985},
]


def _nodes() -> list[TextNode]:
    nodes = []
    for i, meta in enumerate(METAS):
        node = TextNode(id_=f"n{i}", text=f"text {i}", metadata=meta,
                        embedding=[1.0, float(i), 0.5, -float(i % 2)])
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=f"doc{i % 2}")
        nodes.append(node)
    return nodes


def F(key: str, op: FilterOperator, value: Any) -> MetadataFilter:  # noqa: N802
    return MetadataFilter(key=key, operator=op, value=value)


# Scalar operators on scalar fields, list operators on the list field: where LlamaIndex
# and vectorport agree on meaning (see llama_index_filters for the two differences).
LEAVES = [
    F("genre", FilterOperator.EQ, "sf"), F("year", FilterOperator.EQ, 2010),
    F("genre", FilterOperator.NE, "sf"), F("rating", FilterOperator.NE, 3.0),
    F("year", FilterOperator.GT, 1999), F("year", FilterOperator.GTE, 1999),
    F("rating", FilterOperator.LT, 4.5), F("rating", FilterOperator.LTE, 4.5),
    F("title", FilterOperator.GT, "M"), F("title", FilterOperator.LT, "Up"),
    F("genre", FilterOperator.IN, ["sf", "comedy"]), F("year", FilterOperator.IN, [1985, 2020]),
    F("genre", FilterOperator.NIN, ["sf"]), F("year", FilterOperator.NIN, [1999, 2010]),
    F("tags", FilterOperator.ANY, ["a", "z"]), F("tags", FilterOperator.ALL, ["a", "b"]),
    F("tags", FilterOperator.CONTAINS, "b"), F("title", FilterOperator.IS_EMPTY, None),
    F("genre", FilterOperator.IN, []), F("genre", FilterOperator.NIN, []),
]


def _llama_matches(filters: MetadataFilters, meta: dict[str, Any]) -> bool:
    """LlamaIndex's own evaluator, extended to nested groups the way its conditions read."""
    results = []
    for child in filters.filters:
        if isinstance(child, MetadataFilters):
            results.append(_llama_matches(child, meta))
        else:
            one = MetadataFilters(filters=[child])
            results.append(build_metadata_filter_fn(lambda _id: meta, one)("x"))
    condition = filters.condition or FilterCondition.AND
    if not filters.filters:
        return True
    if condition == FilterCondition.AND:
        return all(results)
    if condition == FilterCondition.OR:
        return any(results)
    return not any(results)


GROUPS = [
    *[MetadataFilters(filters=[leaf]) for leaf in LEAVES],
    MetadataFilters(filters=[LEAVES[0], LEAVES[4]], condition=FilterCondition.AND),
    MetadataFilters(filters=[LEAVES[1], LEAVES[7]], condition=FilterCondition.OR),
    MetadataFilters(filters=[LEAVES[0], LEAVES[9]], condition=FilterCondition.NOT),
    MetadataFilters(filters=[
        LEAVES[14],
        MetadataFilters(filters=[LEAVES[2], LEAVES[17]], condition=FilterCondition.OR),
        MetadataFilters(filters=[LEAVES[11]], condition=FilterCondition.NOT),
    ], condition=FilterCondition.AND),
    MetadataFilters(filters=[LEAVES[18], LEAVES[0]], condition=FilterCondition.OR),
    MetadataFilters(filters=[LEAVES[19]], condition=FilterCondition.NOT),
    MetadataFilters(filters=[]),
]


def _label(filters: MetadataFilters) -> str:
    def one(f: MetadataFilter | MetadataFilters) -> str:
        if isinstance(f, MetadataFilters):
            return f"{(f.condition or 'and')}({','.join(one(c) for c in f.filters)})"
        return f"{f.key}{FilterOperator(f.operator).value}{f.value}"
    return one(filters)


@pytest.mark.parametrize("filters", GROUPS, ids=_label)
def test_every_operator_and_condition(vector_store: VectorportVectorStore,
                                      filters: MetadataFilters) -> None:
    nodes = _nodes()
    vector_store.add(nodes)
    got = sorted(n.node_id for n in vector_store.get_nodes(filters=filters))
    assert got == sorted(n.node_id for n in nodes if _llama_matches(filters, n.metadata))
    translated = to_vectorport(filters)
    stored = {r.id: r.metadata for r in vector_store.client.fetch([n.node_id for n in nodes]).values()}
    oracle = [] if translated.nothing else [i for i, m in stored.items() if matches(translated.node, m)]
    assert got == sorted(oracle)
    # and the same filter inside a query: the same nodes, or a clear refusal by the backend
    # (Pinecone's and Chroma's ranges compare numbers only: string ranges raise, never mismatch)
    query = VectorStoreQuery(query_embedding=[1.0, 0.0, 0.0, 0.0], similarity_top_k=10, filters=filters)
    try:
        result = vector_store.query(query)
    except vectorport.UnsupportedFeatureError as exc:
        assert exc.backend == vector_store.client.store.backend
        assert exc.backend in ("pinecone", "chroma") and "string" in str(exc)
        return
    assert sorted(result.ids or []) == got


@pytest.mark.parametrize("op", [FilterOperator.TEXT_MATCH, FilterOperator.TEXT_MATCH_INSENSITIVE])
def test_text_match_raises_instead_of_matching_everything(vector_store: VectorportVectorStore,
                                                          op: FilterOperator) -> None:
    vector_store.add(_nodes())
    filters = MetadataFilters(filters=[F("title", op, "Mat")])
    with pytest.raises(vectorport.FilterError):
        vector_store.get_nodes(filters=filters)
    with pytest.raises(vectorport.FilterError):
        vector_store.query(VectorStoreQuery(query_embedding=[1, 0, 0, 0], filters=filters))


def test_nodes_round_trip_and_scores_are_exact(vector_store: VectorportVectorStore) -> None:
    nodes = _nodes()
    assert vector_store.add(nodes) == [n.node_id for n in nodes]
    back = {n.node_id: n for n in vector_store.get_nodes(node_ids=["n1", "n3", "missing"])}
    assert set(back) == {"n1", "n3"}
    assert back["n1"].get_content() == "text 1" and back["n1"].metadata == METAS[1]
    assert back["n1"].ref_doc_id == "doc1"
    result = vector_store.query(VectorStoreQuery(query_embedding=[1.0, 0.0, 0.5, 0.0], similarity_top_k=1))
    assert result.ids == ["n0"]
    assert result.similarities == [pytest.approx(1.0, abs=1e-4)]


def test_delete_by_document_nodes_and_clear(vector_store: VectorportVectorStore) -> None:
    vector_store.add(_nodes())
    vector_store.delete("doc1")
    assert sorted(n.node_id for n in vector_store.get_nodes()) == ["n0", "n2", "n4"]
    vector_store.delete_nodes(node_ids=["n0", "n2"],
                              filters=MetadataFilters(filters=[F("genre", FilterOperator.EQ, "sf")]))
    assert [n.node_id for n in vector_store.get_nodes()] == ["n4"]
    vector_store.add(_nodes())
    vector_store.delete_nodes(filters=MetadataFilters(filters=[F("year", FilterOperator.LT, 2000)]))
    assert sorted(n.node_id for n in vector_store.get_nodes()) == ["n1", "n2", "n3"]
    vector_store.clear()
    assert vector_store.get_nodes() == []


async def test_async_forms(vector_store: VectorportVectorStore) -> None:
    await vector_store.async_add(_nodes())
    query = VectorStoreQuery(query_embedding=[1.0, 0.0, 0.5, 0.0], similarity_top_k=2,
                             filters=MetadataFilters(filters=[F("genre", FilterOperator.NE, "sf")]))
    result = await vector_store.aquery(query)
    assert set(result.ids or []) <= {"n1", "n3", "n4"} and len(result.ids or []) == 2
    await vector_store.adelete("doc0")
    assert sorted(n.node_id for n in await vector_store.aget_nodes()) == ["n1", "n3"]
    await vector_store.adelete_nodes(node_ids=["n1"])
    await vector_store.aclear()
    assert await vector_store.aget_nodes() == []


def test_query_restricted_to_documents(vector_store: VectorportVectorStore) -> None:
    vector_store.add(_nodes())
    result = vector_store.query(VectorStoreQuery(query_embedding=[1, 0, 0, 0], similarity_top_k=10,
                                                 doc_ids=["doc0"]))
    assert sorted(result.ids or []) == ["n0", "n2", "n4"]


@pytest.mark.parametrize("mode", [VectorStoreQueryMode.MMR, VectorStoreQueryMode.TEXT_SEARCH,
                                  VectorStoreQueryMode.SVM])
def test_other_query_modes_raise(vector_store: VectorportVectorStore, mode: VectorStoreQueryMode) -> None:
    with pytest.raises(vectorport.UnsupportedFeatureError):
        vector_store.query(VectorStoreQuery(query_embedding=[1, 0, 0, 0], mode=mode))


def test_sparse_and_hybrid_where_the_backend_declares_them(store: vectorport.Store) -> None:
    caps = store.capabilities
    texts = ["red apple pie", "green pear", "apple juice"]
    encoder = BM25Encoder().fit(texts)
    if not caps.sparse:
        for vs in _fresh(store, sparse_encoder=encoder):
            with pytest.raises(vectorport.UnsupportedFeatureError):
                vs.query(VectorStoreQuery(query_str="apple", mode=VectorStoreQueryMode.SPARSE))
        return
    for vs in _fresh(store, sparse=True, metric="dotproduct", sparse_encoder=encoder):
        vs.add([TextNode(id_=f"t{i}", text=t, embedding=[1.0, float(i), 0.0, 0.0])
                for i, t in enumerate(texts)])
        sparse = vs.query(VectorStoreQuery(query_str="apple", mode=VectorStoreQueryMode.SPARSE,
                                           similarity_top_k=3))
        # the two texts holding "apple" score above the one that shares no term
        assert sorted((sparse.ids or [])[:2]) == ["t0", "t2"]
        assert (sparse.similarities or [])[1] > 0
        if caps.hybrid == "none":
            with pytest.raises(vectorport.UnsupportedFeatureError):
                vs.query(VectorStoreQuery(query_str="apple", query_embedding=[1, 0, 0, 0],
                                          mode=VectorStoreQueryMode.HYBRID))
            continue
        hybrid = vs.query(VectorStoreQuery(query_str="pear", query_embedding=[1.0, 0.0, 0.0, 0.0],
                                           mode=VectorStoreQueryMode.HYBRID, similarity_top_k=1,
                                           alpha=0.0))
        assert hybrid.ids == ["t1"]  # alpha=0: the sparse part alone decides


def test_query_engine_over_the_store(vector_store: VectorportVectorStore) -> None:
    embed = MockEmbedding(embed_dim=DIM)
    nodes = _nodes()
    for node in nodes:
        node.embedding = None
    index = VectorStoreIndex.from_vector_store(vector_store, embed_model=embed)
    index.insert_nodes(nodes)
    retriever = index.as_retriever(similarity_top_k=5, filters=MetadataFilters(
        filters=[F("genre", FilterOperator.IN, ["sf", "drama"])]))
    assert sorted(r.node.node_id for r in retriever.retrieve("anything")) == ["n0", "n1", "n2"]
    engine = index.as_query_engine(similarity_top_k=2, llm=MockLLM(), filters=MetadataFilters(
        filters=[F("year", FilterOperator.GTE, 2010)]))
    response = engine.query("what?")
    assert sorted(n.node.node_id for n in response.source_nodes) == ["n1", "n2"]


# -- the same query engine over pgvector and the Pinecone emulator ----------------------



def test_query_engine_gives_the_same_nodes_on_pgvector_and_pinecone(
        pgvector_and_pinecone: list[vectorport.Store]) -> None:
    filters = MetadataFilters(filters=[F("genre", FilterOperator.NE, "drama"),
                                       F("year", FilterOperator.LT, 2015)],
                              condition=FilterCondition.OR)
    answers = []
    for opened in pgvector_and_pinecone:
        for vs in _fresh(opened):
            index = VectorStoreIndex.from_vector_store(vs, embed_model=MockEmbedding(embed_dim=DIM))
            vs.add(_nodes())
            engine = index.as_query_engine(similarity_top_k=3, filters=filters, llm=MockLLM())
            answers.append(sorted(n.node.node_id for n in engine.query("q").source_nodes))
    assert len(answers) == 2 and answers[0] == answers[1]

"""The agent query tool on every backend the conformance suite runs.

Tests go through the facade only, so adding a backend is one entry in
:data:`BACKENDS` (a URL factory; ``VECTORPORT_TEST_<NAME>_URL`` wins when set). Expected
results come from a brute-force reference: the same embedder, exact cosine in numpy
and the filter oracle — never from a previous run.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from tests.support import backends

import vectorport
from vectorport import (
    ConfigError,
    DimensionMismatchError,
    FilterError,
    IndexNotFoundError,
    UnsupportedFeatureError,
    ValidationError,
)
from vectorport.agent import (
    DEFAULT_DESCRIPTION,
    RequestContext,
    Reranker,
    TermOverlapScorer,
    create_vector_query_tool,
    rerank,
)
from vectorport.core.filters.parse import parse_filter
from vectorport.core.types import Match
from vectorport.embedders import BM25Encoder, HashingEmbedder

# -- backends ------------------------------------------------------------------------------


BACKENDS = backends.ALL
"""Every backend the conformance suite runs (see ``tests/support/backends.py``)."""


@pytest.fixture(scope="module", params=BACKENDS, ids=lambda b: b.name)
def store(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[vectorport.Store]:
    backend: backends.Backend = request.param
    launcher = backends.open_backend(backend, tmp_path_factory.mktemp(backend.name))
    with launcher as url, vectorport.connect(url) as opened:
        yield opened


EMBEDDER = HashingEmbedder(dimension=64)

CORPUS: list[tuple[str, str, dict[str, Any], str]] = [
    # id, text, metadata, namespace
    ("a1", "Create an index with store.create_index and a dimension.",
     {"tenant_id": "acme", "version": 1.0, "category": "guide"}, ""),
    ("a2", "Filters use a Mongo-style language with $gt and $in operators.",
     {"tenant_id": "acme", "version": 2.5, "category": "technical", "tags": ["filter", "query"]},
     ""),
    ("a3", "Namespaces isolate tenants inside one index.",
     {"tenant_id": "acme", "version": 3.0, "category": "technical"}, ""),
    ("g1", "Globex secret roadmap: create an index for every customer.",
     {"tenant_id": "globex", "version": 2.9, "category": "technical"}, ""),
    ("g2", "Globex filters and operators for internal use only.",
     {"tenant_id": "globex", "version": 3.5, "category": "guide"}, ""),
    ("n0", "A chunk without a tenant: deployment and production settings.",
     {"version": 4.0, "category": "operations"}, ""),
    ("p1", "Production namespace: deploy the index to production.",
     {"tenant_id": "acme", "version": 5.0, "category": "operations"}, "production"),
    ("acme", "Production namespace for the acme tenant: index and filters.",
     {"tenant_id": "acme", "version": 1.5, "category": "guide"}, "acme"),
]
META_TEXT_ID = "m1"  # a record without a document: its text lives in metadata["text"]
META_TEXT = "Metadata text chunk about index creation."


@dataclass
class Loaded:
    index: vectorport.Index
    name: str


@pytest.fixture(scope="module")
def loaded(store: vectorport.Store) -> Iterator[Loaded]:
    """An index with :data:`CORPUS`, one per backend (no test writes to it), deleted at
    the end, so that a remote backend creates one index for the whole module."""
    name = f"qt_{uuid.uuid4().hex[:12]}"
    index = store.create_index(name, dimension=EMBEDDER.dimension, metric="cosine")
    by_ns: dict[str, list[dict[str, Any]]] = {}
    for cid, text, meta, ns in CORPUS:
        by_ns.setdefault(ns, []).append(
            {"id": cid, "vector": EMBEDDER.embed([text])[0], "metadata": meta, "document": text})
    by_ns[""].append({"id": META_TEXT_ID, "vector": EMBEDDER.embed([META_TEXT])[0],
                      "metadata": {"text": META_TEXT, "version": 0.5}})
    for ns, records in by_ns.items():
        index.upsert(records, namespace=ns)
    yield Loaded(index, name)
    store.delete_index(name, missing_ok=True)


def _text(cid: str) -> str:
    return META_TEXT if cid == META_TEXT_ID else next(t for i, t, _, _ in CORPUS if i == cid)


def _metadata(cid: str) -> dict[str, Any]:
    if cid == META_TEXT_ID:
        return {"text": META_TEXT, "version": 0.5}
    return next(m for i, _, m, _ in CORPUS if i == cid)


def reference(query: str, *, top_k: int = 10, filter: Mapping[str, Any] | None = None,
              namespace: str = "", min_score: float | None = None) -> list[tuple[str, float]]:
    """Brute force: exact cosine of the same embeddings, the oracle for the filter."""
    node = parse_filter(filter)
    q = EMBEDDER.embed([query])[0].astype(np.float64)
    rows: list[tuple[str, float]] = []
    ids = [(cid, ns) for cid, _, _, ns in CORPUS] + [(META_TEXT_ID, "")]
    for cid, ns in ids:
        if ns != namespace:
            continue
        meta = {k: tuple(v) if isinstance(v, list) else v for k, v in _metadata(cid).items()}
        if not vectorport.matches(node, meta):
            continue
        v = EMBEDDER.embed([_text(cid)])[0].astype(np.float64)
        score = float(q @ v / (np.linalg.norm(q) * np.linalg.norm(v)))
        if min_score is None or score >= min_score:
            rows.append((cid, score))
    rows.sort(key=lambda r: (-r[1], r[0]))
    return rows[:top_k]


def assert_same(result: vectorport.agent.VectorQueryResult, expected: list[tuple[str, float]],
                tol: float = 1e-3) -> None:
    got = [(s.id, s.score) for s in result.sources]
    assert [i for i, _ in got] == [i for i, _ in expected], (got, expected)
    for (_, a), (_, b) in zip(got, expected, strict=True):
        assert math.isclose(a, b, abs_tol=tol)


def make_tool(store: vectorport.Store, loaded: Loaded, **kwargs: Any
              ) -> vectorport.agent.VectorQueryTool:
    options: dict[str, Any] = {"vector_store": store, "index_name": loaded.name,
                               "model": EMBEDDER}
    options.update(kwargs)
    return create_vector_query_tool(**options)


# -- definitions for function-calling APIs ------------------------------------------------------

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class TestDefinitions:
    def test_defaults_follow_the_seed(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = make_tool(store, loaded, vector_store_name="pinecone")
        assert tool.id == f"VectorQuery pinecone {loaded.name} Tool"
        assert tool.description == DEFAULT_DESCRIPTION
        assert DEFAULT_DESCRIPTION == ("Access the knowledge base to find information needed "
                                       "to answer user questions.")
        assert TOOL_NAME.match(tool.name)
        schema = tool.input_schema
        assert schema["required"] == ["query_text"]
        assert set(schema["properties"]) == {"query_text", "top_k"}
        assert schema["properties"]["top_k"]["default"] == 10
        assert schema["additionalProperties"] is False

    def test_without_a_name_the_backend_labels_the_id(self, store: vectorport.Store,
                                                       loaded: Loaded) -> None:
        assert make_tool(store, loaded).id == f"VectorQuery {store.backend} {loaded.name} Tool"

    def test_filter_property_only_when_enabled(self, store: vectorport.Store,
                                               loaded: Loaded) -> None:
        schema = make_tool(store, loaded, enable_filter=True).input_schema
        assert schema["properties"]["filter"]["type"] == "object"
        assert "$gt" in schema["properties"]["filter"]["description"]
        assert "filter" not in schema["required"]

    def test_openai_anthropic_and_mcp_shapes(self, store: vectorport.Store,
                                             loaded: Loaded) -> None:
        tool = make_tool(store, loaded, enable_filter=True, description="Search the docs.")
        openai = tool.to_openai_tool()
        assert openai["type"] == "function"
        assert set(openai["function"]) == {"name", "description", "parameters"}
        assert openai["function"]["parameters"] == tool.input_schema
        anthropic = tool.to_anthropic_tool()
        assert set(anthropic) == {"name", "description", "input_schema"}
        assert anthropic["input_schema"]["type"] == "object"
        assert tool.to_mcp_tool()["inputSchema"] == tool.input_schema
        for name in (openai["function"]["name"], anthropic["name"]):
            assert TOOL_NAME.match(name)
        json.dumps(openai), json.dumps(anthropic)  # plain JSON data

    def test_schemas_are_valid_json_schema(self, store: vectorport.Store, loaded: Loaded) -> None:
        jsonschema = pytest.importorskip("jsonschema")
        tool = make_tool(store, loaded, enable_filter=True)
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        validator = jsonschema.Draft202012Validator(tool.input_schema)
        assert validator.is_valid({"query_text": "x", "top_k": 3, "filter": {"a": 1}})
        assert not validator.is_valid({"top_k": 3})
        assert not validator.is_valid({"query_text": "x", "extra": 1})
        result = tool.execute({"query_text": "index", "top_k": 2})
        jsonschema.validate(result.to_dict(), tool.output_schema)

    def test_schema_is_a_copy(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = make_tool(store, loaded)
        tool.input_schema["properties"].clear()
        assert "query_text" in tool.input_schema["properties"]

    @pytest.mark.parametrize("tool_id", [
        "VectorQuery pinecone docs Tool", "  weird/id with ünïcode & symbols!! ", "x" * 200,
        "!!!", "a.b.c",
    ])
    def test_names_are_sanitized(self, store: vectorport.Store, loaded: Loaded,
                                 tool_id: str) -> None:
        tool = make_tool(store, loaded, id=tool_id)
        assert tool.id == tool_id
        assert TOOL_NAME.match(tool.name), tool.name


# -- execution against the reference ---------------------------------------------------------------


class TestExecute:
    def test_basic_query_matches_the_reference(self, store: vectorport.Store,
                                               loaded: Loaded) -> None:
        tool = make_tool(store, loaded)
        result = tool.execute({"query_text": "create an index", "top_k": 4})
        expected = reference("create an index", top_k=4)
        assert_same(result, expected)
        assert result.relevant_context == "\n\n".join(_text(i) for i, _ in expected)
        first = result.sources[0]
        assert first.vector is None
        assert first.document == _text(first.id)
        assert dict(first.metadata) == {k: tuple(v) if isinstance(v, list) else v
                                        for k, v in _metadata(first.id).items()}

    def test_top_k_defaults_to_ten(self, store: vectorport.Store, loaded: Loaded) -> None:
        result = make_tool(store, loaded).execute({"query_text": "index"})
        assert_same(result, reference("index", top_k=10))

    def test_json_text_input(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = make_tool(store, loaded, enable_filter=True)
        result = tool.execute(json.dumps({"query_text": "filters", "top_k": 3,
                                          "filter": json.dumps({"category": "technical"})}))
        assert_same(result, reference("filters", top_k=3, filter={"category": "technical"}))

    def test_vectors_on_request(self, store: vectorport.Store, loaded: Loaded) -> None:
        result = make_tool(store, loaded, include_vectors=True).execute(
            {"query_text": "namespaces", "top_k": 2})
        for source in result.sources:
            assert source.vector is not None
            np.testing.assert_allclose(source.vector, EMBEDDER.embed([_text(source.id)])[0],
                                       atol=1e-6)
        assert isinstance(result.to_dict()["sources"][0]["vector"], list)

    def test_metadata_text_is_the_fallback_context(self, store: vectorport.Store,
                                                   loaded: Loaded) -> None:
        result = make_tool(store, loaded, enable_filter=True).execute(
            {"query_text": "index creation", "filter": {"version": 0.5}})
        assert [s.id for s in result.sources] == [META_TEXT_ID]
        assert result.sources[0].document is None
        assert result.relevant_context == META_TEXT

    def test_no_sources_when_disabled(self, store: vectorport.Store, loaded: Loaded) -> None:
        result = make_tool(store, loaded, include_sources=False).execute(
            {"query_text": "index", "top_k": 2})
        assert result.sources == ()
        expected = reference("index", top_k=2)
        assert result.relevant_context == "\n\n".join(_text(i) for i, _ in expected)

    def test_to_json_round_trips(self, store: vectorport.Store, loaded: Loaded) -> None:
        result = make_tool(store, loaded).execute({"query_text": "filters", "top_k": 3})
        data = json.loads(result.to_json())
        assert data["relevant_context"] == result.relevant_context
        assert [s["id"] for s in data["sources"]] == [s.id for s in result.sources]
        assert set(data["sources"][0]) == {"id", "metadata", "vector", "score", "document"}

    def test_aexecute_gives_the_same_answer(self, store: vectorport.Store,
                                            loaded: Loaded) -> None:
        tool = make_tool(store, loaded, enable_filter=True)
        args = {"query_text": "filters operators", "top_k": 3, "filter": {"version": {"$gt": 2}}}
        sync = tool.execute(args)
        async_result = asyncio.run(tool.aexecute(args))
        assert sync == async_result
        assert_same(sync, reference("filters operators", top_k=3,
                                    filter={"version": {"$gt": 2}}))

    def test_call_alias(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = make_tool(store, loaded)
        assert tool({"query_text": "index"}) == tool.execute({"query_text": "index"})


class TestInputValidation:
    @pytest.mark.parametrize(("raw", "message"), [
        ({}, "query_text"),
        ({"query_text": ""}, "query_text"),
        ({"query_text": "   "}, "query_text"),
        ({"query_text": 3}, "query_text"),
        ({"query_text": "x", "top_k": 0}, "top_k"),
        ({"query_text": "x", "top_k": -1}, "top_k"),
        ({"query_text": "x", "top_k": True}, "top_k"),
        ({"query_text": "x", "top_k": "5"}, "top_k"),
        ({"query_text": "x", "top_k": 2.5}, "top_k"),
        ({"query_text": "x", "top_k": 101}, "at most 100"),
        ({"query_text": "x", "queryText": "y"}, "queryText"),
        ({"query_text": "x", "filter": {"a": 1}}, "enable_filter"),
        ("{not json", "JSON"),
        ("[1, 2]", "object"),
    ])
    def test_bad_input_is_a_validation_error(self, store: vectorport.Store, loaded: Loaded,
                                             raw: Any, message: str) -> None:
        tool = make_tool(store, loaded)
        with pytest.raises(ValidationError, match=re.escape(message)):
            tool.execute(raw)

    def test_integral_float_top_k_is_accepted(self, store: vectorport.Store,
                                              loaded: Loaded) -> None:
        result = make_tool(store, loaded).execute({"query_text": "index", "top_k": 2.0})
        assert len(result.sources) == 2

    @pytest.mark.parametrize("bad_filter", [
        {"version": {"$regex": "x"}}, {"$and": []}, {"version": {"$gt": True}},
        {"bad-field": 1}, "{oops", ["a"],
    ])
    def test_bad_filters_name_their_source(self, store: vectorport.Store, loaded: Loaded,
                                           bad_filter: Any) -> None:
        tool = make_tool(store, loaded, enable_filter=True)
        with pytest.raises(FilterError, match="input filter"):
            tool.execute({"query_text": "x", "filter": bad_filter})

    def test_empty_filters_match_everything(self, store: vectorport.Store,
                                            loaded: Loaded) -> None:
        tool = make_tool(store, loaded, enable_filter=True)
        for empty in ({}, None, "", "{}"):
            result = tool.execute({"query_text": "index", "top_k": 3, "filter": empty})
            assert_same(result, reference("index", top_k=3))


class TestFilters:
    @pytest.mark.parametrize("flt", [
        {"version": {"$gt": 2.0}},
        {"category": "technical"},
        {"$or": [{"category": "guide"}, {"version": {"$gte": 4}}]},
        {"tags": "filter"},
        {"tenant_id": {"$exists": False}},
    ])
    def test_model_filters_match_the_oracle(self, store: vectorport.Store, loaded: Loaded,
                                            flt: dict[str, Any]) -> None:
        ops = vectorport.core.filters.ast.operators_used(parse_filter(flt))
        if not ops <= store.capabilities.filter_operators:
            pytest.skip(f"{store.backend} does not declare {sorted(ops)}")
        tool = make_tool(store, loaded, enable_filter=True)
        result = tool.execute({"query_text": "index filters", "filter": flt})
        assert_same(result, reference("index filters", filter=flt))

    def test_context_filter_applies_without_enable_filter(self, store: vectorport.Store,
                                                          loaded: Loaded) -> None:
        tool = make_tool(store, loaded)
        ctx = RequestContext(filter={"category": "guide"})
        result = tool.execute({"query_text": "index"}, ctx)
        assert_same(result, reference("index", filter={"category": "guide"}))


# -- runtime overrides ----------------------------------------------------------------------------


class TestRuntimeOverrides:
    def test_index_name_from_the_context(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = create_vector_query_tool(vector_store=store, model=EMBEDDER)
        assert tool.id == f"VectorQuery {store.backend} dynamic Tool"
        with pytest.raises(ConfigError, match="index_name is required"):
            tool.execute({"query_text": "index"})
        result = tool.execute({"query_text": "index", "top_k": 2},
                              RequestContext(index_name=loaded.name))
        assert_same(result, reference("index", top_k=2))

    def test_context_index_beats_creation(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = create_vector_query_tool(vector_store=store, model=EMBEDDER,
                                        index_name="missing_index")
        with pytest.raises(IndexNotFoundError):
            tool.execute({"query_text": "index"})
        result = tool.execute({"query_text": "index"}, {"index_name": loaded.name})
        assert_same(result, reference("index"))

    def test_top_k_precedence(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = make_tool(store, loaded, top_k=3)
        assert len(tool.execute({"query_text": "index"}).sources) == 3
        assert len(tool.execute({"query_text": "index", "top_k": 2}).sources) == 2
        ctx = RequestContext(top_k=1)
        assert len(tool.execute({"query_text": "index", "top_k": 5}, ctx).sources) == 1

    def test_include_flags_from_the_context(self, store: vectorport.Store,
                                            loaded: Loaded) -> None:
        tool = make_tool(store, loaded)
        result = tool.execute({"query_text": "index", "top_k": 2},
                              RequestContext(include_vectors=True))
        assert all(s.vector is not None for s in result.sources)
        result = tool.execute({"query_text": "index", "top_k": 2},
                              RequestContext(include_sources=False))
        assert result.sources == () and result.relevant_context
        with pytest.raises(ConfigError, match="include_vectors"):
            tool.execute({"query_text": "index"}, RequestContext(include_vectors="yes"))

    def test_database_config_override(self, store: vectorport.Store, loaded: Loaded) -> None:
        backend = store.backend
        tool = make_tool(store, loaded, database_config={backend: {"namespace": "production"}})
        result = tool.execute({"query_text": "deploy production"})
        assert_same(result, reference("deploy production", namespace="production"))
        ctx = RequestContext()
        ctx.set("database_config", {backend: {"namespace": "acme"}})
        result = tool.execute({"query_text": "deploy production"}, ctx)
        assert_same(result, reference("deploy production", namespace="acme"))
        ctx.set("database_config", None)  # an explicit None: no config at all
        result = tool.execute({"query_text": "deploy production"}, ctx)
        assert_same(result, reference("deploy production"))

    def test_min_score_from_the_active_section(self, store: vectorport.Store,
                                               loaded: Loaded) -> None:
        ranked = reference("create an index")
        floor = (ranked[2][1] + ranked[3][1]) / 2  # keeps the best three on any float rounding
        assert ranked[2][1] - ranked[3][1] > 1e-3
        tool = make_tool(store, loaded, database_config={
            store.backend: {"min_score": floor},
            "pgvector" if store.backend != "pgvector" else "chroma": {"min_score": 0.99},
        })
        result = tool.execute({"query_text": "create an index"})
        assert_same(result, reference("create an index", min_score=floor))
        assert len(result.sources) == 3

    def test_inactive_sections_are_ignored(self, store: vectorport.Store,
                                           loaded: Loaded) -> None:
        others = {"pinecone": {"namespace": "production", "future_option": 1},
                  "chroma": {"where": {"category": "nothing"}}, "somedb": {"x": 1}}
        others.pop(store.backend, None)
        tool = make_tool(store, loaded, database_config=others)
        assert_same(tool.execute({"query_text": "index"}), reference("index"))

    def test_unknown_key_in_the_active_section(self, store: vectorport.Store,
                                               loaded: Loaded) -> None:
        with pytest.raises(ConfigError, match="unknown key 'nonsense'"):
            make_tool(store, loaded, database_config={store.backend: {"nonsense": 1}})
        tool = make_tool(store, loaded)
        with pytest.raises(ConfigError, match=r"minScore.*min_score"):
            tool.execute({"query_text": "x"},
                         RequestContext(database_config={store.backend: {"minScore": 0.5}}))

    def test_reranker_override_and_removal(self, store: vectorport.Store,
                                           loaded: Loaded) -> None:
        reranker = Reranker(TermOverlapScorer(), {"semantic": 0.5, "vector": 0.3,
                                                  "position": 0.2}, top_k=3)
        tool = make_tool(store, loaded, reranker=reranker)
        query = "globex filters operators"
        result = tool.execute({"query_text": query, "top_k": 6})
        base = reference(query, top_k=6)
        matches = [Match(id=i, score=s, metadata=_metadata(i), document=_text(i))
                   for i, s in base]
        expected = rerank(query, matches, TermOverlapScorer(),
                          weights={"semantic": 0.5, "vector": 0.3, "position": 0.2}, top_k=3)
        assert [s.id for s in result.sources] == [r.match.id for r in expected]
        for source, want in zip(result.sources, expected, strict=True):
            assert source.rerank is not None
            assert math.isclose(source.score, want.rerank.total, abs_tol=1e-3)
            assert source.score == source.rerank.total
        plain = tool.execute({"query_text": query, "top_k": 6}, RequestContext(reranker=None))
        assert_same(plain, base)
        as_dict = tool.execute({"query_text": query, "top_k": 6},
                               RequestContext(reranker={"weights": {"semantic": 0, "vector": 1,
                                                                    "position": 0},
                                                        "top_k": 2}))
        assert [s.id for s in as_dict.sources] == [i for i, _ in base[:2]]

    def test_creation_only_fields_ignore_the_context(self, store: vectorport.Store,
                                                     loaded: Loaded) -> None:
        tool = make_tool(store, loaded)
        ctx = RequestContext(model="openai/text-embedding-3-small", id="Other",
                             description="other", enable_filter=True)
        result = tool.execute({"query_text": "index", "top_k": 2}, ctx)
        assert_same(result, reference("index", top_k=2))
        assert tool.id.startswith("VectorQuery") and tool.description == DEFAULT_DESCRIPTION
        with pytest.raises(ValidationError, match="enable_filter"):
            tool.execute({"query_text": "x", "filter": {"a": 1}}, ctx)

    def test_named_stores(self, store: vectorport.Store, loaded: Loaded) -> None:
        other = vectorport.connect("memory://")
        tool = create_vector_query_tool(vector_store={"main": store, "other": other},
                                        index_name=loaded.name, model=EMBEDDER)
        with pytest.raises(ConfigError, match="vector_store_name is required"):
            tool.execute({"query_text": "index"})
        with pytest.raises(ConfigError, match="no vector store named 'nope'"):
            tool.execute({"query_text": "index"}, RequestContext(vector_store_name="nope"))
        with pytest.raises(IndexNotFoundError):
            tool.execute({"query_text": "index"}, RequestContext(vector_store_name="other"))
        result = tool.execute({"query_text": "index"}, RequestContext(vector_store_name="main"))
        assert_same(result, reference("index"))

    def test_store_from_the_context(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = create_vector_query_tool(index_name=loaded.name, model=EMBEDDER)
        with pytest.raises(ConfigError, match="no vector_store"):
            tool.execute({"query_text": "index"})
        result = tool.execute({"query_text": "index"}, RequestContext(vector_store=store))
        assert_same(result, reference("index"))


# -- tenancy ---------------------------------------------------------------------------------------

HOSTILE_FILTERS: list[Any] = [
    {"$or": [{"tenant_id": "globex"}, {"tenant_id": {"$ne": "acme"}}]},
    {"$or": [{"version": {"$gte": 0}}, {"tenant_id": "globex"}]},
    {"tenant_id": {"$in": ["acme", "globex"]}},
    {"tenant_id": {"$ne": "acme"}},
    {"tenant_id": {"$exists": False}},
    {"$not": {"tenant_id": "acme"}},
    {"$nor": [{"tenant_id": "acme"}]},
    {"tenant_id": {"$not": {"$eq": "acme"}}},
    {"tenant_id": "globex"},
    {"$and": [{"$or": [{"tenant_id": "globex"}, {"tenant_id": "acme"}]}]},
    '{"tenant_id": "globex", "$or": [{"tenant_id": "acme"}, {"tenant_id": "globex"}]}',
    '{"tenant_id": "acme", "tenant_id": "globex"}',  # duplicate keys: JSON keeps the last
]


def _filter_value(raw: Any) -> dict[str, Any]:
    return json.loads(raw) if isinstance(raw, str) else raw


class TestTenancy:
    @pytest.mark.parametrize("hostile", HOSTILE_FILTERS)
    def test_input_filter_never_widens_the_tenant_filter(
        self, store: vectorport.Store, loaded: Loaded, hostile: Any
    ) -> None:
        flt = _filter_value(hostile)
        ops = vectorport.core.filters.ast.operators_used(
            parse_filter({"$and": [{"tenant_id": "acme"}, flt]}))
        if not ops <= store.capabilities.filter_operators:
            pytest.skip(f"{store.backend} does not declare {sorted(ops)}")
        tool = make_tool(store, loaded, enable_filter=True, tenant_filter="tenant_id")
        ctx = RequestContext(tenant_id="acme")
        result = tool.execute({"query_text": "globex secret roadmap filters", "filter": hostile},
                              ctx)
        assert all(s.metadata.get("tenant_id") == "acme" for s in result.sources)
        expected = reference("globex secret roadmap filters",
                             filter={"$and": [{"tenant_id": "acme"}, flt]})
        assert_same(result, expected)

    @pytest.mark.parametrize("hostile", HOSTILE_FILTERS[:6])
    def test_context_filter_is_enforced_the_same_way(
        self, store: vectorport.Store, loaded: Loaded, hostile: Any
    ) -> None:
        tool = make_tool(store, loaded, enable_filter=True)
        ctx = RequestContext(filter={"tenant_id": "acme"})
        result = tool.execute({"query_text": "globex roadmap", "filter": hostile}, ctx)
        assert all(s.metadata.get("tenant_id") == "acme" for s in result.sources)

    def test_tenant_is_required(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = make_tool(store, loaded, tenant_filter="tenant_id")
        with pytest.raises(ConfigError, match="'tenant_id' is required"):
            tool.execute({"query_text": "index"})
        with pytest.raises(ConfigError, match="non-empty str"):
            tool.execute({"query_text": "index"}, RequestContext(tenant_id=""))
        with pytest.raises(ConfigError, match="non-empty str"):
            tool.execute({"query_text": "index"}, RequestContext(tenant_id=7))

    def test_tenant_filter_function(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = make_tool(store, loaded, tenant_key="org",
                         tenant_filter=lambda t: {"tenant_id": t, "version": {"$lt": 3}})
        result = tool.execute({"query_text": "index"}, RequestContext(org="globex"))
        assert_same(result, reference("index", filter={"tenant_id": "globex",
                                                       "version": {"$lt": 3}}))
        empty = make_tool(store, loaded, tenant_filter=lambda t: {})
        with pytest.raises(ConfigError, match="empty"):
            empty.execute({"query_text": "index"}, RequestContext(tenant_id="acme"))

    def test_tenant_namespace(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = make_tool(store, loaded, tenant_namespace=True)
        result = tool.execute({"query_text": "index"}, RequestContext(tenant_id="acme"))
        assert_same(result, reference("index", namespace="acme"))
        clash = RequestContext(tenant_id="acme",
                               database_config={store.backend: {"namespace": "production"}})
        with pytest.raises(ConfigError, match="conflicts"):
            tool.execute({"query_text": "index"}, clash)

    def test_resolver_gets_the_context_and_needs_a_tenant(self, store: vectorport.Store,
                                                          loaded: Loaded) -> None:
        seen: list[str] = []

        def resolver(ctx: RequestContext) -> vectorport.Store:
            seen.append(ctx.get("tenant_id"))
            return store

        tool = create_vector_query_tool(vector_store=resolver, index_name=loaded.name,
                                        model=EMBEDDER)
        assert tool.id == f"VectorQuery dynamic {loaded.name} Tool"
        with pytest.raises(ConfigError, match="tenant_id"):
            tool.execute({"query_text": "index"})
        assert seen == []  # refused before the resolver ran
        result = tool.execute({"query_text": "index"}, RequestContext(tenant_id="acme"))
        assert seen == ["acme"]
        assert_same(result, reference("index"))

    def test_resolver_picks_a_store_per_tenant(self, store: vectorport.Store,
                                               loaded: Loaded) -> None:
        empty = vectorport.connect("memory://")
        empty.create_index(loaded.name, dimension=EMBEDDER.dimension)
        stores = {"acme": store, "globex": empty}
        tool = create_vector_query_tool(vector_store=lambda ctx: stores[ctx.get("tenant_id")],
                                        index_name=loaded.name, model=EMBEDDER)
        assert tool.execute({"query_text": "index"}, RequestContext(tenant_id="acme")).sources
        assert tool.execute({"query_text": "index"},
                            RequestContext(tenant_id="globex")).sources == ()

    def test_async_resolver_in_sync_and_async_code(self, store: vectorport.Store,
                                                   loaded: Loaded) -> None:
        async def resolver(ctx: RequestContext) -> vectorport.Store:
            await asyncio.sleep(0)
            return store

        tool = create_vector_query_tool(vector_store=resolver, index_name=loaded.name,
                                        model=EMBEDDER)
        ctx = RequestContext(tenant_id="acme")
        sync = tool.execute({"query_text": "index", "top_k": 3}, ctx)
        assert_same(sync, reference("index", top_k=3))
        assert asyncio.run(tool.aexecute({"query_text": "index", "top_k": 3}, ctx)) == sync

        async def inside_a_loop() -> Any:  # a sync call from async code still works
            return tool.execute({"query_text": "index", "top_k": 3}, ctx)

        assert asyncio.run(inside_a_loop()) == sync

    def test_resolver_must_return_a_store(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = create_vector_query_tool(vector_store=lambda ctx: "memory://",
                                        index_name=loaded.name, model=EMBEDDER)
        with pytest.raises(ConfigError, match="not a vectorport Store"):
            tool.execute({"query_text": "index"}, RequestContext(tenant_id="acme"))

    def test_resolver_without_tenant_key(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = create_vector_query_tool(vector_store=lambda ctx: store, tenant_key=None,
                                        index_name=loaded.name, model=EMBEDDER)
        assert_same(tool.execute({"query_text": "index"}), reference("index"))


# -- hybrid, embedders, errors ------------------------------------------------------------------


class TestHybridAndModels:
    @pytest.mark.parametrize(("metric", "alpha"), [
        ("cosine", 0.3), ("dotproduct", 0.3), ("cosine", 1.0), ("cosine", None),
    ])
    def test_bm25_hybrid_matches_the_reference(self, store: vectorport.Store, metric: str,
                                               alpha: float | None) -> None:
        caps = store.capabilities
        if not caps.sparse or caps.hybrid != "sum" or metric not in caps.metrics:
            pytest.skip(f"{store.backend} has no 'sum' hybrid search with {metric}")
        texts = [t for _, t, _, ns in CORPUS if ns == ""]
        ids = [i for i, _, _, ns in CORPUS if ns == ""]
        bm25 = BM25Encoder().fit(texts)
        name = f"qt_{uuid.uuid4().hex[:12]}"
        try:
            index = store.create_index(name, dimension=EMBEDDER.dimension, metric=metric,
                                       sparse=True)
        except UnsupportedFeatureError as exc:  # Pinecone: sparse-dense on dotproduct only
            pytest.skip(str(exc))
        try:
            index.upsert([{"id": i, "vector": v, "sparse": s, "document": t}
                          for i, t, v, s in zip(ids, texts, EMBEDDER.embed(texts),
                                                bm25.encode_documents(texts), strict=True)])
            tool = create_vector_query_tool(vector_store=store, index_name=name, model=EMBEDDER,
                                            sparse_encoder=bm25, hybrid_alpha=alpha)
            query = "globex roadmap"
            result = tool.execute({"query_text": query})
            q = EMBEDDER.embed([query])[0].astype(np.float64)
            sq = bm25.encode_query(query)
            assert sq is not None
            weight = 1.0 if alpha is None else alpha
            sparse_weight = 1.0 if alpha is None else 1.0 - alpha
            expected = []
            for i, t in zip(ids, texts, strict=True):
                v = EMBEDDER.embed([t])[0].astype(np.float64)
                dense = float(q @ v)
                if metric == "cosine":
                    dense /= float(np.linalg.norm(q) * np.linalg.norm(v))
                sparse = vectorport.core.scoring.sparse_dot(sq, bm25.encode_document(t))
                expected.append((i, weight * dense + sparse_weight * sparse))
            expected.sort(key=lambda r: (-r[1], r[0]))
            assert_same(result, expected)
            assert result.sources[0].id == "g1"
        finally:
            store.delete_index(name, missing_ok=True)

    def test_sparse_vector_from_the_pinecone_section(self, store: vectorport.Store) -> None:
        options = vectorport.agent.options_for_backend(
            {"pinecone": {"sparse_vector": {"indices": [3, 1], "values": [0.5, 0.25]}}},
            "pinecone")
        assert options.sparse == vectorport.SparseVector((1, 3), (0.25, 0.5))

    def test_a_plain_function_as_model(self, store: vectorport.Store, loaded: Loaded) -> None:
        calls: list[str] = []

        def embed(text: str) -> list[float]:
            calls.append(text)
            return EMBEDDER.embed([text])[0].tolist()

        tool = create_vector_query_tool(vector_store=store, index_name=loaded.name, model=embed)
        assert_same(tool.execute({"query_text": "index"}), reference("index"))
        assert calls == ["index"]

    def test_provider_options_reach_a_configurable_model(self, store: vectorport.Store,
                                                         loaded: Loaded) -> None:
        class Configurable:
            """A user-defined embedder that takes provider options."""

            dimension = EMBEDDER.dimension

            def __init__(self, tag: str = "") -> None:
                self.tag = tag

            def embed(self, texts: Sequence[str]) -> list[Any]:
                seen.append(self.tag)
                return EMBEDDER.embed(texts)

            def with_options(self, options: Mapping[str, Mapping[str, Any]]) -> Configurable:
                return Configurable(str(options.get("mine", {}).get("tag", "")))

        seen: list[str] = []
        tool = create_vector_query_tool(vector_store=store, index_name=loaded.name,
                                        model=Configurable(), provider_options={"mine": {"tag": "a"}})
        tool.execute({"query_text": "index"})
        tool.execute({"query_text": "index"},
                     RequestContext(provider_options={"mine": {"tag": "b"}, "other": {}}))
        tool.execute({"query_text": "index"}, RequestContext(provider_options=None))
        assert seen == ["a", "b", ""]

    def test_provider_options_need_a_configurable_model(self, store: vectorport.Store,
                                                        loaded: Loaded) -> None:
        with pytest.raises(ConfigError, match="provider_options"):
            make_tool(store, loaded, provider_options={"openai": {"dimensions": 8}})
        tool = make_tool(store, loaded)
        with pytest.raises(ConfigError, match="provider_options"):
            tool.execute({"query_text": "x"},
                         RequestContext(provider_options={"openai": {"dimensions": 8}}))

    def test_dimension_mismatch_is_loud(self, store: vectorport.Store, loaded: Loaded) -> None:
        tool = make_tool(store, loaded, model=HashingEmbedder(dimension=32))
        with pytest.raises(DimensionMismatchError):
            tool.execute({"query_text": "index"})


class TestCreation:
    @pytest.mark.parametrize(("kwargs", "message"), [
        ({"model": None}, "model is required"),
        ({"model": 42}, "not an embedder"),
        ({"vector_store": 42}, "vector_store must be"),
        ({"vector_store": {"a": 1}}, "maps names to vectorport Stores"),
        ({"index_name": ""}, "index_name"),
        ({"enable_filter": "yes"}, "enable_filter"),
        ({"top_k": 0}, "top_k"),
        ({"top_k": 50, "max_top_k": 20}, "cannot exceed"),
        ({"hybrid_alpha": 1.5}, "hybrid_alpha"),
        ({"database_config": ["pinecone"]}, "database_config"),
        ({"reranker": {"weights": {"semantic": 1.0}}}, "sum to 1"),
        ({"reranker": {"model": "gpt"}}, "unknown reranker option"),
        ({"tenant_filter": "bad-field"}, "tenant filter"),
        ({"tenant_filter": "tenant_id", "tenant_key": None}, "tenant_key"),
        ({"description": "  "}, "description"),
        ({"sparse_encoder": object()}, "encode_query"),
    ])
    def test_bad_configuration_fails_at_creation(self, store: vectorport.Store, loaded: Loaded,
                                                 kwargs: dict[str, Any], message: str) -> None:
        options: dict[str, Any] = {"vector_store": store, "index_name": loaded.name,
                                   "model": EMBEDDER, **kwargs}
        with pytest.raises((ConfigError, ValidationError), match=re.escape(message)):
            create_vector_query_tool(**options)

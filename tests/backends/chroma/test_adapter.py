"""The chroma adapter's own behaviour, on the real engine: URLs, isolation of in-memory
stores, the collection layout, upsert replacing (not merging), documents and the
``chroma`` query options, index parameters, patch, ties, and the workaround for
Chroma's list-metadata leak (chroma-core/chroma#7594)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

chromadb = pytest.importorskip("chromadb")

import vectorport  # noqa: E402
from vectorport.adapters.chroma import naming  # noqa: E402
from vectorport.adapters.chroma.adapter import ChromaAdapter  # noqa: E402
from vectorport.core.errors import (  # noqa: E402
    ConfigError,
    FilterError,
    IndexNotFoundError,
    TransientBackendError,
    UnsupportedFeatureError,
    ValidationError,
)
from vectorport.core.store import Index, PatchableIndex, Store  # noqa: E402
from vectorport.core.validation import NAMESPACE_RE  # noqa: E402
from vectorport.testing import chroma as chroma_testing  # noqa: E402

CHROMA_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$")


@pytest.fixture
def store() -> Iterator[Store]:
    with vectorport.connect("chroma+memory://") as store:
        yield store


@pytest.fixture
def index(store: Store) -> Index:
    return store.create_index(f"t_{uuid.uuid4().hex[:8]}", 4, "cosine")


def row(rid: str, vector: list[float], metadata: dict[str, Any] | None = None,
        document: str | None = None) -> dict[str, Any]:
    return {"id": rid, "vector": vector, "metadata": metadata or {}, "document": document}


def raw_client(store: Store) -> Any:
    adapter = store.adapter
    assert isinstance(adapter, ChromaAdapter)
    return adapter._client


# -- URLs and connections ---------------------------------------------------------------


@pytest.mark.parametrize("url", [
    "chroma://somehost/path", "chroma://", "chroma:///", "chroma+memory://host",
    "chroma+memory:///some/path", "chroma+memory://?tenant=x", "chroma:///tmp/x?bogus=1",
    "chroma+http://", "chroma+http://:8000",
])
def test_bad_urls_raise_config_error(url: str) -> None:
    with pytest.raises(ConfigError):
        vectorport.connect(url)


def test_a_server_that_is_down_is_a_transient_error() -> None:
    port = chroma_testing.free_port()
    with pytest.raises(TransientBackendError):
        vectorport.connect(f"chroma+http://127.0.0.1:{port}")


def test_memory_stores_are_isolated() -> None:
    with vectorport.connect("chroma+memory://") as one, \
            vectorport.connect("chroma+memory://") as two:
        a = one.create_index("shared_name", 4)
        a.upsert([("x", [1, 0, 0, 0])])
        assert two.list_indexes() == []
        b = two.create_index("shared_name", 4)
        assert b.count() == 0
        b.upsert([("y", [0, 1, 0, 0]), ("z", [0, 0, 1, 0])])
        assert a.count() == 1 and b.count() == 2
    with vectorport.connect("chroma+memory://") as three:
        assert three.list_indexes() == []


def test_persistent_store_survives_reopening(tmp_path: Path) -> None:
    url = f"chroma://{tmp_path}"
    with vectorport.connect(url) as store:
        index = store.create_index("durable", 4, "euclidean", index_params={"m": 12})
        index.upsert([row("a", [1, 0, 0, 0], {"n": 1, "tags": ["x"]}, "text")], namespace="n.s")
    with vectorport.connect(url) as store:
        info = store.describe_index("durable")
        assert (info.dimension, info.metric, dict(info.spec.index_params)) == (
            4, "euclidean", {"m": 12})
        assert dict(info.namespaces) == {"n.s": 1}
        record = store.index("durable").fetch(["a"], namespace="n.s")["a"]
        assert dict(record.metadata) == {"n": 1, "tags": ("x",)}
        assert record.document == "text"


# -- names and layout -------------------------------------------------------------------


@given(st.from_regex(NAMESPACE_RE, fullmatch=True) | st.just(""))
def test_namespace_names_map_one_to_one_to_valid_collection_names(namespace: str) -> None:
    name = naming.data_collection("an_index_", namespace)
    assert CHROMA_NAME.match(name) and ".." not in name
    assert naming.namespace_of_data("an_index_", name) == namespace
    assert naming.namespace_of_data("an_index", name) is None
    assert naming.index_of_catalog(name) is None


def test_escaping_is_injective_on_tricky_pairs() -> None:
    tricky = ["", "_", "__", "_d", ".", "..", "a.", "a_d", "a__d", "a._", "a_.", "-", "x-"]
    names = {naming.escape_namespace(ns) for ns in tricky}
    assert len(names) == len(tricky)
    for ns in tricky:
        assert naming.unescape_namespace(naming.escape_namespace(ns)) == ns


def test_tricky_namespaces_work_end_to_end(index: Index) -> None:
    spaces = ["a..b", "x-", "x.", "x_", "a_d", "a._", "9", "Z" * 64]
    for i, ns in enumerate(spaces):
        index.upsert([(f"id{i}", [1, i, 0, 0], {"ns": ns})], namespace=ns)
    assert sorted(index.list_namespaces()) == sorted(spaces)
    for i, ns in enumerate(spaces):
        assert [m.id for m in index.query([1, 0, 0, 0], namespace=ns, top_k=10)] == [f"id{i}"]
    assert index.count() == 0


def test_layout_catalog_and_data_collections(store: Store) -> None:
    index = store.create_index("layout_check", 4, "dotproduct")
    index.upsert([("a", [1, 0, 0, 0])], namespace="ns-1")
    client = raw_client(store)
    names = sorted(c.name for c in client.list_collections())
    assert names == ["layout_check.vp", "layout_check.vp.ns-ns-1-data"]
    config = client.get_collection("layout_check.vp.ns-ns-1-data").configuration_json
    assert config["hnsw"]["space"] == "ip"


def test_foreign_collections_are_not_indexes(store: Store) -> None:
    client = raw_client(store)
    client.create_collection("mine.vp", embedding_function=None)  # our name, not our metadata
    client.create_collection("someone_elses", embedding_function=None)
    assert store.list_indexes() == []
    with pytest.raises(IndexNotFoundError):
        store.describe_index("mine")


def test_create_index_purges_orphaned_data(store: Store) -> None:
    client = raw_client(store)
    orphan = client.create_collection(naming.data_collection("reborn", ""),
                                      embedding_function=None)
    orphan.add(ids=["ghost"], embeddings=[[1.0, 0.0, 0.0, 0.0]])
    index = store.create_index("reborn", 4)
    assert index.count() == 0 and index.fetch(["ghost"]) == {}


def test_operations_on_a_deleted_index_raise(store: Store) -> None:
    index = store.create_index("short_lived", 4)
    index.upsert([("a", [1, 0, 0, 0])])
    store.delete_index("short_lived")
    with pytest.raises(IndexNotFoundError):
        index.upsert([("b", [1, 0, 0, 0])])
    with pytest.raises(IndexNotFoundError):
        index.query([1, 0, 0, 0])
    with pytest.raises(IndexNotFoundError):
        index.count("other")
    assert raw_client(store).list_collections() == []


def test_index_params_configure_hnsw(store: Store) -> None:
    index = store.create_index("tuned", 4, index_type="hnsw",
                               index_params={"m": 8, "ef_construction": 50, "ef_search": 30})
    index.upsert([("a", [1, 0, 0, 0])])
    hnsw = raw_client(store).get_collection(
        naming.data_collection("tuned", "")).configuration_json["hnsw"]
    assert (hnsw["max_neighbors"], hnsw["ef_construction"], hnsw["ef_search"]) == (8, 50, 30)
    assert dict(store.describe_index("tuned").spec.index_params) == {
        "m": 8, "ef_construction": 50, "ef_search": 30}
    assert store.describe_index("tuned").spec.index_type == "hnsw"


@pytest.mark.parametrize("kwargs", [
    {"index_params": {"lists": 4}},
    {"backend_options": {"chroma": {"space": "l2"}}},
])
def test_unknown_index_settings_are_refused(store: Store, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        store.create_index("refused", 4, **kwargs)
    assert store.list_indexes() == []


def test_ef_hint_is_refused(index: Index) -> None:
    with pytest.raises(UnsupportedFeatureError):
        index.query([1, 0, 0, 0], ef=50)


# -- records ----------------------------------------------------------------------------


def test_kinds_round_trip(index: Index) -> None:
    metadata = {"i": 3, "f": 2020.0, "b": True, "s": "3", "l": ["x", "y"], "big": 2**63 - 1,
                "neg": -(2**63), "tiny": 5e-324, "z": -0.5}
    index.upsert([("k", [1, 0, 0, 0], metadata)])
    got = dict(index.fetch(["k"])["k"].metadata)
    assert got == {**metadata, "l": ("x", "y")}
    assert {k: type(v) for k, v in got.items()} == {
        k: tuple if isinstance(v, list) else type(v) for k, v in metadata.items()}
    (match,) = index.query([1, 0, 0, 0], top_k=1)
    assert dict(match.metadata or {}) == got
    assert not any(key.startswith("vectorport") for key in got)


def test_upsert_replaces_metadata_and_document(index: Index) -> None:
    index.upsert([row("r", [1, 0, 0, 0], {"a": 1, "tags": ["x"], "f": 0.5}, "old text")])
    index.upsert([("r", [0, 1, 0, 0], {"b": "new"})])
    got = index.fetch(["r"])["r"]
    assert dict(got.metadata) == {"b": "new"}
    assert got.document is None, "a document must not survive an upsert without one"
    np.testing.assert_allclose(got.vector, [0, 1, 0, 0])
    for gone in ({"a": {"$exists": True}}, {"tags": "x"}, {"f": {"$gt": 0.1}},
                 {"a": {"$lt": 5}}):
        assert index.count(filter=gone) == 0, gone
    assert index.count(filter={"a": {"$not": {"$gt": 5}}}) == 1
    index.upsert([row("r", [0, 1, 0, 0], {}, "back")])
    got = index.fetch(["r"])["r"]
    assert dict(got.metadata) == {} and got.document == "back"
    index.upsert([row("r", [0, 1, 0, 0], {"c": 1}, "again")])
    assert index.fetch(["r"])["r"].document == "again"


def test_reserved_keys_cannot_be_filtered_on(index: Index) -> None:
    with pytest.raises(FilterError):
        index.query([1, 0, 0, 0], filter={"vectorport:keys": {"$exists": True}})


def test_deleted_collections_leave_no_list_metadata_behind(store: Store) -> None:
    """Chroma 1.5 leaks list metadata of dropped collections into new records
    (chroma-core/chroma#7594); vectorport deletes records before it drops."""
    first = store.create_index("leaky_one", 4)
    rows = [(f"r{i}", [1, i, 0, 0], {"tags": ["ghost"], "n": 1.5}) for i in range(5)]
    first.upsert(rows, namespace="a")
    first.delete_namespace("a")
    first.upsert(rows, namespace="b")
    store.delete_index("leaky_one")
    second = store.create_index("leaky_two", 4)
    second.upsert([(f"s{i}", [1, i, 0, 0], {"k": i}) for i in range(5)])
    fetched = second.fetch([f"s{i}" for i in range(5)])
    assert all(dict(r.metadata) == {"k": int(r.id[1:])} for r in fetched.values())
    assert second.count(filter={"tags": "ghost"}) == 0
    assert second.count(filter={"n": {"$gt": 1}}) == 0


def test_delete_by_filter_and_match_everything_filters(index: Index) -> None:
    index.upsert([(f"d{i}", [1, i, 0, 0], {"n": i, "s": "x" if i % 2 else "y"})
                  for i in range(6)])
    index.delete(filter={"s": "x"})
    assert sorted(index.fetch([f"d{i}" for i in range(6)])) == ["d0", "d2", "d4"]
    index.delete(filter={"n": {"$lte": 1e300}})  # every number: no int is above 1e300
    assert index.count() == 0


def test_patch(index: Index) -> None:
    assert isinstance(index, PatchableIndex)
    index.upsert([row("p", [1, 0, 0, 0], {"a": 1, "b": "x", "tags": ["t"]}, "doc")])
    assert index.patch("p", metadata={"a": "now a string", "tags": None, "c": 2.5})
    got = index.fetch(["p"])["p"]
    assert dict(got.metadata) == {"a": "now a string", "b": "x", "c": 2.5}
    assert got.document == "doc"
    assert index.count(filter={"a": {"$gt": 0}}) == 0
    assert index.count(filter={"a": {"$not": {"$gt": 0}}}) == 1
    assert index.count(filter={"tags": {"$exists": True}}) == 0
    assert index.count(filter={"c": {"$gt": 2.2}}) == 1
    assert index.patch("p", vector=[0, 0, 1, 0], document="new doc")
    got = index.fetch(["p"])["p"]
    np.testing.assert_allclose(got.vector, [0, 0, 1, 0])
    assert got.document == "new doc" and dict(got.metadata)["b"] == "x"
    assert not index.patch("missing", metadata={"a": 1})
    assert not index.patch("p", metadata={"a": 1}, namespace="elsewhere")


# -- queries ----------------------------------------------------------------------------


def test_ties_beyond_the_first_page_go_by_id(index: Index) -> None:
    ids = [f"t{i:02d}" for i in range(40)]
    index.upsert([(rid, [0, 1, 0, 0]) for rid in reversed(ids)])
    index.upsert([("best", [0, 1, 0.01, 0])], namespace="x")
    for k in (1, 3, 7, 20):
        assert [m.id for m in index.query([0, 1, 0, 0], top_k=k)] == ids[:k]


def test_query_many_settles_ties_per_row(index: Index) -> None:
    ids = [f"t{i:02d}" for i in range(12)]
    index.upsert([(rid, [0, 1, 0, 0]) for rid in reversed(ids)] + [("x", [1, 0, 0, 0])])
    got = index.query_many([[0, 1, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0]], top_k=3)
    assert [m.id for m in got[0]] == ids[:3]
    assert got[1][0].id == "x"
    assert [m.id for m in got[2]] == ["t00", "t01", "t02"]


def test_where_document(index: Index) -> None:
    index.upsert([row("api", [1, 0, 0, 0], {"k": 1}, "The API reference"),
                  row("guide", [0.9, 0.1, 0, 0], {"k": 2}, "A user guide"),
                  row("bare", [0.8, 0.2, 0, 0], {"k": 1})])

    def ids(**options: Any) -> list[str]:
        return [m.id for m in index.query([1, 0, 0, 0], top_k=5,
                                          backend_options={"chroma": options})]

    assert ids(where_document={"$contains": "API"}) == ["api"]
    assert ids(where_document={"$and": [{"$contains": "API"}]}) == ["api"]
    assert ids(where_document={"$or": [{"$contains": "API"}, {"$regex": "gui.e$"}]}) == [
        "api", "guide"]
    # Chroma's own meaning: a record without a document does not contain "API"
    assert ids(where_document={"$not_contains": "API"}) == ["guide", "bare"]
    assert ids(where={"k": 1}) == ["api", "bare"]
    assert ids(where={"k": 1}, where_document={"$contains": "API"}) == ["api"]
    got = index.query([1, 0, 0, 0], top_k=5, filter={"k": 1},
                      backend_options={"chroma": {"where": {"k": 2}}, "pgvector": {"x": 1}})
    assert got == []


@pytest.mark.parametrize(("options", "error"), [
    ({"where_documents": {"$contains": "x"}}, ValidationError),
    ({"where_document": {"$contains": 1}}, ValidationError),
    ({"where_document": {"$contains": "a", "$regex": "b"}}, ValidationError),
    ({"where_document": {"$and": []}}, ValidationError),
    ({"where_document": {"$like": "x"}}, ValidationError),
    ({"where_document": "API"}, ValidationError),
    ({"where": {"k": {"$regex": "x"}}}, FilterError),
    ({"where": "k = 1"}, FilterError),
    ({"where": {"genre": {"$gt": "d"}}}, UnsupportedFeatureError),
])
def test_bad_query_options_raise_before_io(index: Index, options: dict[str, Any],
                                           error: type[Exception]) -> None:
    with pytest.raises(error):
        index.query([1, 0, 0, 0], backend_options={"chroma": options})


def test_bad_regex_is_a_backend_error(index: Index) -> None:
    index.upsert([row("a", [1, 0, 0, 0], {}, "text")])
    with pytest.raises(vectorport.BackendError):
        index.query([1, 0, 0, 0], backend_options={"chroma": {"where_document": {"$regex": "("}}})


# -- the launcher -----------------------------------------------------------------------


def test_launcher_honours_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VECTORPORT_TEST_CHROMA_URL", "chroma+http://example.invalid:1")
    with chroma_testing.running_chroma_server() as url:
        assert url == "chroma+http://example.invalid:1"


def test_launcher_starts_and_stops_a_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VECTORPORT_TEST_CHROMA_URL", raising=False)
    with chroma_testing.running_chroma_server() as url:
        assert url.startswith("chroma+http://127.0.0.1:")
        with vectorport.connect(url) as store:
            assert store.list_indexes() == []
            index = store.create_index("over_http", 4)
            index.upsert([("a", [1, 0, 0, 0], {"f": 2020.0, "i": 2020})])
            assert dict(index.fetch(["a"])["a"].metadata) == {"f": 2020.0, "i": 2020}
            assert type(index.fetch(["a"])["a"].metadata["f"]) is float
    with pytest.raises(TransientBackendError):
        vectorport.connect(url)

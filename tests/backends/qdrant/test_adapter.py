"""The qdrant adapter's own choices, on the real engines (Qdrant Edge and qdrant-client's
local mode): URLs and credentials, the point layout, the tenant index, boolean
shadows, options, ranking under ties and persistence. The contract itself is checked by
``tests/backends/qdrant/test_conformance.py``; expected answers here come from the reference
query or from the definitions in :mod:`vectorport.adapters.qdrant.naming`."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("qdrant_client")
pytest.importorskip("qdrant_edge")

import qdrant_edge as qe

import vectorport
from vectorport.adapters.qdrant import naming
from vectorport.adapters.qdrant.adapter import QdrantAdapter, size_batches
from vectorport.adapters.qdrant.codec import Point
from vectorport.adapters.qdrant.engines.edge import EdgeEngine
from vectorport.agent.database_config import options_for_backend
from vectorport.conformance import handles as stale
from vectorport.conformance.base import canonical_records
from vectorport.conformance.reference import reference_query
from vectorport.core.errors import (
    BackendError,
    ConfigError,
    TransientBackendError,
    UnsupportedFeatureError,
    ValidationError,
)
from vectorport.core.filters.parse import parse_filter
from vectorport.core.store import Index, PatchableIndex
from vectorport.core.validation import sparse_vector

ENGINES = ["edge", "local"]


def _url(engine: str, folder: Path) -> str:
    return f"qdrant+edge://{folder}/edge" if engine == "edge" else f"qdrant+local://{folder}/lc"


@pytest.fixture(params=ENGINES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[vectorport.Store]:
    with vectorport.connect(_url(request.param, tmp_path)) as opened:
        yield opened


def _adapter(store: vectorport.Store) -> QdrantAdapter:
    adapter = store.adapter
    assert isinstance(adapter, QdrantAdapter)
    return adapter


# -- URLs and credentials -----------------------------------------------------------------

@pytest.mark.parametrize("url", [
    "qdrant://", "qdrant://host/path", "qdrant://host?bogus=1", "qdrant+edge://",
    "qdrant+edge://host/x", "qdrant+local://", "qdrant+memory:///x", "qdrant+edge:///x?a=1",
    "qdrant://host?timeout=-1", "qdrant://host?timeout=soon",
])
def test_bad_urls_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError):
        vectorport.connect(url)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
def test_the_api_key_is_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "qdrant-secret-" + uuid.uuid4().hex
    monkeypatch.setenv("VP_TEST_QDRANT_KEY", secret)
    url = f"qdrant://127.0.0.1:{_free_port()}?api_key_env=VP_TEST_QDRANT_KEY&timeout=1"
    with vectorport.connect(url) as store:
        assert secret not in repr(store) and secret not in repr(store.adapter)
        with pytest.raises(TransientBackendError) as caught:
            store.list_indexes()  # nothing listens there: connection refused
        chain: BaseException | None = caught.value
        while chain is not None:
            assert secret not in str(chain) and secret not in repr(chain)
            chain = chain.__cause__ or chain.__context__


def test_a_missing_key_variable_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="VP_TEST_QDRANT_UNSET"):
        vectorport.connect("qdrants://example.invalid?api_key_env=VP_TEST_QDRANT_UNSET")


def test_memory_mode_works_and_forgets() -> None:
    with vectorport.connect("qdrant+memory://") as store:
        index = store.create_index("mem_idx", 2, "dotproduct")
        index.upsert([("a", [1, 2])])
        assert index.fetch(["a"])["a"].vector.tolist() == [1.0, 2.0]
    with vectorport.connect("qdrant+memory://") as store:
        assert store.list_indexes() == []


# -- layout ----------------------------------------------------------------------------

def test_point_ids_are_uuid5_of_namespace_and_id() -> None:
    namespace = uuid.UUID("6f1d3c52-8b0e-5a4e-9d57-2f0c7a4b9e61")
    assert naming.point_id("ns", "id") == str(uuid.uuid5(namespace, "ns\0id"))
    # the NUL separator keeps ("a", "b/c") and ("a/b", "c") apart, and so on
    assert naming.point_id("a", "bc") != naming.point_id("ab", "c")


def test_ids_of_any_string_come_back_exactly_and_per_namespace(store: vectorport.Store) -> None:
    index = store.create_index("ids_idx", 2, "euclidean")
    ids = ["x", "é 日本 🙂", "a" * 500, "with\nnewline", "00000000-0000-0000-0000-000000000001",
           "12", "-1", " spaced "]
    index.upsert([(i, [float(n), 0.0], {"n": n}) for n, i in enumerate(ids)])
    index.upsert([(i, [0.0, float(n)], {"n": -n}) for n, i in enumerate(ids)], namespace="b")
    got = index.fetch(ids)
    assert sorted(got) == sorted(ids)
    assert all(got[i].metadata["n"] == n for n, i in enumerate(ids))
    other = index.fetch(ids, namespace="b")
    assert all(other[i].metadata["n"] == -n for n, i in enumerate(ids))
    index.delete(ids[:3], namespace="b")
    assert index.count() == len(ids) and index.count("b") == len(ids) - 3


def test_cosine_returns_vectors_as_written_while_qdrant_normalises(
    store: vectorport.Store,
) -> None:
    index = store.create_index("cos_idx", 3, "cosine")
    index.upsert([("v", [3.0, 4.0, 12.0])])
    assert index.fetch(["v"])["v"].vector.tolist() == [3.0, 4.0, 12.0]
    match = index.query([3.0, 4.0, 12.0], include_vectors=True, top_k=1)[0]
    assert match.vector is not None and match.vector.tolist() == [3.0, 4.0, 12.0]
    assert match.score == pytest.approx(1.0, abs=1e-6)
    engine = _adapter(store).engine
    hit = engine.retrieve("cos_idx", [naming.point_id("", "v")], [naming.DENSE])[0]
    np.testing.assert_allclose(hit.vectors[naming.DENSE], np.array([3, 4, 12]) / 13, rtol=1e-6)
    # the vector as written: the hex digits of its float32 bytes in the payload (layout 2)
    stored = np.frombuffer(bytes.fromhex(hit.payload[naming.VECTOR]), dtype="<f4")
    assert stored.tolist() == [3.0, 4.0, 12.0]


def test_euclidean_scores_are_one_over_one_plus_distance(store: vectorport.Store) -> None:
    index = store.create_index("l2_idx", 2, "euclidean")
    index.upsert([("a", [0.0, 0.0]), ("b", [3.0, 4.0])])
    got = {m.id: m.score for m in index.query([0.0, 0.0], top_k=2)}
    assert got["a"] == pytest.approx(1.0) and got["b"] == pytest.approx(1 / 6)


def test_edge_has_a_tenant_index_on_the_namespace_field(tmp_path: Path) -> None:
    with vectorport.connect(_url("edge", tmp_path)) as store:
        store.create_index("tenant_idx", 2, "dotproduct")
    shard = qe.EdgeShard.load(str(tmp_path / "edge" / "tenant_idx" / "shard"))
    try:
        schema = shard.info().payload_schema
        assert schema[naming.NAMESPACE].data_type == qe.PayloadSchemaType.Keyword
        assert schema[naming.NAMESPACE].params.is_tenant is True
    finally:
        shard.close()


def test_edge_indexes_the_fields_string_conditions_read(tmp_path: Path) -> None:
    """A keyword index on each metadata key written with a string or a list, and on each
    bool's shadow; none on keys only ever written with numbers (their order keys have
    integer indexes)."""
    with vectorport.connect(_url("edge", tmp_path)) as store:
        index = store.create_index("kw_idx", 2, "dotproduct")
        index.upsert([("a", [1.0, 0.0], {"s": "x", "n": 1, "b": True}),
                      ("b", [0.0, 1.0], {"tags": ["p", "q"], "n": 2.5})])
    shard = qe.EdgeShard.load(str(tmp_path / "edge" / "kw_idx" / "shard"))
    try:
        schema = shard.info().payload_schema
    finally:
        shard.close()
    keyword = {k for k, v in schema.items() if v.data_type == qe.PayloadSchemaType.Keyword}
    assert keyword == {naming.NAMESPACE, naming.meta_key("s"), naming.meta_key("tags"),
                       naming.bool_key("b")}
    assert naming.meta_key("n") not in schema


def test_indexed_string_fields_keep_every_kind_rule(tmp_path: Path) -> None:
    """One key holding a string, another string, a list, an int, a float, a bool, an
    empty string, or nothing, across records: with its keyword index (made by the first
    string written), every condition on it answers as the reference, before and after
    the optimizers move the points into indexed segments."""
    with vectorport.connect(f"qdrant+edge://{tmp_path}/e?optimize_every=100000") as store:
        index = store.create_index("kinds_idx", 2, "dotproduct")
        values: list[object] = ["x", "y", ["x", "z"], 5, 1.5, True, "", None]
        rows = [{"id": f"r{i:03d}", "vector": [1.0, float(i % 7)],
                 "metadata": {} if values[i % 8] is None else {"k": values[i % 8]}}
                for i in range(160)]
        index.upsert(rows)
        records = canonical_records(rows, 2)
        flts = [{"k": "x"}, {"k": {"$ne": "x"}}, {"k": {"$in": ["x", "y"]}},
                {"k": {"$nin": ["x", ""]}}, {"k": {"$exists": True}}, {"k": {"$exists": False}},
                {"k": 5}, {"k": {"$gte": 1}}, {"k": True}, {"k": ""}, {"k": {"$all": ["x", "z"]}},
                {"$or": [{"k": "y"}, {"k": 1.5}]}]
        for phase in ("appendable", "optimized"):
            if phase == "optimized":
                store.adapter.optimize("kinds_idx")  # type: ignore[attr-defined]
            for flt in flts:
                got = sorted(m.id for m in index.query([1.0, 0.0], filter=flt, top_k=200))
                want = sorted(e.id for e in reference_query(
                    records, "dotproduct", vector=[1.0, 0.0], filter=parse_filter(flt),
                    top_k=200))
                assert got == want, (phase, flt)


def test_the_edge_bindings_turn_bools_into_ints() -> None:
    """Why the edge engine matches booleans on string shadows: if this ever fails, the
    bindings were fixed and ``EdgeEngine.bools_native`` can become true."""
    assert qe.MatchValue(True).value == 1 and type(qe.MatchValue(True).value) is int


def test_booleans_stay_apart_from_numbers_on_every_engine(store: vectorport.Store) -> None:
    index = store.create_index("bool_idx", 2, "dotproduct")
    rows = [{"id": f"r{i}", "vector": [1.0, float(i)], "metadata": {"k": v}}
            for i, v in enumerate([True, 1, 1.0, False, 0, "true", ["true"]])]
    index.upsert(rows)
    records = canonical_records(rows, 2)
    for flt in ({"k": True}, {"k": False}, {"k": 1}, {"k": 0}, {"k": "true"},
                {"k": {"$ne": True}}, {"k": {"$in": [True, False]}}, {"k": {"$nin": [False]}},
                {"k": {"$all": [True]}}):
        got = sorted(m.id for m in index.query([1.0, 0.0], filter=flt, top_k=10))
        want = sorted(e.id for e in reference_query(records, "dotproduct", vector=[1.0, 0.0],
                                                    filter=parse_filter(flt), top_k=10))
        assert got == want, flt


# -- refused shapes -------------------------------------------------------------------

@pytest.mark.parametrize("flt", [
    {"s": {"$gt": "a"}}, {"s": {"$not": {"$lte": "b"}}}, {"n": 2**53}, {"n": {"$lt": -(2**53)}},
    {"n": {"$in": [1, 2**60]}}, {"$or": [{"a": 1}, {"n": {"$gte": 1e300}}]},
])
def test_inexact_filters_raise_before_any_io(store: vectorport.Store, flt: dict) -> None:
    index = store.create_index("ref_idx", 2, "dotproduct")
    with pytest.raises(UnsupportedFeatureError, match="qdrant"):
        index.query([1.0, 0.0], filter=flt)
    with pytest.raises(UnsupportedFeatureError, match="qdrant"):
        index.count(filter=flt)
    with pytest.raises(UnsupportedFeatureError, match="qdrant"):
        index.delete(filter=flt)


# -- options ---------------------------------------------------------------------------

def test_query_options(store: vectorport.Store) -> None:
    index = store.create_index("opt_idx", 2, "dotproduct")
    index.upsert([("a", [1.0, 0.0]), ("b", [0.0, 1.0])])
    exact = index.query([1.0, 0.5], top_k=2, backend_options={"qdrant": {"exact": True}})
    assert [m.id for m in exact] == ["a", "b"]
    other_sections = index.query([1.0, 0.5], top_k=2, backend_options={"pgvector": {"x": 1}})
    assert [m.id for m in other_sections] == ["a", "b"]
    for bad in ({"bogus": 1}, {"exact": "yes"}):
        with pytest.raises(ValidationError):
            index.query([1.0, 0.5], backend_options={"qdrant": bad})


def test_ef_is_declared_where_qdrant_applies_it(store: vectorport.Store) -> None:
    adapter = _adapter(store)
    assert ("ef" in store.capabilities.hints) is adapter.engine.applies_hints
    index = store.create_index("ef_idx", 2, "dotproduct")
    index.upsert([("a", [1.0, 0.0])])
    if adapter.engine.applies_hints:
        assert [m.id for m in index.query([1.0, 0.0], ef=128)] == ["a"]
    else:
        with pytest.raises(UnsupportedFeatureError):
            index.query([1.0, 0.0], ef=128)


@pytest.mark.parametrize("acorn", [None, False])
def test_filtered_hnsw_answers_are_never_cut_short(tmp_path: Path, acorn: bool | None) -> None:
    """A condition on a metadata field Qdrant has no payload index for strands its
    filtered graph traversal among the points it filters out: searches of this shard
    came back with as few as 1 of the 10 points asked (7 to 60 answers of 200). Edge
    searches with ACORN, which keeps recall, and sends a short answer of a graph search
    again as an exact search, so that none is cut short, ACORN or not."""
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((64, 64))
    vectors = (centers[rng.integers(0, 64, 4000)]
               + 0.35 * rng.standard_normal((4000, 64))).astype(np.float32)
    queries = (centers[rng.integers(0, 64, 200)]
               + 0.35 * rng.standard_normal((200, 64))).astype(np.float32)
    rows = [{"id": f"r{i:04d}", "vector": v, "metadata": {"lang": ("en", "de", "fr", "es")[i % 4]}}
            for i, v in enumerate(vectors)]
    flt = {"lang": "en"}
    options = {} if acorn is None else {"qdrant": {"acorn": acorn}}
    with vectorport.connect(f"qdrant+edge://{tmp_path}/e?optimize_every=4000") as store:
        index = store.create_index("stranding", 64, "cosine", index_type="hnsw",
                                   backend_options={"qdrant": {"full_scan_threshold": 16,
                                                               "indexing_threshold": 16}})
        index.upsert(rows)
        assert _adapter(store).engine.indexed_vectors("stranding") == 4000
        found = [[m.id for m in index.query(q, filter=flt, top_k=10, ef=10,
                                            backend_options=options)] for q in queries]
    with vectorport.connect("memory://") as reference:
        oracle = reference.create_index("stranding", 64, "cosine")
        oracle.upsert(rows)
        want = [[m.id for m in oracle.query(q, filter=flt, top_k=10)] for q in queries]
    assert [len(f) for f in found] == [len(w) for w in want]
    if acorn is None:
        recall = sum(len(set(f) & set(w)) for f, w in zip(found, want, strict=True)) / 2000
        assert recall >= 0.95


def test_the_acorn_option_is_refused_where_it_would_be_ignored(tmp_path: Path) -> None:
    asked = {"qdrant": {"acorn": False}}
    with vectorport.connect(f"qdrant+local://{tmp_path}/lc") as local:  # no graph: no effect
        index = local.create_index("acorn_idx", 2, "cosine")
        index.upsert([("a", [1.0, 0.0]), ("b", [0.0, 1.0])])
        assert [m.id for m in index.query([1.0, 0.1], filter={"x": {"$exists": False}},
                                          backend_options=asked)] == ["a", "b"]
    server = vectorport.connect("qdrant://127.0.0.1:9")  # no I/O: refused before any
    handle = Index(server, server.build_spec("acorn_idx", 2, "cosine"))
    with pytest.raises(UnsupportedFeatureError, match="acorn"):
        handle.query([1.0, 0.0], backend_options=asked)
    with pytest.raises(UnsupportedFeatureError, match="acorn"):
        handle.explain([1.0, 0.0], backend_options=asked)
    with pytest.raises(ValidationError):
        handle.query([1.0, 0.0], backend_options={"qdrant": {"acorn": "off"}})


def test_explain_shows_acorn_on_filtered_edge_searches(tmp_path: Path) -> None:
    with vectorport.connect(f"qdrant+edge://{tmp_path}/e") as store:
        index = store.create_index("explained", 2, "cosine")
        filtered = index.explain([1.0, 0.0], filter={"lang": "en"})
        assert filtered.settings["acorn"] is True
        assert json.loads(filtered.request)[0]["params"]["acorn"]["enable"] is True
        off = index.explain([1.0, 0.0], filter={"lang": "en"},
                            backend_options={"qdrant": {"acorn": False}})
        assert off.settings["acorn"] is False and "acorn" not in json.loads(off.request)[0]["params"]


@pytest.mark.parametrize(("index_type", "params", "options"), [
    ("flat", {}, {}), ("hnsw", {"m": 8, "ef_construction": 64}, {}),
    ("auto", {}, {"on_disk": True, "full_scan_threshold": 100}),
])
def test_index_settings(store: vectorport.Store, index_type: str, params: dict,
                        options: dict) -> None:
    index = store.create_index(f"set_{index_type}", 2, "cosine", index_type=index_type,
                               index_params=params, backend_options={"qdrant": options})
    index.upsert([("a", [1.0, 0.0]), ("b", [0.0, 1.0])])
    assert [m.id for m in index.query([1.0, 0.2], top_k=1)] == ["a"]


@pytest.mark.parametrize(("kwargs"), [
    {"backend_options": {"qdrant": {"shards": 2}}},
    {"backend_options": {"qdrant": {"on_disk": "yes"}}},
    {"index_type": "flat", "index_params": {"m": 4}},
    {"index_type": "hnsw", "index_params": {"lists": 4}},
])
def test_bad_index_settings_are_refused_before_any_io(store: vectorport.Store,
                                                     kwargs: dict) -> None:
    with pytest.raises(ValidationError):
        store.create_index("bad_set", 2, **kwargs)
    assert "bad_set" not in store.list_indexes()


def test_ivf_is_not_offered(store: vectorport.Store) -> None:
    with pytest.raises(UnsupportedFeatureError):
        store.create_index("ivf_idx", 2, index_type="ivf")


def test_database_config_section() -> None:
    """The query tool's keys: Qdrant's own name ``hnsw_ef`` is an alias of ``ef``."""
    options = options_for_backend({"qdrant": {"hnsw_ef": 64, "consistency": "eventual"}},
                                  "qdrant")
    assert options.query_kwargs() == {"ef": 64, "consistency": "eventual"}
    with pytest.raises(ConfigError, match="unknown key"):
        options_for_backend({"qdrant": {"probes": 4}}, "qdrant")


# -- ranking ---------------------------------------------------------------------------

def test_ties_at_the_cut_keep_the_smallest_ids(store: vectorport.Store) -> None:
    index = store.create_index("tie_idx", 2, "cosine")
    rows = [{"id": f"t{(i * 37) % 50:02d}", "vector": [1.0, 1.0]} for i in range(50)]
    rows += [{"id": "best", "vector": [1.0, 0.0]}]
    index.upsert(rows)
    got = [m.id for m in index.query([1.0, 0.1], top_k=6)]
    want = [e.id for e in reference_query(canonical_records(rows, 2), "cosine",
                                          vector=[1.0, 0.1], top_k=6)]
    assert got == want == ["best", "t00", "t01", "t02", "t03", "t04"]


def test_hybrid_sum_finds_records_deep_in_both_lists(store: vectorport.Store) -> None:
    """The best sum is in neither list's top: the threshold loop must widen."""
    index = store.create_index("hyb_idx", 2, "dotproduct", sparse=True)
    rows = []
    for i in range(120):
        dense = [1.0 - i / 200, 0.0]
        rows.append({"id": f"d{i:03d}", "vector": dense,
                     "sparse": {"indices": [1], "values": [0.001 * i]}})
    rows.append({"id": "middle", "vector": [0.9, 0.0], "sparse": {"indices": [1], "values": [0.5]}})
    index.upsert(rows)
    q = {"indices": [1], "values": [1.0]}
    got = index.query([1.0, 0.0], sparse=q, top_k=3)
    records = canonical_records(rows, 2)
    want = reference_query(records, "dotproduct", vector=[1.0, 0.0], sparse=sparse_vector(q),
                           top_k=3)
    assert [m.id for m in got] == [e.id for e in want]
    assert got[0].score == pytest.approx(want[0].score)


def test_min_score_is_inclusive(store: vectorport.Store) -> None:
    index = store.create_index("min_idx", 2, "dotproduct")
    index.upsert([("a", [0.5, 0.0]), ("b", [0.25, 0.0]), ("c", [0.125, 0.0])])
    assert [m.id for m in index.query([1.0, 0.0], min_score=0.25)] == ["a", "b"]


# -- persistence and batching ------------------------------------------------------------

@pytest.mark.parametrize("engine", ENGINES)
def test_data_survives_reopening(engine: str, tmp_path: Path) -> None:
    url = _url(engine, tmp_path)
    with vectorport.connect(url) as store:
        index = store.create_index("keep_idx", 2, "cosine", sparse=True)
        index.upsert([{"id": "a", "vector": [1, 2], "metadata": {"t": ["x"]}, "document": "doc",
                       "sparse": {"indices": [3], "values": [0.5]}}], namespace="n")
    with vectorport.connect(url) as store:
        assert store.list_indexes() == ["keep_idx"]
        record = store.index("keep_idx").fetch(["a"], namespace="n")["a"]
        assert record.vector.tolist() == [1.0, 2.0] and record.document == "doc"
        assert dict(record.metadata) == {"t": ("x",)}
        assert record.sparse is not None and record.sparse.indices == (3,)
        assert store.describe_index("keep_idx").namespaces == {"n": 1}
        store.delete_index("keep_idx")
        assert store.list_indexes() == []


def test_size_batches_split_by_estimated_bytes() -> None:
    points = [Point(str(i), {naming.DENSE: [0.0] * 1000}, {"x": "y"}) for i in range(10)]
    batches = list(size_batches(points, max_bytes=50_000))
    assert [p.uid for b in batches for p in b] == [str(i) for i in range(10)]
    assert len(batches) == 5  # about 24 KB each, two to a batch
    assert list(size_batches(points[:1], max_bytes=1)) == [points[:1]]
    assert list(size_batches(points, max_bytes=None)) == [points]  # Edge, local mode


# -- patching ------------------------------------------------------------------------

def test_patch_merges_unsets_and_replaces(store: vectorport.Store) -> None:
    index = store.create_index("patch_idx", 2, "cosine", sparse=True)
    assert isinstance(index, PatchableIndex)
    index.upsert([{"id": "a", "vector": [1, 0], "metadata": {"keep": 1, "drop": True},
                   "document": "d", "sparse": {"indices": [1], "values": [2.0]}}], namespace="n")
    assert index.patch("a", vector=[3, 4], metadata={"drop": None, "new": False},
                       namespace="n") is True
    record = index.fetch(["a"], namespace="n")["a"]
    assert record.vector.tolist() == [3.0, 4.0] and record.document == "d"
    assert dict(record.metadata) == {"keep": 1, "new": False}
    assert record.sparse is not None and record.sparse.values == (2.0,)
    assert [m.id for m in index.query([3, 4], filter={"new": False}, namespace="n")] == ["a"]
    assert index.query([3, 4], filter={"drop": True}, namespace="n") == []
    assert index.patch("a", metadata={"x": 1}) is False  # other namespace
    assert index.patch("missing", metadata={"x": 1}, namespace="n") is False
    assert index.count("n") == 1 and index.count() == 0


def test_concurrent_patches_lose_no_update(store: vectorport.Store) -> None:
    """Each thread sets its own key many times: with a plain read-modify-write some
    keys would be lost; compare-and-swap keeps every one."""
    index = store.create_index("cas_idx", 2, "dotproduct")
    assert isinstance(index, PatchableIndex)
    index.upsert([("a", [1, 0], {"base": 0})])
    workers, rounds = 4, 6

    def work(worker: int) -> None:
        for n in range(rounds):
            assert index.patch("a", metadata={f"w{worker}": n}) is True

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(work, range(workers)))
    metadata = dict(index.fetch(["a"])["a"].metadata)
    assert metadata == {"base": 0, **{f"w{w}": rounds - 1 for w in range(workers)}}


# -- HNSW on the edge engine ---------------------------------------------------------------

def test_edge_builds_hnsw_and_searches_it(tmp_path: Path) -> None:
    """Edge shards run Qdrant's optimizers only when asked: the adapter asks every
    ``optimize_every`` points, after which searches go through the HNSW graph."""
    rng = np.random.default_rng(7)
    rows = [{"id": f"p{i:04d}", "vector": rng.normal(size=16).tolist(),
             "metadata": {"even": i % 2 == 0}} for i in range(1500)]
    url = f"qdrant+edge://{tmp_path}/hnsw?optimize_every=500"
    with vectorport.connect(url) as store:
        index = store.create_index("hnsw_idx", 16, "cosine", index_type="hnsw",
                                   index_params={"m": 8, "ef_construction": 64},
                                   backend_options={"qdrant": {"indexing_threshold": 1,
                                                               "full_scan_threshold": 1}})
        index.upsert(rows, namespace="t", batch_size=250)
        index.upsert(rows[:10])  # another tenant, same vectors
        engine = _adapter(store).engine
        assert isinstance(engine, EdgeEngine) and engine.indexed_vectors("hnsw_idx") > 0
        records = canonical_records(rows, 16)
        query = rng.normal(size=16).tolist()
        flt = {"even": True}
        want = [e.id for e in reference_query(records, "cosine", vector=query,
                                              filter=parse_filter(flt), top_k=10)]
        exact = index.query(query, filter=flt, top_k=10, namespace="t",
                            backend_options={"qdrant": {"exact": True}})
        assert [m.id for m in exact] == want
        approximate = index.query(query, filter=flt, top_k=10, namespace="t", ef=256)
        assert len(set(m.id for m in approximate) & set(want)) >= 8  # HNSW recall
        assert index.count("t", filter=flt) == 750 and index.count() == 10


def _edge_hnsw_index(store: vectorport.Store, name: str) -> Index:
    """A 16-d index whose optimizer runs build an HNSW graph however few its points."""
    return store.create_index(name, 16, "cosine", index_type="hnsw",
                              index_params={"m": 8, "ef_construction": 32},
                              backend_options={"qdrant": {"indexing_threshold": 1,
                                                          "full_scan_threshold": 1}})


def _rows(count: int, start: int = 0) -> list[dict[str, object]]:
    vectors = np.random.default_rng(start).normal(size=(count, 16))
    return [{"id": f"p{start + i:05d}", "vector": vectors[i].tolist()} for i in range(count)]


def test_edge_optimizers_wait_for_a_write_whose_deadline_leaves_them_time(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A run of the optimizers cannot be cut short, so the write that crosses
    ``optimize_every`` runs them only when their estimate (1 ms a point at least) fits
    in what is left of its deadline; otherwise it returns in time, says so once, and a
    later write with time enough runs them."""
    with vectorport.connect(f"qdrant+edge://{tmp_path}/e?optimize_every=500") as store:
        index = _edge_hnsw_index(store, "waits_idx")
        engine = _adapter(store).engine
        assert isinstance(engine, EdgeEngine)
        with caplog.at_level("WARNING", logger="vectorport.qdrant"):
            with vectorport.deadline(0.5):  # 500 points: an estimated 0.5 s, 0.625 needed
                index.upsert(_rows(500))
            with vectorport.deadline(0.5):
                index.upsert(_rows(10, start=500))
        assert engine.indexed_vectors("waits_idx") == 0  # not run: no time for it
        warnings = [r.getMessage() for r in caplog.records if r.name == "vectorport.qdrant"]
        assert len(warnings) == 1  # once, not at every write
        assert "store.adapter.optimize('waits_idx')" in warnings[0]
        index.upsert(_rows(10, start=510))  # the store's 30 s deadline: time enough
        assert engine.indexed_vectors("waits_idx") == 520
        assert index.count() == 520


def test_edge_optimize_on_a_few_points_does_not_hold_back_later_runs(
        tmp_path: Path) -> None:
    """``store.adapter.optimize`` after a point is all the engine's fixed cost: timed
    per point written (4.6-6.1 ms here, against the 1 ms floor), it made the next run
    of the optimizers look five times dearer than it is, and a write with time for it
    put it off. The user's run teaches the schedule nothing."""
    with vectorport.connect(f"qdrant+edge://{tmp_path}/e?optimize_every=500") as store:
        index = _edge_hnsw_index(store, "taught_idx")
        engine = _adapter(store).engine
        assert isinstance(engine, EdgeEngine)
        index.upsert(_rows(1))
        store.adapter.optimize("taught_idx")  # type: ignore[attr-defined]
        with vectorport.deadline(1.5):  # 500 points at the floor: 0.625 s needed
            index.upsert(_rows(500, start=1))
        assert engine.indexed_vectors("taught_idx") == 501


def test_edge_optimizer_runs_leave_no_replaced_segment_behind(tmp_path: Path) -> None:
    """An Edge shard keeps every segment an optimizer run replaced (on disk, and mapped
    into the process) until it is flushed, and flushes only when asked: without a flush
    after each run, a load left one more merged segment per run, growing with the
    square of the points. After each run the folders on disk are the live segments."""
    with vectorport.connect(f"qdrant+edge://{tmp_path}/e?optimize_every=500") as store:
        index = _edge_hnsw_index(store, "flushed_idx")
        engine = _adapter(store).engine
        assert isinstance(engine, EdgeEngine)
        shard = engine._entry("flushed_idx").shard
        segments = next(tmp_path.glob("e/**/segments"))
        for start in range(0, 2_000, 500):  # four runs of the optimizers
            index.upsert(_rows(500, start=start))
            on_disk = sorted(p.name for p in segments.iterdir() if p.is_dir())
            assert len(on_disk) == int(shard.info().segments_count), on_disk
        assert engine.indexed_vectors("flushed_idx") == 2_000 and index.count() == 2_000


def test_edge_optimizer_runs_index_new_points_in_segments_of_their_own(
        tmp_path: Path) -> None:
    """Qdrant's default keeps a shard in one segment per CPU, so every run merged its
    new points into the large segment and built its graph again (a load growing with
    the square of its points). The adapter's shards keep up to eight: four runs leave
    the points of each in a segment of its own (plus the one taking writes), and a
    search reads them all."""
    with vectorport.connect(f"qdrant+edge://{tmp_path}/e?optimize_every=500") as store:
        index = _edge_hnsw_index(store, "segments_idx")
        engine = _adapter(store).engine
        assert isinstance(engine, EdgeEngine)
        written: list[dict[str, object]] = []
        for start in range(0, 2_000, 500):
            written += _rows(500, start=start)
            index.upsert(written[-500:])
        assert int(engine._entry("segments_idx").shard.info().segments_count) == 5
        records = canonical_records(written, 16)
        for query in (written[7]["vector"], written[1_907]["vector"]):
            want = [e.id for e in reference_query(records, "cosine", vector=query, top_k=10)]
            got = index.query(query, top_k=10, backend_options={"qdrant": {"exact": True}})
            assert [m.id for m in got] == want


def test_a_copy_into_edge_ends_by_running_the_optimizers(tmp_path: Path) -> None:
    """``copy_index`` optimizes its destination once the records are in
    (:class:`vectorport.OptimizingAdapter`): the 300 points copied, far below
    ``optimize_every``, are in the HNSW graph when it returns, and verified."""
    from vectorport.transfer import copy_index

    source = vectorport.connect("memory://").create_index("src_idx", 16, "cosine")
    source.upsert(_rows(300))
    with vectorport.connect(f"qdrant+edge://{tmp_path}/e?optimize_every=100000") as store:
        _edge_hnsw_index(store, "copied_idx")
        report = copy_index(source, store, destination_name="copied_idx",
                            checkpoint=tmp_path / "copy.json", progress=False)
        assert report.verification is not None and report.verification.ok
        engine = _adapter(store).engine
        assert isinstance(engine, EdgeEngine) and engine.indexed_vectors("copied_idx") == 300


def test_payload_indexes_wait_for_a_write_whose_deadline_leaves_them_time(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """An index build reads every point of the shard and cannot be cut short, so the
    write that brings a new string field builds its keyword index only when the
    estimate (20 µs a point at least) fits in what is left of its deadline; otherwise
    the write returns in time, says so once, conditions on the field still answer
    exactly, and a later write with time enough (or ``optimize``) builds it."""
    with vectorport.connect(f"qdrant+edge://{tmp_path}/e?optimize_every=100000") as store:
        index = store.create_index("late_idx", 16, "dotproduct")
        index.upsert(_rows(12_000))  # an estimated 0.24 s a build, 0.3 s with the margin
        engine = _adapter(store).engine
        assert isinstance(engine, EdgeEngine)

        def schema() -> set[str]:
            return set(engine._entry("late_idx").shard.info().payload_schema)

        tagged = [{"id": f"t{i}", "vector": [1.0] * 16, "metadata": {"fresh": "v", "k": i}}
                  for i in range(10)]
        with caplog.at_level("WARNING", logger="vectorport.qdrant"):
            with vectorport.deadline(0.2):
                index.upsert(tagged[:5])
            with vectorport.deadline(0.2):
                index.upsert(tagged[5:])
        assert naming.meta_key("fresh") not in schema()
        warnings = [r.getMessage() for r in caplog.records if r.name == "vectorport.qdrant"]
        assert len(warnings) == 1 and "m.fresh" in warnings[0]
        got = sorted(m.id for m in index.query([1.0] * 16, filter={"fresh": "v"}, top_k=20))
        assert got == sorted(r["id"] for r in tagged)  # read from the payloads
        index.upsert(_rows(3, start=20_000))  # the store's 30 s: time enough
        assert naming.meta_key("fresh") in schema()
        got = sorted(m.id for m in index.query([1.0] * 16, filter={"fresh": "v"}, top_k=20))
        assert got == sorted(r["id"] for r in tagged)
        with vectorport.deadline(0.2):
            index.upsert([{"id": "u0", "vector": [1.0] * 16, "metadata": {"later": "w"}}])
        assert naming.meta_key("later") not in schema()
        store.adapter.optimize("late_idx")  # type: ignore[attr-defined]
        assert naming.meta_key("later") in schema()


@pytest.mark.parametrize("engine", ENGINES)
def test_optimize_runs_the_optimizers_now(engine: str, tmp_path: Path) -> None:
    """``store.adapter.optimize`` runs them whatever the threshold (Edge), and does
    nothing where the engine runs them itself or has none (local mode)."""
    with vectorport.connect(_url(engine, tmp_path)) as store:
        index = _edge_hnsw_index(store, "now_idx")
        index.upsert(_rows(100))
        adapter = _adapter(store)
        adapter.optimize("now_idx")
        query = _rows(1, start=7)[0]["vector"]
        want = [e.id for e in reference_query(canonical_records(_rows(100), 16), "cosine",
                                              vector=query, top_k=3)]
        if isinstance(adapter.engine, EdgeEngine):
            assert adapter.engine.indexed_vectors("now_idx") == 100
            assert [m.id for m in index.query(query, top_k=3, ef=128)] == want  # the graph
        assert [m.id for m in index.query(query, top_k=3)] == want
        with pytest.raises(ValidationError):
            adapter.optimize("../elsewhere")


@pytest.mark.parametrize("engine", ENGINES)
def test_connections_of_one_process_share_a_folder(engine: str, tmp_path: Path) -> None:
    url = _url(engine, tmp_path)
    with vectorport.connect(url) as first, vectorport.connect(url) as second:
        mine = first.create_index("shared_idx", 2, "dotproduct")
        mine.upsert([("a", [1, 0])])
        theirs = second.index("shared_idx")
        assert theirs.count() == 1  # a read after a write, from another client
        theirs.upsert([("b", [0, 1])])
        assert sorted(mine.fetch(["a", "b"])) == ["a", "b"]
        first.close()
        assert theirs.count() == 2  # the folder stays open for the other connection
        second.delete_index("shared_idx")
    with vectorport.connect(url) as again:
        assert again.list_indexes() == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_folder_open_in_another_process_is_refused(engine: str, tmp_path: Path) -> None:
    url = _url(engine, tmp_path)
    with vectorport.connect(url) as store:
        store.create_index("busy_idx", 2, "dotproduct").upsert([("a", [1, 0])])
        script = (
            "import sys, vectorport\n"
            "from vectorport.core.errors import BackendError\n"
            "try:\n"
            f"    vectorport.connect({url!r}).index('busy_idx').count()\n"
            "except BackendError as exc:\n"
            "    print(exc); sys.exit(0)\n"
            "sys.exit(1)\n"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert "open in another process" in done.stdout



def test_a_local_folder_left_open_is_closed_cleanly_at_exit(tmp_path: Path) -> None:
    """A script that never closes its ``qdrant+local`` store ends without qdrant-client's
    shutdown traceback, and leaves the folder unlocked with its writes in it."""
    url = f"qdrant+local://{tmp_path}/left"
    done = _in_another_process(
        f"index = vectorport.connect({url!r}).create_index('left_open', 2, 'cosine')\n"
        "index.upsert([('a', [1.0, 0.0])])\n")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    with vectorport.connect(url) as store:
        assert list(store.index("left_open").fetch(["a"])) == ["a"]


def _in_another_process(body: str) -> subprocess.CompletedProcess[str]:
    """``body`` (using ``vectorport``, ``BackendError`` and ``sys``) run by another
    Python process."""
    script = "import sys, vectorport\nfrom vectorport.core.errors import BackendError\n" + body
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_index_open_in_another_process_is_not_dropped(engine: str, tmp_path: Path) -> None:
    """Another process deleting the index refuses with a ``BackendError`` and removes
    nothing (on Edge it used to remove the folder under its owner: every record lost)."""
    url = _url(engine, tmp_path)
    rows = [("a", [1.0, 0.0], {"n": 1}), ("b", [0.0, 1.0], {"n": 2})]
    with vectorport.connect(url) as store:
        index = store.create_index("owned_idx", 2, "dotproduct")
        index.upsert(rows)
        done = _in_another_process(
            "try:\n"
            f"    vectorport.connect({url!r}).delete_index('owned_idx')\n"
            "except BackendError as exc:\n"
            "    print(exc); sys.exit(0)\n"
            "sys.exit(1)\n")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "open in another process" in done.stdout
        assert store.list_indexes() == ["owned_idx"]
    with vectorport.connect(url) as store:
        want = {r.id: r for r in canonical_records(rows, 2)}
        assert store.index("owned_idx").fetch(list(want)) == want


@pytest.mark.parametrize("engine", ENGINES)
def test_a_closed_store_opens_nothing_again(engine: str, tmp_path: Path) -> None:
    """A store used after ``close`` raises a ``BackendError`` rather than reopening the
    folder: an Edge shard reopened so stayed locked against other processes until this
    one ended, since nothing closed it again."""
    url = _url(engine, tmp_path)
    store = vectorport.connect(url)
    index = store.create_index("closed_idx", 2, "dotproduct")
    index.upsert([("a", [1.0, 0.0])])
    store.close()
    with pytest.raises(BackendError):
        index.count()
    with pytest.raises(BackendError):
        index.upsert([("b", [0.0, 1.0])])
    with pytest.raises(BackendError):
        store.create_index("other_idx", 2)
    done = _in_another_process(
        f"print(vectorport.connect({url!r}).index('closed_idx').count())\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1"]



@pytest.mark.parametrize("engine", [*ENGINES, "memory"])
def test_a_handle_of_a_dropped_index_reaches_no_new_one(engine: str, tmp_path: Path) -> None:
    """Through another connection of the process (Edge, local mode) or the same store
    (memory), an index dropped and created again with other settings: the old handle
    answers as the local engine's do (``IndexNotFoundError``) instead of reading and
    writing the new index with the old settings, and the new index is untouched."""
    want = stale.oracle_outcomes()
    if engine == "memory":
        with vectorport.connect("qdrant+memory://") as store:
            stale.assert_like_oracle(stale.stale_handle_outcomes(store, store), want)
        return
    url = _url(engine, tmp_path)
    with vectorport.connect(url) as store, vectorport.connect(url) as again:
        stale.assert_like_oracle(stale.stale_handle_outcomes(store, again), want)


def test_sparse_only_fills_with_zero_scores_in_id_order(store: vectorport.Store) -> None:
    """Few points share a term: after the positive scores come the zero scores by id
    (points sharing no term, or without a sparse vector), then the negative ones."""
    index = store.create_index("zero_idx", 2, "dotproduct", sparse=True)
    rows: list[dict] = [{"id": f"z{i:02d}", "vector": [1.0, 0.0],
                         "sparse": {"indices": [9], "values": [1.0]}} for i in range(30, 0, -1)]
    rows += [{"id": "pos", "vector": [1, 0], "sparse": {"indices": [1], "values": [2.0]}},
             {"id": "neg", "vector": [1, 0], "sparse": {"indices": [1], "values": [-1.0]}},
             {"id": "nil", "vector": [1, 0]},
             {"id": "cancel", "vector": [1, 0], "sparse": {"indices": [1, 2], "values": [1, 1]}}]
    index.upsert(rows)
    q = {"indices": [1, 2], "values": [1.0, -1.0]}
    records = canonical_records(rows, 2)
    for top_k, min_score in ((5, None), (len(rows), None), (8, 0.0), (3, 1.0)):
        got = index.query(sparse=q, top_k=top_k, min_score=min_score)
        want = reference_query(records, "dotproduct", sparse=sparse_vector(q), top_k=top_k,
                               min_score=min_score)
        assert [m.id for m in got] == [e.id for e in want], (top_k, min_score)


def test_a_whole_scan_reads_each_point_once(store: vectorport.Store) -> None:
    """A scan goes by Qdrant's own scroll, resumed from the next point's id: pages of
    100 over 1,200 records read 1,200 points from the engine (listing ids in order,
    which the scan went through before, read the whole namespace for every page:
    12 × 1,200), and give every record of the namespace once."""
    index = store.create_index("scanned", 4, "cosine")
    rng = np.random.default_rng(5)
    rows = [{"id": f"r{i:04d}", "vector": rng.normal(size=4), "metadata": {"i": i}}
            for i in range(1_200)]
    index.upsert(rows)
    index.upsert(rows[:50], namespace="other")
    engine = _adapter(store)._engine
    scroll, read = engine.scroll, []

    def counted(*args: object, **kwargs: object) -> object:
        hits, offset = scroll(*args, **kwargs)  # type: ignore[arg-type]
        read.append(len(hits))
        return hits, offset

    engine.scroll = counted  # type: ignore[method-assign]
    try:
        seen = [r.id for page in index.scan(page_size=100) for r in page.records]
    finally:
        engine.scroll = scroll  # type: ignore[method-assign]
    assert sorted(seen) == sorted(r["id"] for r in rows)
    assert sum(read) == len(rows)

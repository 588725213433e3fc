"""What the pgvector adapter offers beyond the shared suite, on a real server: index
types and their build parameters, the search hints taking effect, iterative scans,
halfvec, deferred index builds, patch, id listing, native async, and its errors.

Expected answers come from the reference query and the oracle, never from a run.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg
import pytest

pytest.importorskip("pgvector")

import vectorport
from vectorport.adapters.pgvector.adapter import PgvectorAdapter
from vectorport.conformance.base import assert_same_matches, canonical_records
from vectorport.conformance.dataset import dataset_rows
from vectorport.conformance.reference import reference_query
from vectorport.core import validation
from vectorport.core.async_store import AsyncStore, connect_async
from vectorport.core.errors import (
    BackendError,
    ConfigError,
    IndexNotFoundError,
    TransientBackendError,
    UnsupportedFeatureError,
    ValidationError,
)
from vectorport.core.filters import matches, parse_filter
from vectorport.core.store import Index, Store
from vectorport.core.types import Record
from vectorport.testing.pgvector import as_pgvector_url, libpq_uri

OFF = {"pgvector": {"iterative_scan": "off"}}



def adapter_of(store: Store) -> PgvectorAdapter:
    assert isinstance(store.adapter, PgvectorAdapter)
    return store.adapter


def with_option(url: str, option: str) -> str:
    return url + ("&" if "?" in url else "?") + option


def records(rows: list[tuple[str, Any]], dimension: int) -> list[Record]:
    return [validation.record(row, dimension, False, i) for i, row in enumerate(rows)]


def sql(pg_url: str, query: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(libpq_uri(pg_url), autocommit=True) as conn:
        cur = conn.execute(query, params)  # type: ignore[arg-type]
        return cur.fetchall() if cur.description else []


# -- index types ------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dotproduct"])
def test_hnsw_and_ivf_on_small_data_match_the_reference(
    store: Store, name: str, pg_url: str, metric: str
) -> None:
    rng = np.random.default_rng(11)
    data = rng.normal(size=(200, 8)).astype(np.float32)
    rows = [(f"r{i:03d}", data[i]) for i in range(len(data))]
    queries = rng.normal(size=(5, 8))
    hnsw = store.create_index(name, 8, metric, index_type="hnsw",
                              index_params={"m": 8, "ef_construction": 32})
    ivf = store.create_index(name + "_ivf", 8, metric, index_type="ivf",
                             index_params={"lists": 4},
                             backend_options={"pgvector": {"defer_index": True}})
    try:
        hnsw.upsert(rows)
        ivf.upsert(rows)
        adapter_of(store).build_index(ivf.name)
        adapter_of(store).build_index(hnsw.name)  # a rebuild over the loaded rows
        assert sql(pg_url, "SELECT indexdef FROM pg_indexes WHERE indexname = %s",
                   (f"vp_{name}$ann",))[0][0].count("hnsw")
        for q in queries:
            want = reference_query(records(rows, 8), metric, vector=q.tolist(), top_k=10)  # type: ignore[arg-type]
            assert_same_matches(hnsw.query(q, top_k=10, ef=200), want, 1e-4, "hnsw")
            assert_same_matches(ivf.query(q, top_k=10, probes=4), want, 1e-4, "ivf")
        info = store.describe_index(ivf.name)
        assert (info.spec.index_type, dict(info.spec.index_params)) == ("ivf", {"lists": 4})
        assert info.count == 200
    finally:
        store.delete_index(name + "_ivf", missing_ok=True)


def test_flat_index_has_no_ann_index_and_is_exact(store: Store, name: str, pg_url: str) -> None:
    index = store.create_index(name, 3, "euclidean", index_type="flat")
    assert sql(pg_url, "SELECT indexname FROM pg_indexes WHERE tablename = %s ORDER BY 1",
               (f"vp_{name}",)) == [(f"vp_{name}$meta",), (f"vp_{name}_pkey",)]
    index.upsert([("a", [1, 0, 0]), ("b", [0, 1, 0])])
    assert [m.id for m in index.query([1, 0.1, 0], top_k=2)] == ["a", "b"]
    adapter_of(store).build_index(name)  # nothing to build: no error


def test_index_parameters_are_validated_before_io(store: Store, name: str) -> None:
    bad: list[dict[str, Any]] = [
        {"index_type": "hnsw", "index_params": {"lists": 3}},
        {"index_type": "hnsw", "index_params": {"m": 1}},
        {"index_type": "hnsw", "index_params": {"m": 16, "ef_construction": 20}},
        {"index_type": "ivf", "index_params": {"m": 3}},
        {"index_type": "flat", "index_params": {"m": 8}},
        {"backend_options": {"pgvector": {"vector_type": "float64"}}},
        {"backend_options": {"pgvector": {"no_such_option": 1}}},
        {"backend_options": {"pgvector": {"maintenance_work_mem": "1GB'; DROP"}}},
        {"backend_options": {"pgvector": {"defer_index": "yes"}}},
    ]
    for kwargs in bad:
        with pytest.raises(ValidationError):
            store.create_index(name, 4, **kwargs)
        assert name not in store.list_indexes()
    with pytest.raises(UnsupportedFeatureError, match="2000"):
        store.create_index(name, 2001, index_type="hnsw")
    assert name not in store.list_indexes()


def test_auto_index_falls_back_to_exact_beyond_ann_limits(store: Store, name: str) -> None:
    index = store.create_index(name, 2500, "cosine")
    vectors = np.eye(3, 2500, dtype=np.float32)
    index.upsert([(f"e{i}", vectors[i]) for i in range(3)])
    assert [m.id for m in index.query(vectors[1], top_k=1)] == ["e1"]
    assert adapter_of(store).ann_index_built(name) is False


def test_halfvec_storage(store: Store, name: str, pg_url: str) -> None:
    index = store.create_index(name, 3000, "dotproduct",
                               backend_options={"pgvector": {"vector_type": "halfvec"}})
    assert adapter_of(store).ann_index_built(name), "halfvec indexes up to 4000 dimensions"
    assert sql(pg_url, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
               " WHERE attrelid = %s::regclass AND attname = 'embedding'",
               (f"vp_{name}",)) == [("halfvec(3000)",)]
    rng = np.random.default_rng(3)
    data = rng.normal(size=(20, 3000)).astype(np.float32)
    rows = [(f"h{i}", data[i]) for i in range(20)]
    index.upsert(rows)
    as_half = [(rid, vec.astype(np.float16).astype(np.float32)) for rid, vec in rows]
    got = index.fetch(["h3"])["h3"].vector
    np.testing.assert_array_equal(got, as_half[3][1])
    q = rng.normal(size=3000)
    want = reference_query(records(as_half, 3000), "dotproduct",  # type: ignore[arg-type]
                           vector=q.astype(np.float16).astype(np.float32).tolist(), top_k=5)
    assert_same_matches(index.query(q.astype(np.float16).astype(np.float32), top_k=5, ef=100),
                        want, 1e-2, "halfvec")
    with pytest.raises(ValidationError, match="65504"):  # the index's declared limit
        index.upsert([("big", np.full(3000, 70000.0))])
    assert index.count() == 20


def test_deferred_index_is_built_on_request(store: Store, name: str, pg_url: str) -> None:
    index = store.create_index(
        name, 4, "cosine", index_type="hnsw",
        backend_options={"pgvector": {"defer_index": True, "maintenance_work_mem": "256MB",
                                      "max_parallel_maintenance_workers": 1}},
    )
    adapter = adapter_of(store)
    assert adapter.ann_index_built(name) is False
    ann = "SELECT count(*) FROM pg_indexes WHERE indexname = %s"
    assert sql(pg_url, ann, (f"vp_{name}$ann",)) == [(0,)]
    index.upsert([(f"d{i}", [1, i, 0, 1]) for i in range(50)])
    assert [m.id for m in index.query([1, 3, 0, 1], top_k=1)] == ["d3"]  # exact meanwhile
    adapter.build_index(name)
    assert adapter.ann_index_built(name) is True
    assert sql(pg_url, ann, (f"vp_{name}$ann",)) == [(1,)]
    assert [m.id for m in index.query([1, 3, 0, 1], top_k=1)] == ["d3"]
    spec = store.describe_index(name).spec
    assert spec.backend_options["pgvector"]["defer_index"] is True
    with pytest.raises(IndexNotFoundError):
        adapter.build_index("no_such_index")


# -- hints take effect -------------------------------------------------------------------


def test_probes_reach_ivfflat(store: Store, name: str) -> None:
    """8 tight clusters of 60 points, 16 lists: each list lies inside one cluster, so one
    probe sees at most 60 points and a query asking 100 neighbours gets at most 60 back;
    probes = lists gives the exact 100. (With 8 lists, pgvector's k-means, which is not
    seeded, now and then put two clusters into one list: a CI run saw 100 of 100 with one
    probe. With twice as many lists as clusters, merging two far clusters under one
    centre would cost k-means far more than splitting one.)"""
    rng = np.random.default_rng(5)
    centers = rng.normal(size=(8, 16)) * 10
    data = np.concatenate([c + rng.normal(size=(60, 16)) * 0.5 for c in centers])
    rows = [(f"p{i:03d}", data[i].astype(np.float32)) for i in range(len(data))]
    index = store.create_index(name, 16, "euclidean", index_type="ivf",
                               index_params={"lists": 16},
                               backend_options={"pgvector": {"defer_index": True}})
    index.upsert(rows)
    adapter_of(store).build_index(name)
    want = reference_query(records(rows, 16), "euclidean", vector=centers[0].tolist(),
                           top_k=100)
    one = index.query(centers[0], top_k=100, probes=1, backend_options=OFF)
    assert len(one) <= 60 < len(want)
    assert_same_matches(index.query(centers[0], top_k=100, probes=16, backend_options=OFF),
                        want, 1e-4, "probes=lists")
    # the default relaxed iterative scan also reaches top_k without raising probes
    assert len(index.query(centers[0], top_k=100, probes=1)) == 100


@pytest.fixture(scope="module")
def weak_hnsw(store: Store) -> Iterator[tuple[Index, list[Record]]]:
    """3,000 random 32-d points under a deliberately poor graph (m=2,
    ef_construction=4), half of them flagged ``even``."""
    name = f"weak_{uuid.uuid4().hex[:8]}"
    rng = np.random.default_rng(9)
    data = rng.normal(size=(3000, 32)).astype(np.float32)
    index = store.create_index(name, 32, "cosine", index_type="hnsw",
                               index_params={"m": 2, "ef_construction": 4},
                               backend_options={"pgvector": {"defer_index": True}})
    index.upsert([{"id": f"w{i:04d}", "vector": data[i], "metadata": {"even": i % 2 == 0}}
                  for i in range(len(data))])
    adapter_of(store).build_index(name)
    yield index, records([(f"w{i:04d}", data[i]) for i in range(len(data))], 32)
    store.delete_index(name, missing_ok=True)


def test_ef_reaches_hnsw(weak_hnsw: tuple[Index, list[Record]]) -> None:
    index, recs = weak_hnsw
    rng = np.random.default_rng(10)
    hits = {10: 0, 1000: 0}
    for q in rng.normal(size=(12, 32)):
        want = {e.id for e in reference_query(recs, "cosine", vector=q.tolist(), top_k=10)}
        for ef in hits:
            got = {m.id for m in index.query(q, top_k=10, ef=ef, backend_options=OFF)}
            hits[ef] += len(want & got)
    assert hits[1000] >= 0.9 * 120, hits
    assert hits[10] < hits[1000], hits


def test_iterative_scan_keeps_selective_filters_at_top_k(
    weak_hnsw: tuple[Index, list[Record]],
) -> None:
    """With the scan off, HNSW hands ef_search candidates to the filter, and about half
    survive; the default strict-order iterative scan keeps going until top_k."""
    index, _ = weak_hnsw
    queries = np.random.default_rng(12).normal(size=(8, 32))
    flt = {"even": True}
    short = [len(index.query(q, top_k=10, ef=10, filter=flt, backend_options=OFF))
             for q in queries]
    assert min(short) < 10, short
    full = [len(index.query(q, top_k=10, ef=10, filter=flt)) for q in queries]
    assert full == [10] * len(queries)
    relaxed = {"pgvector": {"iterative_scan": "relaxed_order", "max_scan_tuples": 5000}}
    assert all(len(index.query(q, top_k=10, ef=10, filter=flt, backend_options=relaxed)) == 10
               for q in queries)


def test_query_options_are_validated(store: Store, name: str) -> None:
    index = store.create_index(name, 4, "cosine", index_type="ivf", index_params={"lists": 2})
    index.upsert([("a", [1, 0, 0, 0])])
    for options in ({"iterative_scan": "sometimes"}, {"unknown": 1}, {"max_probes": 0},
                    {"max_scan_tuples": True}):
        with pytest.raises(ValidationError):
            index.query([1, 0, 0, 0], backend_options={"pgvector": options})
    with pytest.raises(UnsupportedFeatureError, match="strict_order"):
        index.query([1, 0, 0, 0], backend_options={"pgvector": {"iterative_scan": "strict_order"}})
    got = index.query([1, 0, 0, 0], backend_options={"pgvector": {"max_probes": 2},
                                                    "chroma": {"anything": True}})
    assert [m.id for m in got] == ["a"]


# -- writes, patch, listing -------------------------------------------------------------


def test_large_numpy_batches_and_replacement(store: Store, name: str) -> None:
    # flat: the point is batching and COPY (an HNSW graph would dominate the time)
    index = store.create_index(name, 64, "dotproduct", index_type="flat")
    rng = np.random.default_rng(1)
    data = rng.normal(size=(12_000, 64)).astype(np.float32)
    written = index.upsert([(f"b{i:05d}", data[i], {"i": i}) for i in range(len(data))])
    assert written == 12_000 and index.count() == 12_000
    index.upsert([(f"b{i:05d}", -data[i], {"i": -i}) for i in range(0, 12_000, 1000)])
    got = index.fetch(["b01000", "b01001"])
    np.testing.assert_array_equal(got["b01000"].vector, -data[1000])
    assert dict(got["b01000"].metadata) == {"i": -1000}
    assert dict(got["b01001"].metadata) == {"i": 1001}


def test_float_kinds_survive_jsonb(store: Store, name: str) -> None:
    index = store.create_index(name, 2, "cosine")
    meta = {"f16": 1e16, "big": 2**63 - 1, "small": -(2**63), "tiny": 1.5e-7, "huge": 1e300,
            "neg": -0.5, "exact": 2**53 + 1, "one": 1.0, "tags": ["x", "y"]}
    index.upsert([("k", [1, 0], meta)])
    got = dict(index.fetch(["k"])["k"].metadata)
    assert got == {**meta, "tags": ("x", "y")}
    assert all(type(got[k]) is type(v) for k, v in meta.items() if k != "tags")
    assert index.count(filter={"exact": {"$gt": 2**53}}) == 1
    assert index.count(filter={"exact": 2**53}) == 0
    assert index.count(filter={"f16": 10**16}) == 1


def test_unstorable_text_is_refused_before_io(store: Store, name: str) -> None:
    index = store.create_index(name, 2, "cosine")
    index.upsert([("keep", [1, 0], {"a": "b"})])
    for row in ({"id": "x", "vector": [1, 0], "metadata": {"a": "nul\x00"}},
                {"id": "x", "vector": [1, 0], "metadata": {"a": ["ok", "\x00"]}},
                {"id": "x", "vector": [1, 0], "document": "lone \ud800 surrogate"}):
        # declared limits (NUL) and the contract (lone surrogates): refused by the
        # facade for the whole call, as invalid input
        with pytest.raises(ValidationError, match=r"pgvector|surrogate"):
            index.upsert([("first", [0, 1]), row])
    assert index.count() == 1


def test_sparse_edges(store: Store, name: str) -> None:
    index = store.create_index(name, 2, "dotproduct", sparse=True)
    index.upsert([{"id": "z", "vector": [1, 0], "sparse": {"indices": [3, 7], "values": [0.0, 2.0]}},
                  {"id": "top", "vector": [1, 0],
                   "sparse": {"indices": [999_999_999], "values": [1.5]}}])
    assert index.fetch(["z"])["z"].sparse.indices == (7,)  # type: ignore[union-attr]
    got = index.query(sparse={"indices": [7, 999_999_999], "values": [1.0, 2.0]}, top_k=2)
    assert [(m.id, round(m.score, 6)) for m in got] == [("top", 3.0), ("z", 2.0)]
    # declared limits (capabilities.PGVECTOR_LIMITS), refused by the facade
    with pytest.raises(ValidationError, match="sparse index"):
        index.upsert([{"id": "far", "vector": [1, 0],
                       "sparse": {"indices": [1_000_000_000], "values": [1.0]}}])
    with pytest.raises(ValidationError, match="entries"):
        index.query(sparse={"indices": list(range(16_001)), "values": [1.0] * 16_001})
    assert index.count() == 2


def test_patch(store: Store, name: str) -> None:
    index = store.create_index(name, 3, "cosine", sparse=True)
    index.upsert([{"id": "p", "vector": [1, 0, 0], "metadata": {"a": 1, "b": "x", "c": True},
                   "document": "old"}])
    assert index.patch("p", metadata={"b": None, "d": ["t"], "a": 2.5})  # type: ignore[attr-defined]
    got = index.fetch(["p"])["p"]
    assert dict(got.metadata) == {"a": 2.5, "c": True, "d": ("t",)}
    assert got.document == "old"
    np.testing.assert_array_equal(got.vector, [1, 0, 0])
    assert index.patch("p", vector=[0, 1, 0], sparse={"indices": [2], "values": [0.5]},  # type: ignore[attr-defined]
                       document="new")
    got = index.fetch(["p"])["p"]
    np.testing.assert_array_equal(got.vector, [0, 1, 0])
    assert got.sparse is not None and got.sparse.indices == (2,)
    assert got.document == "new" and dict(got.metadata)["a"] == 2.5
    assert index.count(filter={"d": "t"}) == 1 and index.count(filter={"b": {"$exists": True}}) == 0
    assert index.patch("missing", metadata={"a": 1}) is False  # type: ignore[attr-defined]
    assert index.patch("p", metadata={"a": 1}, namespace="other") is False  # type: ignore[attr-defined]


def test_list_ids_pages_in_code_point_order(store: Store, name: str) -> None:
    index = store.create_index(name, 2, "cosine")
    ids = ["b", "a", "B", "é", "a%", "a_", "a%x", "ab", "日本", "🙂", "\uffff", "z 1", "Z"]
    index.upsert([(rid, [1, 0], {"n": i}) for i, rid in enumerate(ids)])
    index.upsert([("a-other-ns", [1, 0])], namespace="other")
    pages, cursor = [], None
    while True:
        page = index.list_ids(limit=4, cursor=cursor)  # type: ignore[attr-defined]
        pages.append(page.ids)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert [i for p in pages for i in p] == sorted(ids)
    assert all(len(p) == 4 for p in pages[:-1])
    # LIKE wildcards in a prefix are literal
    assert index.list_ids(prefix="a%", limit=10).ids == ("a%", "a%x")  # type: ignore[attr-defined]
    assert index.list_ids(prefix="a_", limit=10).ids == ("a_",)  # type: ignore[attr-defined]
    flt = {"n": {"$gte": 5}}
    node = parse_filter(flt)
    want = sorted(rid for i, rid in enumerate(ids) if matches(node, {"n": i}))
    assert list(index.list_ids(filter=flt, limit=100).ids) == want  # type: ignore[attr-defined]
    assert index.list_ids("other", limit=10).ids == ("a-other-ns",)  # type: ignore[attr-defined]


# -- async ----------------------------------------------------------------------------------


async def test_native_async_matches_sync(pg_url: str) -> None:
    tag = f"vp_async_{uuid.uuid4().hex[:8]}"
    astore = await connect_async(with_option(pg_url, f"application_name={tag}"))
    assert isinstance(astore, AsyncStore) and astore.native
    name = f"a_{uuid.uuid4().hex[:10]}"
    try:
        index = await astore.create_index(name, 4, "euclidean", sparse=True)
        rows = dataset_rows()
        # the first async calls arrive together: they must share one pool
        await asyncio.gather(*(index.upsert(rows[i::16], namespace="ns") for i in range(16)))
        backends = sql(pg_url, "SELECT count(*) FROM pg_stat_activity"
                       " WHERE application_name = %s", (tag,))[0][0]
        assert backends <= 8, f"{backends} connections: one pool per task?"
        await index.upsert(rows, namespace="ns", batch_size=7)
        recs = canonical_records(rows)
        flt = {"year": {"$gte": 2018}}
        got = await index.query([0.3, 0.2, 0.1, 0.5], filter=flt, namespace="ns", top_k=5,
                                ef=50)
        want = reference_query(recs, "euclidean", vector=[0.3, 0.2, 0.1, 0.5],
                               filter=parse_filter(flt), top_k=5)
        assert_same_matches(got, want, 1e-4, "async")
        assert got[0].document is not None
        fetched = await index.fetch([r.id for r in recs[:3]], namespace="ns")
        assert [dict(fetched[r.id].metadata) for r in recs[:3]] == [dict(r.metadata)
                                                                    for r in recs[:3]]
        results = await asyncio.gather(*(index.query([1, 0, 0, i], namespace="ns", top_k=2)
                                         for i in range(10)))
        assert all(len(r) == 2 for r in results)
        assert await index.count("ns") == len(rows)
    finally:
        await astore.delete_index(name, missing_ok=True)
        await astore.close()


# -- connection and errors ---------------------------------------------------------------


def test_url_forms(pg_url: str) -> None:
    assert as_pgvector_url("postgresql://u:@/db?host=/tmp/x") == "pgvector://u@/db?host=/tmp/x"
    assert as_pgvector_url("postgres://u:pw@h:5/db", schema="app") == (
        "pgvector://u:pw@h:5/db?schema=app")
    assert as_pgvector_url("pgvector://u@h/db?schema=a&x=1", schema="b") == (
        "pgvector://u@h/db?x=1&schema=b")
    with pytest.raises(ConfigError, match="unknown option"):
        vectorport.connect(with_option(pg_url, "bogus=1"))
    with pytest.raises(ConfigError, match="pool"):
        vectorport.connect(with_option(pg_url, "pool_max_size=0"))


def test_errors_never_show_the_password(tmp_path: Any) -> None:
    url = f"pgvector://someone:s3cret-pw@/db?host={tmp_path}&connect_timeout=2"
    with pytest.raises(BackendError) as info:
        vectorport.connect(url)
    assert isinstance(info.value, TransientBackendError)
    assert "s3cret" not in str(info.value) and "s3cret" not in repr(info.value)


def test_a_dropped_table_is_index_not_found(store: Store, name: str, pg_url: str) -> None:
    index = store.create_index(name, 2, "cosine")
    sql(pg_url, f'DROP TABLE "vp_{name}"')
    with pytest.raises(IndexNotFoundError):
        index.upsert([("a", [1, 0])])
    with pytest.raises(IndexNotFoundError):
        index.query([1, 0])
    assert repr(adapter_of(store)).startswith("PgvectorAdapter('pgvector://")

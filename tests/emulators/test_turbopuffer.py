"""The turbopuffer emulator, driven through the official SDK over HTTP.

Expected results come from the rules of turbopuffer's API reference (quoted where they
matter), applied by hand to tiny datasets; the emulator is the thing under test.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from vectorport.testing.emulators.http import EmulatorServer, Faults
from vectorport.testing.emulators.turbopuffer import DEFAULT_API_KEY, running

turbopuffer = pytest.importorskip("turbopuffer")


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with running() as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: EmulatorServer) -> Any:
    return turbopuffer.Turbopuffer(api_key=DEFAULT_API_KEY, base_url=server.url, max_retries=0)


def fresh(client: Any) -> Any:
    return client.namespace(f"t-{uuid.uuid4().hex[:12]}")


def ids(result: Any) -> list[Any]:
    return [row.id for row in result.rows or []]


def matching(ns: Any, filters: Any) -> set[Any]:
    return set(ids(ns.query(rank_by=["id", "asc"], top_k=100, filters=filters)))


# -- a small namespace for filter semantics ------------------------------------------

DOCS: list[dict[str, Any]] = [
    {"id": "a", "vector": [1.0, 0.0], "n": 1, "s": "apple", "tags": ["x", "y"], "flag": True},
    {"id": "b", "vector": [0.0, 1.0], "n": 5, "s": "banana", "tags": ["y"], "flag": False},
    {"id": "c", "vector": [1.0, 1.0], "n": 9, "tags": ["z"]},
    {"id": "d", "vector": [-1.0, 0.0], "s": "Cherry"},
]
ALL = {"a", "b", "c", "d"}


@pytest.fixture(scope="module")
def semantics_ns(client: Any) -> Any:
    ns = fresh(client)
    ns.write(upsert_rows=DOCS, distance_metric="cosine_distance",
             schema={"s": {"type": "string", "glob": True, "filterable": True}})
    return ns


@pytest.mark.parametrize(("filters", "expected"), [
    # "Eq ... If value is null, matches documents missing the attribute."
    (["n", "Eq", None], {"d"}),
    (["n", "Eq", 5], {"b"}),
    # "NotEq: Inverse of Eq" — so documents without the attribute match a value NotEq.
    (["n", "NotEq", 5], {"a", "c", "d"}),
    (["n", "NotEq", None], {"a", "b", "c"}),
    (["s", "In", ["apple", "banana"]], {"a", "b"}),
    (["s", "NotIn", ["apple"]], {"b", "c", "d"}),
    # "Lt ... matches null attribute values unless the value passed to Lt is null itself."
    (["n", "Lt", 5], {"a", "d"}),
    (["n", "Lte", 5], {"a", "b", "d"}),
    (["n", "Lt", None], set()),
    (["n", "Gt", 1], {"b", "c"}),
    (["n", "Gte", 1], {"a", "b", "c"}),
    (["s", "Gt", "apple"], {"b"}),  # byte order: "Cherry" < "apple"
    (["s", "Lt", "b"], {"a", "c", "d"}),  # c has no s: null matches Lt
    (["tags", "Contains", "y"], {"a", "b"}),
    (["tags", "NotContains", "y"], {"c", "d"}),
    (["tags", "ContainsAny", ["x", "z"]], {"a", "c"}),
    (["tags", "NotContainsAny", ["x", "z"]], {"b", "d"}),
    (["tags", "In", ["z", "q"]], {"c"}),  # arrays intersect
    (["tags", "AnyGt", "x"], {"a", "b", "c"}),
    (["tags", "AnyLt", "y"], {"a", "d"}),  # d has no tags: null matches Lt rules
    (["flag", "Eq", False], {"b"}),
    (["s", "Glob", "*an*"], {"b"}),
    (["s", "IGlob", "c*"], {"d"}),
    (["s", "NotGlob", "a*"], {"b", "c", "d"}),
    (["And", [["n", "Gte", 1], ["s", "NotEq", None]]], {"a", "b"}),
    (["Or", [["n", "Eq", 9], ["s", "Eq", "Cherry"]]], {"c", "d"}),
    (["Not", ["n", "Lt", 5]], {"b", "c"}),
    (["id", "In", ["a", "d", "zz"]], {"a", "d"}),
    (["id", "Gt", "b"], {"c", "d"}),
])
def test_filter_semantics(semantics_ns: Any, filters: Any, expected: set[str]) -> None:
    assert matching(semantics_ns, filters) == expected


@pytest.mark.parametrize("filters", [
    ["n", "Eq", 1.5],                     # float operand for an int attribute
    ["s", "Eq", 3],                       # number for a string
    ["missing_attr", "Eq", 1],            # not in the schema
    ["n", "Contains", 1],                 # Contains needs an array attribute
    ["tags", "Lt", "x"],                  # ranges on arrays are AnyLt etc.
    ["n", "Regex", "1"],                  # regex must be enabled
    ["n", "Bogus", 1],
    {"n": ["Eq", 1]},                     # the legacy object form is not emulated
    ["And", "not a list"],
])
def test_bad_filters_are_400(semantics_ns: Any, filters: Any) -> None:
    with pytest.raises(turbopuffer.BadRequestError):
        semantics_ns.query(rank_by=["id", "asc"], top_k=10, filters=filters)


# -- vectors and ranking ----------------------------------------------------------------

@pytest.mark.parametrize("metric", ["cosine_distance", "euclidean_squared"])
def test_dist_values(client: Any, metric: str) -> None:
    ns = fresh(client)
    rows = [{"id": f"r{i}", "vector": v} for i, v in enumerate(
        [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, -1.0, -1.0], [0.3, 0.4, 0.5]])]
    ns.write(upsert_rows=rows, distance_metric=metric)
    q = np.array([1.0, 0.0, 0.0])
    result = ns.query(rank_by=["vector", "ANN", q.tolist()], top_k=10)
    got = {row.id: row["$dist"] for row in result.rows}
    for row in rows:
        x = np.array(row["vector"], dtype=np.float32).astype(np.float64)
        want: float
        if metric == "cosine_distance":
            want = 1.0 - float(q @ x) / float(np.linalg.norm(q) * np.linalg.norm(x))
        else:
            want = float(((q - x) ** 2).sum())
        assert math.isclose(got[row["id"]], want, abs_tol=1e-6)
    dists = [row["$dist"] for row in result.rows]
    assert dists == sorted(dists)


def test_vectors_base64_roundtrip_and_encodings(client: Any) -> None:
    ns = fresh(client)
    vector = [0.1, 0.2, 0.30000001192092896]
    ns.write(upsert_rows=[{"id": "v", "vector": vector}], distance_metric="cosine_distance")
    as_float = ns.query(rank_by=["id", "asc"], top_k=1, include_attributes=["vector"])
    np.testing.assert_array_equal(np.asarray(as_float.rows[0].vector, dtype=np.float32),
                                  np.asarray(vector, dtype=np.float32))
    as_b64 = ns.query(rank_by=["id", "asc"], top_k=1, include_attributes=["vector"],
                      vector_encoding="base64")
    assert isinstance(as_b64.rows[0].vector, str)
    decoded = turbopuffer.lib.vector.b64decode_vector(as_b64.rows[0].vector)
    np.testing.assert_array_equal(np.asarray(decoded, dtype=np.float32),
                                  np.asarray(vector, dtype=np.float32))


def test_knn_needs_filters_and_is_exact(client: Any) -> None:
    ns = fresh(client)
    ns.write(upsert_rows=[{"id": i, "vector": [1.0, float(i)], "g": i % 2} for i in range(10)],
             distance_metric="euclidean_squared")
    with pytest.raises(turbopuffer.BadRequestError):
        ns.query(rank_by=["vector", "kNN", [1.0, 0.0]], top_k=3)
    result = ns.query(rank_by=["vector", "kNN", [1.0, 0.0]], top_k=3, filters=["g", "Eq", 1])
    assert ids(result) == [1, 3, 5]


def test_bm25_ranks_and_drops_zero_scores(client: Any) -> None:
    ns = fresh(client)
    ns.write(
        upsert_rows=[
            {"id": "1", "text": "the quick brown fox"},
            {"id": "2", "text": "fox fox fox jumps"},
            {"id": "3", "text": "lazy dog"},
        ],
        schema={"text": {"type": "string", "full_text_search": True}},
    )
    result = ns.query(rank_by=["text", "BM25", "fox"], top_k=10)
    assert ids(result) == ["2", "1"]  # more occurrences in a short doc score higher
    assert all(row["$dist"] > 0 for row in result.rows)
    with pytest.raises(turbopuffer.BadRequestError):
        ns.query(rank_by=["text", "Eq", "x"], top_k=3, filters=["text", "Eq", "x"])
    both = ns.query(rank_by=["Sum", [["text", "BM25", "fox"], ["text", "BM25", "dog"]]], top_k=10)
    assert set(ids(both)) == {"1", "2", "3"}
    tokens = ns.query(rank_by=["id", "asc"], top_k=10,
                      filters=["text", "ContainsAllTokens", "quick fox"])
    assert ids(tokens) == ["1"]


def test_order_by_attribute_puts_nulls_first_ascending(client: Any) -> None:
    ns = fresh(client)
    ns.write(upsert_rows=[{"id": "a", "k": 2}, {"id": "b"}, {"id": "c", "k": 1}])
    assert ids(ns.query(rank_by=["k", "asc"], top_k=10)) == ["b", "c", "a"]
    assert ids(ns.query(rank_by=["k", "desc"], top_k=10)) == ["a", "c", "b"]
    assert ids(ns.query(rank_by=["k", "asc"], top_k=2, offset=1)) == ["c", "a"]


def test_attribute_selection(semantics_ns: Any) -> None:
    default = semantics_ns.query(rank_by=["id", "asc"], top_k=1)
    assert set(default.rows[0].model_extra) == set()
    picked = semantics_ns.query(rank_by=["id", "asc"], top_k=1, include_attributes=["n"])
    assert picked.rows[0]["n"] == 1
    everything = semantics_ns.query(rank_by=["id", "asc"], top_k=1, include_attributes=True)
    assert {"n", "s", "tags", "flag"} <= set(everything.rows[0].model_extra)
    excluded = semantics_ns.query(rank_by=["id", "asc"], top_k=1,
                                  exclude_attributes=["vector", "tags", "nope"])
    assert "tags" not in excluded.rows[0].model_extra and excluded.rows[0].vector is None
    with pytest.raises(turbopuffer.BadRequestError):
        semantics_ns.query(rank_by=["id", "asc"], top_k=1, include_attributes=["nope"])


def test_aggregations_and_multi_query(semantics_ns: Any) -> None:
    result = semantics_ns.query(
        aggregate_by={"all": ["Count"], "with_n": ["Count", "n"], "total": ["Sum", "n"]},
        filters=["id", "NotEq", "zz"],
    )
    assert result.aggregations == {"all": 4, "with_n": 3, "total": 15}
    multi = semantics_ns.multi_query(queries=[
        {"rank_by": ["id", "asc"], "top_k": 1},
        {"aggregate_by": {"c": ["Count"]}, "filters": ["n", "Gt", 1]},
    ])
    assert ids(multi.results[0]) == ["a"] and multi.results[1].aggregations == {"c": 2}


# -- writes -----------------------------------------------------------------------------

def test_upsert_replaces_and_patch_merges(client: Any) -> None:
    ns = fresh(client)
    ns.write(upsert_rows=[{"id": "x", "a": 1, "b": "keep"}])
    ns.write(upsert_rows=[{"id": "x", "c": True}])
    row = ns.query(rank_by=["id", "asc"], top_k=1, include_attributes=True).rows[0]
    assert row.model_extra == {"c": True}
    result = ns.write(patch_rows=[{"id": "x", "a": 7, "c": None}, {"id": "ghost", "a": 1}])
    assert result.rows_patched == 1  # "patches will not create any missing documents"
    row = ns.query(rank_by=["id", "asc"], top_k=10, include_attributes=True).rows
    assert [r.id for r in row] == ["x"] and row[0].model_extra == {"a": 7}


def test_upsert_columns_and_deletes(client: Any) -> None:
    ns = fresh(client)
    ns.write(upsert_columns={"id": ["p", "q", "r"], "vector": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
                             "k": [1, None, 3]}, distance_metric="cosine_distance")
    assert matching(ns, ["k", "Eq", None]) == {"q"}
    result = ns.write(deletes=["p", "missing"])
    assert result.rows_deleted == 1
    result = ns.write(delete_by_filter=["k", "Gte", 3])
    assert result.rows_deleted == 1 and result.rows_remaining is False
    assert ids(ns.query(rank_by=["id", "asc"], top_k=10)) == ["q"]


def test_conditional_writes(client: Any) -> None:
    ns = fresh(client)
    ns.write(upsert_rows=[{"id": "doc", "version": 2}])
    skipped = ns.write(upsert_rows=[{"id": "doc", "version": 1}, {"id": "new", "version": 1}],
                       upsert_condition=["version", "Lt", {"$ref_new": "version"}])
    assert skipped.rows_upserted == 1  # "new" created unconditionally, "doc" kept
    applied = ns.write(upsert_rows=[{"id": "doc", "version": 3}],
                       upsert_condition=["version", "Lt", {"$ref_new": "version"}])
    assert applied.rows_upserted == 1
    only_new = ns.write(upsert_rows=[{"id": "doc", "version": 9}], upsert_condition=["id", "Eq", None])
    assert only_new.rows_upserted == 0
    kept = ns.write(deletes=["doc"], delete_condition=["version", "Eq", 1])
    assert kept.rows_deleted == 0
    patched = ns.write(patch_rows=[{"id": "doc", "version": 4}], patch_condition=["version", "Eq", 3])
    assert patched.rows_patched == 1
    values = {r.id: r["version"] for r in ns.query(rank_by=["id", "asc"], top_k=10,
                                                    include_attributes=["version"]).rows}
    assert values == {"doc": 4, "new": 1}


@pytest.mark.parametrize(("body", "fragment"), [
    ({"upsert_rows": [{"id": "x" * 65}]}, "64 bytes"),
    ({"upsert_rows": [{"id": "a", "$bad": 1}]}, "$"),
    ({"upsert_rows": [{"id": "a", "k": 1}, {"id": "b", "k": "one"}]}, "type int"),
    ({"upsert_rows": [{"id": "a", "big": "x" * 5000}]}, "4096"),
    ({"upsert_rows": [{"id": "a", "vector": [1.0, 2.0]}]}, "distance_metric"),
    ({"upsert_rows": [{"id": "a"}], "extra_body": {"unknown_field": 1}}, "unknown"),
    ({"patch_rows": [{"id": "a", "vector": [1.0]}], "upsert_rows": [{"id": "a"}]}, "patched"),
])
def test_invalid_writes_are_400_and_write_nothing(client: Any, body: dict[str, Any],
                                                  fragment: str) -> None:
    ns = fresh(client)
    ns.write(upsert_rows=[{"id": "keep", "k": 0}])
    with pytest.raises(turbopuffer.BadRequestError) as info:
        ns.write(**body)
    assert fragment in str(info.value)
    assert ids(ns.query(rank_by=["id", "asc"], top_k=10)) == ["keep"]


def test_large_values_fit_when_not_filterable(client: Any) -> None:
    ns = fresh(client)
    ns.write(upsert_rows=[{"id": "a", "big": "x" * 5000}],
             schema={"big": {"type": "string", "filterable": False}})
    with pytest.raises(turbopuffer.BadRequestError):
        ns.query(rank_by=["id", "asc"], top_k=1, filters=["big", "Eq", "x"])


def test_vector_dimensions_are_fixed(client: Any) -> None:
    ns = fresh(client)
    ns.write(upsert_rows=[{"id": "a", "vector": [1.0, 0.0]}], distance_metric="cosine_distance")
    with pytest.raises(turbopuffer.BadRequestError):
        ns.write(upsert_rows=[{"id": "b", "vector": [1.0, 0.0, 0.0]}],
                 distance_metric="cosine_distance")
    with pytest.raises(turbopuffer.BadRequestError):
        ns.write(upsert_rows=[{"id": "b", "vector": [1.0, 0.0]}],
                 distance_metric="euclidean_squared")
    with pytest.raises(turbopuffer.BadRequestError):
        ns.query(rank_by=["vector", "ANN", [1.0]], top_k=1)
    with pytest.raises(turbopuffer.BadRequestError):
        ns.query(rank_by=["id", "asc"], top_k=10_001)


# -- namespaces -------------------------------------------------------------------------

def test_namespace_listing_metadata_and_deletion(client: Any) -> None:
    prefix = f"list-{uuid.uuid4().hex[:8]}-"
    names = [f"{prefix}{i}" for i in range(5)]
    for name in names:
        client.namespace(name).write(upsert_rows=[{"id": "a", "k": 1}])
    assert [s.id for s in client.namespaces(prefix=prefix, page_size=2)] == names
    first = client.namespaces(prefix=prefix, page_size=2)
    assert [s.id for s in first.namespaces] == names[:2] and first.next_cursor == names[1]
    meta = client.namespace(names[0]).metadata()
    assert meta.approx_row_count == 1 and meta.schema_["k"].type == "int"
    assert client.namespace(names[0]).exists()
    client.namespace(names[0]).delete_all()
    assert not client.namespace(names[0]).exists()
    with pytest.raises(turbopuffer.NotFoundError):
        client.namespace(names[0]).delete_all()
    with pytest.raises(turbopuffer.NotFoundError):
        client.namespace(names[0]).query(rank_by=["id", "asc"], top_k=1)
    with pytest.raises(turbopuffer.NotFoundError):
        client.namespace(names[0]).write(deletes=["a"])


def test_read_only_namespaces_refuse_writes(client: Any) -> None:
    ns = fresh(client)
    ns.write(upsert_rows=[{"id": "a"}])
    ns.update_metadata(read_only=True)
    with pytest.raises(turbopuffer.PermissionDeniedError):
        ns.write(upsert_rows=[{"id": "b"}])
    ns.update_metadata(read_only=False)
    ns.write(upsert_rows=[{"id": "b"}])


def test_gzip_request_bodies(server: EmulatorServer) -> None:
    gz = turbopuffer.Turbopuffer(api_key=DEFAULT_API_KEY, base_url=server.url, max_retries=0,
                                 compression=True)
    ns = gz.namespace(f"gz-{uuid.uuid4().hex[:8]}")
    rows = [{"id": f"r{i}", "vector": [float(i), 1.0], "text": "x" * 100} for i in range(50)]
    ns.write(upsert_rows=rows, distance_metric="euclidean_squared")
    assert len(ns.query(rank_by=["id", "asc"], top_k=100).rows) == 50


# -- auth, faults, consistency ------------------------------------------------------

def test_wrong_key_is_401(server: EmulatorServer) -> None:
    bad = turbopuffer.Turbopuffer(api_key="not-the-key", base_url=server.url, max_retries=0)
    with pytest.raises(turbopuffer.AuthenticationError) as info:
        bad.namespace("anything").query(rank_by=["id", "asc"], top_k=1)
    assert info.value.body == {"status": "error", "error": "invalid API key"}


def test_injected_faults_and_latency() -> None:
    faults = Faults(error_rate=1.0, error_statuses=(429,), seed=3)
    with running(faults=faults) as srv:
        c = turbopuffer.Turbopuffer(api_key=DEFAULT_API_KEY, base_url=srv.url, max_retries=0)
        with pytest.raises(turbopuffer.RateLimitError):
            c.namespace("x").write(upsert_rows=[{"id": "a"}])
        faults.error_statuses = (503,)
        with pytest.raises(turbopuffer.InternalServerError):
            c.namespace("x").write(upsert_rows=[{"id": "a"}])
        faults.error_rate = 0.0
        faults.latency_seconds = 0.05
        started = time.perf_counter()
        c.namespace("x").write(upsert_rows=[{"id": "a"}])
        assert time.perf_counter() - started >= 0.05
        retrying = turbopuffer.Turbopuffer(api_key=DEFAULT_API_KEY, base_url=srv.url,
                                           max_retries=5)
        faults.latency_seconds = 0.0
        faults.error_rate = 0.3
        faults.error_statuses = (429,)
        for _ in range(5):  # the SDK's own retries get through
            retrying.namespace("x").query(rank_by=["id", "asc"], top_k=1)


def test_eventual_reads_lag_and_strong_reads_do_not() -> None:
    faults = Faults(lag_seconds=0.3)
    with running(faults=faults) as srv:
        c = turbopuffer.Turbopuffer(api_key=DEFAULT_API_KEY, base_url=srv.url, max_retries=0)
        ns = c.namespace("lag")
        ns.write(upsert_rows=[{"id": "a", "vector": [1.0, 0.0]}], distance_metric="cosine_distance")
        ns.write(upsert_rows=[{"id": "b", "vector": [0.0, 1.0]}], distance_metric="cosine_distance")

        def visible(level: str) -> list[Any]:
            return ids(ns.query(rank_by=["vector", "ANN", [1.0, 0.0]], top_k=10,
                                consistency={"level": level}))

        assert visible("strong") == ["a", "b"]
        assert visible("eventual") == []
        assert ns.metadata().index.status == "updating"
        time.sleep(0.35)
        assert visible("eventual") == ["a", "b"]
        ns.write(deletes=["a"])
        assert visible("strong") == ["b"] and visible("eventual") == ["a", "b"]
        time.sleep(0.35)
        assert visible("eventual") == ["b"]

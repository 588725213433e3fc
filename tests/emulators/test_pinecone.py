"""The Pinecone emulator, driven through the official SDK (and raw HTTP where the SDK
checks an argument itself before sending, so that the server's own check is reached).

Expected answers follow Pinecone's documented semantics, spelled out next to each case.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pinecone")

import httpx  # installed with the pinecone SDK
from pinecone import Pinecone
from pinecone.errors.exceptions import (
    ApiError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitError,
    ServiceError,
    UnauthorizedError,
)

from vectorport.testing.emulators import pinecone as emulator
from vectorport.testing.emulators.http import Faults
from vectorport.testing.emulators.pinecone import PineconeEmulator
from vectorport.testing.emulators.pinecone.store import (
    BLOCK_ROWS,
    Rows,
    best_positions,
    dense_scores,
)

KEY = "emulator-key"


@pytest.fixture(scope="module")
def emu() -> Iterator[PineconeEmulator]:
    with emulator.emulate() as running:
        yield running


@pytest.fixture(scope="module")
def pc(emu: PineconeEmulator) -> Iterator[Pinecone]:
    client = Pinecone(api_key=KEY, host=emu.server.url)
    yield client
    client.close()


def schema(dimension: int = 4, metric: str = "cosine", sparse: bool = False) -> dict[str, Any]:
    fields: dict[str, Any] = {"_values": {"type": "dense_vector", "dimension": dimension,
                                          "metric": metric}}
    if sparse:
        fields["_sparse_values"] = {"type": "sparse_vector"}
    return {"fields": fields}


@pytest.fixture
def make(pc: Pinecone) -> Iterator[Any]:
    created: list[str] = []

    def factory(dimension: int = 4, metric: str = "cosine", sparse: bool = False,
                **kwargs: Any) -> Any:
        name = f"t-{uuid.uuid4().hex[:12]}"
        model = pc.indexes.create(name=name, schema=schema(dimension, metric, sparse),
                                  timeout=-1, **kwargs)
        created.append(name)
        return pc.index(host=model.host)

    yield factory
    for name in created:
        try:
            pc.indexes.configure(name, deletion_protection="disabled")
            pc.indexes.delete(name, timeout=-1)
        except NotFoundError:
            pass


def raw(emu: PineconeEmulator, method: str, path: str, **kwargs: Any) -> httpx.Response:
    headers = {"Api-Key": KEY, "X-Pinecone-Api-Version": "2026-07",
               **kwargs.pop("headers", {})}
    return httpx.request(method, emu.server.url + path, headers=headers, **kwargs)


# -- control plane ------------------------------------------------------------------------------


def test_index_lifecycle(pc: Pinecone, emu: PineconeEmulator) -> None:
    name = f"life-{uuid.uuid4().hex[:8]}"
    model = pc.indexes.create(name=name, schema=schema(8, "dotproduct", sparse=True),
                              tags={"team": "search"}, timeout=-1)
    assert (model.name, model.dimension, model.status.ready) == (name, 8, True)
    assert model.host == f"{emu.server.url}/data/{name}"
    assert set(model.schema.fields) == {"_values", "_sparse_values"}
    assert (model.deployment.cloud, model.deployment.region) == ("aws", "us-east-1")
    assert model.tags == {"team": "search"}
    assert name in [i.name for i in pc.indexes.list()]
    assert pc.indexes.describe(name).metric == "dotproduct"
    with pytest.raises(ConflictError):
        pc.indexes.create(name=name, schema=schema(), timeout=-1)
    pc.indexes.configure(name, deletion_protection="enabled", tags={"team": ""})
    assert pc.indexes.describe(name).tags is None
    with pytest.raises(ForbiddenError):
        pc.indexes.delete(name, timeout=-1)
    pc.indexes.configure(name, deletion_protection="disabled")
    pc.indexes.delete(name)  # the SDK polls until the index is gone
    with pytest.raises(NotFoundError) as info:
        pc.indexes.describe(name)
    assert info.value.body == {"error": {"code": "NOT_FOUND",
                                         "message": f"Resource {name} not found"},
                               "status": 404}


@pytest.mark.parametrize("body", [
    {"name": "Upper", "schema": schema()},
    {"name": "-dash", "schema": schema()},
    {"name": "x" * 46, "schema": schema()},
    {"name": "ok-name", "schema": {"fields": {"text": {"type": "string",
                                                       "full_text_search": {}}}}},
    {"name": "ok-name", "schema": schema(dimension=0)},
    {"name": "ok-name", "schema": schema(dimension=20_001)},
    {"name": "ok-name", "schema": schema(metric="manhattan")},
])
def test_invalid_index_definitions_are_400(emu: PineconeEmulator, body: dict[str, Any]) -> None:
    answer = raw(emu, "POST", "/indexes", json=body)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "INVALID_ARGUMENT"


def test_api_key_and_version_are_checked(emu: PineconeEmulator) -> None:
    with pytest.raises(UnauthorizedError):
        Pinecone(api_key="wrong-key", host=emu.server.url).indexes.describe("anything")
    old = Pinecone(api_key=KEY, host=emu.server.url,
                   additional_headers={"X-Pinecone-Api-Version": "2024-07"})
    with pytest.raises(ApiError) as info:
        old.indexes.describe("anything")
    assert info.value.status_code == 400 and "2026-07" in info.value.message
    assert raw(emu, "GET", "/indexes", headers={"X-Pinecone-Api-Version": "2025-04"}
               ).status_code == 400
    # 2025-10 is the control-plane version of the SDKs before 10, served with its model.
    assert raw(emu, "GET", "/indexes", headers={"X-Pinecone-Api-Version": "2025-10"}
               ).status_code == 200
    assert raw(emu, "GET", "/indexes").status_code == 200


# -- data plane ---------------------------------------------------------------------------------


def test_upsert_fetch_roundtrip_is_pinecone_shaped(make: Any) -> None:
    index = make(metric="dotproduct", sparse=True)
    answer = index.upsert(vectors=[
        {"id": "a", "values": [0.1, 0.2, 0.3, 0.4],
         "sparse_values": {"indices": [7, 3], "values": [0.5, 1.5]},
         "metadata": {"year": 2020, "rating": 4.5, "ok": True, "tags": ["x", "y"],
                      "gone": None}},
    ])
    assert answer.upserted_count == 1
    assert answer.response_info.lsn_committed == 1
    got = index.fetch(ids=["a", "missing"]).vectors
    assert list(got) == ["a"]
    # float32 storage, numbers as float64 (rendered without a fraction when integral),
    # nulls dropped
    assert got["a"].values == [float(_f32(x)) for x in (0.1, 0.2, 0.3, 0.4)]
    assert got["a"].metadata == {"year": 2020, "rating": 4.5, "ok": True, "tags": ["x", "y"]}
    assert got["a"].sparse_values.indices == [7, 3]


def _f32(x: float) -> float:
    import numpy as np

    return float(np.float32(x))


@pytest.mark.parametrize(("metric", "expected"), [
    ("cosine", {"base": 1.0, "opposite": -1.0, "orthogonal": 0.0}),
    ("dotproduct", {"base": 1.0, "opposite": -1.0, "orthogonal": 0.0}),
    # Pinecone's euclidean score is the squared distance, lower is better
    ("euclidean", {"base": 0.0, "opposite": 4.0, "orthogonal": 3.0}),
])
def test_scores_per_metric(make: Any, metric: str, expected: dict[str, float]) -> None:
    index = make(metric=metric)
    index.upsert(vectors=[("base", [1, 0, 0, 0]), ("opposite", [-1, 0, 0, 0]),
                          ("orthogonal", [0, -1, -1, 0])])
    matches = index.query(vector=[1, 0, 0, 0], top_k=3).matches
    assert {m.id: round(m.score, 5) for m in matches} == expected
    assert [m.id for m in matches] == sorted(expected, key=expected.__getitem__,
                                             reverse=metric != "euclidean")


def test_query_by_id_includes_and_namespaces(make: Any) -> None:
    index = make()
    index.upsert(vectors=[("a", [1, 0, 0, 0], {"k": "v"}), ("b", [0, 1, 0, 0])])
    index.upsert(vectors=[("a", [0, 0, 1, 0])], namespace="other")
    bare = index.query(id="a", top_k=2).matches
    assert [m.id for m in bare] == ["a", "b"] and bare[0].values == [] and bare[0].metadata is None
    full = index.query(id="a", top_k=1, include_values=True, include_metadata=True).matches[0]
    assert full.values == [1.0, 0.0, 0.0, 0.0] and full.metadata == {"k": "v"}
    assert index.query(id="missing", top_k=1).matches == []
    assert [m.id for m in index.query(vector=[0, 0, 1, 0], top_k=5,
                                      namespace="other").matches] == ["a"]
    stats = index.describe_index_stats()
    assert {ns: s.vector_count for ns, s in stats.namespaces.items()} == {
        "__default__": 2, "other": 1}
    assert stats.total_vector_count == 3
    assert index.fetch(ids=["b"], namespace="__default__").vectors.keys() == {"b"}


def test_sparse_and_hybrid_scores(make: Any, emu: PineconeEmulator) -> None:
    index = make(metric="dotproduct", sparse=True)
    index.upsert(vectors=[
        {"id": "s1", "values": [1, 0, 0, 0], "sparse_values": {"indices": [1, 2],
                                                              "values": [1.0, 2.0]}},
        {"id": "s2", "values": [0, 1, 0, 0], "sparse_values": {"indices": [2],
                                                              "values": [3.0]}},
        {"id": "dense-only", "values": [1, 1, 0, 0]},
    ])
    q = {"indices": [2, 9], "values": [0.5, 1.0]}
    hybrid = index.query(vector=[1, 0, 0, 0], sparse_vector=q, top_k=3).matches
    assert {m.id: m.score for m in hybrid} == {"s1": 2.0, "s2": 1.5, "dense-only": 1.0}
    # a sparse-only search returns only records sharing a term
    sparse_only = index.query(sparse_vector=q, top_k=3).matches
    assert {m.id: m.score for m in sparse_only} == {"s1": 1.0, "s2": 1.5}
    # a zero dense query vector is accepted (the non-zero rule is for stored vectors)
    zero = index.query(vector=[0, 0, 0, 0], sparse_vector=q, top_k=3).matches
    assert {m.id: m.score for m in zero} == {"s1": 1.0, "s2": 1.5, "dense-only": 0.0}
    cosine = make(metric="cosine", sparse=True)
    cosine.upsert(vectors=[{"id": "x", "values": [1, 0, 0, 0],
                            "sparse_values": {"indices": [1], "values": [1.0]}}])
    with pytest.raises(ApiError, match="dotproduct"):
        cosine.query(vector=[1, 0, 0, 0], sparse_vector=q, top_k=1)
    # A dense dotproduct index created with dimension/metric only takes sparse values
    # and hybrid queries, as the service does; other metrics refuse them.
    dense = make(metric="dotproduct")
    dense.upsert(vectors=[{"id": "x", "values": [1, 0, 0, 0],
                           "sparse_values": {"indices": [2], "values": [2.0]}}])
    hybrid = dense.query(vector=[1, 0, 0, 0], sparse_vector=q, top_k=1).matches
    assert [(m.id, m.score) for m in hybrid] == [("x", 1.0 + 2.0 * 0.5)]
    plain = make(metric="cosine")
    with pytest.raises(ApiError, match="does not support sparse values"):
        plain.upsert(vectors=[{"id": "x", "values": [1, 0, 0, 0],
                               "sparse_values": {"indices": [1], "values": [1.0]}}])


def test_equal_scores_are_not_ordered_by_id(make: Any) -> None:
    index = make()
    ids = [f"tie-{i:02d}" for i in range(20)]
    index.upsert(vectors=[(rid, [1, 0, 0, 0]) for rid in ids])
    got = [m.id for m in index.query(vector=[1, 0, 0, 0], top_k=20).matches]
    assert sorted(got) == ids and got != ids  # like an ANN index: no promise among ties


@pytest.mark.parametrize("metric", ["cosine", "dotproduct", "euclidean"])
def test_a_short_top_k_is_the_head_of_the_whole_order(make: Any, metric: str) -> None:
    # Many equal scores (six directions, two lengths) around every cut: a top_k query
    # keeps the records it would rank first among all, ties included, filtered or not.
    index = make(metric=metric)
    directions = [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 0, 0], [1, 1, 1, 0], [0, 0, 1, 1],
                  [1, 0, 0, 1]]
    index.upsert(vectors=[(f"r{i:03d}", [x * (1 + i % 2) for x in directions[i % 6]],
                           {"n": i % 7}) for i in range(300)])
    query = [1, 0.5, 0, 0]
    for flt in (None, {"n": {"$ne": 3}}):
        whole = [(m.id, m.score) for m in
                 index.query(vector=query, top_k=300, filter=flt).matches]
        for top_k in (1, 2, 7, 25, 50, 99, 170, 299):
            head = [(m.id, m.score) for m in
                    index.query(vector=query, top_k=top_k, filter=flt).matches]
            assert head == whole[:top_k], (flt, top_k)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=60), st.integers(1, 70),
       st.randoms(use_true_random=False))
def test_best_positions_is_a_sort_cut_short(keys: list[int], top_k: int,
                                            rng: Any) -> None:
    ties = [rng.randrange(5) for _ in keys]  # repeated tie keys: a stable order among them
    array = np.asarray(keys, dtype=np.float64) / 2
    expected = sorted(range(len(keys)), key=lambda p: (array[p], ties[p]))[:top_k]
    assert best_positions(array, top_k, ties.__getitem__) == expected


@pytest.mark.parametrize("metric", ["cosine", "dotproduct", "euclidean"])
def test_scores_of_many_records_are_the_plain_formula_bit_for_bit(metric: str) -> None:
    # past BLOCK_ROWS the norms and distances go a block at a time (the last one a
    # single row), and the cached doubles serve every query: the scores must still be
    # the plain double-precision formula's, to the last bit, for all rows or a subset
    rng = np.random.default_rng(7)
    rows = BLOCK_ROWS + 1
    values = rng.standard_normal((rows, 24)).astype(np.float32)
    query = rng.standard_normal(24).astype(np.float32)
    table = Rows([], values)
    for positions in (None, sorted(rng.choice(rows, rows // 3, replace=False).tolist())):
        m = (values if positions is None else values[positions]).astype(np.float64)
        q = query.astype(np.float64)
        if metric == "dotproduct":
            expected = m @ q
        elif metric == "cosine":
            norms = np.linalg.norm(m, axis=1) * np.linalg.norm(q)
            expected = (m @ q) / np.where(norms == 0, 1.0, norms)
        else:
            expected = np.einsum("ij,ij->i", m - q, m - q)
        assert np.array_equal(dense_scores(metric, table, positions, query), expected)


def test_json_the_service_would_refuse_gets_the_same_answers(make: Any,
                                                             emu: PineconeEmulator) -> None:
    # NaN is not JSON; the emulator still reads it (as Python's json module does) and
    # refuses the vector for its value, as it always has
    index = make()
    path = index.host.removeprefix(emu.server.url)
    answer = raw(emu, "POST", path + "/vectors/upsert",
                 content=b'{"vectors": [{"id": "a", "values": [NaN, 0, 0, 1]}]}',
                 headers={"Content-Type": "application/json"})
    assert answer.status_code == 400 and "finite" in answer.json()["message"]
    broken = raw(emu, "POST", path + "/vectors/upsert", content=b'{"vectors": [',
                 headers={"Content-Type": "application/json"})
    assert broken.status_code == 400 and "Invalid JSON" in broken.json()["message"]
    assert index.describe_index_stats().total_vector_count == 0


def test_deletes_and_updates(make: Any) -> None:
    index = make()
    index.upsert(vectors=[(f"r{i}", [1, i, 0, 0], {"g": "a" if i % 2 else "b", "n": i})
                          for i in range(6)])
    index.upsert(vectors=[("keep", [1, 0, 0, 0])], namespace="ns2")
    index.delete(ids=["r0", "nope"])
    index.delete(filter={"g": {"$eq": "a"}})
    assert sorted(index.fetch(ids=[f"r{i}" for i in range(6)]).vectors) == ["r2", "r4"]
    index.update(id="r2", values=[0, 0, 0, 1], set_metadata={"extra": "yes"})
    updated = index.fetch(ids=["r2"]).vectors["r2"]
    assert updated.values == [0, 0, 0, 1] and updated.metadata == {"g": "b", "n": 2,
                                                                   "extra": "yes"}
    dry = index.update(filter={"g": "b"}, set_metadata={"flag": True}, dry_run=True)
    assert dry.matched_records == 2
    assert "flag" not in index.fetch(ids=["r4"]).vectors["r4"].metadata
    assert index.update(filter={"g": "b"}, set_metadata={"flag": True}).matched_records == 2
    assert index.fetch(ids=["r4"]).vectors["r4"].metadata["flag"] is True
    index.delete(delete_all=True)
    assert index.describe_index_stats().namespaces.keys() == {"ns2"}
    index.delete_namespace(name="ns2")
    assert index.describe_index_stats().total_vector_count == 0
    with pytest.raises(NotFoundError):
        index.describe_namespace(name="ns2")


def test_stats_filter_needs_a_pod_deployment(pc: Pinecone, make: Any) -> None:
    serverless = make()
    serverless.upsert(vectors=[("a", [1, 0, 0, 0], {"g": 1}), ("b", [0, 1, 0, 0], {"g": 2})])
    with pytest.raises(ApiError, match="Serverless"):
        serverless.describe_index_stats(filter={"g": 1})
    pod = make(deployment={"deployment_type": "pod", "environment": "us-east-1-aws",
                           "pod_type": "p1.x1", "replicas": 1, "shards": 1})
    pod.upsert(vectors=[("a", [1, 0, 0, 0], {"g": 1}), ("b", [0, 1, 0, 0], {"g": 2})])
    assert pod.describe_index_stats(filter={"g": {"$gte": 2}}).total_vector_count == 1


def test_list_with_prefix_and_pagination(make: Any) -> None:
    index = make()
    ids = [f"doc{d}#chunk{c:02d}" for d in range(3) for c in range(12)]
    index.upsert(vectors=[(rid, [1, 0, 0, 1]) for rid in reversed(ids)])
    seen, token, pages = [], None, 0
    while True:
        page = index.list_paginated(prefix="doc1#", limit=5, pagination_token=token)
        seen.extend(item.id for item in page.vectors)
        pages += 1
        token = page.pagination.next if page.pagination else None
        if token is None:
            break
    assert seen == sorted(r for r in ids if r.startswith("doc1#")) and pages == 3
    assert [item.id for item in index.list_paginated(limit=3).vectors] == sorted(ids)[:3]
    assert index.list_paginated(prefix="nothing").vectors == []
    flat = [item.id for page in index.list(prefix="doc2#") for item in page.vectors]
    assert flat == sorted(r for r in ids if r.startswith("doc2#"))


def test_fetch_by_metadata_pages(make: Any) -> None:
    index = make()
    index.upsert(vectors=[(f"r{i:02d}", [1, i, 0, 0], {"n": i}) for i in range(10)])
    page = index.fetch_by_metadata(filter={"n": {"$lt": 7}}, limit=4)
    assert sorted(page.vectors) == ["r00", "r01", "r02", "r03"] and page.pagination.next
    rest = index.fetch_by_metadata(filter={"n": {"$lt": 7}}, limit=4,
                                   pagination_token=page.pagination.next)
    assert sorted(rest.vectors) == ["r04", "r05", "r06"] and rest.pagination is None


# -- the filter language -------------------------------------------------------------------------

FILTER_RECORDS: dict[str, dict[str, Any]] = {
    "num": {"f": 1, "year": 2020},
    "float": {"f": 1.0, "year": 2020.5},
    "bool": {"f": True},
    "str": {"f": "1"},
    "list": {"f": ["1", "x"]},
    "zero": {"f": 0, "year": 1999},
    "none": {"other": "y"},
}

# Expected ids per Pinecone's documentation: kinds never mix, lists match element-wise,
# $ne / $nin need the field, ranges compare numbers only.
FILTER_EXPECTATIONS: list[tuple[dict[str, Any], set[str]]] = [
    ({"f": 1}, {"num", "float"}),
    ({"f": {"$eq": True}}, {"bool"}),
    ({"f": "1"}, {"str", "list"}),
    ({"f": "x"}, {"list"}),
    ({"f": {"$ne": 1}}, {"bool", "str", "list", "zero"}),
    ({"f": {"$ne": "x"}}, {"num", "float", "bool", "str", "zero"}),
    ({"f": {"$gt": 0}}, {"num", "float"}),
    ({"f": {"$gte": 0}}, {"num", "float", "zero"}),
    ({"year": {"$lt": 2020.5}}, {"num", "zero"}),
    ({"year": {"$lte": 2020.5, "$gt": 2000}}, {"num", "float"}),
    ({"f": {"$in": ["x", 0]}}, {"list", "zero"}),
    ({"f": {"$nin": ["1", 1]}}, {"bool", "zero"}),
    ({"f": {"$exists": False}}, {"none"}),
    ({"f": {"$exists": True}, "year": {"$exists": False}}, {"bool", "str", "list"}),
    ({"$or": [{"f": True}, {"other": "y"}]}, {"bool", "none"}),
    ({"$and": [{"f": {"$in": [1, 0]}}, {"year": {"$gte": 2000}}]}, {"num", "float"}),
]


@pytest.fixture(scope="module")
def filter_index(pc: Pinecone) -> Iterator[Any]:
    name = f"filters-{uuid.uuid4().hex[:8]}"
    model = pc.indexes.create(name=name, schema=schema(), timeout=-1)
    index = pc.index(host=model.host)
    index.upsert(vectors=[(rid, [1, i, 0, 0], meta)
                          for i, (rid, meta) in enumerate(FILTER_RECORDS.items())])
    yield index
    pc.indexes.delete(name, timeout=-1)


@pytest.mark.parametrize(("flt", "expected"), FILTER_EXPECTATIONS,
                         ids=[json.dumps(f) for f, _ in FILTER_EXPECTATIONS])
def test_filter_semantics(filter_index: Any, flt: dict[str, Any], expected: set[str]) -> None:
    got = {m.id for m in filter_index.query(vector=[1, 0, 0, 0], top_k=100, filter=flt).matches}
    assert got == expected


@pytest.mark.parametrize("flt", [
    {"f": {"$not": {"$eq": 1}}},
    {"$nor": [{"f": 1}]},
    {"$not": {"f": 1}},
    {"f": {"$regex": "x"}},
    {"$gt": 1},
    {"f": {"$gt": "a"}},
    {"f": {"$in": []}},
    {"f": {"$in": [True]}},
    {"f": {"$in": 1}},
    {"f": {"$exists": 1}},
    {"f": [1, 2]},
    {"$and": []},
    {"$or": {"f": 1}},
    {"f": {}},
])
def test_invalid_filters_are_400(filter_index: Any, flt: dict[str, Any]) -> None:
    with pytest.raises(ApiError) as info:
        filter_index.query(vector=[1, 0, 0, 0], top_k=1, filter=flt)
    assert info.value.status_code == 400
    assert info.value.body["code"] == 3 and "filter" in info.value.body["message"]


# -- limits ---------------------------------------------------------------------------------------


def test_limits(make: Any, emu: PineconeEmulator) -> None:
    index = make()
    path = index.host.removeprefix(emu.server.url)
    with pytest.raises(ApiError, match="at most 1000"):
        index.upsert(vectors=[(f"v{i}", [1, 0, 0, 0]) for i in range(1001)])
    with pytest.raises(PayloadTooLargeError):
        index.upsert(vectors=[(f"v{i}", [1, 0, 0, 0], {"pad": "x" * 30_000})
                              for i in range(80)])
    with pytest.raises(ApiError, match="40960"):
        index.upsert(vectors=[("big", [1, 0, 0, 0], {"pad": "x" * 41_000})])
    with pytest.raises(ApiError, match="dimension"):
        index.upsert(vectors=[("short", [1, 0, 0])])
    with pytest.raises(ApiError, match="non-zero"):
        index.upsert(vectors=[("zero", [0, 0, 0, 0])])
    assert index.describe_index_stats().total_vector_count == 0, "a bad batch writes nothing"
    index.upsert(vectors=[("x" * 512, [1, 0, 0, 0])])
    cases = [
        ("/vectors/upsert", {"vectors": [{"id": "x" * 513, "values": [1, 0, 0, 0]}]}),
        ("/vectors/upsert", {"vectors": [{"id": "日本", "values": [1, 0, 0, 0]}]}),
        ("/vectors/upsert", {"vectors": [{"id": "n", "values": [1, 0, 0, 0],
                                          "metadata": {"d": {"nested": 1}}}]}),
        ("/vectors/upsert", {"vectors": [{"id": "n", "values": [1, 0, 0, 0],
                                          "metadata": {"l": [1, 2]}}]}),
        ("/query", {"topK": 10_001, "vector": [1, 0, 0, 0]}),
        ("/query", {"topK": 0, "vector": [1, 0, 0, 0]}),
        ("/vectors/delete", {"ids": [f"i{i}" for i in range(1001)]}),
        ("/vectors/delete", {"filter": {}}),
    ]
    for suffix, body in cases:
        answer = raw(emu, "POST", path + suffix, json=body)
        assert answer.status_code == 400, (suffix, body, answer.text)
        assert answer.json()["code"] == 3
    assert index.describe_index_stats().total_vector_count == 1


# -- faults, freshness, speed ------------------------------------------------------------------------


def test_injected_errors_have_pinecone_bodies() -> None:
    with emulator.emulate(faults=Faults(error_rate=1.0, error_statuses=(429,))) as emu:
        client = Pinecone(api_key=KEY, host=emu.server.url)
        with pytest.raises(RateLimitError) as info:
            list(client.indexes.list())
        assert info.value.body["error"]["code"] == "RESOURCE_EXHAUSTED"
        emu.faults.error_statuses = (503,)
        with pytest.raises(ServiceError):
            list(client.indexes.list())
        emu.faults.error_rate = 0.0
        model = client.indexes.create(name="faulty", schema=schema(), timeout=-1)
        index = client.index(host=model.host)
        emu.faults.error_rate = 1.0
        with pytest.raises(ServiceError) as data_info:
            index.query(vector=[1, 0, 0, 0], top_k=1)
        assert data_info.value.body == {"code": 14, "message":
                                        "Service unavailable (injected fault)", "details": []}
        emu.faults.error_rate = 0.3
        emu.faults.error_statuses = (429, 503)
        landed = 0
        for _ in range(10):  # the SDK retries (Retry-After: 0) and mostly gets through
            try:
                index.upsert(vectors=[("a", [1, 0, 0, 0])])
                landed += 1
            except (RateLimitError, ServiceError):
                continue
        assert landed


def test_latency_and_lag() -> None:
    faults = Faults(lag_seconds=0.3, latency_seconds=0.02)
    with emulator.emulate(faults=faults) as emu:
        client = Pinecone(api_key=KEY, host=emu.server.url)
        index = client.index(host=client.indexes.create(
            name="laggy", schema=schema(), timeout=-1).host)
        started = time.perf_counter()
        first = index.upsert(vectors=[("a", [1, 0, 0, 0])]).response_info.lsn_committed
        second = index.upsert(vectors=[("b", [0, 1, 0, 0])]).response_info.lsn_committed
        other = index.upsert(vectors=[("c", [0, 1, 0, 0])],
                             namespace="other").response_info.lsn_committed
        assert time.perf_counter() - started >= 3 * 0.02
        assert (first, second, other) == (1, 2, 1), "LSNs count per namespace"
        answer = index.query(vector=[1, 0, 0, 0], top_k=5)
        assert answer.matches == [] and answer.response_info.lsn_reconciled == 0
        assert index.fetch(ids=["a"]).vectors == {}
        assert index.describe_index_stats().total_vector_count == 0
        assert index.list_paginated().vectors == []
        time.sleep(0.35)
        answer = index.query(vector=[1, 0, 0, 0], top_k=5)
        assert {m.id for m in answer.matches} == {"a", "b"}
        assert answer.response_info.is_reconciled(second)
        faults.lag_seconds = 0.0
        index.delete(ids=["a"])
        assert index.fetch(ids=["a", "b"]).vectors.keys() == {"b"}


def test_a_request_costs_a_few_milliseconds(make: Any) -> None:
    index = make()
    index.upsert(vectors=[(f"r{i}", [1, i, 0, 0], {"n": i}) for i in range(200)])
    started = time.perf_counter()
    for _ in range(50):
        index.query(vector=[1, 0.5, 0, 0], top_k=10, filter={"n": {"$gte": 100}},
                    include_metadata=True)
    assert (time.perf_counter() - started) / 50 < 0.02


def test_serve_from_the_command_line_entry_point() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = ("from vectorport.testing.emulators.pinecone import serve; "
            "from vectorport.testing.emulators.http import Faults; "
            f"serve('127.0.0.1', {port}, Faults())")
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        assert b"pinecone emulator" in process.stdout.readline()
        client = Pinecone(api_key=KEY, host=f"http://127.0.0.1:{port}")
        assert list(client.indexes.list()) == []
    finally:
        process.terminate()
        process.wait(timeout=10)

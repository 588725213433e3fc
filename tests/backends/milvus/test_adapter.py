"""Milvus-specific behaviour beyond the conformance suite, on milvus-lite.

Expected results come from the oracle and the reference query. Covered here: URLs and
credentials, index types and their parameters, the spec round trip, hints, list_ids,
signed and zero sparse weights, zero-score tails, ties deeper than the first search,
hybrid answers outside both native top lists, reopening a database, the server mode of
the launcher, and the adapter's own limits.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import vectorport
from vectorport.conformance.base import assert_same_matches, canonical_records
from vectorport.conformance.dataset import dataset_rows
from vectorport.conformance.reference import reference_query
from vectorport.core.config import parse_url
from vectorport.core.errors import (
    ConfigError,
    IndexNotFoundError,
    UnsupportedFeatureError,
    ValidationError,
)
from vectorport.core.filters import matches, parse_filter
from vectorport.core.types import SparseVector

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

from tests.support.calls import record_calls

from vectorport.adapterkit import prefix_upper_bound as _successor
from vectorport.adapters.milvus.adapter import MilvusAdapter
from vectorport.adapters.milvus.engine_line import CURRENT, SERVER, engine_of_version
from vectorport.testing.milvus import lite_major_version, milvus_url

LITE2 = lite_major_version() < 3
"""milvus-lite 2 (the C++ engine line): fewer capabilities, no server subcommand."""

_names = (f"vp_milvus_{i}" for i in itertools.count())


@pytest.fixture(scope="module")
def store() -> Iterator[vectorport.Store]:
    with milvus_url() as url, vectorport.connect(url) as store:
        yield store


def _expected(index: vectorport.Index, rows: list[dict[str, Any]], **query: Any) -> Any:
    records = canonical_records(rows, index.dimension)
    return reference_query(records, index.spec.metric, top_k=len(records) + 1, **query)


# -- URLs ---------------------------------------------------------------------------


def test_lite_url_to_a_folder_uses_a_file_inside(tmp_path: Path) -> None:
    adapter = MilvusAdapter.from_url(parse_url(f"milvus://{tmp_path}/data"))
    try:
        assert "data" in repr(adapter)
        assert (tmp_path / "data").is_dir()
    finally:
        adapter.close()


@pytest.mark.parametrize("url", [
    "milvus://",
    "milvus:///x.db?unknown=1",
    "milvus:///x.db?timeout=soon",
    "milvus:///x.db?token_env=VP_TEST_MILVUS_TOKEN",
    "milvus+https://",
    "milvus+https://host:1/some/path",
    "milvus://u:p@host:1?token_env=VP_TEST_MILVUS_TOKEN",
])
def test_bad_urls_are_config_errors(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VP_TEST_MILVUS_TOKEN", "s3cret")
    with pytest.raises(ConfigError) as info:
        vectorport.connect(url)
    assert "s3cret" not in str(info.value)


def test_missing_token_variable_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VP_TEST_MILVUS_TOKEN", raising=False)
    with pytest.raises(ConfigError):
        vectorport.connect("milvus://127.0.0.1:1?token_env=VP_TEST_MILVUS_TOKEN")


def test_server_mode_with_a_masked_token(monkeypatch: pytest.MonkeyPatch) -> None:
    if LITE2:
        pytest.skip("milvus-lite 2 has no server subcommand")
    monkeypatch.setenv("VP_TEST_MILVUS_TOKEN", "root:s3cret-value")
    with milvus_url(mode="server") as url:
        if not url.startswith("milvus://127.0.0.1:"):
            pytest.skip("VECTORPORT_TEST_MILVUS_URL is set")
        with vectorport.connect(f"{url}?token_env=VP_TEST_MILVUS_TOKEN&timeout=30") as store:
            assert "s3cret" not in repr(store.adapter)
            # a served milvus-lite 3 names itself, and compares numbers by value
            assert store.adapter.engine is CURRENT
            index = store.create_index("vp_server_mode", 4, "euclidean")
            rows = dataset_rows()[:8]
            index.upsert(rows)
            got = index.query([0.1, 0.2, 0.3, 0.4], top_k=3)
            assert_same_matches(got, _expected(index, rows, vector=[0.1, 0.2, 0.3, 0.4]),
                                1e-4, "server mode", 3)
            store.delete_index("vp_server_mode")


# -- lifecycle and index types --------------------------------------------------------


@pytest.mark.parametrize(("index_type", "params"), [
    ("auto", {}), ("flat", {}), ("hnsw", {"m": 8, "ef_construction": 40}), ("ivf", {"lists": 4}),
])
def test_index_types_round_trip_and_answer_exactly(
    store: vectorport.Store, index_type: str, params: dict[str, int]
) -> None:
    name = next(_names)
    options: dict[str, Any] = {"other_backend": {"x": 1}}
    if store.adapter.engine.partition_key:  # type: ignore[attr-defined]
        options["milvus"] = {"num_partitions": 4}
    if index_type not in store.capabilities.index_types:
        with pytest.raises(UnsupportedFeatureError):
            store.create_index(name, 4, "cosine", index_type=index_type, index_params=params)
        return
    index = store.create_index(name, 4, "cosine", index_type=index_type, index_params=params,
                               backend_options=options)
    try:
        info = store.describe_index(name)
        assert info.spec.index_type == index_type
        assert dict(info.spec.index_params) == params
        assert dict(info.spec.backend_options) == options
        rows = dataset_rows()
        index.upsert(rows)
        query = [0.2, -0.4, 0.1, 0.3]
        want = _expected(index, rows, vector=query)
        hints: dict[str, int] = {"ef": 200} if index_type == "hnsw" else (
            {"probes": 4} if index_type == "ivf" else {})
        got = index.query(query, top_k=10, **hints)
        assert_same_matches(got, want, 1e-4, index_type, 10)
    finally:
        store.delete_index(name)


def test_optimize_seals_an_index_and_its_answers_stay_the_references(
        store: vectorport.Store) -> None:
    """``store.adapter.optimize`` (Milvus' flush) on an index that holds rows, and again
    after more arrive: the answers are the reference's throughout; an index that does
    not exist, or a name that cannot be one, is refused."""
    name = next(_names)
    index = store.create_index(name, 4, "cosine")
    try:
        rows = dataset_rows()
        first, later = rows[: len(rows) // 2], rows[len(rows) // 2:]
        query = [0.2, -0.4, 0.1, 0.3]
        index.upsert(first)
        store.adapter.optimize(name)  # type: ignore[attr-defined]
        assert_same_matches(index.query(query, top_k=10), _expected(index, first, vector=query),
                            1e-4, "sealed", 10)
        index.upsert(later)
        assert_same_matches(index.query(query, top_k=10), _expected(index, rows, vector=query),
                            1e-4, "sealed and growing", 10)
        store.adapter.optimize(name)  # type: ignore[attr-defined]
        assert_same_matches(index.query(query, top_k=10), _expected(index, rows, vector=query),
                            1e-4, "sealed twice", 10)
        with pytest.raises(IndexNotFoundError):
            store.adapter.optimize("vp_no_such_index")  # type: ignore[attr-defined]
        with pytest.raises(ValidationError):
            store.adapter.optimize("Not A Name")  # type: ignore[attr-defined]
    finally:
        store.delete_index(name)


def test_a_scan_seals_once_and_reads_each_page_with_one_query(
        store: vectorport.Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter scans natively: a page of whole records is one query of the keys
    after the cursor (through the facade's id listing it was a query for the keys and
    one more per 1,000 of them). On milvus-lite, whose queries read unsealed rows one by
    one, a scan of more than one page seals the index once, after its first page; a
    scan of one page does not. The client's ``query`` and ``flush`` are passed through,
    counted."""
    name = next(_names)
    index = store.create_index(name, 4, "cosine")
    try:
        rows = [{"id": f"r{i:04d}", "vector": [1.0, i / 1200, 0.5, -1.0],
                 "metadata": {"n": i}} for i in range(1_200)]
        index.upsert(rows)
        recorded = record_calls(monkeypatch, store.adapter._client,  # type: ignore[attr-defined]
                                "query", "flush")
        pages = list(index.scan(page_size=500))
        calls = [method for method, _ in recorded]
        engine = store.adapter._engine  # type: ignore[attr-defined]
        sealing = [] if getattr(engine, "seals_on_its_own", False) else ["flush"]
        per_page = ["query", "query"] if engine.fetch_keys_first else ["query"]
        assert len(pages) == 3
        assert calls == per_page + sealing + per_page * 2
        recorded.clear()
        assert len(list(index.scan(page_size=1_000, filter={"n": {"$lt": 10}}))) == 1
        assert "flush" not in [method for method, _ in recorded]
        got = [r for page in pages for r in page.records]
        assert [r.id for r in got] == [r["id"] for r in rows]
        assert got[7].metadata == {"n": 7}
    finally:
        store.delete_index(name)


def _counting_flushes(store: vectorport.Store, monkeypatch: pytest.MonkeyPatch
                      ) -> list[tuple[str, Any]]:
    """The collections the client flushes from now on, as ``("flush", name)``."""
    return record_calls(monkeypatch, store.adapter._client, "flush")  # type: ignore[attr-defined]


def _engine_seals(store: vectorport.Store) -> bool:
    return bool(getattr(store.adapter._engine, "seals_on_its_own", False))  # type: ignore[attr-defined]


def _rows(start: int, stop: int) -> list[dict[str, Any]]:
    return [{"id": f"r{i:05d}", "vector": [1.0, (i % 97) / 97, (i % 13) / 13 - 0.5, -1.0],
             "metadata": {"n": i}} for i in range(start, stop)]


def test_a_read_seals_the_rows_written_every_optimize_every_rows(
        store: vectorport.Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """milvus-lite searches and counts unsealed rows one by one; once ``optimize_every``
    rows were written since the last seal, the next search, count or key listing seals
    them first, and the count starts again (an explicit optimize starts it again too).
    Answers are the reference's throughout; ``0`` never seals."""
    if _engine_seals(store):
        pytest.skip("a Milvus server seals on its own")
    name, never = next(_names), next(_names)
    index = store.create_index(name, 4, "cosine",
                               backend_options={"milvus": {"optimize_every": 300}})
    unsealed = store.create_index(never, 4, "cosine",
                                  backend_options={"milvus": {"optimize_every": 0}})
    try:
        flushed = _counting_flushes(store, monkeypatch)
        query = [0.9, 0.1, -0.3, -1.0]
        written: list[dict[str, Any]] = []

        def write_and_search(start: int, stop: int) -> None:
            rows = _rows(start, stop)
            for chunk in range(0, len(rows), 100):
                index.upsert(rows[chunk:chunk + 100])
            written.extend(rows)
            assert_same_matches(index.query(query, top_k=10),
                                _expected(index, written, vector=query), 1e-4,
                                f"after {len(written)} rows", 10)

        write_and_search(0, 299)
        assert flushed == []
        write_and_search(299, 300)  # the 300th row: the search seals first
        assert flushed == [("flush", name)]
        index.query(query, top_k=10)
        write_and_search(300, 599)
        assert flushed == [("flush", name)]  # 299 since the seal
        store.adapter.optimize(name)  # type: ignore[attr-defined]
        write_and_search(599, 800)  # 201 since the explicit seal
        assert flushed == [("flush", name)] * 2
        write_and_search(800, 900)
        assert flushed == [("flush", name)] * 3
        index.upsert(_rows(900, 1_200))  # a count and a key listing read them too
        assert index.count() == 1_200 and flushed == [("flush", name)] * 4
        index.upsert(_rows(1_200, 1_500))
        assert len(index.list_ids(limit=10).ids) == 10
        assert flushed == [("flush", name)] * 5

        unsealed.upsert(_rows(0, 1_200))
        unsealed.query(query, top_k=10)
        assert unsealed.count() == 1_200 and flushed == [("flush", name)] * 5
    finally:
        store.delete_index(name)
        store.delete_index(never)


def test_a_due_seal_waits_for_a_search_whose_deadline_leaves_it_time(
        store: vectorport.Store, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """A seal cannot be cut short: it runs only when 1.25 times its estimate (at least
    0.1 ms a row) fits in what is left of the search's deadline; otherwise the search
    reads the rows as they are, says so once, and a later search with time seals. The
    default ``optimize_every`` is 1,000. (20,000 rows: the seal is estimated at 2 s and
    deferred under a 2.4 s deadline, which leaves the unsealed search, 0.2-0.4 s on an
    idle machine, room on a loaded one; at 10,000 rows and 1 s it once ran out.)"""
    if _engine_seals(store):
        pytest.skip("a Milvus server seals on its own")
    name = next(_names)
    index = store.create_index(name, 4, "cosine")
    try:
        index.upsert(_rows(0, 20_000), batch_size=2_000)
        flushed = _counting_flushes(store, monkeypatch)
        query = [0.9, 0.1, -0.3, -1.0]
        want = _expected(index, _rows(0, 20_000), vector=query)
        with caplog.at_level("WARNING", logger="vectorport.milvus"):
            for _ in range(2):  # an estimated 2 s: 2.5 s needed, more than the deadline
                with vectorport.deadline(2.4):
                    assert_same_matches(index.query(query, top_k=10), want, 1e-4,
                                        "unsealed", 10)
        warnings = [r.getMessage() for r in caplog.records if r.name == "vectorport.milvus"]
        assert flushed == [] and len(warnings) == 1
        assert "20000 rows" in warnings[0] and name in warnings[0]
        assert_same_matches(index.query(query, top_k=10), want, 1e-4, "sealed", 10)
        assert flushed == [("flush", name)]
    finally:
        store.delete_index(name)


def test_counts_stay_exact_through_rewrites_deletes_seals_and_namespaces(
        store: vectorport.Store) -> None:
    """On milvus-lite a whole namespace is counted from the collection's key count when
    no record of another namespace is found, else from its keys: either way the count
    is of the live records, after ids rewritten in the growing segment and across
    sealed ones, deleted in both, and in namespaces that come and go."""
    name = next(_names)
    index = store.create_index(name, 4, "cosine",
                               backend_options={"milvus": {"optimize_every": 0}})
    live: dict[str, set[str]] = {"": set(), "b": set()}

    def check(when: str) -> None:
        for namespace, ids in live.items():
            assert index.count(namespace) == len(ids), (when, namespace)
        assert index.count(filter={"n": {"$lt": 100}}) == len(
            {i for i in live[""] if int(i[1:]) < 100}), when

    try:
        check("empty")
        index.upsert(_rows(0, 300))
        live[""] |= {r["id"] for r in _rows(0, 300)}
        check("growing")
        store.adapter.optimize(name)  # type: ignore[attr-defined]
        index.upsert(_rows(250, 400))  # 50 rewritten across the seal, 100 new
        live[""] |= {r["id"] for r in _rows(250, 400)}
        index.delete([r["id"] for r in _rows(0, 20)] + [r["id"] for r in _rows(390, 400)])
        live[""] -= {r["id"] for r in _rows(0, 20)} | {r["id"] for r in _rows(390, 400)}
        check("sealed and growing")
        index.upsert(_rows(500, 520), namespace="b")
        live["b"] |= {r["id"] for r in _rows(500, 520)}
        check("two namespaces")
        store.adapter.optimize(name)  # type: ignore[attr-defined]
        check("two namespaces, sealed")
        index.delete([r["id"] for r in _rows(500, 520)], namespace="b")
        live["b"].clear()
        check("one namespace again")
    finally:
        store.delete_index(name)


def test_a_server_refuses_optimize_every() -> None:
    """A Milvus server seals its growing segments on its own: the option would do
    nothing there, so it is refused rather than ignored."""
    from vectorport.adapters.milvus.options import creation_options
    from vectorport.core.types import IndexSpec

    spec = IndexSpec(name="vp_sealing", dimension=4, metric="cosine",
                     backend_options={"milvus": {"optimize_every": 500}})
    with pytest.raises(UnsupportedFeatureError, match="optimize_every"):
        creation_options(spec, SERVER)
    assert creation_options(spec, CURRENT) == {}
    assert creation_options(IndexSpec(name="vp_sealing", dimension=4, metric="cosine"),
                            SERVER) == {}


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"index_type": "hnsw", "index_params": {"lists": 4}}, ValidationError),
    ({"index_type": "flat", "index_params": {"m": 4}}, ValidationError),
    ({"backend_options": {"milvus": {"shards": 2}}}, ValidationError),
    ({"backend_options": {"milvus": {"num_partitions": 0}}}, ValidationError),
    ({"backend_options": {"milvus": {"optimize_every": -1}}}, ValidationError),
    ({"backend_options": {"milvus": {"optimize_every": 1.5}}}, ValidationError),
])
def test_bad_index_options_are_refused(
    store: vectorport.Store, kwargs: dict[str, Any], error: type[Exception]
) -> None:
    name = next(_names)
    if kwargs.get("index_type", "auto") not in store.capabilities.index_types:
        error = UnsupportedFeatureError
    with pytest.raises(error):
        store.create_index(name, 4, **kwargs)
    assert name not in store.list_indexes()


def test_unknown_query_options_are_refused(store: vectorport.Store) -> None:
    index = store.create_index(next(_names), 4)
    try:
        index.upsert([("a", [1, 0, 0, 0])])
        with pytest.raises(ValidationError):
            index.query([1, 0, 0, 0], backend_options={"milvus": {"nprobe": 3}})
        got = index.query([1, 0, 0, 0], backend_options={"milvus": {}}, consistency="eventual")
        assert [m.id for m in got] == ["a"]
    finally:
        store.delete_index(index.name)


def test_collections_not_made_by_vectorport_are_not_indexes(store: vectorport.Store) -> None:
    client = store.adapter._client  # type: ignore[attr-defined]
    client.create_collection("vp_foreign_collection", dimension=4)
    try:
        assert "vp_foreign_collection" not in store.list_indexes()
        with pytest.raises(IndexNotFoundError):
            store.describe_index("vp_foreign_collection")
        with pytest.raises(IndexNotFoundError):
            store.delete_index("vp_foreign_collection")
    finally:
        client.drop_collection("vp_foreign_collection")


def test_an_index_dropped_elsewhere_is_not_found(store: vectorport.Store) -> None:
    index = store.create_index(next(_names), 4)
    store.adapter._client.drop_collection(index.name)  # type: ignore[attr-defined]
    with pytest.raises(IndexNotFoundError):
        index.query([1, 0, 0, 0])
    with pytest.raises(IndexNotFoundError):
        index.upsert([("a", [1, 0, 0, 0])])


def test_reopening_a_database_loads_collections(tmp_path: Path) -> None:
    url = f"milvus://{tmp_path}/reopen.db"
    rows = dataset_rows()[:10]
    with vectorport.connect(url) as store:
        store.create_index("vp_reopen", 4, "dotproduct", sparse=True).upsert(rows)
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_server(str(tmp_path / "reopen.db"))
    with vectorport.connect(url) as store:
        index = store.index("vp_reopen")
        assert index.spec.sparse and index.count() == 10
        got = index.query([0.1, 0.2, 0.3, 0.4], top_k=3)
        assert_same_matches(got, _expected(index, rows, vector=[0.1, 0.2, 0.3, 0.4]),
                            1e-4, "reopened", 3)
    server_manager_instance.release_server(str(tmp_path / "reopen.db"))


# -- data ---------------------------------------------------------------------------


def test_documents_beyond_the_varchar_limit_write_nothing(store: vectorport.Store) -> None:
    index = store.create_index(next(_names), 4)
    try:
        fits = "é" * 32_767  # 65,534 UTF-8 bytes
        index.upsert([{"id": "fits", "vector": [1, 0, 0, 0], "document": fits}])
        too_big = "é" * 32_768
        with pytest.raises(ValidationError):
            index.upsert([{"id": "a", "vector": [1, 0, 0, 0]},
                          {"id": "b", "vector": [1, 0, 0, 0], "document": too_big}])
        assert index.count() == 1
        assert index.fetch(["fits"])["fits"].document == fits
    finally:
        store.delete_index(index.name)


def test_metadata_at_the_size_limit_fits(store: vectorport.Store) -> None:
    index = store.create_index(next(_names), 4)
    try:
        # Many tiny keys: the layout's tags add the most to these.
        metadata: dict[str, Any] = {f"k{i}": i % 10 for i in range(3_500)}
        metadata["tags"] = ["x" * 2_000, "y" * 2_000]
        index.upsert([{"id": "big", "vector": [1, 0, 0, 0], "metadata": metadata}])
        got = index.fetch(["big"])["big"].metadata
        assert dict(got) == {**metadata, "tags": ("x" * 2_000, "y" * 2_000)}
        assert index.count(filter={"k3499": 9, "tags": {"$gt": "x"}}) == 1
    finally:
        store.delete_index(index.name)


def test_ties_deeper_than_the_first_search(store: vectorport.Store) -> None:
    index = store.create_index(next(_names), 4, "dotproduct", index_type="flat")
    try:
        rows = [{"id": f"t{i:03d}", "vector": [1, 0, 0, 0]} for i in range(120)]
        rows += [{"id": f"u{i:03d}", "vector": [2, 0, 0, 0]} for i in range(3)]
        index.upsert(list(reversed(rows)))
        got = index.query([1, 0, 0, 0], top_k=5)
        assert [m.id for m in got] == ["u000", "u001", "u002", "t000", "t001"]
        got = index.query([1, 0, 0, 0], top_k=50, min_score=1.0)
        assert [m.id for m in got] == ["u000", "u001", "u002"] + [f"t{i:03d}" for i in range(47)]
    finally:
        store.delete_index(index.name)


@pytest.fixture(scope="module")
def sparse_index(store: vectorport.Store) -> Iterator[tuple[vectorport.Index, list[dict[str, Any]]]]:
    index = store.create_index("vp_milvus_signed_sparse", 4, "dotproduct", sparse=True,
                               index_type="flat")
    rng = np.random.default_rng(7)
    rows: list[dict[str, Any]] = []
    for i in range(60):
        k = int(rng.integers(1, 5))
        indices = sorted({int(x) for x in rng.integers(0, 12, size=k)})
        values = [float(np.round(rng.normal(0.2, 1.0), 3)) for _ in indices]
        row: dict[str, Any] = {"id": f"s{i:02d}", "vector": [float(x) for x in
                                                            np.round(rng.normal(size=4), 3)],
                               "metadata": {"group": i % 3}}
        if i % 7 != 3:
            row["sparse"] = {"indices": indices, "values": values}
        rows.append(row)
    rows.append({"id": "zeros", "vector": [0, 0, 0, 1],
                 "sparse": {"indices": [1, 5], "values": [0.0, 0.0]}})
    rows.append({"id": "mixed-zero", "vector": [0, 0, 1, 0],
                 "sparse": {"indices": [2, 3, 4], "values": [1.5, 0.0, -2.0]}})
    index.upsert(rows)
    yield index, rows
    store.delete_index(index.name)


def test_signed_and_zero_sparse_weights_round_trip(
    sparse_index: tuple[vectorport.Index, list[dict[str, Any]]],
) -> None:
    index, rows = sparse_index
    fetched = index.fetch([r["id"] for r in rows])
    for want in canonical_records(rows):
        got = fetched[want.id]
        if want.sparse is None:
            assert got.sparse is None, want.id
        else:
            assert got.sparse is not None and got.sparse.indices == want.sparse.indices
            np.testing.assert_allclose(got.sparse.values, want.sparse.values, rtol=1e-6)


@pytest.mark.parametrize(("query", "mode"), [
    (SparseVector((1, 4, 9), (1.0, 0.5, 2.0)), "sparse"),
    (SparseVector((0, 4, 7), (-1.0, 0.5, -0.25)), "sparse"),
    (SparseVector((3, 10), (-1.0, -2.0)), "sparse"),
    (SparseVector((1, 5), (0.0, 0.0)), "sparse"),
    (SparseVector((1, 4, 9), (1.0, -0.5, 2.0)), "hybrid"),
    (SparseVector((2, 6), (-3.0, 1.0)), "hybrid"),
])
@pytest.mark.parametrize("top_k", [3, 40, 70])
@pytest.mark.parametrize("flt", [None, {"group": {"$ne": 1}}])
def test_signed_sparse_and_hybrid_queries_are_exact(
    sparse_index: tuple[vectorport.Index, list[dict[str, Any]]],
    query: SparseVector, mode: str, top_k: int, flt: dict[str, Any] | None,
) -> None:
    index, rows = sparse_index
    if flt is not None and LITE2:
        pytest.skip("milvus-lite 2 offers no $ne")
    dense = [0.3, -0.2, 0.5, 0.1] if mode == "hybrid" else None
    want = _expected(index, rows, vector=dense, sparse=query, filter=parse_filter(flt))
    got = index.query(dense, sparse=query, top_k=top_k, filter=flt)
    assert_same_matches(got, want, 1e-4, f"{mode} {query}", top_k)


def test_hybrid_best_sum_outside_both_top_lists(store: vectorport.Store) -> None:
    """The record with the best dense + sparse sum is in neither native top 16 list."""
    index = store.create_index(next(_names), 2, "dotproduct", sparse=True, index_type="flat")
    try:
        rows: list[dict[str, Any]] = []
        for i in range(40):  # strong dense, no sparse
            rows.append({"id": f"d{i:02d}", "vector": [1.0 + i / 1000, 0.0]})
        for i in range(40):  # strong sparse, weak dense
            rows.append({"id": f"s{i:02d}", "vector": [0.0, 0.0],
                         "sparse": {"indices": [1], "values": [1.0 + i / 1000]}})
        rows.append({"id": "both", "vector": [0.9, 0.0],
                     "sparse": {"indices": [1], "values": [0.9]}})
        index.upsert(rows)
        query = SparseVector((1,), (1.0,))
        want = _expected(index, rows, vector=[1.0, 0.0], sparse=query)
        got = index.query([1.0, 0.0], sparse=query, top_k=1)
        assert [m.id for m in got] == ["both"]
        assert_same_matches(got, want, 1e-6, "hybrid", 1)
    finally:
        store.delete_index(index.name)


# -- namespaces and listing -----------------------------------------------------------


def test_namespaces_sharing_prefixes_are_all_listed(store: vectorport.Store) -> None:
    index = store.create_index(next(_names), 4)
    try:
        namespaces = ["", "a", "a-b", "a.b", "a_b", "a0", "ab", "Z", "9", "a-"]
        for i, namespace in enumerate(namespaces):
            index.upsert([(f"id{j}", [1, j, i, 0]) for j in range(i % 3 + 1)], namespace=namespace)
        assert index.list_namespaces() == sorted(namespaces)
        info = index.describe()
        assert dict(info.namespaces) == {ns: i % 3 + 1 for i, ns in enumerate(namespaces)}
        index.delete_namespace("a")
        assert "a" not in index.list_namespaces() and index.count("a-b") == 3
    finally:
        store.delete_index(index.name)


@pytest.fixture(scope="module")
def listing_index(store: vectorport.Store) -> Iterator[tuple[vectorport.Index, list[str]]]:
    index = store.create_index("vp_milvus_listing", 4)
    ids = ["a", "a/b", "ab", "a'b", 'a"b', "a\\b", "b", "é", "日本", "🙂", "z" * 512,
           "\U0010ffff", "\U0010ffffx", "pre", "pre-1", "pre/2", "pre\n3", "prf"]
    ids += [f"n{i:03d}" for i in range(40)]
    index.upsert([{"id": rid, "vector": [1, i, 0, 0], "metadata": {"i": i}}
                  for i, rid in enumerate(ids)], namespace="list-ns")
    index.upsert([("a", [1, 0, 0, 0]), ("pre-x", [1, 0, 0, 0])], namespace="other")
    yield index, ids
    store.delete_index(index.name)


@pytest.mark.parametrize("limit", [1, 7, 100])
@pytest.mark.parametrize("prefix", [None, "pre", "a", "\U0010ffff", "n0", "nothing"])
@pytest.mark.parametrize("flt", [None, {"i": {"$gte": 10}}])
def test_list_ids_pages_in_order(
    listing_index: tuple[vectorport.Index, list[str]], limit: int, prefix: str | None,
    flt: dict[str, Any] | None,
) -> None:
    index, ids = listing_index
    assert isinstance(index, vectorport.ListableIndex)
    node = parse_filter(flt)
    want = sorted(rid for i, rid in enumerate(ids)
                  if (prefix is None or rid.startswith(prefix)) and matches(node, {"i": i}))
    got: list[str] = []
    cursor = None
    while True:
        page = index.list_ids("list-ns", prefix=prefix, filter=flt, limit=limit, cursor=cursor)
        assert len(page.ids) <= limit
        got.extend(page.ids)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert got == want


def test_successor_bounds_every_string_with_the_prefix() -> None:
    assert _successor("ab") == "ac"
    assert _successor("a\U0010ffff") == "b"
    assert _successor("\U0010ffff") is None
    assert _successor("a\ud7ff") == "a\ue000"


# -- the milvus-lite 2 text encoding (pure; runs on every line) ------------------------

_texts = st.text(alphabet=st.characters(codec="utf-8", min_codepoint=0), max_size=12)


@given(_texts, _texts)
def test_encoded_text_keeps_order_prefixes_and_round_trips(a: str, b: str) -> None:
    from vectorport.adapters.milvus.layout import decode_text, encode_text

    ea, eb = encode_text(a), encode_text(b)
    assert decode_text(ea) == a
    assert (a < b) == (ea < eb) and (a == b) == (ea == eb)
    assert b.startswith(a) == eb.startswith(ea)
    assert not set(ea) & {"\n", "\r", "\x00", "'"}


def test_a_monotone_filter_refuses_negations_before_io() -> None:
    from vectorport.adapters.milvus.filters import compile_filter

    for raw in ({"a": {"$ne": 1}}, {"a": {"$nin": [1]}}, {"a": {"$exists": False}},
                {"$nor": [{"a": 1}]}, {"a": {"$not": {"$eq": 1}}}):
        with pytest.raises(UnsupportedFeatureError):
            compile_filter(parse_filter(raw), negation=False, encoded=True)
    text = compile_filter(parse_filter({"$or": [{"a": {"$exists": True}}, {"b": "x\n'"}]}),
                          negation=False, encoded=True)
    assert "not" not in text and "exists" not in text and "\n" not in text


POLARITY_ROWS = [
    {"id": "a", "vector": [1.0, 0.0, 0.0, 0.0], "metadata": {"x": 1, "t": ["p", "q"], "s": "m"}},
    {"id": "b", "vector": [0.0, 1.0, 0.0, 0.0], "metadata": {"x": 2, "t": ["z"]}},
    {"id": "c", "vector": [0.0, 0.0, 1.0, 0.0], "metadata": {"s": "a"}},
    {"id": "d", "vector": [0.0, 0.0, 0.0, 1.0], "metadata": {"x": 1, "t": ["b"]}},
    {"id": "e", "vector": [0.5, 0.5, 0.0, 0.0], "metadata": {}},
]
"""Records with and without each field: a missing key is where an unguarded leaf under
a negation would go wrong."""


@pytest.mark.parametrize(("raw", "negated"), [
    ({"x": 1}, False),
    ({"x": {"$ne": 1}}, True),
    ({"$nor": [{"x": {"$ne": 1}}]}, False),  # two negations: counts positively
    ({"x": {"$not": {"$ne": 1}}}, False),
    ({"$nor": [{"$nor": [{"x": {"$ne": 1}}]}]}, True),  # three
    ({"t": {"$gt": "o"}}, False),
    ({"t": {"$not": {"$gt": "o"}}}, True),
    ({"$or": [{"x": {"$gte": 2}}, {"s": {"$lt": "b"}}]}, False),
    ({"$nor": [{"x": {"$gte": 2}}, {"s": {"$lt": "b"}}]}, True),
    ({"x": {"$nin": [2]}, "t": {"$all": ["p"]}}, True),
])
def test_leaves_are_guarded_only_under_an_odd_number_of_negations(
        store: vectorport.Store, raw: dict[str, Any], negated: bool) -> None:
    """A comparison with a missing JSON key is null; under a negation ``not null`` is
    null too, so there each leaf is guarded with ``exists``. Elsewhere a null selects
    what a false would, and the guard (one more read of the JSON field a row on
    milvus-lite) is left out. Either way the records are the oracle's."""
    from vectorport.adapters.milvus.filters import compile_filter

    text = compile_filter(parse_filter(raw), bounds_in_meta=True)
    assert ("exists" in text) is negated, text
    negations = {"$ne", "$nin", "$not", "$nor"} & set(re.findall(r"\$\w+", repr(raw)))
    if not negations <= store.capabilities.filter_operators:
        return  # milvus-lite 2: no negation (its dialect is monotone, never guarded)
    name = next(_names)
    index = store.create_index(name, 4, "cosine")
    try:
        index.upsert(POLARITY_ROWS)
        node = parse_filter(raw)
        want = {r["id"] for r in POLARITY_ROWS if matches(node, r["metadata"])}
        got = {m.id for m in index.query([1.0, 1.0, 1.0, 1.0], top_k=10, filter=raw)}
        assert got == want and index.count(filter=raw) == len(want)
    finally:
        store.delete_index(name)


# -- found by the conformance suite's sequence test on milvus-lite 2 ----------------------

BIG_NUMBER_ROWS = [
    {"id": "f", "vector": [1.0, 0.0, 0.0, 0.0],
     "metadata": {"m": 9.223372036854776e18, "x": 2.0**53, "y": 2**53 + 1}},
    {"id": "i", "vector": [0.0, 1.0, 0.0, 0.0],
     "metadata": {"m": 2**63 - 1, "x": 2**53 + 1, "y": 2.0**53}},
]
BIG_NUMBER_FILTERS = [
    {"m": 2**63 - 1}, {"m": 9.223372036854776e18}, {"m": {"$gte": 2**63 - 1}},
    {"m": {"$gt": 2**63 - 2}}, {"x": 2**53 + 1}, {"x": 2.0**53}, {"y": 2**53 + 1},
    {"y": {"$in": [2**53 + 1]}}, {"m": {"$lt": 9.223372036854776e18}},
]


@pytest.mark.parametrize("raw", BIG_NUMBER_FILTERS, ids=repr)
def test_numbers_beyond_2_53_compare_by_value_or_are_refused(
        store: vectorport.Store, raw: dict[str, Any]) -> None:
    """A stored float next to an int of the same float64 value: the C++ engine compares
    JSON numbers as float64 (6 of these 9 filters answered wrongly there), so that line
    refuses such operands before any I/O; the current line answers as the oracle."""
    index = store.create_index(next(_names), 4, "cosine")
    try:
        index.upsert(BIG_NUMBER_ROWS)
        if LITE2:
            with pytest.raises(UnsupportedFeatureError, match="2\\^53"):
                index.count(filter=raw)
            with pytest.raises(UnsupportedFeatureError, match="2\\^53"):
                index.query([1, 1, 1, 1], filter=raw)
            return
        node = parse_filter(raw)
        want = sorted(r["id"] for r in BIG_NUMBER_ROWS if matches(node, r["metadata"]))
        assert index.count(filter=raw) == len(want)
        assert sorted(m.id for m in index.query([1, 1, 1, 1], filter=raw)) == want
    finally:
        store.delete_index(index.name)


def test_a_sparse_only_query_on_an_index_never_written(store: vectorport.Store) -> None:
    """milvus-lite 2 failed it ("Growing segment loss raw data": a scan in id order asked
    a collection that never held a row for vectors); every line answers with nothing."""
    index = store.create_index(next(_names), 4, "dotproduct", sparse=True)
    try:
        sparse = SparseVector((1,), (1.0,))
        assert index.query(None, sparse=sparse, top_k=3) == []
        index.upsert([{"id": "a", "vector": [1, 0, 0, 0], "sparse": sparse}])
        assert [m.id for m in index.query(None, sparse=sparse, top_k=3)] == ["a"]
    finally:
        store.delete_index(index.name)


@pytest.mark.parametrize(("version", "exact"), [
    ("milvus_lite-3.2.2", True), ("v2.5.4", False), ("v2.6.0-beta", False),
    ("Zilliz Cloud Vector Database(Compatible with Milvus 2.5)", False),
])
def test_servers_other_than_milvus_lite_refuse_inexact_numbers(version: str,
                                                               exact: bool) -> None:
    engine = engine_of_version(version)
    assert engine.exact_numbers is exact
    assert engine is (CURRENT if exact else SERVER)
    assert engine.capabilities == CURRENT.capabilities  # the same line otherwise

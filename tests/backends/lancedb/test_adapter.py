"""The lancedb adapter beyond the conformance suite: URLs and LanceDB Cloud keys, the
ANN hints shown to take effect, strict options, the storage layout, consistency across
connections and processes, and error translation without credentials."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("lancedb")

import lancedb

import vectorport
from vectorport import ConfigError, IndexNotFoundError, ValidationError
from vectorport.adapters.lancedb import codec
from vectorport.adapters.lancedb.errors import translated
from vectorport.agent import options_for_backend
from vectorport.core.errors import BackendError, TransientBackendError


@pytest.fixture
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="vp-lancedb-") as path:
        yield Path(path)


@pytest.fixture
def store(folder: Path) -> Iterator[vectorport.Store]:
    with vectorport.connect(f"lancedb://{folder}") as opened:
        yield opened


# -- URLs and credentials ------------------------------------------------------------


@pytest.mark.parametrize("url", ["lancedb://", "lancedb:///", "lancedb://host/path",
                                 "lancedb:///tmp/x?unknown=1"])
def test_bad_embedded_urls(url: str) -> None:
    with pytest.raises(ConfigError):
        vectorport.connect(url)


def test_cloud_urls_need_a_key_and_fail_before_any_io(monkeypatch: pytest.MonkeyPatch) -> None:
    """LanceDB Cloud cannot be reached from here: only the refusals are tested."""
    monkeypatch.delenv("LANCEDB_API_KEY", raising=False)
    monkeypatch.delenv("VP_TEST_NO_SUCH_KEY", raising=False)
    with pytest.raises(ConfigError, match="API key"):
        vectorport.connect("db://my-database")
    with pytest.raises(ConfigError, match="VP_TEST_NO_SUCH_KEY"):
        vectorport.connect("db://my-database?api_key_env=VP_TEST_NO_SUCH_KEY")
    with pytest.raises(ConfigError, match="name a database"):
        vectorport.connect("db://?api_key_env=VP_TEST_NO_SUCH_KEY")
    with pytest.raises(ConfigError) as info:
        vectorport.connect("db://my-database?api_key=sk-very-secret&bogus=1")
    assert "sk-very-secret" not in str(info.value) and "bogus" in str(info.value)


def test_the_store_names_its_backend_and_folder(store: vectorport.Store, folder: Path) -> None:
    assert store.backend == "lancedb"
    assert str(folder) in repr(store.adapter)


def test_errors_never_carry_the_key() -> None:
    with pytest.raises(BackendError) as info, translated("search", "idx", ("sk-123",)):
        raise RuntimeError("request with key sk-123 failed")
    assert "sk-123" not in str(info.value) and "***" in str(info.value)
    assert info.value.__cause__ is None
    with pytest.raises(TransientBackendError), translated("merge_insert"):
        raise RuntimeError("Retryable commit conflict for version 3")
    with pytest.raises(IndexNotFoundError), translated("open_table", "idx"):
        raise ValueError("Table 'idx' was not found")


# -- options --------------------------------------------------------------------------


@pytest.mark.parametrize("section", [{"nprobes": 0}, {"refine_factor": True},
                                     {"bogus": 1}, {"nprobes": "4"}])
def test_bad_query_options_are_refused(store: vectorport.Store, section: dict[str, Any]) -> None:
    index = store.create_index("vp_opts", 2, "dotproduct")
    index.upsert([("a", [1, 0])])
    with pytest.raises(ValidationError):
        index.query([1, 0], backend_options={"lancedb": section})
    assert [m.id for m in index.query([1, 0], backend_options={"lancedb": {"nprobes": 2}})] == [
        "a"]


@pytest.mark.parametrize(("index_type", "section"), [
    ("hnsw", {"ann_index": "IVF_PQ"}), ("ivf", {"ann_index": "IVF_HNSW_SQ"}),
    ("flat", {"ann_index": "IVF_FLAT"}), ("ivf", {"build_threshold": 0}), ("ivf", {"x": 1}),
    ("ivf", {"optimize_every": -1}), ("auto", {"optimize_every": 1_000}),
    ("flat", {"optimize_every": 0}),
])
def test_bad_index_options_create_nothing(store: vectorport.Store, index_type: str,
                                          section: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        store.create_index("vp_bad_opts", 2, index_type=index_type,
                           backend_options={"lancedb": section})
    assert "vp_bad_opts" not in store.list_indexes()


@pytest.mark.parametrize(("index_type", "params"), [
    ("ivf", {"m": 8}), ("ivf", {"ef_construction": 40}), ("hnsw", {"nlist": 4}),
    ("hnsw", {"ef_search": 40}),
])
def test_index_params_an_ann_build_would_not_read_create_nothing(
        store: vectorport.Store, index_type: str, params: dict[str, int]) -> None:
    """Nothing silently ignored: a parameter the IVF or HNSW build does not read."""
    with pytest.raises(ValidationError):
        store.create_index("vp_bad_params", 2, index_type=index_type, index_params=params)
    assert "vp_bad_params" not in store.list_indexes()
    store.create_index("vp_good_params", 2, index_type=index_type,
                       index_params={"lists": 2})  # the parameter both builds read
    assert store.describe_index("vp_good_params").spec.index_params == {"lists": 2}


def test_query_tool_section() -> None:
    options = options_for_backend(
        {"lancedb": {"nprobes": 8, "ef": 40, "consistency": "strong", "namespace": "p"}},
        "lancedb")
    assert options.query_kwargs() == {"namespace": "p", "ef": 40, "probes": 8,
                                      "consistency": "strong"}


# -- the ANN hints take effect -------------------------------------------------------

RNG_SEED = 7


def _recall(index: vectorport.Index, data: np.ndarray, queries: np.ndarray,
            **kwargs: Any) -> float:
    hits = 0
    for q in queries:
        distances = np.linalg.norm(data.astype(np.float64) - q, axis=1)
        exact = {f"v{i:04d}" for i in np.argsort(distances, kind="stable")[:10]}
        hits += len(exact & {m.id for m in index.query(q, top_k=10, **kwargs)})
    return hits / (10 * len(queries))


def _ann_index(store: vectorport.Store, folder: Path, name: str, dim: int, rows: int,
               **kwargs: Any) -> tuple[vectorport.Index, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(RNG_SEED)
    data = rng.normal(size=(rows, dim)).astype(np.float32)
    index = store.create_index(name, dim, "euclidean", **kwargs)
    index.upsert([(f"v{i:04d}", data[i]) for i in range(rows)], batch_size=rows)
    (config,) = lancedb.connect(str(folder)).open_table(name).list_indices()
    assert config.num_indexed_rows == rows  # trained on the whole first batch
    return index, data, rng.normal(size=(20, dim)).astype(np.float32)


def test_probes_and_refine_factor_take_effect(store: vectorport.Store, folder: Path) -> None:
    index, data, queries = _ann_index(store, folder, "vp_ivf", 16, 1000, index_type="ivf",
                                      index_params={"lists": 32})
    one = _recall(index, data, queries, probes=1)
    every = _recall(index, data, queries, probes=32)
    assert every == 1.0, "IVF_FLAT over every list is exact"
    assert one < 0.9, "one list of 32 must miss neighbours"
    same = _recall(index, data, queries, backend_options={"lancedb": {"nprobes": 1}})
    assert same == one, "nprobes is probes"

    pq, data, queries = _ann_index(
        store, folder, "vp_ivf_pq", 16, 1000, index_type="ivf", index_params={"lists": 4},
        backend_options={"lancedb": {"ann_index": "IVF_PQ", "num_sub_vectors": 2}})
    rough = _recall(pq, data, queries, probes=4)
    refined = _recall(pq, data, queries, probes=4,
                      backend_options={"lancedb": {"refine_factor": 20}})
    # PQ's k-means is not seeded: over 12 builds rough recall ran 0.755-0.915 (CI once
    # saw 0.915 against a bound of 0.9) and refined 0.995-1.0
    assert rough < 0.95 and refined > rough + 0.05, (rough, refined)


def test_ef_takes_effect(store: vectorport.Store, folder: Path) -> None:
    index, data, queries = _ann_index(store, folder, "vp_hnsw", 32, 1000, index_type="hnsw",
                                      index_params={"m": 4, "ef_construction": 20})
    narrow = _recall(index, data, queries)
    wide = _recall(index, data, queries, ef=400)
    assert wide > narrow + 0.1, (narrow, wide)


def test_an_exact_index_never_uses_an_ann_structure(store: vectorport.Store,
                                                    folder: Path) -> None:
    index, data, queries = _ann_index(store, folder, "vp_ivf_small", 8, 300, index_type="ivf",
                                      index_params={"lists": 16})
    assert _recall(index, data, queries, probes=16) == 1.0
    flat = store.create_index("vp_flat", 8, "euclidean", index_type="flat")
    flat.upsert([(f"v{i:04d}", data[i]) for i in range(300)], batch_size=300)
    assert lancedb.connect(str(folder)).open_table("vp_flat").list_indices() == []
    assert _recall(flat, data, queries, probes=1) == 1.0


# -- layout, consistency --------------------------------------------------------------


def _unindexed_rows(folder: Path, name: str) -> int:
    table = lancedb.connect(str(folder)).open_table(name)
    (ann,) = [i for i in table.list_indices() if codec.VECTOR in i.columns]
    return int(table.index_stats(ann.name).num_unindexed_rows)


def _rows_of(count: int) -> list[dict[str, Any]]:
    data = np.random.default_rng(RNG_SEED).normal(size=(count, 16)).astype(np.float32)
    return [{"id": f"v{i:04d}", "vector": data[i], "metadata": {"n": i}} for i in range(count)]


def test_optimize_folds_rows_written_after_the_ann_build_into_it(
        store: vectorport.Store, folder: Path) -> None:
    """The IVF index is trained by the write that first passes ``build_threshold`` (the
    first page); ``store.adapter.optimize`` folds the later pages in, and all lists
    probed still give the exact answer."""
    index = store.create_index("vp_optimize", 16, "cosine", index_type="ivf",
                               index_params={"lists": 4})
    rows = _rows_of(3_000)
    for start in range(0, len(rows), 1_000):
        index.upsert_bulk(rows[start:start + 1_000])
    # the write of the first page trained the index (build_threshold, 256, is below it)
    assert _unindexed_rows(folder, "vp_optimize") == len(rows) - 1_000
    store.adapter.optimize("vp_optimize")  # type: ignore[attr-defined]
    assert _unindexed_rows(folder, "vp_optimize") == 0
    reference = vectorport.connect("memory://").create_index("vp_ref", 16, "cosine")
    reference.upsert(rows)
    for query in (rows[17]["vector"], rows[2_500]["vector"]):  # every list probed: exact
        got = index.query(query, top_k=10, probes=4)
        want = reference.query(query, top_k=10)
        assert [(m.id, m.score) for m in got] == [(m.id, m.score) for m in want]
    with pytest.raises(IndexNotFoundError):
        store.adapter.optimize("vp_no_such_index")  # type: ignore[attr-defined]


def _every_index(store: vectorport.Store, name: str, every: int) -> vectorport.Index:
    return store.create_index(name, 16, "cosine", index_type="ivf", index_params={"lists": 4},
                              backend_options={"lancedb": {"optimize_every": every}})


def test_writes_fold_new_rows_into_the_ann_index_every_optimize_every_rows(
        store: vectorport.Store, folder: Path) -> None:
    """LanceDB leaves the rows written after its ANN index was trained outside it, and
    searches them in full, until it is optimized: the write that brings the rows
    written since to ``optimize_every`` runs it."""
    index = _every_index(store, "vp_every", 1_000)
    rows = _rows_of(2_000)
    index.upsert(rows[:500])  # trains the index: every row is in it
    assert _unindexed_rows(folder, "vp_every") == 0
    for start in range(500, 1_400, 100):
        index.upsert(rows[start:start + 100])
    assert _unindexed_rows(folder, "vp_every") == 900  # not due yet
    index.upsert(rows[1_400:1_500])  # the 1,000th row since the training
    assert _unindexed_rows(folder, "vp_every") == 0
    index.upsert(rows[1_500:2_000])
    assert _unindexed_rows(folder, "vp_every") == 500  # counting again from the run
    reference = vectorport.connect("memory://").create_index("vp_ref", 16, "cosine")
    reference.upsert(rows)
    for query in (rows[3]["vector"], rows[1_450]["vector"]):  # every list probed: exact
        got = index.query(query, top_k=10, probes=4)
        assert [(m.id, m.score) for m in got] == [
            (m.id, m.score) for m in reference.query(query, top_k=10)]
    never = _every_index(store, "vp_never", 0)
    never.upsert(rows[:500])
    never.upsert(rows[500:])
    assert _unindexed_rows(folder, "vp_never") == 1_500  # 0: only store.adapter.optimize


def test_a_due_optimize_waits_for_a_write_whose_deadline_leaves_it_time(
        store: vectorport.Store, folder: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A run of LanceDB's optimize cannot be cut short, so the write that makes it due
    runs it only when its estimate (50 µs a row written since, at least) fits in what
    is left of the write's deadline; otherwise the write returns, says so once, and a
    later write with time enough runs it."""
    index = _every_index(store, "vp_waits", 20_000)
    rows = _rows_of(21_000)
    index.upsert(rows[:500])  # trains the index
    with caplog.at_level("WARNING", logger="vectorport.lancedb"):
        # 20,000 rows: an estimated 1 s, 1.25 s needed, more than the whole deadline
        with vectorport.deadline(1.2):
            index.upsert(rows[500:20_500])
        with vectorport.deadline(1.2):
            index.upsert(rows[20_500:20_600])
    assert _unindexed_rows(folder, "vp_waits") == 20_100  # not run: no time for it
    warnings = [r.getMessage() for r in caplog.records if r.name == "vectorport.lancedb"]
    assert len(warnings) == 1 and "store.adapter.optimize('vp_waits')" in warnings[0]
    index.upsert(rows[20_600:20_700])  # the store's default deadline: time enough
    assert _unindexed_rows(folder, "vp_waits") == 0


def test_optimize_after_a_row_does_not_hold_back_later_runs(
        store: vectorport.Store, folder: Path) -> None:
    """``store.adapter.optimize`` after one row written is all LanceDB's fixed cost:
    timed per row, it made the next run look hundreds of times dearer than its 50 µs a
    row, and every later write put it off. The user's run teaches the schedule
    nothing."""
    index = _every_index(store, "vp_taught", 1_000)
    rows = _rows_of(1_501)
    index.upsert(rows[:500])  # trains the index
    index.upsert(rows[500:501])
    store.adapter.optimize("vp_taught")  # type: ignore[attr-defined]
    with vectorport.deadline(5.0):  # 1,000 rows at the floor: 0.06 s needed
        index.upsert(rows[501:1_501])
    assert _unindexed_rows(folder, "vp_taught") == 0


def test_a_copy_into_lancedb_ends_with_every_row_in_the_ann_index(
        store: vectorport.Store, folder: Path) -> None:
    """``copy_index`` optimizes its destination once the records are in: a copy in
    pages of 1,000 leaves no row outside the IVF index trained on the first page."""
    from vectorport.transfer import copy_index

    source = vectorport.connect("memory://").create_index("vp_src", 16, "cosine")
    source.upsert(_rows_of(3_000))
    store.create_index("vp_copied", 16, "cosine", index_type="ivf", index_params={"lists": 4})
    report = copy_index(source, store, destination_name="vp_copied", batch_size=1_000,
                        checkpoint=folder / "copy.json", progress=False)
    assert report.verification is not None and report.verification.ok
    assert _unindexed_rows(folder, "vp_copied") == 0


def test_a_copy_into_a_new_lancedb_index_trains_it_once_over_every_row(
        store: vectorport.Store, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``copy_index`` creates its destination and puts off its ANN index
    (``defer_upkeep``); its ``optimize`` trains the index once, over all 3,000 rows, where
    a plain load trains it on the first page (500 rows: √500 lists placed by them). The
    engine's ``create_index`` is passed through, counting the rows at each call."""
    from lancedb.table import LanceTable

    from vectorport.transfer import copy_index

    source = store.create_index("vp_src", 16, "cosine", index_type="ivf")
    source.upsert_bulk(_rows_of(3_000))
    trained_over: list[int] = []
    create_index = LanceTable.create_index

    def counting(table: LanceTable, *args: Any, **kwargs: Any) -> Any:
        trained_over.append(table.count_rows())
        return create_index(table, *args, **kwargs)

    monkeypatch.setattr(LanceTable, "create_index", counting)
    report = copy_index(source, store, destination_name="vp_copy", batch_size=500,
                        checkpoint=folder / "copy.json", progress=False)
    assert report.verification is not None and report.verification.ok
    assert trained_over == [3_000]
    assert _unindexed_rows(folder, "vp_copy") == 0
    with pytest.raises(IndexNotFoundError):
        store.adapter.defer_upkeep("vp_no_such_index")  # type: ignore[attr-defined]


def test_a_put_off_index_answers_exactly_until_optimize_trains_it(
        store: vectorport.Store, folder: Path) -> None:
    """While its training is put off, an ``ivf`` index has no ANN index and answers as
    the reference does; ``optimize`` trains it over every row."""
    index = store.create_index("vp_deferred", 16, "cosine", index_type="ivf")
    store.adapter.defer_upkeep("vp_deferred")  # type: ignore[attr-defined]
    rows = _rows_of(2_000)
    index.upsert_bulk(rows)
    table = lancedb.connect(str(folder)).open_table("vp_deferred")
    assert [i for i in table.list_indices() if codec.VECTOR in i.columns] == []
    reference = vectorport.connect("memory://").create_index("vp_ref", 16, "cosine")
    reference.upsert(rows)
    query = rows[42]["vector"]
    want = [(m.id, m.score) for m in reference.query(query, top_k=10)]
    assert [(m.id, m.score) for m in index.query(query, top_k=10)] == want
    store.adapter.optimize("vp_deferred")  # type: ignore[attr-defined]
    assert _unindexed_rows(folder, "vp_deferred") == 0


def test_a_scan_reads_each_page_with_one_search(
        store: vectorport.Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter scans natively: a page is one LanceDB search of the ids after the
    cursor, all columns at once (through the facade's id listing it was two, the second
    an ``IN`` list of the page's ids). LanceDB's ``search`` is passed through, counted."""
    from lancedb.table import LanceTable

    index = store.create_index("vp_scan", 16, "cosine")
    rows = _rows_of(1_050)
    index.upsert_bulk(rows)
    searches: list[int] = []
    search = LanceTable.search

    def counting(table: LanceTable, *args: Any, **kwargs: Any) -> Any:
        searches.append(1)
        return search(table, *args, **kwargs)

    monkeypatch.setattr(LanceTable, "search", counting)
    pages = list(index.scan(page_size=100))
    assert len(searches) == len(pages) == 11
    got = {r.id: r for page in pages for r in page.records}
    assert sorted(got) == [r["id"] for r in rows]
    first = got[rows[0]["id"]]
    assert first.vector.dtype == np.float32 and not first.vector.flags.writeable
    assert np.array_equal(first.vector, rows[0]["vector"]) and first.metadata == {"n": 0}


def test_layout_keeps_kinds_apart(store: vectorport.Store, folder: Path) -> None:
    index = store.create_index("vp_layout", 2, "dotproduct")
    metadata = {"n": 2**63 - 1, "f": 1.0, "b": True, "s": "1", "l": ["b", "a"]}
    index.upsert([{"id": "x", "vector": [1, 0], "metadata": metadata, "document": "text"}])
    (row,) = lancedb.connect(str(folder)).open_table("vp_layout").to_arrow().to_pylist()
    assert json.loads(row[codec.META]) == {"i_n": 2**63 - 1, "f_f": 1.0, "b_b": True,
                                           "s_s": "1", "l_l": ["b", "a"], "a_l": "a",
                                           "z_l": "b"}
    assert sorted(row[codec.TOKENS]) == sorted(["n", "f", "b", "s", "s=1", "l", "l=b", "l=a"])
    assert (row[codec.PK], row[codec.NAMESPACE], row[codec.DOCUMENT]) == ("/x", "", "text")
    got = index.fetch(["x"])["x"]
    assert dict(got.metadata) == {**metadata, "l": ("b", "a")}
    assert type(got.metadata["f"]) is float and type(got.metadata["b"]) is bool


def test_foreign_tables_are_not_indexes(store: vectorport.Store, folder: Path) -> None:
    lancedb.connect(str(folder)).create_table("foreign_table", data=[{"vector": [1.0, 0.0]}])
    assert "foreign_table" not in store.list_indexes()
    with pytest.raises(IndexNotFoundError):
        store.describe_index("foreign_table")


def test_reads_see_writes_of_other_connections_and_processes(
    store: vectorport.Store, folder: Path
) -> None:
    index = store.create_index("vp_consistency", 2, "dotproduct")
    with vectorport.connect(f"lancedb://{folder}") as other:
        seen_by_other = other.index("vp_consistency")
        index.upsert([("a", [1, 0])])
        assert seen_by_other.count() == 1
        # searches go through a second (async) connection of each store: it sees the
        # writes of its own store's sync connection and of the other store at once
        assert [m.id for m in seen_by_other.query([1, 0], top_k=5)] == ["a"]
        seen_by_other.upsert([("b", [0, 1])])
        assert sorted(index.fetch(["a", "b"])) == ["a", "b"]
        assert [m.id for m in index.query([0, 1], top_k=5)] == ["b", "a"]
        index.upsert([("a", [0, 1.5])])  # replaced: now first for [0, 1]
        assert [m.id for m in seen_by_other.query([0, 1], top_k=5)] == ["a", "b"]
    script = (
        "import vectorport, sys\n"
        f"s = vectorport.connect('lancedb://{folder}')\n"
        "s.index('vp_consistency').upsert([('c', [1, 1])])\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert index.count() == 3
    assert [m.id for m in index.query([1, 1], top_k=1)] == ["c"]


# -- the namespace condition left out while redundant ------------------------------------


def test_queries_stay_in_their_namespace_when_searched_without_its_condition(
    store: vectorport.Store,
) -> None:
    """An exact search first goes without ``ns = …`` and checks the rows' namespaces;
    rows of another namespace closest to the query bring the condition back, and the
    answers are the reference's for each namespace, filtered or not."""
    from vectorport.conformance.base import canonical_records
    from vectorport.conformance.reference import reference_query
    from vectorport.core.filters.parse import parse_filter

    index = store.create_index("scoped_idx", 2, "euclidean")
    mine = [{"id": f"m{i:02d}", "vector": [float(i), 1.0], "metadata": {"n": i}}
            for i in range(30)]
    theirs = [{"id": f"t{i:02d}", "vector": [0.1 * i, 0.0], "metadata": {"n": i}}
              for i in range(30)]
    index.upsert(mine)
    adapter = store.adapter
    flt = {"n": {"$gte": 3}}

    def check(namespace: str, rows: list[dict[str, Any]]) -> None:
        for query_filter in (None, flt):
            got = index.query([0.0, 0.0], top_k=5, namespace=namespace, filter=query_filter)
            want = reference_query(
                canonical_records(rows, 2), "euclidean", vector=[0.0, 0.0], top_k=5,
                filter=None if query_filter is None else parse_filter(query_filter))
            assert [m.id for m in got] == [e.id for e in want]
            assert [m.score for m in got] == pytest.approx([e.score for e in want], abs=1e-9)

    check("", mine)
    assert "scoped_idx" not in adapter._mixed  # type: ignore[attr-defined]
    index.upsert(theirs, namespace="other")  # nearer the query than any of mine
    check("", mine)
    assert "scoped_idx" in adapter._mixed  # type: ignore[attr-defined]
    check("other", theirs)
    index.delete_namespace("other")
    assert "scoped_idx" not in adapter._mixed  # type: ignore[attr-defined]
    check("", mine)


def test_a_kept_table_handle_follows_a_table_recreated_elsewhere(folder: Path) -> None:
    url = f"lancedb://{folder}"
    with vectorport.connect(url) as first, vectorport.connect(url) as second:
        mine = first.create_index("kept_idx", 2, "dotproduct")
        mine.upsert([("x", [1, 0])])
        assert [m.id for m in mine.query([1, 0], top_k=5)] == ["x"]  # handle now kept
        second.delete_index("kept_idx")
        second.create_index("kept_idx", 2, "dotproduct").upsert([("y", [1, 0])])
        assert [m.id for m in mine.query([1, 0], top_k=5)] == ["y"]
        mine.upsert([("z", [0, 1])])
        assert sorted(second.index("kept_idx").fetch(["x", "y", "z"])) == ["y", "z"]
        second.delete_index("kept_idx")
        with pytest.raises(IndexNotFoundError):
            mine.query([1, 0], top_k=5)


def _stale_calls(index: vectorport.Index) -> dict[str, Any]:
    """Every data call of a handle, each to its outcome: a result or an error's type."""
    calls: dict[str, Any] = {
        "query": lambda: index.query([1.0, 0.0], top_k=3),
        "upsert": lambda: index.upsert([("s", [1.0, 0.0])]),
        "fetch": lambda: index.fetch(["x", "y"]),
        "count": lambda: index.count(),
        "list_ids": lambda: index.list_ids().ids,  # type: ignore[attr-defined]
        "list_namespaces": lambda: index.list_namespaces(),
        "delete": lambda: index.delete(["x", "y"]),
        "delete by filter": lambda: index.delete(filter={"n": {"$exists": False}}),
        "delete_namespace": lambda: index.delete_namespace(""),
    }
    outcomes: dict[str, Any] = {}
    for name, call in calls.items():
        try:
            outcomes[name] = call()
        except Exception as exc:
            outcomes[name] = type(exc).__name__
    return outcomes


@pytest.mark.parametrize("dimension", [2, 3])
def test_a_handle_of_a_deleted_index_never_reaches_the_new_one(
        store: vectorport.Store, dimension: int) -> None:
    """As on the oracle: once its index is deleted, a handle raises IndexNotFoundError on
    every call, also after an index of that name (of the same or another dimension) is
    created, and the new index keeps its records."""
    outcomes = []
    for opened in (vectorport.connect("memory://"), store):
        old = opened.create_index("stale_idx", 2, "euclidean")
        old.upsert([("x", [1.0, 0.0])])
        opened.delete_index("stale_idx")
        gone = _stale_calls(old)
        new = opened.create_index("stale_idx", dimension, "euclidean")
        new.upsert([("y", [1.0] * dimension)])
        outcomes.append((gone, _stale_calls(old), new.count(), sorted(new.fetch(["x", "y"]))))
    assert outcomes[1] == outcomes[0]
    assert set(outcomes[0][1].values()) == {"IndexNotFoundError"}
    assert outcomes[0][2:] == (1, ["y"])


def test_the_handle_that_created_an_index_stays_current(store: vectorport.Store) -> None:
    """The spec read back from the table is JSON (a tuple among backend options comes
    back a list): the creating handle is still the index's, after it is described, as
    on the oracle."""
    options = {"other": {"pair": (1, 2), "nested": {"t": ("a",)}}}
    outcomes = []
    for opened in (vectorport.connect("memory://"), store):
        index = opened.create_index("options_idx", 2, "cosine", backend_options=options)
        opened.describe_index("options_idx")
        opened.list_indexes()
        index.upsert([("a", [1.0, 0.0])])
        outcomes.append(([m.id for m in index.query([1.0, 0.0])], index.count(),
                         index.list_ids().ids))  # type: ignore[attr-defined]
    assert outcomes[1] == outcomes[0] == (["a"], 1, ("a",))


def test_a_handle_of_an_index_replaced_elsewhere_deletes_nothing(folder: Path) -> None:
    """Another connection replaced the index with one of another dimension: a delete
    through the old handle reads the stored spec first and refuses, and so does every
    call once a search has failed on the other dimension."""
    url = f"lancedb://{folder}"
    with vectorport.connect(url) as first, vectorport.connect(url) as second:
        mine = first.create_index("replaced_idx", 2, "cosine")
        mine.upsert([("x", [1.0, 0.0])])
        assert mine.count() == 1
        second.delete_index("replaced_idx")
        theirs = second.create_index("replaced_idx", 3, "cosine")
        theirs.upsert([("x", [1.0, 0.0, 0.0]), ("y", [0.0, 1.0, 0.0])])
        for delete in (lambda: mine.delete(["x"]), lambda: mine.delete(filter={"n": 1}),
                       lambda: mine.delete_namespace("")):
            with pytest.raises(IndexNotFoundError):
                delete()
        with pytest.raises(IndexNotFoundError):
            mine.query([1.0, 0.0])
        with pytest.raises(IndexNotFoundError):
            mine.count()
        assert sorted(theirs.fetch(["x", "y"])) == ["x", "y"]
        assert sorted(first.index("replaced_idx").fetch(["x", "y"])) == ["x", "y"]


# -- upserts handed to the engine directly -------------------------------------------------


def test_upserts_go_to_the_engine_directly_and_replace_whole_rows(folder: Path) -> None:
    """Upserts skip the SDK's schema read and input sanitiser (:mod:`.writes`); the
    engine still merges on the latest version (two connections writing in turn replace
    each other's rows) and checks the batch against the table (a table re-created
    elsewhere with another dimension refuses it, writing nothing)."""
    from vectorport.adapters.lancedb import writes

    url = f"lancedb://{folder}"
    with vectorport.connect(url) as first, vectorport.connect(url) as second:
        mine = first.create_index("direct_idx", 2, "dotproduct")
        theirs = second.index("direct_idx")
        assert writes.direct(first.adapter._table("direct_idx"))  # type: ignore[attr-defined]
        metadata: list[dict[str, Any]] = [{"n": 1}, {"n": 1.0}, {"n": True}, {"tags": ["a"]}]
        for turn, meta in enumerate(metadata):
            (mine if turn % 2 == 0 else theirs).upsert([("r", [1.0, float(turn)], meta)])
            for index in (mine, theirs):
                (record,) = index.fetch(["r"]).values()
                assert record.metadata == ({"tags": ("a",)} if "tags" in meta else meta)
                assert type(record.metadata.get("n")) is type(meta.get("n"))
                assert record.vector.tolist() == [1.0, float(turn)]
        assert mine.count() == theirs.count() == 1
        second.delete_index("direct_idx")
        replaced = second.create_index("direct_idx", 3, "dotproduct")
        with pytest.raises(IndexNotFoundError):  # the engine refuses; the handle is stale
            mine.upsert([("s", [1.0, 0.0])])
        assert replaced.count() == 0


def test_an_upsert_replaces_a_row_its_connection_has_not_read(folder: Path) -> None:
    """The write itself merges on the table's latest version: a connection whose kept
    table handle has not read since another connection inserted a row replaces that row
    (a handle without the version check merges on its own version, misses the row and
    adds a second one with the same id; measured with LanceDB's default connection)."""
    url = f"lancedb://{folder}"
    with vectorport.connect(url) as first, vectorport.connect(url) as second:
        mine = first.create_index("unread_idx", 2, "dotproduct")
        theirs = second.index("unread_idx")
        theirs.upsert([("x", [1.0, 1.0])])  # second's table handle is now open and kept
        mine.upsert([("r", [1.0, 0.0], {"n": 1})])
        theirs.upsert([("r", [0.0, 1.0], {"tag": "b"})])  # no read by second in between
        assert mine.count() == theirs.count() == 2
        assert first.describe_index("unread_idx").count == 2
        (record,) = mine.fetch(["r"]).values()
        assert record.metadata == {"tag": "b"} and record.vector.tolist() == [0.0, 1.0]


def test_an_upsert_follows_a_table_recreated_elsewhere_with_fewer_versions(
        folder: Path) -> None:
    """A merge works on the table's latest version even when another connection dropped
    and re-created the table, whose version numbers then restart below the ones this
    connection has seen (``checkout_latest`` on a kept handle stays on the dropped
    table's manifest in that case; :mod:`.writes` opens the table afresh instead)."""
    url = f"lancedb://{folder}"
    with vectorport.connect(url) as first, vectorport.connect(url) as second:
        mine = first.create_index("fewer_idx", 2, "dotproduct")
        for turn in range(6):  # this connection's handles are now at a late version
            mine.upsert([(f"old{turn}", [1.0, float(turn)])])
        second.delete_index("fewer_idx")
        theirs = second.create_index("fewer_idx", 2, "dotproduct")
        theirs.upsert([("y", [1.0, 0.0], {"by": "second"})])
        mine.upsert([("z", [0.0, 1.0], {"by": "first"})])
        mine.upsert([("y", [0.5, 0.5], {"by": "first"})])  # replaces the row second wrote
        for index in (mine, theirs):
            found = index.fetch(["old0", "y", "z"])
            assert sorted(found) == ["y", "z"]
            assert found["y"].metadata == {"by": "first"}
            assert found["y"].vector.tolist() == [0.5, 0.5]
            assert index.count() == 2


def test_searches_go_to_the_engine_directly_with_the_sdk_answer(store: vectorport.Store) -> None:
    """A search skips the async builder's schema read for blob columns
    (:func:`.search.collect`): the engine's ``execute`` is found, and gives the rows and
    schema the SDK's ``to_arrow`` gives, filtered or not."""
    from vectorport.adapters.lancedb import search

    index = store.create_index("engine_idx", 2, "euclidean")
    index.upsert([(f"r{i}", [float(i), 1.0], {"n": i, "tag": "ab"[i % 2]}) for i in range(20)])
    adapter = store.adapter
    table = adapter._search_tables.table("engine_idx")  # type: ignore[attr-defined]
    for where in (None, "json_get_int(meta, 'i_n') >= 3"):
        def build(where: str | None = where) -> Any:
            query = (table.query().nearest_to(np.array([0.0, 0.0], np.float32))
                     .column(codec.VECTOR).select([codec.ID, codec.META, "_distance"]).limit(5))
            return query if where is None else query.where(where)
        assert search.native_execute(build()) is not None
        direct = search.run(search.collect(build()))
        assert direct.equals(search.run(build().to_arrow()))
        assert direct.num_rows == 5

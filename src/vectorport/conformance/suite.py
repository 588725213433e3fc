"""The conformance suite: the contract as pytest tests, shipped with the package.

Use it by subclassing one class in a test module and providing one fixture::

    import pytest, vectorport
    from vectorport.conformance import ConformanceSuite

    class TestMyBackend(ConformanceSuite):
        @pytest.fixture(scope="class")
        @classmethod
        def store(cls):
            with vectorport.connect("mydb://...") as store:
                yield store

The ``store`` fixture must have class or session scope (a class-scoped fixture in a
class is a ``classmethod``). Every expected result comes
from the oracle and the reference query, never from a previous run. Tests of features
the adapter does not declare check that they raise :class:`UnsupportedFeatureError`.

Everything a binding may set (class attributes, and one method):

- ``store`` (fixture, required): the :class:`Store` under test, class or session scope.
  A binding that forgets it gets an error saying so, not a missing-fixture trace.
- ``known_filter_deviations``: names of :data:`FILTER_CASES` that the adapter refuses
  with ``UnsupportedFeatureError`` although it declares every operator they use (for
  example a negation its backend cannot express exactly). The suite checks that each
  really raises, so a deviation is declared, documented and tested, never silent.
- ``filter_deviation(node)`` (method): the same refusal as a predicate on a filter AST,
  for the filters the differential and sequence tests generate (default: refuses
  nothing).
- ``score_tolerance``: absolute tolerance of score comparisons (default 1e-3); an
  approximate (ANN) index passes the suite's small datasets exactly, so this is about
  float rounding only.
- ``differential_examples``: how many generated cases the differential test runs
  against the oracle (default 300).
- ``sequence_steps``: how many interleaved writes, deletes and reads the sequence test
  runs per metric against the reference adapter (default 90, :mod:`.sequences`).
- ``search_loses_records``: the reason (naming the engine's own issue) when the engine
  is known to leave live records unreachable by vector search after deletes and upserts;
  the sequence test then compares answers over the records a search still reaches and
  names the others in a warning (default None: every record must be found).
- ``matrix_label``: the binding's column title in the capability matrix (default: the
  class name without ``Test``); ``matrix_include = False`` leaves it out of the matrix.

Each test names the matrix rows it proves with ``@pytest.mark.feature(...)`` (see
:mod:`vectorport.conformance.base`); ``vectorport matrix`` groups outcomes by them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from vectorport.conformance.base import (
    BAD_INPUT,
    BASE,
    CONCURRENCY,
    CRUD,
    DIFFERENTIAL,
    FILTER_NAMESPACE,
    FILTER_ROWS,
    HOSTILE,
    METRIC_ROWS,
    OPPOSITE,
    ORTHOGONAL,
    QUERY,
    IndexFactory,
    SuiteBase,
    assert_same_matches,
    canonical_records,
    filter_rows,
    unique_name,
)
from vectorport.conformance.dataset import (
    FILTER_CASES,
    HOSTILE_FIELD_NAMES,
    HOSTILE_STRINGS,
    dataset_rows,
)
from vectorport.conformance.differential import DifferentialTests
from vectorport.conformance.handles import (
    assert_like_oracle,
    oracle_outcomes,
    stale_handle_outcomes,
)
from vectorport.conformance.limits import DeclaredLimitTests, HostileTextTests
from vectorport.conformance.loads import LoadTests
from vectorport.conformance.precision import PrecisionTests
from vectorport.conformance.reference import reference_query
from vectorport.conformance.robustness import ConcurrencyTests, HostileInputTests
from vectorport.conformance.scanning import ScanTests
from vectorport.conformance.sequences import SequenceTests
from vectorport.core.capabilities import ALL_FILTER_OPERATORS
from vectorport.core.errors import (
    DimensionMismatchError,
    FilterError,
    IndexExistsError,
    IndexNotFoundError,
    UnsupportedFeatureError,
    ValidationError,
)
from vectorport.core.filters.ast import operators_used
from vectorport.core.filters.parse import parse_filter
from vectorport.core.store import Index, Store
from vectorport.core.types import METRICS, Metric, Record, SparseVector


class LifecycleTests(SuiteBase):
    @pytest.mark.feature("index lifecycle")
    def test_create_describe_list_delete(self, store: Store) -> None:
        name = unique_name("life")
        metric = self.a_metric(store)
        index = store.create_index(name, 4, metric)
        try:
            assert index.name == name
            info = store.describe_index(name)
            assert (info.dimension, info.metric, info.count) == (4, metric, 0)
            assert name in store.list_indexes()
            with pytest.raises(IndexExistsError):
                store.create_index(name, 4, metric)
            again = store.create_index(name, 4, metric, exist_ok=True)
            assert again.spec.dimension == 4
            with pytest.raises(IndexExistsError):
                store.create_index(name, 5, metric, exist_ok=True)
        finally:
            store.delete_index(name)
        assert name not in store.list_indexes()
        with pytest.raises(IndexNotFoundError):
            store.describe_index(name)
        with pytest.raises(IndexNotFoundError):
            store.index(name)
        with pytest.raises(IndexNotFoundError):
            store.delete_index(name)
        store.delete_index(name, missing_ok=True)

    @pytest.mark.feature("index lifecycle")
    def test_a_handle_of_a_deleted_index_reaches_no_new_one(self, store: Store) -> None:
        """Every call through a handle kept across a delete of its index answers as the
        reference adapter's does (``IndexNotFoundError``), and the index created again
        under its name, with another dimension, holds only its own record."""
        metric = self.a_metric(store)
        first, second = (2, metric), (3, metric)
        name = unique_name("stale")
        try:
            got = stale_handle_outcomes(store, store, name, first, second)
        finally:
            store.delete_index(name, missing_ok=True)
        assert_like_oracle(got, oracle_outcomes(first, second))

    @pytest.mark.feature("index lifecycle")
    @pytest.mark.parametrize("bad", ["", "ab", "Abc", "1abc", "a-b-c", "a" * 46, "a b c",
                                     "x'; drop", "ünï"])
    def test_bad_index_names_are_refused(self, store: Store, bad: str) -> None:
        with pytest.raises(ValidationError):
            store.create_index(bad, 4)

    @pytest.mark.feature(*METRIC_ROWS, when="undeclared")
    def test_undeclared_metrics_raise(self, store: Store) -> None:
        for metric in METRICS:
            if metric not in store.capabilities.metrics:
                with pytest.raises(UnsupportedFeatureError):
                    store.create_index(unique_name("m"), 4, metric)

    @pytest.mark.feature("index lifecycle")
    def test_counts_in_describe(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        index.upsert([(f"a{i}", [1, i, 0, 0]) for i in range(3)])
        index.upsert([(f"b{i}", [1, i, 0, 0]) for i in range(2)], namespace="other")
        info = index.describe()
        assert info.count == 5
        assert dict(info.namespaces) == {"": 3, "other": 2}


class CrudTests(SuiteBase):
    @pytest.mark.feature(CRUD)
    def test_upsert_count_fetch(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        rows = dataset_rows()[:10]
        assert index.upsert(rows) == 10
        assert index.count() == 10
        fetched = index.fetch([r["id"] for r in rows] + ["missing-id"])
        assert list(fetched) == [r["id"] for r in rows]
        for want in canonical_records(rows):
            got = fetched[want.id]
            assert dict(got.metadata) == dict(want.metadata), want.id
            np.testing.assert_allclose(got.vector, want.vector, rtol=1e-6, atol=1e-6)
            if store.capabilities.documents:
                assert got.document == want.document

    @pytest.mark.feature(CRUD)
    def test_reupsert_is_idempotent_and_replaces_metadata(
        self, store: Store, make_index: IndexFactory
    ) -> None:
        index = make_index(metric=self.a_metric(store))
        index.upsert([("x", [1, 0, 0, 0], {"a": 1, "b": "keep?"}), ("y", [0, 1, 0, 0], {"a": 2})])
        index.upsert([("x", [1, 0, 0, 0], {"a": 1, "b": "keep?"})])
        assert index.count() == 2
        index.upsert([("x", [0, 0, 1, 0], {"c": True})])
        assert index.count() == 2
        got = index.fetch(["x"])["x"]
        assert dict(got.metadata) == {"c": True}, "upsert must replace metadata, not merge"
        np.testing.assert_allclose(got.vector, [0, 0, 1, 0])
        assert index.count(filter={"b": {"$exists": True}}) == 0
        assert [m.id for m in index.query([0, 0, 1, 0], top_k=1)] == ["x"]

    @pytest.mark.feature(CRUD)
    def test_repeated_ids_in_one_call_keep_the_last(
        self, store: Store, make_index: IndexFactory
    ) -> None:
        index = make_index(metric=self.a_metric(store))
        index.upsert([("x", [1, 0, 0, 0], {"v": 1}), ("x", [0, 1, 0, 0], {"v": 2})])
        assert index.count() == 1
        assert dict(index.fetch(["x"])["x"].metadata) == {"v": 2}

    @pytest.mark.feature(CRUD)
    def test_numpy_input(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        vectors = np.eye(4, dtype=np.float64)
        index.upsert([(f"e{i}", vectors[i]) for i in range(4)])
        got = index.query(np.array([0, 0, 1, 0], dtype=np.float32), top_k=1)
        assert [m.id for m in got] == ["e2"]

    @pytest.mark.feature(CRUD)
    def test_fetch_missing_and_empty(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        assert index.fetch(["nope"]) == {}
        assert index.fetch([]) == {}
        index.upsert([("a", [1, 0, 0, 0])])
        assert list(index.fetch(["nope", "a"])) == ["a"]

    @pytest.mark.feature(CRUD)
    def test_delete_by_ids(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        index.upsert([(f"d{i}", [1, i, 0, 0]) for i in range(5)])
        index.delete(["d1", "d3", "never-existed"])
        assert index.count() == 3
        assert sorted(index.fetch([f"d{i}" for i in range(5)])) == ["d0", "d2", "d4"]
        assert {m.id for m in index.query([1, 0, 0, 0], top_k=10)} == {"d0", "d2", "d4"}

    @pytest.mark.feature("delete by filter", when="always")
    def test_delete_by_filter(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        rows = dataset_rows()
        index.upsert(rows)
        flt = {"$or": [{"genre": "drama"}, {"year": {"$lt": 2018}}]}
        if not store.capabilities.delete_by_filter:
            with pytest.raises(UnsupportedFeatureError):
                index.delete(filter=flt)
            return
        node = parse_filter(flt)
        keep = [r.id for r in canonical_records(rows) if not _matches(node, r)]
        index.delete(filter=flt)
        assert index.count() == len(keep)
        assert sorted(index.fetch([r["id"] for r in rows])) == sorted(keep)

    @pytest.mark.feature(CRUD)
    def test_delete_argument_errors(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        index.upsert([("a", [1, 0, 0, 0], {"k": 1})])
        with pytest.raises(ValidationError):
            index.delete()
        with pytest.raises(ValidationError):
            index.delete(["a"], filter={"k": 1})
        with pytest.raises(ValidationError):
            index.delete(filter={})
        assert index.count() == 1

    @pytest.mark.feature("documents", when="always")
    def test_documents(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        row = {"id": "doc", "vector": [1, 0, 0, 0], "document": "the text", "metadata": {"k": 1}}
        if not store.capabilities.documents:
            with pytest.raises(UnsupportedFeatureError):
                index.upsert([row])
            return
        index.upsert([row])
        (match,) = index.query([1, 0, 0, 0], top_k=1)
        assert match.document == "the text"
        assert dict(match.metadata or {}) == {"k": 1}, "the document must not leak into metadata"
        (bare,) = index.query([1, 0, 0, 0], top_k=1, include_documents=False,
                              include_metadata=False)
        assert bare.document is None and bare.metadata is None
        assert index.count(filter={"document": {"$exists": True}}) == 0

    def test_include_vectors(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        index.upsert([("v", [0.5, 0.25, 0, 1])])
        (plain,) = index.query([0.5, 0.25, 0, 1], top_k=1)
        assert plain.vector is None
        (with_vec,) = index.query([0.5, 0.25, 0, 1], top_k=1, include_vectors=True)
        assert with_vec.vector is not None
        np.testing.assert_allclose(with_vec.vector, [0.5, 0.25, 0, 1], rtol=1e-6)


class ScoreTests(SuiteBase):
    @pytest.mark.parametrize("metric", [
        pytest.param(m, marks=pytest.mark.feature(f"metric {m}")) for m in METRICS])
    def test_score_table(self, store: Store, make_index: IndexFactory, metric: Metric) -> None:
        if metric not in store.capabilities.metrics:
            pytest.skip(f"{metric} not declared (checked by test_undeclared_metrics_raise)")
        index = make_index(metric=metric)
        rows = [("base", BASE), ("opposite", OPPOSITE), ("orthogonal", ORTHOGONAL)]
        index.upsert(rows)
        expected = reference_query(canonical_records([{"id": i, "vector": v} for i, v in rows]),
                                   metric, vector=QUERY, top_k=3)
        got = index.query(QUERY, top_k=3)
        assert_same_matches(got, expected, self.score_tolerance, f"score table {metric}")

    @pytest.mark.feature("order, ties, top_k")
    def test_sort_order_ties_and_top_k(self, store: Store, make_index: IndexFactory) -> None:
        metric = self.a_metric(store)
        index = make_index(metric=metric)
        # Three exact ties (same vector) and distinct others.
        rows = [("t-c", [0, 1, 0, 0]), ("t-a", [0, 1, 0, 0]), ("t-b", [0, 1, 0, 0]),
                ("near", [0.1, 1, 0, 0]), ("far", [1, -1, 0, 0])]
        index.upsert(rows)
        got = index.query([0, 1, 0, 0], top_k=5)
        assert [m.id for m in got][:3] == ["t-a", "t-b", "t-c"], "ties go by id ascending"
        assert [m.id for m in index.query([0, 1, 0, 0], top_k=2)] == ["t-a", "t-b"]
        assert len(index.query([0, 1, 0, 0], top_k=1)) == 1
        assert len(index.query([0, 1, 0, 0], top_k=100)) == 5
        with pytest.raises(ValidationError):
            index.query([0, 1, 0, 0], top_k=0)
        with pytest.raises(ValidationError):
            index.query([0, 1, 0, 0], top_k=store.capabilities.max_top_k + 1)

    def test_query_many_equals_the_reference(self, store: Store, make_index: IndexFactory) -> None:
        metric = self.a_metric(store)
        index = make_index(metric=metric)
        rows = dataset_rows()
        index.upsert(rows)
        records = canonical_records(rows)
        queries: list[list[float]] = [[0.3, 0.2, 0.1, 0.5], [-1, 0.5, 0, 0.2], [0, 0, 1, 1]]
        flt = {"year": {"$gte": 2017}}
        node = parse_filter(flt)
        got = index.query_many(np.array(queries), top_k=5, filter=flt)
        assert len(got) == len(queries)
        for query, matches in zip(queries, got, strict=True):
            expected = reference_query(records, metric, vector=query, filter=node,
                                       top_k=len(records))
            assert_same_matches(matches, expected, self.score_tolerance, "query_many", 5)
        assert index.query_many(np.zeros((0, 4))) == []
        with pytest.raises(DimensionMismatchError):
            index.query_many([[1, 0, 0]])

    @pytest.mark.feature("min_score (inclusive)")
    def test_min_score_is_inclusive(self, store: Store, make_index: IndexFactory) -> None:
        caps = store.capabilities.metrics
        metric: Metric = "dotproduct" if "dotproduct" in caps else self.a_metric(store)
        index = make_index(metric=metric)
        rows = [("two", [1, 1, 0, 0]), ("one", [1, 0, 0, 0]), ("zero", [0, 0, 1, 0]),
                ("neg", [-1, 0, 0, 0])]
        index.upsert(rows)
        records = canonical_records([{"id": i, "vector": v} for i, v in rows])
        full = reference_query(records, metric, vector=[1, 1, 0, 0], top_k=4)
        threshold = full[1].score  # exactly the second score: must be kept
        if metric != "dotproduct":
            threshold -= self.score_tolerance / 10  # float rounding of cos/l2 engines
        got = index.query([1, 1, 0, 0], top_k=4, min_score=threshold)
        assert [m.id for m in got] == [e.id for e in full[:2]]
        assert index.query([1, 1, 0, 0], top_k=4, min_score=1e9) == []


class FilterTests(SuiteBase):
    @pytest.fixture(scope="class")
    @classmethod
    def filter_index(cls, store: Store) -> Iterator[tuple[Index, list[Record]]]:
        name = unique_name("filters")
        index = store.create_index(name, 4, cls.a_metric(store))
        rows = dataset_rows()
        index.upsert(rows, namespace=FILTER_NAMESPACE)
        # a decoy in another namespace, matching many filters, must never appear
        index.upsert([{"id": "decoy", "vector": [1, 0, 0, 0],
                       "metadata": {"year": 2020, "genre": "drama", "tags": ["a", "b", "c"]}}])
        yield index, canonical_records(rows)
        store.delete_index(name, missing_ok=True)

    @pytest.mark.parametrize("case", [
        pytest.param(c, marks=pytest.mark.feature(*filter_rows(c))) for c in sorted(FILTER_CASES)])
    def test_filter_case(
        self, store: Store, filter_index: tuple[Index, list[Record]], case: str
    ) -> None:
        index, records = filter_index
        raw = FILTER_CASES[case]
        node = parse_filter(raw)
        declared = operators_used(node) <= store.capabilities.filter_operators
        query = [0.3, 0.2, 0.1, 0.5]
        if not declared or case in self.known_filter_deviations:
            with pytest.raises(UnsupportedFeatureError):
                index.query(query, filter=raw, top_k=len(records), namespace=FILTER_NAMESPACE)
            return
        expected = reference_query(records, index.spec.metric, vector=query, filter=node,
                                   top_k=len(records))
        got = index.query(query, filter=raw, top_k=len(records), namespace=FILTER_NAMESPACE)
        assert_same_matches(got, expected, self.score_tolerance, f"filter {case} {raw}")
        if store.capabilities.count_by_filter:
            assert index.count(FILTER_NAMESPACE, filter=raw) == len(expected), f"count {case}"

    def test_bool_and_number_filters_stay_apart(
        self, store: Store, filter_index: tuple[Index, list[Record]]
    ) -> None:
        """``True == 1`` in Python: an adapter caching compiled filters must not mix them."""
        index, records = filter_index
        if "$eq" not in store.capabilities.filter_operators:
            pytest.skip("$eq not declared")
        for raw in ({"mixed": True}, {"mixed": 1}, {"mixed": False}, {"mixed": 0},
                    {"mixed": True}):
            node = parse_filter(raw)
            want = sorted(r.id for r in records if _matches(node, r))
            got = index.query([1, 0, 0, 0], filter=raw, top_k=len(records),
                              namespace=FILTER_NAMESPACE)
            assert sorted(m.id for m in got) == want, raw

    @pytest.mark.feature(*FILTER_ROWS, when="undeclared")
    def test_undeclared_operators_raise(
        self, store: Store, filter_index: tuple[Index, list[Record]]
    ) -> None:
        index, _ = filter_index
        samples: dict[str, dict[str, Any]] = {
            "$eq": {"a": 1}, "$ne": {"a": {"$ne": 1}}, "$gt": {"a": {"$gt": 1}},
            "$gte": {"a": {"$gte": 1}}, "$lt": {"a": {"$lt": 1}}, "$lte": {"a": {"$lte": 1}},
            "$in": {"a": {"$in": [1]}}, "$nin": {"a": {"$nin": [1]}},
            "$exists": {"a": {"$exists": True}}, "$all": {"a": {"$all": ["x"]}},
            "$not": {"a": {"$not": {"$eq": 1}}},
            "$and": {"$and": [{"a": 1}]}, "$or": {"$or": [{"a": 1}]},
            "$nor": {"$nor": [{"a": 1}]},
        }
        for op in sorted(ALL_FILTER_OPERATORS - store.capabilities.filter_operators):
            with pytest.raises(UnsupportedFeatureError) as info:
                index.query([1, 0, 0, 0], filter=samples[op])
            assert store.backend in str(info.value) and op in str(info.value)

    @pytest.mark.feature(HOSTILE)
    @pytest.mark.parametrize("key", HOSTILE_FIELD_NAMES)
    def test_hostile_field_names_are_refused(
        self, filter_index: tuple[Index, list[Record]], key: str
    ) -> None:
        index, records = filter_index
        with pytest.raises(FilterError):
            index.query([1, 0, 0, 0], filter={key: 1}, namespace=FILTER_NAMESPACE)
        with pytest.raises(FilterError):
            index.count(FILTER_NAMESPACE, filter={"$or": [{"year": 1}, {key: {"$ne": 1}}]})
        assert index.count(FILTER_NAMESPACE) == len(records)

    @pytest.mark.feature(HOSTILE)
    @pytest.mark.parametrize("value", HOSTILE_STRINGS)
    def test_hostile_values_are_literal(
        self, store: Store, filter_index: tuple[Index, list[Record]], value: str
    ) -> None:
        index, records = filter_index
        if "$eq" not in store.capabilities.filter_operators:
            pytest.skip("$eq not declared")
        got = index.query([1, 0, 0, 0], filter={"text": value}, top_k=len(records),
                          namespace=FILTER_NAMESPACE)
        want = [r.id for r in records if r.metadata.get("text") == value]
        assert [m.id for m in got] == want
        assert index.count(FILTER_NAMESPACE) == len(records)

    @pytest.mark.parametrize("bad", [
        {"a": None}, {"a": float("nan")}, {"a": {"$gt": True}}, {"a": {"$in": []}},
        {"a": {"$in": [1, "x"]}}, {"a": {"$in": 1}}, {"$and": []}, {"$or": [{}]},
        {"$not": {}}, {"a": {}}, {"a": {"$regex": "x"}}, {"$where": "1"}, {"a": [1, 2]},
        {"a": {"b": 1}}, {"a": b"bytes"}, {"a": {"$exists": 1}},
    ])
    @pytest.mark.feature(BAD_INPUT)
    def test_bad_filters_raise_before_io(
        self, filter_index: tuple[Index, list[Record]], bad: dict[str, Any]
    ) -> None:
        index, _ = filter_index
        with pytest.raises(FilterError):
            index.query([1, 0, 0, 0], filter=bad)


class NamespaceTests(SuiteBase):
    @pytest.mark.feature("namespaces isolated")
    def test_isolation_of_every_operation(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        index.upsert([("same", [1, 0, 0, 0], {"ns": "a"}), ("only-a", [0, 1, 0, 0], {"ns": "a"})],
                     namespace="ns-a")
        index.upsert([("same", [0, 0, 1, 0], {"ns": "b"})], namespace="ns_b.2")
        index.upsert([("default", [1, 1, 0, 0], {"ns": ""})])
        assert index.count("ns-a") == 2 and index.count("ns_b.2") == 1 and index.count() == 1
        assert {m.id for m in index.query([1, 0, 0, 0], namespace="ns-a", top_k=10)} == {
            "same", "only-a"}
        assert [m.id for m in index.query([1, 0, 0, 0], namespace="ns_b.2", top_k=10)] == ["same"]
        assert [m.id for m in index.query([1, 0, 0, 0], top_k=10)] == ["default"]
        assert dict(index.fetch(["same"], namespace="ns_b.2")["same"].metadata) == {"ns": "b"}
        assert index.fetch(["only-a"], namespace="ns_b.2") == {}
        assert index.fetch(["same"]) == {}
        assert index.query([1, 0, 0, 0], namespace="empty-ns") == []
        assert index.count("empty-ns") == 0
        assert set(index.list_namespaces()) == {"", "ns-a", "ns_b.2"}
        index.delete(["same"], namespace="ns_b.2")
        assert index.count("ns-a") == 2 and index.count("ns_b.2") == 0
        if store.capabilities.delete_by_filter:
            index.delete(filter={"ns": "a"}, namespace="")
            assert index.count("ns-a") == 2 and index.count() == 1
        index.delete_namespace("ns-a")
        assert index.count("ns-a") == 0 and index.count() == 1
        assert set(index.list_namespaces()) == {""}

    @pytest.mark.feature("namespaces isolated")
    @pytest.mark.parametrize("bad", ["-x", "a/b", "a b", "x" * 65, "ns'--", "é"])
    def test_bad_namespaces_are_refused(
        self, store: Store, make_index: IndexFactory, bad: str
    ) -> None:
        index = make_index(metric=self.a_metric(store))
        with pytest.raises(ValidationError):
            index.upsert([("a", [1, 0, 0, 0])], namespace=bad)
        with pytest.raises(ValidationError):
            index.query([1, 0, 0, 0], namespace=bad)
        assert index.count() == 0


def _sparse_rows() -> list[dict[str, Any]]:
    rows = []
    for i, row in enumerate(dataset_rows()[:16]):
        indices = sorted({(i * 7) % 23, (i * 3 + 1) % 23, 30 + i % 4})
        values = [round(0.1 + ((i + j) % 5) * 0.2, 3) for j in range(len(indices))]
        rows.append({**row, "sparse": {"indices": indices, "values": values}})
    rows.append({"id": "dense-only", "vector": [0.5, 0.5, 0.5, 0.5], "metadata": {"year": 2020}})
    return rows


class SparseTests(SuiteBase):
    @pytest.mark.feature("sparse vectors", "hybrid dense + sparse", when="undeclared")
    def test_sparse_undeclared_raises(self, store: Store) -> None:
        if store.capabilities.sparse:
            pytest.skip("sparse is declared")
        with pytest.raises(UnsupportedFeatureError):
            store.create_index(unique_name("sp"), 4, self.a_metric(store), sparse=True)

    def _empty_sparse_index(self, store: Store, make_index: IndexFactory, tag: str) -> Index:
        if not store.capabilities.sparse:
            pytest.skip("sparse not declared (checked by test_sparse_undeclared_raises)")
        metric: Metric = ("dotproduct" if "dotproduct" in store.capabilities.metrics
                          else self.a_metric(store))
        return make_index(metric=metric, sparse=True, tag=tag)

    def _sparse_index(self, store: Store, make_index: IndexFactory) -> tuple[Index, list[Record]]:
        index = self._empty_sparse_index(store, make_index, "sparse")
        rows = _sparse_rows()
        index.upsert(rows)
        return index, canonical_records(rows)

    @pytest.mark.feature("sparse vectors")
    def test_sparse_only_query(self, store: Store, make_index: IndexFactory) -> None:
        index, records = self._sparse_index(store, make_index)
        q = SparseVector((1, 7, 31), (1.0, 0.5, 2.0))
        expected = [e for e in reference_query(records, index.spec.metric, sparse=q,
                                               top_k=len(records)) if e.score > 0]
        got = [m for m in index.query(sparse=q, top_k=len(records)) if m.score > 0]
        assert_same_matches(got, expected, self.score_tolerance, "sparse")

    @pytest.mark.feature("hybrid dense + sparse", when="always")
    def test_hybrid_query(self, store: Store, make_index: IndexFactory) -> None:
        index, records = self._sparse_index(store, make_index)
        hybrid = store.capabilities.hybrid
        q = SparseVector((1, 7, 31), (1.0, 0.5, 2.0))
        dense = [0.3, 0.2, 0.1, 0.5]
        if hybrid == "none":
            with pytest.raises(UnsupportedFeatureError):
                index.query(dense, sparse=q)
            return
        top_k = 5
        expected = reference_query(records, index.spec.metric, vector=dense, sparse=q,
                                   top_k=len(records), hybrid=hybrid)
        got = index.query(dense, sparse=q, top_k=top_k)
        tolerance = self.score_tolerance if hybrid == "sum" else 1e-6
        assert_same_matches(got, expected, tolerance, f"hybrid {hybrid}", top_k)

    @pytest.mark.feature("hybrid dense + sparse")
    def test_hybrid_with_filter(self, store: Store, make_index: IndexFactory) -> None:
        index, records = self._sparse_index(store, make_index)
        if store.capabilities.hybrid == "none":
            pytest.skip("no hybrid")
        flt = {"year": {"$gte": 2018}}
        node = parse_filter(flt)
        q = SparseVector((7, 30, 32), (0.7, 1.0, 0.3))
        dense = [0.1, 0.9, 0.1, 0.2]
        expected = reference_query(records, index.spec.metric, vector=dense, sparse=q,
                                   filter=node, top_k=len(records),
                                   hybrid=store.capabilities.hybrid)
        got = index.query(dense, sparse=q, filter=flt, top_k=4)
        assert_same_matches(got, expected, self.score_tolerance, "hybrid+filter", 4)

    @pytest.mark.feature("sparse vectors")
    def test_sparse_fetch_roundtrip(self, store: Store, make_index: IndexFactory) -> None:
        index, records = self._sparse_index(store, make_index)
        want = records[3]
        got = index.fetch([want.id])[want.id]
        assert got.sparse is not None and want.sparse is not None
        assert got.sparse.indices == want.sparse.indices
        np.testing.assert_allclose(got.sparse.values, want.sparse.values, rtol=1e-6)

    @pytest.mark.feature("sparse vectors")
    def test_sparse_values_are_the_same_float32_everywhere(
        self, store: Store, make_index: IndexFactory
    ) -> None:
        """Sparse values are stored as float32, as dense vectors are (CONTRACT §1): a
        value float32 cannot hold (0.1, 1/3) comes back, from a fetch, a scan and a
        query, as its nearest float32 on every backend, and a query's own values count
        as theirs. In-process stores once kept the float64 given, while the engines
        rounded it, so the same record read back otherwise per backend."""
        index = self._empty_sparse_index(store, make_index, "sparse32")
        given = (0.1, 1 / 3, 90.33333333333333, -2.2e-8, 12345.678901)
        as_float32 = tuple(float(np.float32(v)) for v in given)
        row = {"id": "p", "vector": [0.1, 0.2, 0.3, 0.4],
               "sparse": {"indices": [2, 5, 9, 11, 40], "values": list(given)}}
        index.upsert([row])
        fetched = index.fetch(["p"])["p"].sparse
        assert fetched is not None and fetched.values == as_float32
        scanned = [r.sparse for page in index.scan(page_size=10) for r in page.records]
        assert scanned == [fetched]
        found = index.query(sparse=SparseVector((5,), (1 / 3,)), top_k=1, include_vectors=True)
        assert [m.id for m in found] == ["p"] and found[0].sparse == fetched
        exact = as_float32[1] * float(np.float32(1 / 3))
        assert found[0].score == pytest.approx(exact, rel=1e-6)

    def test_sparse_on_dense_index_is_refused(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        with pytest.raises((ValidationError, UnsupportedFeatureError)):
            index.upsert([{"id": "a", "vector": [1, 0, 0, 0],
                           "sparse": {"indices": [1], "values": [1.0]}}])
        assert index.count() == 0


class OptionTests(SuiteBase):
    @pytest.mark.feature("hint ef", "hint probes", when="always")
    def test_hints(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        index.upsert([(f"h{i}", [1, i / 10, 0, 0]) for i in range(10)])
        baseline = [m.id for m in index.query([1, 0.25, 0, 0], top_k=3)]
        hints: dict[str, dict[str, Any]] = {"ef": {"ef": 64}, "probes": {"probes": 64}}
        for hint, kwargs in hints.items():
            if hint in store.capabilities.hints:
                got = index.query([1, 0.25, 0, 0], top_k=3, **kwargs)
                assert [m.id for m in got] == baseline, f"{hint} changed the meaning"
            else:
                with pytest.raises(UnsupportedFeatureError):
                    index.query([1, 0.25, 0, 0], top_k=3, **kwargs)

    @pytest.mark.feature("strong consistency", "eventual consistency", when="always")
    def test_consistency(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        index.upsert([("c1", [1, 0, 0, 0])])
        for mode in ("strong", "eventual"):
            if mode in store.capabilities.consistency:
                got = index.query([1, 0, 0, 0], top_k=1, consistency=mode)
                if mode == "strong":
                    assert [m.id for m in got] == ["c1"], "strong must read its own write"
            else:
                with pytest.raises(UnsupportedFeatureError):
                    index.query([1, 0, 0, 0], consistency=mode)
        with pytest.raises(ValidationError):
            index.query([1, 0, 0, 0], consistency="sometimes")  # type: ignore[arg-type]

    def test_other_backends_options_are_ignored(
        self, store: Store, make_index: IndexFactory
    ) -> None:
        index = make_index(metric=self.a_metric(store))
        index.upsert([("o1", [1, 0, 0, 0])])
        others = {"no_such_backend": {"anything": 1}}
        assert [m.id for m in index.query([1, 0, 0, 0], backend_options=others)] == ["o1"]

    @pytest.mark.feature("strong consistency")
    def test_strong_read_after_each_write(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        for i in range(3):
            index.upsert([(f"w{i}", [1, i, 0, 0])])
            assert index.count() == i + 1
            assert f"w{i}" in index.fetch([f"w{i}"])
        index.delete(["w0"])
        assert index.count() == 2
        assert "w0" not in {m.id for m in index.query([1, 0, 0, 0], top_k=10)}


class ValidationTests(SuiteBase):
    @pytest.mark.parametrize("bad", [
        {"id": "", "vector": [1, 0, 0, 0]},
        {"id": "a\x00b", "vector": [1, 0, 0, 0]},
        {"id": "x" * 513, "vector": [1, 0, 0, 0]},
        {"id": 5, "vector": [1, 0, 0, 0]},
        {"id": "ok", "vector": [1, 0, 0]},
        {"id": "ok", "vector": [1, 0, 0, float("nan")]},
        {"id": "ok", "vector": [1, 0, 0, float("inf")]},
        {"id": "ok", "vector": ["1", 0, 0, 0]},
        {"id": "ok", "vector": [1, 0, 0, 0], "metadata": {"n": None}},
        {"id": "ok", "vector": [1, 0, 0, 0], "metadata": {"d": {"nested": 1}}},
        {"id": "ok", "vector": [1, 0, 0, 0], "metadata": {"bad key": 1}},
        {"id": "ok", "vector": [1, 0, 0, 0], "metadata": {"l": []}},
        {"id": "ok", "vector": [1, 0, 0, 0], "metadata": {"l": [1, 2]}},
        {"id": "ok", "vector": [1, 0, 0, 0], "metadata": {"f": float("nan")}},
        {"id": "ok", "vector": [1, 0, 0, 0], "metadata": {"i": 2**63}},
        {"id": "ok", "vector": [1, 0, 0, 0], "metadata": {"big": "x" * 41_000}},
        {"id": "ok", "vector": [1, 0, 0, 0], "unknown_field": 1},
    ])
    @pytest.mark.feature(BAD_INPUT)
    def test_bad_record_writes_nothing(
        self, store: Store, make_index: IndexFactory, bad: dict[str, Any]
    ) -> None:
        index = make_index(metric=self.a_metric(store))
        index.upsert([("keep", [1, 0, 0, 0], {"v": 1})])
        good = ("new", [0, 1, 0, 0])
        with pytest.raises(ValidationError):
            index.upsert([good, bad])
        assert index.count() == 1
        assert index.fetch(["new"]) == {}
        assert dict(index.fetch(["keep"])["keep"].metadata) == {"v": 1}

    @pytest.mark.feature(BAD_INPUT)
    def test_wrong_query_dimension(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        with pytest.raises(DimensionMismatchError):
            index.query([1, 0, 0])
        with pytest.raises(ValidationError):
            index.query()

    @pytest.mark.feature(BAD_INPUT)
    def test_unicode_and_long_ids(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        ids = ["日本語-id", "a'b\"c", "x" * 512, "with space", "🙂"]
        index.upsert([(rid, [1, i, 0, 0]) for i, rid in enumerate(ids)])
        assert sorted(index.fetch(ids)) == sorted(ids)
        index.delete([ids[1]])
        assert index.count() == len(ids) - 1


def _matches(node: Any, record: Record) -> bool:
    from vectorport.core.filters.oracle import matches

    return matches(node, record.metadata)


def _mark_tests(cls: type, *rows: str) -> None:
    """Give every test of a mixin kept in another module its matrix rows."""
    for name, fn in vars(cls).items():
        if name.startswith("test_") and callable(fn):
            pytest.mark.feature(*rows)(fn)


_mark_tests(HostileInputTests, HOSTILE)
_mark_tests(HostileTextTests, HOSTILE)
_mark_tests(DeclaredLimitTests, BAD_INPUT)
_mark_tests(ConcurrencyTests, CONCURRENCY)
_mark_tests(DifferentialTests, DIFFERENTIAL)
_mark_tests(PrecisionTests, CRUD)
_mark_tests(LoadTests, CRUD)


class ConformanceSuite(
    ConcurrencyTests,
    DifferentialTests,
    SequenceTests,
    HostileInputTests,
    LifecycleTests,
    CrudTests,
    ScoreTests,
    FilterTests,
    NamespaceTests,
    SparseTests,
    OptionTests,
    ValidationTests,
    ScanTests,
    HostileTextTests,
    DeclaredLimitTests,
    PrecisionTests,
    LoadTests,
):
    """The whole suite. Subclass it (name the subclass ``Test…``) and provide ``store``."""

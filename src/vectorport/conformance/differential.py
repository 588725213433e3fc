"""Differential tests: generated datasets and queries, every answer against the oracle.

Hypothesis draws a dataset (unique ids, vectors, metadata with missing fields, list
fields, mixed kinds, unicode), a filter over the whole §2 grammar restricted to the
operators the adapter declares, and a dense, sparse or hybrid query. The adapter's
results (ids, order, scores) must equal the reference query's. Runs are derandomized,
so every CI run checks the same cases; on failure Hypothesis shrinks the case and the
note printed with it is a self-contained reproduction.

Each example writes into a fresh namespace of one index per test, so the cost per case
is one small upsert, two queries, a count and a namespace delete.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from vectorport.conformance import strategies
from vectorport.conformance.base import SuiteBase, assert_same_matches, canonical_records, unique_name
from vectorport.conformance.reference import reference_query
from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters.ast import Filter
from vectorport.core.filters.parse import render_filter
from vectorport.core.store import Index, Store
from vectorport.core.types import Metric, SparseVector


class DifferentialTests(SuiteBase):
    """Binding attributes: ``differential_examples`` (default 300) and
    ``filter_deviation(node)`` (:class:`SuiteBase`)."""

    differential_examples: ClassVar[int] = 300

    @pytest.fixture(scope="class")
    @classmethod
    def differential_index(cls, store: Store) -> Iterator[Index]:
        caps = store.capabilities
        sparse = caps.sparse and caps.hybrid == "sum"
        metric: Metric = "dotproduct" if sparse and "dotproduct" in caps.metrics else \
            cls.a_metric(store)
        index_type = "flat" if "flat" in caps.index_types else "auto"
        name = unique_name("diff")
        index = store.create_index(name, 4, metric, sparse=sparse, index_type=index_type)
        yield index
        store.delete_index(name, missing_ok=True)

    def test_differential_against_the_oracle(self, store: Store, differential_index: Index) -> None:
        index = differential_index
        caps = store.capabilities
        sparse_on = index.spec.sparse
        operators = caps.filter_operators
        has_field_ops = bool(operators - {"$and", "$or", "$nor", "$not"})
        filter_strategy: st.SearchStrategy[Filter | None] = (
            st.none() | strategies.filters(operators) if has_field_ops else st.none()
        )
        mode_strategy = st.sampled_from(["dense", "sparse", "hybrid"] if sparse_on else ["dense"])
        tolerance = self.score_tolerance

        @settings(max_examples=self.differential_examples, deadline=None, derandomize=True,
                  database=None, suppress_health_check=list(HealthCheck))
        @given(
            rows=strategies.datasets(sparse=sparse_on),
            node=filter_strategy,
            query=strategies.vectors,
            sparse_query=strategies.sparse_vectors,
            mode=mode_strategy,
            top_k=st.integers(1, 12),
            use_min_score=st.booleans(),
        )
        def check(rows: list[dict[str, Any]], node: Filter | None, query: list[float],
                  sparse_query: dict[str, Any], mode: str, top_k: int,
                  use_min_score: bool) -> None:
            namespace = f"d-{uuid.uuid4().hex[:12]}"
            raw_filter = render_filter(node) if node is not None else None
            note(_reproduction(index, rows, raw_filter, query, sparse_query, mode, top_k))
            records = canonical_records(rows)
            dense = query if mode != "sparse" else None
            sparse = (SparseVector(tuple(sparse_query["indices"]), tuple(sparse_query["values"]))
                      if mode != "dense" else None)
            full = reference_query(records, index.spec.metric, vector=dense, sparse=sparse,
                                   filter=node, top_k=len(records) + 1)
            min_score = None
            if use_min_score and len(full) >= 2:
                a, b = full[len(full) // 2 - 1].score, full[len(full) // 2].score
                if a - b > 4 * tolerance:  # a threshold well clear of any score
                    min_score = (a + b) / 2
                    full = [e for e in full if e.score >= min_score]
            index.upsert(rows, namespace=namespace)
            try:
                if node is not None and self.filter_deviation(node):
                    with pytest.raises(UnsupportedFeatureError):
                        index.query(dense, sparse=sparse, filter=raw_filter, top_k=top_k,
                                    namespace=namespace)
                    return
                got = index.query(dense, sparse=sparse, filter=raw_filter, top_k=top_k,
                                  namespace=namespace, min_score=min_score)
                assert_same_matches(got, full, tolerance, f"differential {mode}", top_k)
                if caps.count_by_filter:
                    expected_count = len(reference_query(records, index.spec.metric, vector=query,
                                                         filter=node, top_k=len(records) + 1))
                    assert index.count(namespace, filter=raw_filter) == expected_count
            finally:
                index.delete_namespace(namespace)

        check()


def _reproduction(index: Index, rows: list[dict[str, Any]], flt: Any, query: list[float],
                  sparse: dict[str, Any], mode: str, top_k: int) -> str:
    spec = index.spec
    dense = None if mode == "sparse" else query
    sparse_arg = None if mode == "dense" else sparse
    return (
        "reproduction:\n"
        f"index = store.create_index('repro', 4, {spec.metric!r}, sparse={spec.sparse})\n"
        f"index.upsert({rows!r})\n"
        f"index.query({dense!r}, sparse={sparse_arg!r}, filter={flt!r}, top_k={top_k})"
    )

"""Conformance of a load as ``copy_index`` and ``import_index`` run it: pages written
with ``upsert_bulk`` into an index whose upkeep was put off
(:class:`~vectorport.core.adapter.UpkeepDeferringAdapter`), then ``optimize``
(:class:`~vectorport.core.adapter.OptimizingAdapter`), on adapters that offer them.

Expected answers come from the reference query over the records written so far: put off
or not, optimized or not, an index answers as the reference does (CONTRACT §3).
"""

from __future__ import annotations

import pytest

from vectorport.conformance.base import (
    IndexFactory,
    SuiteBase,
    assert_same_matches,
    canonical_records,
    unique_name,
)
from vectorport.conformance.dataset import dataset_rows
from vectorport.conformance.reference import reference_query
from vectorport.core.adapter import OptimizingAdapter, UpkeepDeferringAdapter
from vectorport.core.errors import IndexNotFoundError
from vectorport.core.filters.parse import parse_filter
from vectorport.core.store import Index, Store
from vectorport.core.types import Metric, Record

QUERY = [0.3, 0.2, 0.1, 0.5]
FILTER = {"year": {"$gte": 2017}}


class LoadTests(SuiteBase):
    def _assert_answers(self, index: Index, metric: Metric, held: list[Record],
                        context: str) -> None:
        for flt in (None, FILTER):
            node = parse_filter(flt) if flt is not None else None
            want = reference_query(held, metric, vector=QUERY, filter=node, top_k=len(held))
            got = index.query(QUERY, top_k=5, filter=flt, consistency="strong")
            assert_same_matches(got, want, self.score_tolerance, f"{context}, filter {flt}", 5)

    def test_a_load_answers_exactly_before_and_after_its_upkeep(
            self, store: Store, make_index: IndexFactory) -> None:
        metric = self.a_metric(store)
        index = make_index(metric=metric, tag="load")
        adapter = store.adapter
        if isinstance(adapter, UpkeepDeferringAdapter):
            adapter.defer_upkeep(index.name)  # as a copy does, on the index it created
        rows = dataset_rows()
        half = len(rows) // 2
        index.upsert_bulk(rows[:half])
        self._assert_answers(index, metric, canonical_records(rows[:half]), "put off, half in")
        index.upsert_bulk(rows[half:])
        if isinstance(adapter, OptimizingAdapter):
            adapter.optimize(index.name)
        self._assert_answers(index, metric, canonical_records(rows), "optimized")
        index.upsert_bulk(rows[:3])  # a later write into the optimized index
        self._assert_answers(index, metric, canonical_records(rows), "written again")

    def test_the_load_hooks_refuse_an_index_that_does_not_exist(self, store: Store) -> None:
        adapter = store.adapter
        hooks = [hook for hook, offered in (
            ("optimize", isinstance(adapter, OptimizingAdapter)),
            ("defer_upkeep", isinstance(adapter, UpkeepDeferringAdapter))) if offered]
        if not hooks:
            pytest.skip("the adapter offers neither optimize nor defer_upkeep")
        for hook in hooks:
            with pytest.raises(IndexNotFoundError):
                getattr(adapter, hook)(unique_name("missing"))

"""Conformance of ``Index.scan`` (CONTRACT §8): what copy, export and verify rely on.

Expected results come from what was written and from the filter oracle: every record
exactly once with everything it holds, whatever the page size, and a resumed scan
continues where the cursor was taken.
"""

from __future__ import annotations

import numpy as np
import pytest

from vectorport.conformance.base import (
    SCAN,
    IndexFactory,
    SuiteBase,
    canonical_records,
    with_kinds,
)
from vectorport.conformance.dataset import dataset_rows
from vectorport.core.errors import ValidationError
from vectorport.core.filters.oracle import matches
from vectorport.core.filters.parse import parse_filter
from vectorport.core.store import Index, Store
from vectorport.core.types import Record


def _same_record(got: Record, want: Record, documents: bool) -> None:
    assert got.id == want.id
    # kinds too: 1, 1.0 and True are different values in the contract
    assert with_kinds(got.metadata) == with_kinds(want.metadata), want.id
    np.testing.assert_allclose(got.vector, want.vector, rtol=1e-6, atol=1e-6)
    if documents:
        assert got.document == want.document, want.id


class ScanTests(SuiteBase):
    pytestmark = pytest.mark.feature(SCAN, when="always")

    def _filled(self, store: Store, make_index: IndexFactory) -> tuple[Index, list[Record]]:
        index = make_index(metric=self.a_metric(store))
        rows = dataset_rows()
        index.upsert(rows, namespace="scan")
        index.upsert([{"id": "elsewhere", "vector": [1, 0, 0, 0], "metadata": {"year": 2020}}])
        return index, canonical_records(rows)

    @pytest.mark.parametrize("page_size", [1, 7, 1000])
    def test_every_record_exactly_once(
        self, store: Store, make_index: IndexFactory, page_size: int
    ) -> None:
        index, want = self._filled(store, make_index)
        seen: list[Record] = []
        for page in index.scan("scan", page_size=page_size):
            assert 0 < len(page.records) <= page_size
            seen.extend(page.records)
        ids = [r.id for r in seen]
        assert len(ids) == len(set(ids)), "a record was returned twice"
        assert sorted(ids) == sorted(r.id for r in want)
        by_id = {r.id: r for r in seen}
        for record in want:
            _same_record(by_id[record.id], record, store.capabilities.documents)

    def test_scan_with_a_filter(self, store: Store, make_index: IndexFactory) -> None:
        index, want = self._filled(store, make_index)
        raw = {"$or": [{"year": {"$gte": 2000}}, {"genre": "drama"}]}
        got = {r.id for r in index.iter_records("scan", filter=raw, page_size=5)}
        node = parse_filter(raw)
        assert got == {r.id for r in want if matches(node, r.metadata)}

    def test_resume_from_a_cursor(self, store: Store, make_index: IndexFactory) -> None:
        index, want = self._filled(store, make_index)
        first = next(index.scan("scan", page_size=4))
        assert first.next_cursor is not None
        rest = [r.id for page in index.scan("scan", page_size=4, cursor=first.next_cursor)
                for r in page.records]
        head = [r.id for r in first.records]
        assert not set(head) & set(rest), "a resumed scan repeated records"
        assert sorted(head + rest) == sorted(r.id for r in want)

    def test_empty_and_missing_namespace(self, store: Store, make_index: IndexFactory) -> None:
        index = make_index(metric=self.a_metric(store))
        assert list(index.scan("nothing-here")) == []

    def test_foreign_cursor_is_refused(self, store: Store, make_index: IndexFactory) -> None:
        index, _ = self._filled(store, make_index)
        cursor = next(index.scan("scan", page_size=2)).next_cursor
        assert cursor is not None
        with pytest.raises(ValidationError):
            next(index.scan("other", cursor=cursor))
        with pytest.raises(ValidationError):
            next(index.scan("scan", filter={"year": 1}, cursor=cursor))
        with pytest.raises(ValidationError):
            next(index.scan("scan", cursor="not-a-cursor"))

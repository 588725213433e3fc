"""The local engine's own scan: whole records in ascending id order after the cursor,
with what docs/copy.md promises of writes made during a scan, records that are values
(changing a page's vector or metadata changes nothing stored), and a filter meaning what
the oracle says. Expected answers come from the records written and the filter oracle."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import vectorport
from vectorport.core.filters.oracle import matches
from vectorport.core.filters.parse import parse_filter
from vectorport.core.types import Record

DIM = 4


@pytest.fixture(params=["memory", "durable"])
def index(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[vectorport.Index]:
    url = "memory://" if request.param == "memory" else f"local://{tmp_path}/store"
    with vectorport.connect(url) as store:
        yield store.create_index("scanned", DIM, "cosine")


def _records(count: int, seed: int = 0) -> list[Record]:
    rng = np.random.default_rng(seed)
    return [Record(id=f"r{i:03d}", vector=rng.random(DIM, dtype=np.float32) + 0.1,
                   metadata={"n": i, "half": i % 2 == 0, "tag": ("a", f"t{i % 3}")},
                   document=f"doc {i}" if i % 4 else None) for i in range(count)]


def test_pages_hold_whole_records_in_id_order(index: vectorport.Index) -> None:
    written = _records(53)
    index.upsert(list(reversed(written)))
    pages = list(index.scan(page_size=10))
    seen = [record for page in pages for record in page.records]
    assert [r.id for r in seen] == sorted(r.id for r in written)
    by_id = {r.id: r for r in written}
    for record in seen:
        expected = by_id[record.id]
        assert np.array_equal(record.vector, expected.vector)
        assert record.vector.dtype == np.float32
        assert record.metadata == expected.metadata
        assert record.document == expected.document
    assert [len(p.records) for p in pages] == [10, 10, 10, 10, 10, 3]
    assert pages[-1].next_cursor is None


def test_writes_during_a_scan(index: vectorport.Index) -> None:
    written = _records(30)
    index.upsert(written)
    scan = index.scan(page_size=10)
    first = next(scan)
    last_seen = first.records[-1].id
    index.upsert([Record(id="r000a", vector=np.ones(DIM, dtype=np.float32)),  # before the cursor
                  Record(id="r999", vector=np.ones(DIM, dtype=np.float32))])  # after it
    index.delete(["r025"])  # ahead of the cursor: not returned
    rest = [record.id for page in scan for record in page.records]
    assert last_seen == "r009"
    assert "r000a" not in rest and "r025" not in rest
    assert rest == [f"r{i:03d}" for i in range(10, 30) if i != 25] + ["r999"]


def test_a_page_is_a_value(index: vectorport.Index) -> None:
    index.upsert(_records(5))
    page = next(index.scan(page_size=5))
    with pytest.raises(ValueError):
        page.records[0].vector[0] = 42.0
    page.records[0].metadata["n"] = 999
    again = next(index.scan(page_size=5))
    assert again.records[0].metadata["n"] == 0


@pytest.mark.parametrize("raw", [
    {"n": {"$gte": 17}},
    {"half": True, "tag": {"$in": ["t1"]}},
    {"n": {"$lt": 0}},
    {"$or": [{"n": 3}, {"tag": "t2"}]},
])
def test_a_filtered_scan_keeps_what_the_oracle_matches(index: vectorport.Index,
                                                        raw: dict[str, Any]) -> None:
    written = _records(40)
    index.upsert(written)
    node = parse_filter(raw)
    expected = sorted(r.id for r in written if matches(node, r.metadata))
    for page_size in (1, 7, 100):
        pages = list(index.scan(filter=raw, page_size=page_size))
        assert [r.id for p in pages for r in p.records] == expected
        assert all(p.records for p in pages)  # empty pages are not shown


def test_resumed_from_a_cursor_in_another_connection(tmp_path: Any) -> None:
    url = f"local://{tmp_path}/store"
    written = _records(25)
    with vectorport.connect(url) as store:
        index = store.create_index("scanned", DIM, "cosine")
        index.upsert(written)
        first = next(index.scan(page_size=8))
    with vectorport.connect(url) as store:
        pages = store.index("scanned").scan(page_size=8, cursor=first.next_cursor)
        rest = [r.id for p in pages for r in p.records]
    assert [r.id for r in first.records] + rest == [r.id for r in written]

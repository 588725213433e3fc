"""How ``upsert_bulk`` on turbopuffer cuts a load into writes
(:func:`vectorport.adapters.turbopuffer.bulk.chunks_of`).

A chunk is cut by count, and by estimated bytes only when a bound on the whole chunk's
estimate (one orjson call) says it may be too large. The bound must never be below the
per-record estimates it stands for, the cut must keep every record once and in order,
and the estimate must stay above what the write really sends.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("turbopuffer")

from vectorport.adapters.turbopuffer.bulk import (
    CHUNK_BYTES,
    CHUNK_ROWS,
    chunks_of,
    columns_of,
    estimated_bytes,
    estimated_bytes_bound,
)
from vectorport.core.types import Record

DIM = 8

_values = st.one_of(
    st.text(max_size=20),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.lists(st.text(max_size=8), max_size=5).map(tuple),
)
_records = st.lists(
    st.builds(
        lambda rid, meta, doc: Record(id=rid, vector=np.ones(DIM, dtype=np.float32),
                                      metadata=meta, document=doc),
        st.text(min_size=1, max_size=30),
        st.dictionaries(st.text(min_size=1, max_size=10), _values, max_size=6),
        st.none() | st.text(max_size=50),
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(_records)
def test_the_bound_is_never_below_the_estimates_it_stands_for(records: list[Record]) -> None:
    assert estimated_bytes_bound(records) >= sum(map(estimated_bytes, records))


def _record(i: int, document: str | None = None) -> Record:
    return Record(id=f"doc-{i:06d}", vector=np.full(DIM, i, dtype=np.float32),
                  metadata={"n": i, "tag": f"t{i % 7}", "ok": i % 2 == 0, "x": i / 3,
                            "tags": ("a", "é")},
                  document=document if document is not None else f"text {i} ünïcode")


def _sent_bytes(chunk: list[Record]) -> int:
    """The JSON of the columns one write carries."""
    return len(orjson.dumps(columns_of(chunk)))


def test_ordinary_records_go_in_chunks_of_the_row_count() -> None:
    records = [_record(i) for i in range(2 * CHUNK_ROWS + 17)]
    chunks = chunks_of(records)
    assert [len(c) for c in chunks] == [CHUNK_ROWS, CHUNK_ROWS, 17]
    assert [r for c in chunks for r in c] == records
    # the estimate is an upper one: what each write carries is below it
    for chunk in chunks:
        assert _sent_bytes(list(chunk)) <= sum(map(estimated_bytes, chunk))


def test_large_records_are_cut_by_their_estimated_bytes() -> None:
    # a smaller byte limit, so that the test need not build 32 MiB of records
    limit = 200_000
    records = [_record(i, document="ü" * 5_000 if i % 3 else "a" * 9_000)
               for i in range(60)]
    chunks = chunks_of(records, limit)
    assert [r for c in chunks for r in c] == records
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk) <= CHUNK_ROWS
        assert sum(map(estimated_bytes, chunk)) <= limit
        assert _sent_bytes(list(chunk)) <= limit
    # each chunk was filled as far as the next record allowed
    for chunk, following in pairwise(chunks):
        assert sum(map(estimated_bytes, chunk)) + estimated_bytes(following[0]) > limit


def test_one_record_above_the_limit_still_goes_alone() -> None:
    records = [_record(0, document="x" * 5_000), _record(1)]
    assert [list(c) for c in chunks_of(records, 1_000)] == [[records[0]], [records[1]]]


def test_the_module_limit_is_far_above_an_ordinary_chunk() -> None:
    # what lets the ordinary load skip the per-record estimates
    chunk = [_record(i) for i in range(CHUNK_ROWS)]
    assert estimated_bytes_bound(chunk) < CHUNK_BYTES

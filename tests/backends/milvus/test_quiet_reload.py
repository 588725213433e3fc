"""What pymilvus logs about conditions the adapter handles stays out of the user's log,
on milvus-lite: a released collection is loaded on first use without pymilvus's ERROR
traceback, and a query that falls back to a scan on milvus-lite 3 (which sends no
session timestamp) without pymilvus's warning about it; the same warning from an
iterator the adapter did not start still reaches the log."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

import vectorport
from vectorport.conformance.reference import reference_query
from vectorport.core.types import Record, SparseVector
from vectorport.testing.milvus import milvus_url


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def recorded(logger_name: str) -> Iterator[Records]:
    """What ``logger_name`` logs while the block runs (past its filters, as a handler
    of the user's would see it)."""
    handler = Records()
    logger = logging.getLogger(logger_name)
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


def test_loading_a_released_collection_logs_no_error() -> None:
    with recorded("pymilvus.decorators") as handler, milvus_url() as url, \
            vectorport.connect(url) as store:
        index = store.create_index("vp_released_0123456789", 4, "cosine")
        index.upsert([{"id": "a", "vector": [1, 0, 0, 0]}])
        store.adapter._client.release_collection(index.name)  # as after a restart
        assert [m.id for m in index.query([1, 0, 0, 0], top_k=1)] == ["a"]
        store.delete_index(index.name)
    assert not [r for r in handler.records if r.levelno >= logging.ERROR], \
        [r.getMessage()[:200] for r in handler.records]


def test_a_query_falling_back_to_a_scan_logs_no_session_warning() -> None:
    with recorded("pymilvus.client.iterator.query_iterator") as handler, \
            milvus_url() as url, vectorport.connect(url) as store:
        index = store.create_index("vp_scan_fallback_0123", 4, "dotproduct", sparse=True)
        # a sparse-only query whose top 3 reaches records that can score below 0
        # is settled by a scan of the namespace
        records = [Record("a", (1.0, 0, 0, 0), sparse=SparseVector((1,), (-1.0,))),
                   Record("b", (0, 1.0, 0, 0), sparse=SparseVector((1,), (2.0,))),
                   Record("c", (0, 0, 1.0, 0), sparse=SparseVector((2,), (1.0,)))]
        index.upsert(records)
        query = SparseVector((1,), (1.0,))
        got = [(m.id, m.score) for m in index.query(sparse=query, top_k=3)]
        want = [(m.id, m.score) for m in reference_query(
            records, "dotproduct", sparse=query, top_k=3)]
        assert got == want
        ours = list(handler.records)
        if not store.adapter.engine.session_ts:
            # pymilvus' own iterator on the same engine still says it
            iterator = store.adapter._client.query_iterator(index.name, batch_size=10)
            iterator.close()
            assert any("mvccTs" in r.getMessage() for r in handler.records)
        store.delete_index(index.name)
    assert not [r for r in ours if r.levelno >= logging.WARNING], \
        [r.getMessage()[:200] for r in ours]

"""A released Milvus collection is loaded on first use without pymilvus's ERROR
traceback reaching the log (the adapter handles that failure), on milvus-lite."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

import vectorport
from vectorport.testing.milvus import milvus_url


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_loading_a_released_collection_logs_no_error() -> None:
    handler = Records()
    logger = logging.getLogger("pymilvus.decorators")
    logger.addHandler(handler)
    try:
        with milvus_url() as url, vectorport.connect(url) as store:
            index = store.create_index("vp_released_0123456789", 4, "cosine")
            index.upsert([{"id": "a", "vector": [1, 0, 0, 0]}])
            store.adapter._client.release_collection(index.name)  # as after a restart
            assert [m.id for m in index.query([1, 0, 0, 0], top_k=1)] == ["a"]
            store.delete_index(index.name)
    finally:
        logger.removeHandler(handler)
    assert not [r for r in handler.records if r.levelno >= logging.ERROR], \
        [r.getMessage()[:200] for r in handler.records]

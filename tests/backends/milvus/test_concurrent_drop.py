"""Concurrent ``delete_index(missing_ok=True)`` on Milvus Lite never raises.

Milvus Lite fails a drop that races another drop of the same collection with a raw
``manifest.json`` error; the adapter must report the loser as "not found", which
``missing_ok=True`` accepts.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

import vectorport
from vectorport.testing.milvus import milvus_url


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with milvus_url() as found:
        yield found


def _drop(store: vectorport.Store, barrier: threading.Barrier,
          errors: list[BaseException]) -> None:
    barrier.wait()
    try:
        store.delete_index("race", missing_ok=True)
    except BaseException as exc:  # reported by the test
        errors.append(exc)


@pytest.mark.parametrize("stores", [1, 3])
def test_concurrent_deletes_with_missing_ok_never_raise(url: str, stores: int) -> None:
    opened = [vectorport.connect(url) for _ in range(stores)]
    try:
        for _ in range(3):
            opened[0].create_index("race", 2, "cosine")
            barrier = threading.Barrier(6)
            errors: list[BaseException] = []

            threads = [threading.Thread(target=_drop, args=(opened[i % stores], barrier, errors))
                       for i in range(6)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert errors == []
            assert "race" not in opened[0].list_indexes()
            with pytest.raises(vectorport.IndexNotFoundError):
                opened[-1].delete_index("race")
    finally:
        for store in opened:
            store.close()

"""Reads beside writes: no query, fetch or scan returns a torn record.

Chroma answers with embeddings from its vector segment and metadata from its metadata
segment; a write landing between the two reads came back as the vector of one write
with the metadata of another (plain ``chromadb``: torn records in every run of this
shape). The adapter's readers wait for its writers (``.locking``). Each record here
carries, in its metadata, the sum of its vector's components and its round; a torn
record's sum disagrees with its vector.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("chromadb")

import vectorport
from vectorport.core.store import Index
from vectorport.core.types import Match, Record

DIM = 16
WRITERS = 3
IDS = [f"w{w}-{i}" for w in range(WRITERS) for i in range(25)]
ROUNDS = 200


def _torn(vector: object, metadata: object) -> bool:
    """Whether a record's vector and metadata come from different writes (or it came
    back without its metadata: half deleted)."""
    if not isinstance(metadata, dict) or "sum" not in metadata:
        return True
    return abs(float(np.asarray(vector, dtype=np.float64).sum()) - metadata["sum"]) > 1e-3


def _writer(index: Index, writer: int, failures: list[str]) -> None:
    rng = np.random.default_rng(writer)
    ids = [i for i in IDS if i.startswith(f"w{writer}-")]
    try:
        for rnd in range(ROUNDS):
            vectors = rng.normal(size=(len(ids), DIM)).astype(np.float32)
            index.upsert([{"id": i, "vector": v, "metadata": {"sum": float(v.sum()), "rnd": rnd}}
                          for i, v in zip(ids, vectors, strict=True)])
            if rnd % 10 == 5:
                index.delete(ids[:3])
    except Exception as exc:
        failures.append(f"writer: {type(exc).__name__}: {exc}")


def _reader(read: Callable[[], list[Match] | list[Record]], stop: threading.Event,
            torn: list[str], failures: list[str]) -> None:
    try:
        while not stop.is_set():
            for item in read():
                if _torn(item.vector, item.metadata):
                    torn.append(f"{item.id}: {item.metadata}")
    except Exception as exc:
        failures.append(f"reader: {type(exc).__name__}: {exc}")


@pytest.mark.parametrize("stores", [1, 2], ids=["one store", "two stores on the folder"])
def test_no_read_returns_a_record_torn_by_a_write(tmp_path: Path, stores: int) -> None:
    url = f"chroma://{tmp_path}"
    opened = [vectorport.connect(url) for _ in range(stores)]
    try:
        opened[0].create_index("torn", DIM, "cosine")
        writing, reading = opened[0].index("torn"), opened[-1].index("torn")
        writing.upsert([{"id": i, "vector": np.ones(DIM, dtype=np.float32),
                         "metadata": {"sum": float(DIM), "rnd": -1}} for i in IDS])
        rng = np.random.default_rng(99)
        queries = rng.normal(size=(50, DIM)).astype(np.float32)
        reads: list[Callable[[], list[Match] | list[Record]]] = [
            lambda: reading.query(queries[rng.integers(50)], top_k=20, include_vectors=True),
            lambda: reading.query(queries[rng.integers(50)], top_k=20, include_vectors=True),
            lambda: list(reading.fetch(IDS).values()),
            lambda: [r for page in reading.scan(page_size=10) for r in page.records],
        ]
        stop = threading.Event()
        torn: list[str] = []
        failures: list[str] = []
        readers = [threading.Thread(target=_reader, args=(read, stop, torn, failures))
                   for read in reads]
        writers = [threading.Thread(target=_writer, args=(writing, w, failures))
                   for w in range(WRITERS)]
        for thread in readers + writers:
            thread.start()
        for thread in writers:
            thread.join()
        stop.set()
        for thread in readers:
            thread.join()
        assert not failures, failures[:3]
        assert not torn, f"{len(torn)} torn records, e.g. {torn[:3]}"
        # and the writes all landed: each writer's last round
        final = reading.fetch(IDS)
        assert sorted(final) == sorted(IDS)
        assert all(not _torn(r.vector, r.metadata) and r.metadata["rnd"] == ROUNDS - 1
                   for r in final.values())
    finally:
        for store in opened:
            store.close()


def test_reads_wait_for_a_write_in_progress_and_not_for_each_other(tmp_path: Path) -> None:
    """The mechanism behind the test above, without its timing: while a writer holds
    the adapter's lock (as upsert, patch and delete do) a query waits; while a reader
    holds it, another query goes ahead."""
    with vectorport.connect(f"chroma://{tmp_path}") as store:
        index = store.create_index("waits", DIM, "cosine")
        index.upsert([{"id": "a", "vector": np.ones(DIM, dtype=np.float32)}])
        lock = store.adapter._lock  # the adapter's own lock (the writers' way in)
        answered = threading.Event()

        def ask() -> None:
            if [m.id for m in index.query(np.ones(DIM, dtype=np.float32), top_k=1)] == ["a"]:
                answered.set()

        with lock.held():
            asking = threading.Thread(target=ask)
            asking.start()
            assert not answered.wait(0.5)  # waits for the write
        assert answered.wait(10)
        asking.join()
        answered.clear()
        with lock.reading():
            asking = threading.Thread(target=ask)
            asking.start()
            assert answered.wait(10)  # readers share
        asking.join()

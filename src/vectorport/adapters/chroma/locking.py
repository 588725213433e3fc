"""One writer at a time for the read-then-write steps of ``upsert`` and ``patch``, and
no reader of records while one writes.

Chroma merges metadata keys on ``upsert``/``update`` and has no compare-and-set, so
replacing a record means reading its stored keys and writing ``None`` for the ones that
go. Two writers doing that at once would each clear only what *they* read, and the
record would end with keys of both (and ``vectorport:keys`` of one: ``$exists`` then
disagrees with ``fetch``). Writers therefore take turns:

- within a process, a lock per Chroma (per data folder, per server and database);
- between processes on one ``chroma:///path`` folder, also an ``flock`` on
  ``<path>/vectorport-writes.lock`` (released by the kernel if the holder dies, so a
  killed writer never blocks the others).

Clients of one ``chroma+http://`` server in *other* processes cannot be coordinated
from here: there, concurrent writes of the same id from several processes may still
merge (docs/backends/chroma.md).

**Readers wait for writers** (:meth:`WriteLock.reading`: many readers at once, in the
process a shared ``flock`` of the same file). Chroma answers a query with embeddings
from its vector segment and metadata from its metadata segment, and a write landing
between the two reads comes back torn: the vector of one write with the metadata of
another (three threads upserting 25 ids each while three others queried, plain
``chromadb``: torn records in 2 of 5 runs of 60 rounds and in 3 of 3 runs of 200; none
in 6 runs of 60 with the reads and writes taking turns). Writers are preferred: a
stream of queries never holds a write off.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

LOCK_FILE = "vectorport-writes.lock"

_REGISTRY_LOCK = threading.Lock()
_LOCKS: dict[str, _ReadersWriter] = {}


class _ReadersWriter:
    """Many readers or one writer, among the threads of this process; a waiting writer
    goes before readers that come after it."""

    __slots__ = ("_changed", "_readers", "_writers_waiting", "_writing")

    def __init__(self) -> None:
        self._changed = threading.Condition(threading.Lock())
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        with self._changed:
            while self._writing or self._writers_waiting:
                self._changed.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._changed:
                self._readers -= 1
                if not self._readers:
                    self._changed.notify_all()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with self._changed:
            self._writers_waiting += 1
            try:
                while self._writing or self._readers:
                    self._changed.wait()
            finally:
                self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._changed:
                self._writing = False
                self._changed.notify_all()


class WriteLock:
    """Serialises writers of one Chroma, and keeps readers of its records out while one
    writes; ``folder`` adds the cross-process lock."""

    def __init__(self, key: str, folder: Path | None = None) -> None:
        with _REGISTRY_LOCK:
            self._threads = _LOCKS.setdefault(key, _ReadersWriter())
        self._file = folder / LOCK_FILE if folder is not None else None
        self._folder_made = False

    @classmethod
    def of_folder(cls, folder: Path) -> WriteLock:
        """The lock every vectorport writer of the ``chroma:///path`` folder ``folder``
        (resolved) takes, across threads and processes."""
        return cls(f"chroma:{folder}", folder)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Alone: no other writer, no reader."""
        with self._threads.writing():
            if self._file is None:
                yield
            else:
                with self._flock(self._file, fcntl.LOCK_EX):
                    yield

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Beside other readers, while no writer writes."""
        with self._threads.reading():
            if self._file is None:
                yield
            else:
                with self._flock(self._file, fcntl.LOCK_SH):
                    yield

    @contextlib.contextmanager
    def _flock(self, file: Path, mode: int) -> Iterator[None]:
        # taken after the threads' lock, so two threads of this process never hold
        # conflicting flocks (each opens its own descriptor: flocks of one process
        # conflict too)
        if not self._folder_made:
            file.parent.mkdir(parents=True, exist_ok=True)
            self._folder_made = True
        fd = os.open(file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, mode)
            yield
        finally:
            os.close(fd)  # closing releases the flock


__all__ = ["LOCK_FILE", "WriteLock"]

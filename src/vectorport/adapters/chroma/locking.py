"""One writer at a time for the read-then-write steps of ``upsert`` and ``patch``.

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
_LOCKS: dict[str, threading.Lock] = {}


class WriteLock:
    """Serialises writers of one Chroma; ``folder`` adds the cross-process lock."""

    def __init__(self, key: str, folder: Path | None = None) -> None:
        with _REGISTRY_LOCK:
            self._thread_lock = _LOCKS.setdefault(key, threading.Lock())
        self._file = folder / LOCK_FILE if folder is not None else None

    @classmethod
    def of_folder(cls, folder: Path) -> WriteLock:
        """The lock every vectorport writer of the ``chroma:///path`` folder ``folder``
        (resolved) takes, across threads and processes."""
        return cls(f"chroma:{folder}", folder)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        with self._thread_lock:
            if self._file is None:
                yield
                return
            self._file.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._file, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # closing releases the flock


__all__ = ["LOCK_FILE", "WriteLock"]

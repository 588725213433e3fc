"""Durable storage for the local adapter: one SQLite file, shared safely by processes.

Every process keeps the whole store in memory (search is in memory anyway) and the file
is the truth they share. Three rules keep them consistent and the file whole:

* **Every write is one ``BEGIN IMMEDIATE`` transaction** that first catches up with
  what other processes committed, then checks the call against that fresh state, then
  writes; a crash (even SIGKILL) leaves the old or the new state, never half a call.
  IMMEDIATE takes the write lock up front: a deferred transaction that read first would
  fail at once with ``SQLITE_BUSY_SNAPSHOT`` in WAL mode instead of waiting.
* **Every write transaction takes the next number of a store-wide sequence** (``seq``
  in ``vp_meta``) and stamps it on the rows it writes, on a tombstone per deleted id and
  on a reset marker per deleted namespace. A process that has seen everything up to
  ``seq = n`` catches up by reading only what carries a larger number.
* **Each index has a generation** (the ``seq`` of its creation), so an index deleted
  and created again under the same name by another process is a different index: the
  old in-memory state is dropped instead of being written into.

Reads stay cheap: ``PRAGMA data_version`` (one call, a few microseconds) says whether
any other connection committed since the last look, and only then is anything read.

WAL journaling lets readers and the one writer proceed together (a web worker's queries
are never blocked by an ingestion script's upserts; only writers queue). ``synchronous
=NORMAL`` keeps every committed transaction across a process crash; only an OS crash or
power loss can drop the last few, and never corrupts the file. WAL needs a local
filesystem (not NFS/SMB), like SQLite's locking in general.

A writer that cannot get the write lock within ``busy_timeout`` seconds (default 5) gets
:class:`TransientBackendError`, which the facade retries for idempotent operations.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vectorport.adapterkit import spec_from_json, spec_to_json
from vectorport.core.errors import BackendError, TransientBackendError, VectorportError
from vectorport.core.types import IndexSpec, Record, SparseVector

DEFAULT_BUSY_TIMEOUT = 5.0
"""Seconds a writer waits for another process's write lock before a transient error."""

TOMBSTONE_HORIZON = 10_000
"""Tombstones older than this many write transactions are pruned; a process that has
been idle longer reloads the whole store instead of catching up incrementally."""

_SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vp_indexes (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    generation INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS vp_records (
    index_name TEXT NOT NULL,
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    vector BLOB NOT NULL,
    sparse TEXT,
    metadata TEXT NOT NULL,
    document TEXT,
    seq INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (index_name, namespace, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vp_meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vp_tombstones (
    seq INTEGER NOT NULL,
    index_name TEXT NOT NULL,
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    PRIMARY KEY (seq, index_name, namespace, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vp_resets (
    index_name TEXT NOT NULL,
    namespace TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (index_name, namespace)
) WITHOUT ROWID;
INSERT OR IGNORE INTO vp_meta (key, value) VALUES ('seq', 0), ('floor', 0);
"""
_SELECT_RECORDS = ("SELECT index_name, namespace, id, vector, sparse, metadata, document "
                   "FROM vp_records")

_INHERITED: list[sqlite3.Connection] = []
"""Connections inherited across fork: kept referenced so that they are never closed."""

_BUSY_CODES = frozenset({"SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_BUSY_SNAPSHOT",
                         "SQLITE_BUSY_RECOVERY", "SQLITE_LOCKED_SHAREDCACHE"})


def _sparse_to_json(sparse: SparseVector | None) -> str | None:
    if sparse is None:
        return None
    return json.dumps([list(sparse.indices), list(sparse.values)])


def _sparse_from_json(text: str | None) -> SparseVector | None:
    if text is None:
        return None
    indices, values = json.loads(text)
    return SparseVector(tuple(indices), tuple(float(v) for v in values))


def _metadata_from_json(text: str) -> dict[str, Any]:
    raw: dict[str, Any] = json.loads(text)
    return {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}


@dataclass(frozen=True)
class StoredIndex:
    spec: IndexSpec
    generation: int


@dataclass(frozen=True)
class Changes:
    """What other processes committed since ``since``, as of sequence number ``seq``.

    ``full`` means the caller must drop everything and take ``records`` as the whole
    store (first load, or tombstones it would need were pruned). Otherwise apply in this
    order: ``indexes`` (drop what is gone or of another generation), ``resets`` (drop
    those namespaces), ``tombstones`` (remove those ids), then ``records`` (put them)."""

    seq: int
    full: bool
    indexes: tuple[StoredIndex, ...]
    resets: tuple[tuple[str, str], ...]
    tombstones: tuple[tuple[str, str, str], ...]
    records: tuple[tuple[str, str, Record], ...]


def translate(exc: sqlite3.Error, path: Path, busy_timeout: float) -> BackendError:
    """The typed error for a SQLite failure (the native one becomes ``__cause__``)."""
    name = getattr(exc, "sqlite_errorname", "")
    text = str(exc)
    if name in _BUSY_CODES or "database is locked" in text or "database is busy" in text:
        return TransientBackendError(
            f"local store {str(path)!r} is busy: another process held its write lock "
            f"longer than busy_timeout={busy_timeout:g}s ({text})"
        )
    return BackendError(f"local store {str(path)!r}: SQLite failed: {text}")


def _switch_to_wal(db: sqlite3.Connection, busy_timeout: float) -> None:
    """Put a (new) file in WAL mode, waiting up to ``busy_timeout`` for other openers.

    The switch needs the file to itself. When several processes open a new file at once,
    SQLite may answer "database is locked" at once instead of calling its busy handler
    (it does not wait where waiting could deadlock: each opener holds a shared lock and
    wants an exclusive one), so the wait is done here; the first to switch wins and the
    others find WAL already set."""
    give_up = time.monotonic() + busy_timeout
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= give_up:
                raise
            time.sleep(0.01)


class SqliteStorage:
    """SQLite persistence of indexes and records, with cross-process change tracking.

    Not thread-safe by itself: :class:`LocalAdapter` serializes every call under its lock.
    """

    def __init__(self, path: Path, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        path.parent.mkdir(parents=True, exist_ok=True)
        self._seq = -1  # nothing loaded yet: the first refresh is a full load
        self._data_version: int | None = None
        self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        self._pid = os.getpid()
        try:
            # ``timeout`` is SQLite's busy_timeout: how long a statement waits for a lock
            db = sqlite3.connect(self.path, timeout=self.busy_timeout,
                                 check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._translate(exc) from exc
        try:
            self._open(db, self.busy_timeout)
        except sqlite3.Error as exc:
            db.close()
            raise self._translate(exc) from exc
        except BaseException:
            db.close()
            raise
        return db

    def _connection(self) -> sqlite3.Connection:
        """The connection, reopened in a child after ``fork`` (a pre-forking web server
        that opened the store before forking its workers): SQLite forbids using a
        connection across fork, as its locks belong to the parent. The inherited one is
        left unclosed, because closing it could checkpoint or remove the parent's WAL.
        Memory is inherited and still matches its sequence number, so the child only
        catches up with what changed since."""
        if os.getpid() != self._pid:
            _INHERITED.append(self._db)
            self._data_version = None
            self._db = self._connect()
        return self._db

    @staticmethod
    def _open(db: sqlite3.Connection, busy_timeout: float) -> None:
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            _switch_to_wal(db, busy_timeout)
        db.execute("PRAGMA synchronous=NORMAL")
        if db.execute("PRAGMA user_version").fetchone()[0] >= _SCHEMA_VERSION:
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            _migrate(db)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        if os.getpid() == self._pid:  # never close a connection inherited across fork
            self._db.close()

    def _translate(self, exc: sqlite3.Error) -> BackendError:
        return translate(exc, self.path, self.busy_timeout)

    # -- reading other processes' changes ----------------------------------------------

    def refresh(self) -> Changes | None:
        """What changed since the last refresh or write, or ``None`` when nothing did.

        The common case costs one ``PRAGMA data_version``; only when another connection
        committed is anything read, in one read transaction (one consistent snapshot)."""
        self._connection()
        try:
            version = self._db.execute("PRAGMA data_version").fetchone()[0]
            if version == self._data_version:
                return None
            self._db.execute("BEGIN")
            try:
                changes = self._changes()
            finally:
                self._db.execute("COMMIT")  # a read transaction: nothing to roll back
        except sqlite3.Error as exc:
            raise self._translate(exc) from exc
        self._data_version = version
        return changes

    def _changes(self) -> Changes | None:
        seq, floor = self._meta()
        if seq == self._seq:
            return None
        full = self._seq < 0 or self._seq < floor
        since = -1 if full else self._seq
        indexes = tuple(
            StoredIndex(spec_from_json(spec), generation)
            for spec, generation in self._db.execute(
                "SELECT spec, generation FROM vp_indexes ORDER BY name")
        )
        resets: tuple[tuple[str, str], ...] = ()
        tombstones: tuple[tuple[str, str, str], ...] = ()
        if not full:
            resets = tuple(self._db.execute(
                "SELECT index_name, namespace FROM vp_resets WHERE seq > ?", (since,)))
            tombstones = tuple(self._db.execute(
                "SELECT index_name, namespace, id FROM vp_tombstones WHERE seq > ?", (since,)))
        # A full load scans the table in key order; catching up uses the seq index.
        rows = self._db.execute(_SELECT_RECORDS) if full else (
            self._db.execute(_SELECT_RECORDS + " WHERE seq > ?", (since,)))
        records = tuple((index, ns, _record(rest)) for index, ns, *rest in rows)
        self._seq = seq
        return Changes(seq, full, indexes, resets, tombstones, records)

    def _meta(self) -> tuple[int, int]:
        values = dict(self._db.execute("SELECT key, value FROM vp_meta"))
        return int(values.get("seq", 0)), int(values.get("floor", 0))

    # -- writing ---------------------------------------------------------------------

    def forget(self) -> None:
        """Make the next refresh a full load (after the caller failed to apply one)."""
        self._seq, self._data_version = -1, None

    @contextmanager
    def transaction(self, apply: Callable[[Changes], None]) -> Iterator[Transaction]:
        """One write transaction holding the store's write lock.

        What other processes committed meanwhile is passed to ``apply`` first, so that
        the body checks and writes against the current state. Any exception rolls
        everything back."""
        self._connection()
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._translate(exc) from exc
        try:
            # Nobody else can commit while we hold the lock, so this data_version is the
            # one a refresh right after our commit would see: remember it, skip that read.
            version = self._db.execute("PRAGMA data_version").fetchone()[0]
            changes = self._changes()
            if changes is not None:
                apply(changes)
            seq = self._seq + 1  # _changes() left _seq at the stored sequence number
            self._db.execute("UPDATE vp_meta SET value = ? WHERE key = 'seq'", (seq,))
            yield Transaction(self._db, seq)
            self._db.execute("COMMIT")
        except BaseException as exc:
            # A typed error (a stale handle, a name taken) is raised before memory
            # changes; anything else may come after, so memory may be ahead of the file.
            self._rollback(forget=not isinstance(exc, VectorportError))
            if isinstance(exc, sqlite3.Error):
                raise self._translate(exc) from exc
            raise
        self._seq = seq
        self._data_version = version

    def _rollback(self, forget: bool) -> None:
        if forget:
            self.forget()
        # SQLite may have rolled back already (for example after a disk I/O error)
        with suppress(sqlite3.Error):
            self._db.execute("ROLLBACK")


class Transaction:
    """The write statements of one :meth:`SqliteStorage.transaction`."""

    def __init__(self, db: sqlite3.Connection, seq: int) -> None:
        self._db = db
        self.seq = seq

    def create_index(self, spec: IndexSpec) -> int:
        self._db.execute("INSERT INTO vp_indexes (name, spec, generation) VALUES (?, ?, ?)",
                         (spec.name, spec_to_json(spec), self.seq))
        return self.seq

    def delete_index(self, name: str) -> None:
        self._db.execute("DELETE FROM vp_records WHERE index_name = ?", (name,))
        self._db.execute("DELETE FROM vp_tombstones WHERE index_name = ?", (name,))
        self._db.execute("DELETE FROM vp_resets WHERE index_name = ?", (name,))
        self._db.execute("DELETE FROM vp_indexes WHERE name = ?", (name,))

    def put(self, index: str, namespace: str, records: list[Record]) -> None:
        rows = [
            (
                index,
                namespace,
                r.id,
                np.asarray(r.vector, dtype="<f4").tobytes(),
                _sparse_to_json(r.sparse),
                json.dumps(dict(r.metadata), ensure_ascii=False),
                r.document,
                self.seq,
            )
            for r in records
        ]
        self._db.executemany(
            "INSERT OR REPLACE INTO vp_records (index_name, namespace, id, vector, sparse, "
            "metadata, document, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )

    def remove(self, index: str, namespace: str, ids: list[str]) -> None:
        self._db.executemany(
            "DELETE FROM vp_records WHERE index_name = ? AND namespace = ? AND id = ?",
            [(index, namespace, rid) for rid in ids],
        )
        self._db.executemany(
            "INSERT OR IGNORE INTO vp_tombstones (seq, index_name, namespace, id) "
            "VALUES (?, ?, ?, ?)",
            [(self.seq, index, namespace, rid) for rid in ids],
        )
        floor = self.seq - TOMBSTONE_HORIZON
        if floor > 0:  # one seek on the primary key when there is nothing to prune
            self._db.execute("DELETE FROM vp_tombstones WHERE seq <= ?", (floor,))
            self._db.execute("UPDATE vp_meta SET value = max(value, ?) WHERE key = 'floor'",
                             (floor,))

    def remove_namespace(self, index: str, namespace: str) -> None:
        where = (index, namespace)
        self._db.execute("DELETE FROM vp_records WHERE index_name = ? AND namespace = ?",
                         where)
        self._db.execute("DELETE FROM vp_tombstones WHERE index_name = ? AND namespace = ?",
                         where)
        self._db.execute(
            "INSERT OR REPLACE INTO vp_resets (index_name, namespace, seq) VALUES (?, ?, ?)",
            (index, namespace, self.seq),
        )


def _migrate(db: sqlite3.Connection) -> None:
    """Create the schema, or bring a file written by an older version up to date
    (its indexes get generation 0 and its rows seq 0, which is all they need)."""
    for table, column in (("vp_indexes", "generation"), ("vp_records", "seq")):
        exists = db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if exists and column not in columns:
            db.execute(
                f"ALTER TABLE {table} ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0"
            )
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute("CREATE INDEX IF NOT EXISTS vp_records_by_seq ON vp_records (seq)")
    db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")


def _record(row: list[Any]) -> Record:
    rid, blob, sparse, metadata, document = row
    return Record(
        id=rid,
        vector=np.frombuffer(blob, dtype="<f4"),
        metadata=_metadata_from_json(metadata),
        sparse=_sparse_from_json(sparse),
        document=document,
    )

"""Durable storage for the local adapter: one SQLite file.

The whole store is loaded into memory on open (search is in memory anyway) and every
write goes to SQLite in one transaction per call before memory changes, so a crash
leaves either the old or the new state, never half a batch.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from vectorport.core.types import IndexSpec, Record, SparseVector

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vp_indexes (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS vp_records (
    index_name TEXT NOT NULL,
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    vector BLOB NOT NULL,
    sparse TEXT,
    metadata TEXT NOT NULL,
    document TEXT,
    PRIMARY KEY (index_name, namespace, id)
) WITHOUT ROWID;
"""


def spec_to_json(spec: IndexSpec) -> str:
    data = asdict(spec)
    return json.dumps(data, sort_keys=True)


def spec_from_json(text: str) -> IndexSpec:
    data: dict[str, Any] = json.loads(text)
    return IndexSpec(**data)


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


class SqliteStorage:
    """Thread-safe SQLite persistence of indexes and records."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _transaction(self, statements: Sequence[tuple[str, Any]]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                for sql, params in statements:
                    if isinstance(params, list):
                        self._db.executemany(sql, params)
                    else:
                        self._db.execute(sql, params)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def load_indexes(self) -> list[IndexSpec]:
        with self._lock:
            rows = self._db.execute("SELECT spec FROM vp_indexes ORDER BY name").fetchall()
        return [spec_from_json(r[0]) for r in rows]

    def load_records(self, index: str) -> Iterator[tuple[str, Record]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT namespace, id, vector, sparse, metadata, document FROM vp_records "
                "WHERE index_name = ? ORDER BY namespace, id",
                (index,),
            ).fetchall()
        for namespace, rid, blob, sparse, metadata, document in rows:
            vector = np.frombuffer(blob, dtype="<f4")
            yield namespace, Record(
                id=rid,
                vector=vector,
                metadata=_metadata_from_json(metadata),
                sparse=_sparse_from_json(sparse),
                document=document,
            )

    def create_index(self, spec: IndexSpec) -> None:
        self._transaction([("INSERT INTO vp_indexes (name, spec) VALUES (?, ?)",
                            (spec.name, spec_to_json(spec)))])

    def delete_index(self, name: str) -> None:
        self._transaction([
            ("DELETE FROM vp_records WHERE index_name = ?", (name,)),
            ("DELETE FROM vp_indexes WHERE name = ?", (name,)),
        ])

    def put(self, index: str, namespace: str, records: Sequence[Record]) -> None:
        rows = [
            (
                index,
                namespace,
                r.id,
                np.asarray(r.vector, dtype="<f4").tobytes(),
                _sparse_to_json(r.sparse),
                json.dumps(dict(r.metadata), ensure_ascii=False),
                r.document,
            )
            for r in records
        ]
        self._transaction([(
            "INSERT OR REPLACE INTO vp_records "
            "(index_name, namespace, id, vector, sparse, metadata, document) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )])

    def remove(self, index: str, namespace: str, ids: Sequence[str]) -> None:
        self._transaction([(
            "DELETE FROM vp_records WHERE index_name = ? AND namespace = ? AND id = ?",
            [(index, namespace, rid) for rid in ids],
        )])

    def remove_namespace(self, index: str, namespace: str) -> None:
        self._transaction([(
            "DELETE FROM vp_records WHERE index_name = ? AND namespace = ?", (index, namespace)
        )])

"""Messages in a SQL database: SQLite (standard library) or PostgreSQL (psycopg).

Two tables, created when missing: ``vectorport_recall_threads`` (id, resource_id,
title, created_at) and ``vectorport_recall_messages`` (an arrival ``seq``, id, thread
and resource ids, role, content, created_at as fixed-width ISO 8601 UTC text, whose
text order is time order). Every statement is a constant with bound parameters; a list
of ids is bound as one parameter (a JSON array read by ``json_each`` on SQLite, an
array with ``= ANY`` on PostgreSQL), so no value ever becomes SQL text.

Both storages are safe to share between threads (one connection behind a lock).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vectorport.core.errors import BackendError, ConfigError, TransientBackendError, ValidationError
from vectorport.extras import install_hint
from vectorport.recall.messages import Message, Thread, as_utc, iso_utc
from vectorport.recall.storage import check_storable, resource_conflict


@dataclass(frozen=True, slots=True)
class _Statements:
    """The SQL of one dialect. Written with ``?`` placeholders, converted once."""

    create: tuple[str, ...]
    by_ids: str  # binds the whole id list as one parameter
    placeholder: str = "?"

    def sql(self, text: str) -> str:
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)


_SQLITE = _Statements(
    create=(
        "CREATE TABLE IF NOT EXISTS vectorport_recall_threads ("
        " id TEXT PRIMARY KEY, resource_id TEXT NOT NULL, title TEXT,"
        " created_at TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS vectorport_recall_messages ("
        " seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,"
        " thread_id TEXT NOT NULL REFERENCES vectorport_recall_threads (id),"
        " resource_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL,"
        " created_at TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS vectorport_recall_messages_order"
        " ON vectorport_recall_messages (thread_id, created_at, seq)",
    ),
    by_ids=("SELECT id, thread_id, resource_id, role, content, created_at"
            " FROM vectorport_recall_messages WHERE id IN (SELECT value FROM json_each(?))"
            " ORDER BY created_at, seq"),
)

_POSTGRES = _Statements(
    create=(
        "CREATE TABLE IF NOT EXISTS vectorport_recall_threads ("
        " id TEXT PRIMARY KEY, resource_id TEXT NOT NULL, title TEXT,"
        " created_at TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS vectorport_recall_messages ("
        " seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id TEXT NOT NULL UNIQUE,"
        " thread_id TEXT NOT NULL REFERENCES vectorport_recall_threads (id),"
        " resource_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL,"
        " created_at TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS vectorport_recall_messages_order"
        " ON vectorport_recall_messages (thread_id, created_at, seq)",
    ),
    by_ids=("SELECT id, thread_id, resource_id, role, content, created_at"
            " FROM vectorport_recall_messages WHERE id = ANY(?) ORDER BY created_at, seq"),
    placeholder="%s",
)

_SELECT = "SELECT id, thread_id, resource_id, role, content, created_at FROM vectorport_recall_messages"
_THREAD_GET = "SELECT id, resource_id, title, created_at FROM vectorport_recall_threads WHERE id = ?"
_THREAD_INSERT = ("INSERT INTO vectorport_recall_threads (id, resource_id, title, created_at)"
                  " VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING")
_THREAD_TITLE = "UPDATE vectorport_recall_threads SET title = ? WHERE id = ?"
_MESSAGE_THREAD = "SELECT thread_id FROM vectorport_recall_messages WHERE id = ?"
_MESSAGE_UPSERT = (
    "INSERT INTO vectorport_recall_messages (id, thread_id, resource_id, role, content, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (id) DO UPDATE SET role = excluded.role, content = excluded.content,"
    " created_at = excluded.created_at"
)
_MESSAGE_POSITION = ("SELECT thread_id, created_at, seq FROM vectorport_recall_messages"
                     " WHERE id = ?")
_BY_ID = _SELECT + " WHERE id = ?"
_THREAD_MESSAGES = _SELECT + " WHERE thread_id = ? ORDER BY created_at, seq"
_EARLIER = (_SELECT + " WHERE thread_id = ? AND (created_at < ? OR (created_at = ? AND seq < ?))"
            " ORDER BY created_at DESC, seq DESC LIMIT ?")
_LATER = (_SELECT + " WHERE thread_id = ? AND (created_at > ? OR (created_at = ? AND seq > ?))"
          " ORDER BY created_at, seq LIMIT ?")


def _message(row: Sequence[Any]) -> Message:
    mid, thread_id, resource_id, role, content, created_at = row
    return Message(role=role, content=content, id=mid, thread_id=thread_id,
                   resource_id=resource_id, created_at=as_utc(created_at))


class SQLStorage:
    """The storage over one DB-API connection; use :class:`SQLiteStorage` or
    :class:`PostgresStorage`."""

    def __init__(self, connection: Any, statements: _Statements,
                 errors: Callable[[Exception], BackendError | None]) -> None:
        self._conn = connection
        self._sql = statements
        self._errors = errors
        self._lock = threading.RLock()
        with self._transaction() as cur:
            for ddl in statements.create:
                cur.execute(ddl)

    # -- plumbing ----------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        with self._lock:
            try:
                cur = self._conn.cursor()
                try:
                    yield cur
                    self._conn.commit()
                except BaseException:
                    self._conn.rollback()
                    raise
                finally:
                    cur.close()
            except Exception as exc:
                wrapped = self._errors(exc)
                if wrapped is None:
                    raise
                raise wrapped from exc

    def _run(self, cur: Any, text: str, params: Sequence[Any] = ()) -> Any:
        cur.execute(self._sql.sql(text), tuple(params))
        return cur

    def _ids_param(self, ids: list[str]) -> Any:
        return json.dumps(ids) if self._sql.placeholder == "?" else ids

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SQLStorage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- threads -----------------------------------------------------------------------

    def _claim_thread(self, cur: Any, thread_id: str, resource_id: str, created: str) -> None:
        self._run(cur, _THREAD_INSERT, (thread_id, resource_id, None, created))
        owner = self._run(cur, _THREAD_GET, (thread_id,)).fetchone()[1]
        if owner != resource_id:
            raise resource_conflict(thread_id, owner, resource_id)

    def save_thread(self, thread: Thread) -> None:
        with self._transaction() as cur:
            self._claim_thread(cur, thread.id, thread.resource_id, iso_utc(thread.created_at))
            self._run(cur, _THREAD_TITLE, (thread.title, thread.id))

    def get_thread(self, thread_id: str) -> Thread | None:
        with self._transaction() as cur:
            row = self._run(cur, _THREAD_GET, (thread_id,)).fetchone()
        if row is None:
            return None
        return Thread(row[0], row[1], row[2], as_utc(row[3]))

    # -- messages ----------------------------------------------------------------------

    def save_messages(self, messages: Sequence[Message]) -> None:
        storable = check_storable(messages)
        with self._transaction() as cur:  # one transaction: a refused message writes nothing
            for m in storable:
                assert m.thread_id is not None and m.resource_id is not None
                created = iso_utc(m.created_at)
                self._claim_thread(cur, m.thread_id, m.resource_id, created)
                row = self._run(cur, _MESSAGE_THREAD, (m.id,)).fetchone()
                if row is not None and row[0] != m.thread_id:
                    raise ValidationError(f"message {m.id!r} is stored in thread {row[0]!r} already")
                self._run(cur, _MESSAGE_UPSERT,
                          (m.id, m.thread_id, m.resource_id, m.role, m.content, created))

    def get_messages(self, ids: Iterable[str]) -> list[Message]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        with self._transaction() as cur:
            rows = self._run(cur, self._sql.by_ids, (self._ids_param(wanted),)).fetchall()
        return [_message(r) for r in rows]

    def list_messages(self, thread_id: str) -> list[Message]:
        with self._transaction() as cur:
            rows = self._run(cur, _THREAD_MESSAGES, (thread_id,)).fetchall()
        return [_message(r) for r in rows]

    def message_window(self, message_id: str, before: int, after: int) -> list[Message]:
        with self._transaction() as cur:
            position = self._run(cur, _MESSAGE_POSITION, (message_id,)).fetchone()
            if position is None:
                return []
            thread_id, created, seq = position
            earlier = self._run(cur, _EARLIER, (thread_id, created, created, seq, before)
                                ).fetchall() if before > 0 else []
            center = self._run(cur, _BY_ID, (message_id,)).fetchall()
            later = self._run(cur, _LATER, (thread_id, created, created, seq, after)
                              ).fetchall() if after > 0 else []
        return [_message(r) for r in [*reversed(earlier), *center, *later]]


def _sqlite_error(exc: Exception) -> BackendError | None:
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        return TransientBackendError(f"SQLite: {exc}")
    if isinstance(exc, sqlite3.Error):
        return BackendError(f"SQLite: {exc}")
    return None


class SQLiteStorage(SQLStorage):
    """Messages in SQLite: ``":memory:"`` (the default) or a database file."""

    def __init__(self, path: str | Path = ":memory:", *, timeout: float = 10.0) -> None:
        self.path = str(path)
        try:
            connection = sqlite3.connect(self.path, timeout=timeout, check_same_thread=False)
        except sqlite3.Error as exc:
            raise BackendError(f"cannot open SQLite database {self.path!r}: {exc}") from exc
        super().__init__(connection, _SQLITE, _sqlite_error)

    def __repr__(self) -> str:
        return f"SQLiteStorage({self.path!r})"


def _postgres_error(exc: Exception) -> BackendError | None:
    import psycopg

    if isinstance(exc, psycopg.OperationalError):
        return TransientBackendError(f"PostgreSQL: {exc}")
    if isinstance(exc, psycopg.Error):
        return BackendError(f"PostgreSQL: {exc}")
    return None


class PostgresStorage(SQLStorage):
    """Messages in PostgreSQL through psycopg 3: a libpq ``conninfo`` string or URI, or
    an open ``psycopg.Connection`` (then closing the storage closes it)."""

    def __init__(self, conninfo: str | None = None, *, connection: Any = None) -> None:
        try:
            import psycopg
        except ImportError as exc:
            raise ConfigError(f"PostgresStorage needs psycopg: {install_hint('pgvector-binary')}"
                              ) from exc
        if (conninfo is None) == (connection is None):
            raise ConfigError("give a conninfo or a connection=, exactly one of them")
        if conninfo is not None:
            try:
                connection = psycopg.connect(conninfo)
            except psycopg.Error as exc:
                raise TransientBackendError(f"cannot connect to PostgreSQL: {type(exc).__name__}"
                                            ) from exc
        super().__init__(connection, _POSTGRES, _postgres_error)

    def __repr__(self) -> str:
        return "PostgresStorage()"

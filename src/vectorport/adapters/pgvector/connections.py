"""How the adapter's connections are opened and set up, and the one cursor each keeps.

Every pooled connection is configured once (types, staging tables, session defaults) and
keeps one binary cursor for the data reads (queries, fetches): a fresh cursor per call
builds its transformer and looks up each column's loader again, measured at ~14 µs of a
~60 µs top-10 query's client time. A connection serves one call at a time (the pool
hands it to one caller), so its cursor is never shared between calls in flight.

The connection given back last is handed out first (:class:`Connections`): calls one
after another stay on one server process, whose caches are warm.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import psycopg
from psycopg import AsyncConnection, Connection, Cursor
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool

from vectorport.adapters.pgvector import schema
from vectorport.adapters.pgvector.array_params import ArrayParam, ArrayParamDumper
from vectorport.adapters.pgvector.codec import register_codecs, register_codecs_async
from vectorport.adapters.pgvector.errors import translate
from vectorport.adapters.pgvector.options import CLIENT_CHECK, SESSION_DEFAULTS
from vectorport.adapters.pgvector.schema import STAGE_TABLES
from vectorport.adapters.pgvector.watchdog import within_deadline
from vectorport.core.errors import VectorportError
from vectorport.core.retry import request_timeout

CONNECTION_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": None}
"""Autocommit (transactions are explicit), and no server-side prepared statements: a
custom plan per query suits filtered vector search better than a generic one, and an
index re-created under the same name with another vector type cannot trip a cached plan.
"""

_STAGE_DDL = [schema.create_stage_table(kind) for kind in STAGE_TABLES]


def type_oids(conn: Connection[Any] | AsyncConnection[Any], vector_type: str) -> tuple[int, int]:
    """The OIDs of ``vector_type`` and ``sparsevec`` in this database (pgvector's types
    get theirs when the extension is created), as the array encoder needs them."""
    types = conn.adapters.types
    return types[vector_type].oid, types["sparsevec"].oid


class PooledConnection(Connection[Any]):
    """A psycopg connection that keeps one binary cursor with tuple rows for reads."""

    _vp_reader: Cursor[Any] | None = None

    def reader(self) -> Cursor[Any]:
        """This connection's binary read cursor (made on first use)."""
        cur = self._vp_reader
        if cur is None or cur.closed:
            cur = self._vp_reader = self.cursor(binary=True)
        return cur


KEEP_SECONDS = 30.0
"""How long one connection may be the kept one before it goes back through the pool,
which is where psycopg_pool retires connections past their lifetime."""

CLOSE_WAIT = 1.0
"""Seconds :meth:`Connections.close` waits for a call using the kept connection."""


class Connections:
    """The adapter's sync connections: psycopg_pool's pool, with the connection given
    back last handed out first.

    psycopg_pool hands out its idle connections in turn (a FIFO queue), so calls one
    after another each land on another server process, with colder caches there: ≈ 7%
    of a top-10 query over 2,000 records, and as much of an upsert of 100, measured
    against one connection. The async pools (:mod:`.loop_pool`) already reuse the last
    connection given back. Here one connection is kept out of the pool for the next
    call that finds it free; calls that overlap it take theirs from the pool as before.
    It goes back to the pool when it is not idle (broken, severed at a deadline, left
    in a transaction: the pool resets or replaces it) and every :data:`KEEP_SECONDS`.
    Not with ``pool_max_size=1``: a caller waiting on the pool would never be given
    the kept connection."""

    __slots__ = ("_keeps", "_kept", "_kept_since", "_slot", "pool", "wait")

    def __init__(self, pool: ConnectionPool[PooledConnection], wait: float) -> None:
        self.pool, self.wait = pool, wait
        self._keeps = pool.max_size > 1
        self._slot = threading.Lock()  # held by the call using the kept connection
        self._kept: PooledConnection | None = None
        self._kept_since = 0.0

    def take(self) -> tuple[PooledConnection, bool]:
        """A connection for one call, and whether it is the kept one; never waits for
        the pool past the call's deadline."""
        if self._keeps and self._slot.acquire(blocking=False):
            conn = self._kept
            if conn is not None:
                return conn, True
            try:
                conn = self.pool.getconn(request_timeout(self.wait))
            except BaseException:
                self._slot.release()
                raise
            self._kept, self._kept_since = conn, time.monotonic()
            return conn, True
        return self.pool.getconn(request_timeout(self.wait)), False

    def give_back(self, conn: PooledConnection, kept: bool) -> None:
        if not kept:
            self.pool.putconn(conn)
            return
        try:
            if (not self._keeps or conn.pgconn.transaction_status != TransactionStatus.IDLE
                    or time.monotonic() - self._kept_since > KEEP_SECONDS):
                self._kept = None
                self.pool.putconn(conn)
        finally:
            self._slot.release()

    def close(self) -> None:
        """Close the pool with the kept connection. A call using that connection now
        gives it back to the closed pool, which closes it, when it ends; closing does
        not wait for a call stalled on a hung server (as ``pool.close()`` does not)."""
        self._keeps = False
        if self._slot.acquire(timeout=CLOSE_WAIT):  # a call ending just now: its turn
            try:
                conn, self._kept = self._kept, None
                if conn is not None:
                    self.pool.putconn(conn)
            finally:
                self._slot.release()
        self.pool.close()


class Checkout:
    """A connection held for one call (``with Checkout(...) as conn``): taken within
    the call's deadline, armed with it (:func:`within_deadline`), given back, and every
    native error translated (scrubbed of credentials) on the way out.

    Not ``pool.connection()``: its ``with conn`` adds a commit (a no-op: autocommit)
    and a generator, ~7 µs a call; ``putconn`` rolls back a transaction left open and
    replaces a broken connection just the same. And a class, not a ``@contextmanager``
    generator: those cost ~1 µs each of every query."""

    __slots__ = ("_conn", "_connections", "_held", "_index", "_kept", "_operation")

    def __init__(self, connections: Connections, operation: str,
                 index: str | None = None) -> None:
        self._connections, self._operation, self._index = connections, operation, index

    def __enter__(self) -> PooledConnection:
        connections = self._connections
        try:
            conn, kept = connections.take()
        except VectorportError:
            raise
        except Exception as exc:
            raise translate(exc, self._operation, self._index) from exc
        held = within_deadline(conn, self._operation, self._index)
        try:
            held.__enter__()
        except BaseException:
            connections.give_back(conn, kept)
            raise
        self._conn, self._kept, self._held = conn, kept, held
        return conn

    def __exit__(self, kind: object, exc: BaseException | None, tb: Any) -> None:
        try:
            try:
                self._held.__exit__(kind, exc, tb)  # the deadline's error, if it passed
            finally:
                self._connections.give_back(self._conn, self._kept)
        except VectorportError:
            raise
        except Exception as raised:
            raise translate(raised, self._operation, self._index) from raised
        if isinstance(exc, Exception) and not isinstance(exc, VectorportError):
            raise translate(exc, self._operation, self._index) from exc


def _checks_client(conn: Connection[Any] | AsyncConnection[Any]) -> bool:
    """Whether the server has ``client_connection_check_interval`` (PostgreSQL 14+)."""
    return conn.info.server_version >= 140000


def configure(conn: Connection[Any]) -> None:
    """Run once per pooled connection: types, staging tables, session defaults."""
    register_codecs(conn)
    conn.adapters.register_dumper(ArrayParam, ArrayParamDumper)
    for ddl in _STAGE_DDL:
        conn.execute(ddl)
    for name, value in SESSION_DEFAULTS:
        conn.execute(schema.SET_SESSION, (name, value))
    if _checks_client(conn):  # refused on a system where it cannot check: as before
        with contextlib.suppress(psycopg.Error):
            conn.execute(schema.SET_SESSION, CLIENT_CHECK)


async def configure_async(conn: AsyncConnection[Any]) -> None:
    await register_codecs_async(conn)
    conn.adapters.register_dumper(ArrayParam, ArrayParamDumper)
    for ddl in _STAGE_DDL:
        await conn.execute(ddl)
    for name, value in SESSION_DEFAULTS:
        await conn.execute(schema.SET_SESSION, (name, value))
    if _checks_client(conn):
        with contextlib.suppress(psycopg.Error):
            await conn.execute(schema.SET_SESSION, CLIENT_CHECK)

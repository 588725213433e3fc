"""How the adapter's connections are opened and set up, and the one cursor each keeps.

Every pooled connection is configured once (types, staging tables, session defaults) and
keeps one binary cursor for the data reads (queries, fetches): a fresh cursor per call
builds its transformer and looks up each column's loader again, measured at ~14 µs of a
~60 µs top-10 query's client time. A connection serves one call at a time (the pool
hands it to one caller), so its cursor is never shared between calls in flight.
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection, Connection, Cursor
from psycopg_pool import ConnectionPool

from vectorport.adapters.pgvector import schema
from vectorport.adapters.pgvector.array_params import ArrayParam, ArrayParamDumper
from vectorport.adapters.pgvector.codec import register_codecs, register_codecs_async
from vectorport.adapters.pgvector.errors import translate
from vectorport.adapters.pgvector.options import SESSION_DEFAULTS
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


class Checkout:
    """A pooled connection held for one call (``with Checkout(...) as conn``): taken
    within the call's deadline, armed with it (:func:`within_deadline`), given back,
    and every native error translated (scrubbed of credentials) on the way out.

    Not ``pool.connection()``: its ``with conn`` adds a commit (a no-op: autocommit)
    and a generator, ~7 µs a call; ``putconn`` rolls back a transaction left open and
    replaces a broken connection just the same. And a class, not a ``@contextmanager``
    generator: those cost ~1 µs each of every query."""

    __slots__ = ("_conn", "_held", "_index", "_operation", "_pool", "_wait")

    def __init__(self, pool: ConnectionPool[PooledConnection], wait: float, operation: str,
                 index: str | None = None) -> None:
        self._pool, self._wait, self._operation, self._index = pool, wait, operation, index

    def __enter__(self) -> PooledConnection:
        try:
            # never wait for a pooled connection past the call's deadline
            conn = self._pool.getconn(request_timeout(self._wait))
        except VectorportError:
            raise
        except Exception as exc:
            raise translate(exc, self._operation, self._index) from exc
        held = within_deadline(conn, self._operation, self._index)
        try:
            held.__enter__()
        except BaseException:
            self._pool.putconn(conn)
            raise
        self._conn, self._held = conn, held
        return conn

    def __exit__(self, kind: object, exc: BaseException | None, tb: Any) -> None:
        try:
            try:
                self._held.__exit__(kind, exc, tb)  # the deadline's error, if it passed
            finally:
                self._pool.putconn(self._conn)
        except VectorportError:
            raise
        except Exception as raised:
            raise translate(raised, self._operation, self._index) from raised
        if isinstance(exc, Exception) and not isinstance(exc, VectorportError):
            raise translate(exc, self._operation, self._index) from exc


def configure(conn: Connection[Any]) -> None:
    """Run once per pooled connection: types, staging tables, session defaults."""
    register_codecs(conn)
    conn.adapters.register_dumper(ArrayParam, ArrayParamDumper)
    for ddl in _STAGE_DDL:
        conn.execute(ddl)
    for name, value in SESSION_DEFAULTS:
        conn.execute("SELECT set_config(%s, %s, false)", (name, value))


async def configure_async(conn: AsyncConnection[Any]) -> None:
    await register_codecs_async(conn)
    conn.adapters.register_dumper(ArrayParam, ArrayParamDumper)
    for ddl in _STAGE_DDL:
        await conn.execute(ddl)
    for name, value in SESSION_DEFAULTS:
        await conn.execute("SELECT set_config(%s, %s, false)", (name, value))

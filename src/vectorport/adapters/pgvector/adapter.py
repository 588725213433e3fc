"""The ``pgvector`` adapter: PostgreSQL with the pgvector extension, through psycopg 3.

Layout: one table per index in the URL's schema (see :mod:`.schema`): ``namespace``,
``id``, ``embedding`` (``vector(d)`` or ``halfvec(d)``), ``sparse`` (``sparsevec``),
``metadata`` (``jsonb``, GIN-indexed) and ``document`` (``text``: outside the metadata,
so filters never see it), primary key ``(namespace, id)``, and an HNSW (default) or
IVFFlat index on ``embedding``. A small catalog table keeps each index's spec.

Namespaces are a column: the default namespace is ``''``, every statement has
``namespace = %s`` in its ``WHERE`` clause, and the primary key leads with it, so no
operation in one namespace can see or touch another. An ANN scan filters by namespace
like any other condition; iterative scans (on by default) keep it returning ``top_k``.

Consistency is PostgreSQL's: every call commits before it returns, so a read after a
write sees it ("strong"; "eventual" is served the same way).

Writes: each upsert batch is one ``INSERT … SELECT FROM unnest(…) ON CONFLICT (namespace,
id) DO UPDATE`` over binary array parameters (:mod:`.array_params`), and every write runs
in a ``BEGIN`` … ``COMMIT`` sent one at a time (see :meth:`PgvectorAdapter.upsert` for why
not one autocommit statement). Queries that need
``SET LOCAL`` (``ef`` → ``hnsw.ef_search``, ``probes`` → ``ivfflat.probes``, iterative
scan options) run in their own transaction, so the settings end with the query.

Bulk loads: ``index.upsert_bulk(records)`` copies straight into the table over several
connections and builds the indexes once at the end when it starts empty (see
:mod:`.bulk`). Create with ``backend_options={"pgvector": {"defer_index": True}}`` to
leave the ANN index for later: :meth:`PgvectorAdapter.build_index` builds it with a
large ``maintenance_work_mem`` in one go (``store.adapter.build_index(name)``).

Native async (:class:`~vectorport.core.adapter.NativeAsyncAdapter`) uses psycopg's
async connections from a small pool per event loop (see ``loop_pool``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any, ClassVar

import numpy as np
import psycopg
from psycopg import AsyncConnection, Connection
from psycopg import errors as pg_errors
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from vectorport.adapterkit.handles import Handles
from vectorport.adapters.pgvector import (
    array_params,
    bulk,
    explain,
    row_storage,
    schema,
    statements,
    tables,
)
from vectorport.adapters.pgvector.capabilities import HALFVEC_LIMITS, PGVECTOR_CAPABILITIES
from vectorport.adapters.pgvector.codec import (
    matches_of,
    raw_vectors,
    records_of,
    records_of_page,
)
from vectorport.adapters.pgvector.connections import (
    CONNECTION_KWARGS,
    Checkout,
    Connections,
    PooledConnection,
    configure,
    configure_async,
    type_oids,
)
from vectorport.adapters.pgvector.errors import translate
from vectorport.adapters.pgvector.explain import prepare_query
from vectorport.adapters.pgvector.jsonb import (
    check_text,
)
from vectorport.adapters.pgvector.loop_pool import LoopPool
from vectorport.adapters.pgvector.options import (
    IVF_DEFAULT_LISTS,
    ConnectionSettings,
    IndexLayout,
    connection_settings,
    default_ivf_lists,
    index_layout,
)
from vectorport.adapters.pgvector.planner_stats import PlannerStatistics, arefresh, refresh
from vectorport.adapters.pgvector.schema import SET_LOCAL, Names
from vectorport.adapters.pgvector.statements import Statement
from vectorport.adapters.pgvector.tables import TableReplacedError
from vectorport.adapters.pgvector.watchdog import within_deadline
from vectorport.core import validation
from vectorport.core.capabilities import Capabilities, Limits
from vectorport.core.config import ConnectionURL
from vectorport.core.errors import (
    IndexExistsError,
    IndexNotFoundError,
    VectorportError,
)
from vectorport.core.filters.ast import Filter
from vectorport.core.types import (
    Explanation,
    IdPage,
    IndexInfo,
    IndexSpec,
    Match,
    QueryRequest,
    Record,
    RecordPage,
    RecordPatch,
)

BACKEND = "pgvector"
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _walk_the_key(conn: Connection[Any]) -> None:
    """For the rest of the transaction, page in primary-key order by walking the key.

    Keyset paging (``id > cursor ORDER BY id LIMIT n``) wants the key's order. On a table
    not yet analysed (just loaded, as by a copy) the planner picks a bitmap scan plus a
    sort of everything after the cursor, for every page: measured, a 100k-record scan at
    a third of its speed. Without sorts it walks the key instead."""
    conn.execute(SET_LOCAL, ("enable_sort", "off"))


class PgvectorAdapter:
    """PostgreSQL + pgvector; see the module docstring for the layout."""

    backend: ClassVar[str] = BACKEND

    def __init__(self, settings: ConnectionSettings) -> None:
        self._settings = settings
        self._names = Names(settings.schema)
        self._bootstrap()
        pool: ConnectionPool[PooledConnection] = ConnectionPool(
            settings.conninfo,
            connection_class=PooledConnection,
            min_size=settings.pool_min_size,
            max_size=settings.pool_max_size,
            timeout=settings.pool_timeout,
            kwargs=CONNECTION_KWARGS,
            configure=configure,
            name="vectorport-pgvector",
            open=True,
        )
        self._connections = Connections(pool, settings.pool_timeout)
        self._async_pools: dict[int, LoopPool] = {}
        # which Index handles still reach the index they were opened on (the kit's
        # Handles): statements name the table, so without this an Index kept across a
        # delete read and wrote the table created again under its name. Each call is
        # an identity test of the spec; the table's OID, which the hot statements
        # return at no extra round trip, tells a table re-created by another
        # connection (:mod:`.tables`); writes that delete or patch read the catalog
        # row first, in their own transaction (see docs/backends/pgvector.md)
        self._specs = Handles(self._read_spec)
        self._oids: dict[str, int | None] = {}
        """Per index: the OID of its table, read with the spec the handles must equal."""
        self._statistics = PlannerStatistics()
        """Rows written per index, to analyze a table its writes made stale (see
        :mod:`.planner_stats`)."""

    @classmethod
    def from_url(cls, url: ConnectionURL) -> PgvectorAdapter:
        return cls(connection_settings(url))

    def __repr__(self) -> str:
        return f"PgvectorAdapter({self._settings.display!r})"

    @property
    def capabilities(self) -> Capabilities:
        return PGVECTOR_CAPABILITIES

    def index_limits(self, spec: IndexSpec, limits: Limits) -> Limits:
        """A ``halfvec`` index stores float16 (:class:`IndexLimitsAdapter`): the facade
        refuses a component beyond ±65504 for the whole call, before any write."""
        section = spec.backend_options.get(BACKEND) or {}
        return HALFVEC_LIMITS if section.get("vector_type") == "halfvec" else limits

    @property
    def schema(self) -> str:
        return self._settings.schema

    # -- plumbing ---------------------------------------------------------------------

    def _bootstrap(self) -> None:
        """Make sure the extension, the schema and the catalog exist (checking first,
        so that a user without CREATE rights can use what an admin prepared)."""
        names = self._names
        try:
            with psycopg.connect(self._settings.conninfo, autocommit=True) as conn:
                if not conn.execute(
                    "SELECT 1 FROM pg_extension WHERE extname = 'vector'"
                ).fetchone():
                    with suppress(pg_errors.UniqueViolation):  # a concurrent client won
                        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                if not conn.execute(
                    "SELECT 1 FROM pg_namespace WHERE nspname = %s", (names.schema,)
                ).fetchone():
                    conn.execute(schema.create_schema(names))
                if not conn.execute(
                    "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = %s",
                    (names.schema, schema.CATALOG_TABLE),
                ).fetchone():
                    conn.execute(schema.create_catalog(names))
        except VectorportError:
            raise
        except Exception as exc:
            raise translate(exc, f"connect to {self._settings.display}") from exc

    def describe_engine(self) -> str:
        """The server and extension versions, for the capability matrix."""
        with self._connect("describe_engine") as conn:
            row = conn.execute(
                "SELECT current_setting('server_version'), "
                "(SELECT extversion FROM pg_extension WHERE extname = 'vector')"
            ).fetchone()
        server, extension = row if row is not None else ("?", "?")
        return f"PostgreSQL {server.split()[0]} + pgvector {extension}"

    def _connect(self, operation: str, index: str | None = None) -> Checkout:
        """This adapter's pooled connection for one call (``with self._connect(...)``)."""
        return Checkout(self._connections, operation, index)

    def _fetchall(self, operation: str, index: str | None, stmt: Statement) -> list[Any]:
        with self._connect(operation, index) as conn:
            return conn.execute(stmt.sql, stmt.params).fetchall()

    def _write(self, operation: str, index: IndexSpec, stmt: Statement) -> list[Any]:
        """A write statement inside BEGIN … COMMIT sent one at a time, never as one
        autocommit statement: see :meth:`upsert` (a write to a server that stalls must
        not land after its call has failed); the index's catalog row is read first
        (:meth:`_guarded`), in the same transaction."""
        with self._connect(operation, index.name) as conn, conn.transaction():
            self._guarded(conn, index)
            cursor = conn.execute(stmt.sql, stmt.params)
            return cursor.fetchall() if cursor.description is not None else []

    def _catalog_row(self, conn: Connection[Any], name: str,
                     lock: bool = False) -> tuple[IndexSpec, bool]:
        """The stored spec and ANN flag of ``name``, recorded with its table's OID as
        what the kept handles must equal (``lock``: see :func:`.tables.catalog_row`)."""
        row = conn.execute(
            tables.catalog_row(self._names, lock=lock),
            (*tables.oid_params(self._names, name), name),
        ).fetchone()
        if row is None:
            raise IndexNotFoundError(name)
        spec = schema.spec_from_json(name, row[0])
        self._specs.stored(name, spec)
        self._oids[name] = row[2]
        return spec, bool(row[1])

    def _read_spec(self, name: str) -> IndexSpec:
        with self._connect("describe_index", name) as conn:
            return self._catalog_row(conn, name)[0]

    def _same_table(self, index: IndexSpec, oid: object) -> None:
        """Raise :class:`.tables.TableReplacedError` if a statement of ``index`` ran on
        another table than the one its spec was read with."""
        if oid != self._oids.get(index.name):
            raise TableReplacedError(index.name)

    def _answered_by(self, index: IndexSpec, rows: Sequence[Any]) -> None:
        """``IndexNotFoundError`` if ``rows`` (a ``tableoid`` last in each) came from a
        table re-created under the name of ``index`` with another spec."""
        if rows and rows[0][-1] != self._oids.get(index.name):
            self._specs.check_stored(index)

    def _guarded(self, conn: Connection[Any], index: IndexSpec) -> None:
        """In a write's transaction, before it: the catalog row of ``index``, locked
        until the write commits, must hold its spec (so that no delete or patch
        reaches an index replaced by another connection)."""
        try:
            self._catalog_row(conn, index.name, lock=True)
        except IndexNotFoundError:
            self._specs.check_stored(index)  # forgets the stored spec
            raise
        self._specs.check(index)

    # -- lifecycle --------------------------------------------------------------------

    def create_index(self, spec: IndexSpec) -> None:
        layout = index_layout(spec)  # validates the pgvector parts before any I/O
        names = self._names
        with self._connect("create_index", None) as conn, conn.transaction():
            created = conn.execute(
                psycopg.sql.SQL(
                    "INSERT INTO {} (name, spec, ann_built) VALUES (%s, %s, false)"
                    " ON CONFLICT (name) DO NOTHING RETURNING name"
                ).format(names.catalog),
                (spec.name, Jsonb(schema.spec_to_json(spec))),
            ).fetchone()
            if created is None:
                raise IndexExistsError(spec.name)
            self._rename_legacy_helpers(conn)  # one may hold this index's table name
            try:
                block_size = conn.execute(schema.BLOCK_SIZE).fetchone()
                assert block_size is not None  # a SELECT of one value: one row
                conn.execute(schema.create_table(names, layout, block_size[0]))
            except pg_errors.DuplicateTable:
                raise IndexExistsError(spec.name) from None
            conn.execute(schema.create_meta_index(names, layout))
            if not layout.defer_index:
                self._build_ann(conn, layout, rows=None)
            oid = conn.execute(psycopg.sql.SQL("SELECT {}").format(tables.TABLE_OID),
                               tables.oid_params(names, spec.name)).fetchone()
        self._oids[spec.name] = oid[0] if oid is not None else None
        self._specs.created(spec)

    def _build_ann(self, conn: Connection[Any], layout: IndexLayout, rows: int | None) -> None:
        """(Re)build the ANN index inside the caller's transaction."""
        if layout.ann == "flat":
            return
        conn.execute(SET_LOCAL, ("maintenance_work_mem", layout.maintenance_work_mem))
        conn.execute(
            SET_LOCAL, ("max_parallel_maintenance_workers", str(layout.maintenance_workers))
        )
        lists = None
        if layout.ann == "ivf":
            lists = layout.params.get("lists") or (
                IVF_DEFAULT_LISTS if rows is None else default_ivf_lists(rows)
            )
        self._rename_legacy_helpers(conn)  # else the old ANN index would survive the drop
        conn.execute(schema.drop_ann_index(self._names, layout))
        conn.execute(schema.create_ann_index(self._names, layout, lists))
        self._mark_ann(conn, layout.name, True)

    def _rename_legacy_helpers(self, conn: Connection[Any]) -> None:
        """Move helpers named the old way to the ``$`` scheme (see :mod:`.schema`)."""
        query, params = schema.legacy_helpers(self._names)
        for old, new in conn.execute(query, params).fetchall():
            conn.execute(schema.rename_index(self._names, old, new))

    def build_index(self, name: str) -> None:
        """Build (or rebuild) the ANN index of ``name`` over the rows it holds now.

        For indexes created with ``defer_index``; also refreshes an IVFFlat index whose
        lists were placed before most data arrived. IVFFlat without an explicit
        ``lists`` gets pgvector's advice for the current row count. Writes to the index
        wait while it builds. The table is analyzed too, so that the planner knows its
        size. A ``flat`` index has nothing to build. A table created by an earlier
        version gets the row target of :func:`.schema.inline_row_bytes`
        (:mod:`.row_storage`).
        """
        validation.index_name(name)  # called directly, not through the facade
        with self._connect("build_index", name) as conn, conn.transaction():
            spec, _ = self._catalog_row(conn, name)
            layout = index_layout(spec)
            table = self._names.table(name)
            # fresh statistics first: right after a bulk load the planner would otherwise
            # think the table tiny and never use the ANN index
            bulk.build_meta_index(conn, self._names, layout)  # if a bulk load died
            row_storage.keep_rows_whole(conn, self._names, name)  # a table made before
            self._refresh_statistics(conn, name, 0, force=True)
            count_row = conn.execute(
                psycopg.sql.SQL("SELECT count(*) FROM {}").format(table)
            ).fetchone()
            self._build_ann(conn, layout, rows=int(count_row[0]) if count_row else 0)

    def defer_upkeep(self, name: str) -> None:
        """Drop the ANN and metadata indexes of ``name`` (just created, still empty) for
        the length of a load by ``copy_index`` / ``import_index``, which writes in pages
        too small for :meth:`upsert_bulk` to drop and rebuild them itself: every row
        would otherwise be inserted into the HNSW graph one at a time. :meth:`optimize`
        builds them at the end; the catalog marks the ANN index unbuilt meanwhile, so a
        load that died half-way is completed by its resumed job or by ``optimize``."""
        validation.index_name(name)  # called directly, not through the facade
        with self._connect("defer_upkeep", name) as conn, conn.transaction():
            self._lock_catalog_row(conn, name)
            spec, _ = self._catalog_row(conn, name)
            layout = index_layout(spec)
            conn.execute(bulk.drop_meta_index(self._names, layout))
            conn.execute(schema.drop_ann_index(self._names, layout))
            self._mark_ann(conn, name, False)

    def optimize(self, name: str) -> None:
        """After a load by ``copy_index`` / ``import_index``: the indexes that
        :meth:`defer_upkeep` (or a bulk load that died) left unbuilt, each in one go.
        The ANN index of an index created with ``defer_index`` stays deferred: that one
        waits for :meth:`build_index`, as its creator asked. Where nothing was put off,
        it only checks that the metadata index exists (``CREATE INDEX IF NOT
        EXISTS``)."""
        validation.index_name(name)  # called directly, not through the facade
        with self._connect("optimize", name) as conn:
            spec, ann_built = self._catalog_row(conn, name)
        layout = index_layout(spec)
        if not ann_built and not layout.defer_index and layout.ann != "flat":
            self.build_index(name)  # the metadata index too, and fresh statistics first
            return
        with self._connect("optimize", name) as conn, conn.transaction():
            bulk.build_meta_index(conn, self._names, layout)  # a no-op when it exists

    def ann_index_built(self, name: str) -> bool:
        """Whether the ANN index of ``name`` exists (``False`` while deferred)."""
        validation.index_name(name)
        with self._connect("describe_index", name) as conn:
            return self._catalog_row(conn, name)[1]

    def describe_index(self, name: str) -> IndexInfo:
        with self._connect("describe_index", name) as conn:
            spec, _ = self._catalog_row(conn, name)
            stmt = statements.namespace_counts(self._names, name)
            counts = {ns: int(n) for ns, n in conn.execute(stmt.sql).fetchall()}
        return IndexInfo(spec=spec, count=sum(counts.values()), namespaces=counts)

    def list_indexes(self) -> list[str]:
        with self._connect("list_indexes") as conn:
            rows = conn.execute(
                psycopg.sql.SQL("SELECT name FROM {} ORDER BY name").format(self._names.catalog)
            ).fetchall()
        return [row[0] for row in rows]

    def delete_index(self, name: str) -> None:
        with self._connect("delete_index", name) as conn, conn.transaction():
            gone = conn.execute(
                psycopg.sql.SQL("DELETE FROM {} WHERE name = %s RETURNING name").format(
                    self._names.catalog
                ),
                (name,),
            ).fetchone()
            if gone is None:
                raise IndexNotFoundError(name)
            conn.execute(schema.drop_table(self._names, name))
        self._specs.deleted(name)
        self._oids.pop(name, None)
        self._statistics.forget(name)

    # -- data -------------------------------------------------------------------------

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        """One ``INSERT … SELECT FROM unnest(…)`` of the batch as arrays (see
        :mod:`.array_params`), inside BEGIN … COMMIT sent one at a time.

        Not one autocommit statement, though that saves two round trips: a statement
        sent to a server that then stalls (frozen, swapped out) waits in its socket
        buffer; the watchdog severs the connection at the deadline and the caller gets
        ``DeadlineExceededError``, but the server, once it runs again, would execute and
        commit the buffered statement: a write reported failed landing later, possibly
        after the caller's next write. Inside a transaction whose COMMIT is sent only
        after the INSERT has answered, a severed connection rolls it back. (A stall
        after COMMIT is sent cannot be told apart from a commit: the one window left.)"""
        layout = index_layout(index)
        if not records:
            return
        self._specs.check(index)
        merge = statements.merge_arrays(self._names, layout)
        with self._specs.replaced_on_failure(index):
            self._until_same_table(index, lambda: self._merge(index, merge, namespace, records))

    def _merge(self, index: IndexSpec, merge: Any, namespace: str,
               records: Sequence[Record]) -> None:
        layout = index_layout(index)
        with self._connect("upsert", index.name) as conn:
            arrays = array_params.encode(records, layout.vector_type,
                                         *type_oids(conn, layout.vector_type))
            with conn.transaction():  # rolled back if the table is another (.tables)
                row = conn.reader().execute(merge, (namespace, *arrays)).fetchone()
                self._same_table(index, row[0] if row is not None else None)
            self._refresh_statistics(conn, index.name, len(records))

    def _refresh_statistics(self, conn: Connection[Any], name: str, written: int, *,
                            force: bool = False) -> None:
        """After a write of ``written`` rows: ``ANALYZE`` the table when its statistics
        have fallen far behind (:mod:`.planner_stats`), or now if ``force``."""
        if self._statistics.wrote(name, written) or force:
            refresh(self._statistics, conn, name, self._names.table(name), force=force)

    def _until_same_table(self, index: IndexSpec, write: Callable[[], None]) -> None:
        """``write``, again once if it met another table than the handle's (rolled
        back) and the index there now has the handle's spec; else the handle is stale."""
        try:
            write()
        except TableReplacedError:
            self._specs.check_stored(index)  # raises unless it has the same spec
            write()

    def upsert_bulk(self, index: IndexSpec, namespace: str, records: Sequence[Record], *,
                    workers: int) -> None:
        """Parallel binary COPY, indexes built once at the end when the table starts
        empty (see :mod:`.bulk`)."""
        layout = index_layout(index)
        self._specs.check(index)
        names = self._names
        workers = max(1, min(workers, self._settings.pool_max_size))
        with self._connect("upsert", index.name) as conn:
            # the catalog row first (one statement a load): a table re-created under
            # the name by another connection with another spec is refused before any
            # chunk is written (one re-created during the load is not noticed)
            self._guarded(conn, index)
            empty = bulk.table_empty(conn, names, layout)
        connect = lambda: self._connect("upsert", index.name)  # noqa: E731
        rebuild = empty and len(records) >= bulk.REBUILD_MIN_ROWS
        ann_built = False
        if rebuild:
            with self._connect("upsert", index.name) as conn, conn.transaction():
                self._lock_catalog_row(conn, index.name)
                ann_built = self._catalog_row(conn, index.name)[1]
                conn.execute(bulk.drop_meta_index(names, layout))
                conn.execute(schema.drop_ann_index(names, layout))
                self._mark_ann(conn, index.name, False)
        try:
            bulk.run_chunks(connect, records, workers, lambda conn, chunk: bulk.write_chunk(
                conn, names, layout, namespace, chunk, known_new=empty))
        finally:
            if rebuild:
                with self._connect("upsert", index.name) as conn, conn.transaction():
                    # two loads that both began on the empty table end here one at a
                    # time: concurrent CREATE INDEX IF NOT EXISTS of one name collide
                    # in pg_class (a UniqueViolation), the second one waits instead
                    self._lock_catalog_row(conn, index.name)
                    bulk.build_meta_index(conn, names, layout)
                    if ann_built:  # else build_index, which analyzes first, comes later
                        # statistics whatever the load's size: without them the
                        # planner takes the table for tiny and never uses the ANN index
                        self._refresh_statistics(conn, index.name, len(records), force=True)
                        self._build_ann(conn, layout, rows=len(records))
        if not (rebuild and ann_built):
            with self._connect("upsert", index.name) as conn:
                # a flat or deferred index is read by a scan the planner chooses from
                # the statistics, which a load into an empty table has none of
                self._refresh_statistics(conn, index.name, len(records))

    def _lock_catalog_row(self, conn: Connection[Any], name: str) -> None:
        """Serialise index rebuilds of ``name`` until the caller's transaction ends."""
        conn.execute(psycopg.sql.SQL("SELECT 1 FROM {} WHERE name = %s FOR UPDATE").format(
            self._names.catalog), (name,))

    def _mark_ann(self, conn: Connection[Any], name: str, built: bool) -> None:
        conn.execute(psycopg.sql.SQL("UPDATE {} SET ann_built = %s WHERE name = %s").format(
            self._names.catalog), (built, name))

    def query(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        prepared = prepare_query(self._names, index, request)  # explain builds the same
        settings, stmt = prepared.settings, prepared.statement
        self._specs.check(index)
        with self._specs.replaced_on_failure(index), self._connect("query", index.name) as conn:
            cur = conn.reader()
            if settings:
                with conn.transaction():
                    conn.execute(*schema.set_locals(settings))
                    rows = cur.execute(stmt.sql, stmt.params).fetchall()
            else:
                rows = cur.execute(stmt.sql, stmt.params).fetchall()
        self._answered_by(index, rows)
        return matches_of(rows, request.include)

    def explain_query(self, index: IndexSpec, request: QueryRequest) -> Explanation:
        return explain.explain_query(self._names, index, request)

    def fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        layout = index_layout(index)
        stmt = statements.fetch(self._names, layout, namespace, ids)
        self._specs.check(index)
        with self._specs.replaced_on_failure(index), self._connect("fetch", index.name) as conn:
            rows = conn.reader().execute(stmt.sql, stmt.params).fetchall()
        self._answered_by(index, rows)
        return records_of(rows)

    def delete(
        self, index: IndexSpec, namespace: str, ids: Sequence[str] | None, filter: Filter | None
    ) -> None:
        layout = index_layout(index)
        stmt = statements.delete(self._names, layout, namespace, ids, filter)
        self._write("delete", index, stmt)

    def count(self, index: IndexSpec, namespace: str, filter: Filter | None) -> int:
        stmt = statements.count(self._names, index_layout(index), namespace, filter)
        self._specs.check(index)
        with self._specs.replaced_on_failure(index):
            rows = self._fetchall("count", index.name, stmt)
        self._answered_by(index, rows)
        return int(rows[0][0])

    def list_namespaces(self, index: IndexSpec) -> list[str]:
        stmt = statements.list_namespaces(self._names, index_layout(index))
        self._specs.check(index)
        with self._specs.replaced_on_failure(index):
            rows = self._fetchall("list_namespaces", index.name, stmt)
        self._answered_by(index, rows)
        return [row[0] for row in rows]

    def delete_namespace(self, index: IndexSpec, namespace: str) -> None:
        self.delete(index, namespace, None, None)

    # -- optional protocols -----------------------------------------------------------

    def patch(self, index: IndexSpec, namespace: str, patch: RecordPatch) -> bool:
        layout = index_layout(index)  # its limits (NUL, sparse, halfvec) checked by the facade
        stmt = statements.patch(self._names, layout, namespace, patch)
        return bool(self._write("patch", index, stmt))

    def scan(
        self,
        index: IndexSpec,
        namespace: str,
        *,
        filter: Filter | None,
        page_size: int,
        cursor: str | None,
    ) -> RecordPage:
        """Whole records a page at a time in one statement (not ids then a fetch), ids
        ascending: a record written during the scan is seen if its id sorts after the
        cursor, as with the id listing."""
        if cursor is not None:
            check_text(cursor, "cursors")
        layout = index_layout(index)
        stmt = statements.scan(self._names, layout, namespace, node=filter,
                               limit=page_size, cursor=cursor)
        self._specs.check(index)
        with self._specs.replaced_on_failure(index), self._connect("scan", index.name) as conn, \
                conn.transaction():
            _walk_the_key(conn)
            # a cursor of its own: the reused one would hold a whole page until the next
            # call, and this one reads vectors as bytes, converted a page at a time
            with conn.cursor(binary=True) as cur:
                raw_vectors(cur, layout.vector_type)
                rows = cur.execute(stmt.sql, stmt.params).fetchall()
        self._answered_by(index, rows)
        records = tuple(records_of_page(rows[:page_size], layout.vector_type))
        more = len(rows) > page_size
        return RecordPage(records, records[-1].id if more else None)

    def list_ids(
        self,
        index: IndexSpec,
        namespace: str,
        *,
        prefix: str | None,
        filter: Filter | None,
        limit: int,
        cursor: str | None,
    ) -> IdPage:
        if prefix:
            check_text(prefix, "id prefixes")
        if cursor is not None:
            check_text(cursor, "cursors")
        stmt = statements.list_ids(
            self._names, index_layout(index), namespace, prefix=prefix, node=filter,
            limit=limit, cursor=cursor,
        )
        self._specs.check(index)
        with self._specs.replaced_on_failure(index), \
                self._connect("list_ids", index.name) as conn, conn.transaction():
            _walk_the_key(conn)
            rows = conn.execute(stmt.sql, stmt.params).fetchall()
        self._answered_by(index, rows)
        ids = [row[0] for row in rows]
        page = tuple(ids[:limit])
        return IdPage(page, page[-1] if len(ids) > limit else None)

    def close(self) -> None:
        """Close the sync pool. Async pools belong to their event loops: ``aclose()``
        (which ``AsyncStore.close`` calls) closes the current loop's."""
        self._connections.close()
        for entry in self._async_pools.values():
            entry.discard()
        self._async_pools.clear()

    # -- native async -----------------------------------------------------------------

    def _async_pool(self) -> LoopPool:
        """This event loop's connections; pools of loops that have closed are discarded."""
        loop = asyncio.get_running_loop()
        entry = self._async_pools.get(id(loop))
        if entry is None or entry.loop is not loop:
            for key, old in list(self._async_pools.items()):
                if old.loop.is_closed():
                    old.discard()
                    del self._async_pools[key]
            entry = LoopPool(loop, self._settings.conninfo, self._settings.pool_max_size,
                             CONNECTION_KWARGS, configure_async)
            self._async_pools[id(loop)] = entry
        return entry

    @asynccontextmanager
    async def _aconnect(
        self, operation: str, index: str | None = None
    ) -> AsyncIterator[AsyncConnection[Any]]:
        try:
            async with self._async_pool().connection() as conn:
                with within_deadline(conn, operation, index):
                    yield conn
        except VectorportError:
            raise
        except Exception as exc:
            raise translate(exc, operation, index) from exc

    async def aupsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        layout = index_layout(index)
        if not records:
            return
        self._specs.check(index)
        merge = statements.merge_arrays(self._names, layout)
        with self._specs.replaced_on_failure(index):
            try:
                await self._amerge(index, merge, namespace, records)
            except TableReplacedError:  # as _until_same_table
                self._specs.check_stored(index)
                await self._amerge(index, merge, namespace, records)

    async def _amerge(self, index: IndexSpec, merge: Any, namespace: str,
                      records: Sequence[Record]) -> None:
        layout = index_layout(index)
        async with self._aconnect("upsert", index.name) as conn:
            arrays = array_params.encode(records, layout.vector_type,
                                         *type_oids(conn, layout.vector_type))
            async with conn.transaction():  # as upsert: never one autocommit statement
                cur = await conn.cursor(binary=True).execute(merge, (namespace, *arrays))
                row = await cur.fetchone()
                self._same_table(index, row[0] if row is not None else None)
            if self._statistics.wrote(index.name, len(records)):  # as _refresh_statistics
                await arefresh(self._statistics, conn, index.name, self._names.table(index.name))

    async def aquery(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        prepared = prepare_query(self._names, index, request)
        settings, stmt = prepared.settings, prepared.statement
        self._specs.check(index)
        with self._specs.replaced_on_failure(index):
            async with self._aconnect("query", index.name) as conn:
                cur = conn.cursor(binary=True)
                if settings:
                    async with conn.transaction():
                        await conn.execute(*schema.set_locals(settings))
                        await cur.execute(stmt.sql, stmt.params)
                        rows = await cur.fetchall()
                else:
                    await cur.execute(stmt.sql, stmt.params)
                    rows = await cur.fetchall()
        self._answered_by(index, rows)
        return matches_of(rows, request.include)

    async def afetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        layout = index_layout(index)
        stmt = statements.fetch(self._names, layout, namespace, ids)
        self._specs.check(index)
        with self._specs.replaced_on_failure(index):
            async with self._aconnect("fetch", index.name) as conn:
                cur = conn.cursor(binary=True)
                await cur.execute(stmt.sql, stmt.params)
                rows = await cur.fetchall()
        self._answered_by(index, rows)
        return records_of(rows)

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        entry = self._async_pools.pop(id(loop), None)
        if entry is not None and entry.loop is loop:
            await entry.close()

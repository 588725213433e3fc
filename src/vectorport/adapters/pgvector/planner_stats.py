"""Planner statistics kept fresh by the writes that make them stale.

PostgreSQL plans a query from the table statistics ``ANALYZE`` gathers. A table that
has just received many rows has none (or those of a far smaller table) until autovacuum
gets round to it, up to a minute later and only once a tenth of the table changed. In
that window the planner takes the default selectivity of ``namespace = %s`` (half a
percent), believes one row in two hundred matches and reads those through the primary key: on
a million-row ``flat`` index that plan (a bitmap scan of the key, then of the heap) took
about 1.3 s a query here, against about 0.6 s for the parallel sequential scan it
chooses once the table is analyzed. PostgreSQL's own advice after populating a
table is to run ``ANALYZE``; this module decides when a writer does.

Each adapter counts the rows it writes per index. Once they reach
:data:`MIN_ROWS` and as many rows as the table held at its last analysis
(``pg_class.reltuples``, which autovacuum's analyses update too), the writing call runs
``ANALYZE`` after its commit. A load therefore analyzes when the table has doubled
(about 7 times over a million rows), and a table whose statistics are current is left
to autovacuum. The count is per process and approximate (replaced rows count as
written): it only decides when to look.

Only a table's first analysis reads every column; the later ones read the namespace
column alone (see :func:`_analyze`): one upsert of 25,000 rows × 384 in batches of
5,000 then took 0.61 s, against 0.91 s when each analysis read the whole table and 0.57 s
with no analysis at all (medians of 6 alternating loads on 2 cores).
"""

from __future__ import annotations

import threading
from typing import Any

from psycopg import AsyncConnection, Connection, sql

MIN_ROWS = 10_000
"""Rows written through one adapter before it considers analyzing. Below it even the
plan without statistics reads the namespace in a few milliseconds, and autovacuum
analyzes the table within a minute; an ``ANALYZE`` on every small load would cost more."""


class PlannerStatistics:
    """Rows written per index since this adapter last looked at its statistics."""

    def __init__(self, min_rows: int = MIN_ROWS) -> None:
        self._min_rows = min_rows
        self._written: dict[str, int] = {}
        self._analyzed_rows: dict[str, float] = {}
        """Per index: the table's rows at its last analysis, as last read (``-1``: never)."""
        self._lock = threading.Lock()

    def wrote(self, index: str, rows: int) -> bool:
        """Count ``rows`` written to ``index``; True when :meth:`refresh` is due."""
        with self._lock:
            written = self._written.get(index, 0) + rows
            self._written[index] = written
            return written >= max(self._min_rows, self._analyzed_rows.get(index, 0.0))

    def look(self, index: str, analyzed: float | None, force: bool) -> int | None:
        """The rows written to ``index`` since its last analysis when ``ANALYZE`` is due
        now, the table having held ``analyzed`` rows at its last one (``-1``: never;
        None: no table any more), else None."""
        if analyzed is None:  # the table went with its index meanwhile
            self.forget(index)
            return None
        with self._lock:
            written = self._written.get(index, 0)
            self._analyzed_rows[index] = analyzed
        return written if force or analyzed < 0 or written >= analyzed else None

    def analyzed(self, index: str, written: int, rows: float | None) -> None:
        """``ANALYZE`` ran after ``written`` rows and found ``rows``; rows other threads
        wrote meanwhile count towards the next look."""
        with self._lock:
            self._written[index] = max(0, self._written.get(index, 0) - written)
            self._analyzed_rows[index] = rows or 0.0

    def forget(self, index: str) -> None:
        """The index was deleted: its counts go with it."""
        with self._lock:
            self._written.pop(index, None)
            self._analyzed_rows.pop(index, None)


_READ_ANALYZED = (
    "SELECT c.reltuples, EXISTS (SELECT 1 FROM pg_stats s WHERE s.schemaname = n.nspname"
    " AND s.tablename = c.relname AND s.attname = 'metadata')"
    " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE c.oid = to_regclass(%s)"
)
"""Of a table named by a bound parameter: ``pg_class.reltuples`` (``-1`` before its
first analysis) and whether its metadata column has statistics; no row when there is no
such table."""


def refresh(statistics: PlannerStatistics, conn: Connection[Any], index: str,
            table: sql.Composable, *, force: bool = False) -> bool:
    """``ANALYZE`` ``table`` if ``force``, or if it was never analyzed or has received
    at least as many rows as it held at its last analysis; True when it did. Called
    after the write has committed, or inside the transaction that builds an index over
    the rows just loaded. See :func:`_analyze` for which columns it reads."""
    name = table.as_string(conn)
    found = conn.execute(_READ_ANALYZED, (name,)).fetchone()
    written = statistics.look(index, _rows(found), force)
    if written is None:
        return False
    conn.execute(_analyze(table, found, force))
    statistics.analyzed(index, written,
                        _rows(conn.execute(_READ_ANALYZED, (name,)).fetchone()))
    return True


async def arefresh(statistics: PlannerStatistics, conn: AsyncConnection[Any], index: str,
                   table: sql.Composable) -> bool:
    """:func:`refresh` on an async connection."""
    name = table.as_string(conn)
    found = await (await conn.execute(_READ_ANALYZED, (name,))).fetchone()
    written = statistics.look(index, _rows(found), False)
    if written is None:
        return False
    await conn.execute(_analyze(table, found, False))
    cursor = await conn.execute(_READ_ANALYZED, (name,))
    statistics.analyzed(index, written, _rows(await cursor.fetchone()))
    return True


def _analyze(table: sql.Composable, found: tuple[Any, ...] | None,
             force: bool) -> sql.Composed:
    """The whole table's ``ANALYZE`` when forced (an index build) or while its metadata
    column has no statistics; else one of the ``namespace`` column alone.

    The later analyses of a load only need to tell the planner the table's new size
    (``reltuples``, which any ``ANALYZE`` sets) and how its rows fall into namespaces.
    The metadata statistics (what a filter's selectivity is estimated from; without
    them a filtered query on an HNSW index here took 4 to 15 ms instead of 1 to 1.5,
    the planner choosing the GIN index and a sort) are the costly part: sorting a
    sample of up to 30,000 ``jsonb`` values, about 0.15 s of the 0.19 s a whole
    analysis of 25,000 rows takes. Those of the first analysis stay; and an ``ANALYZE``
    of named columns leaves the table's count of changed rows as it was, so autovacuum
    still analyzes the whole table once a tenth of it has changed since its last
    whole analysis."""
    has_metadata_statistics = found is not None and bool(found[1])  # _READ_ANALYZED
    if force or not has_metadata_statistics:
        return sql.SQL("ANALYZE {}").format(table)
    return sql.SQL("ANALYZE {} (namespace)").format(table)


def _rows(row: tuple[Any, ...] | None) -> float | None:
    return None if row is None else float(row[0])


__all__ = ["MIN_ROWS", "PlannerStatistics", "arefresh", "refresh"]

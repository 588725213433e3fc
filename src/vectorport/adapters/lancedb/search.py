"""Vector searches through LanceDB's async query API.

LanceDB's sync query builder (``table.search(v)…to_arrow()``) reads the table schema
three times per search (to infer the vector column, and twice to check for blob
columns), each a round trip to LanceDB's background event loop; with
``read_consistency_interval=0`` each schema read also checks for a newer table
version. On a small exact search that is a fifth of the call. The async builder
(``AsyncTable.query().nearest_to(v)…``) is the same Rust query without those reads:
the search itself checks the version once and runs in one round trip.

The adapter keeps its sync connection for everything else (writes, listings, index
builds) and opens a second, async, connection with the same settings for searches,
on the background loop LanceDB's sync API itself runs on (``lancedb.background_loop``).
Its table handles are kept like the sync ones (a handle follows its table's latest
version, also after another connection dropped and re-created it).

The built query is executed by the engine's own ``execute`` (:func:`collect`). The
async builder's ``to_arrow`` first reads the table schema (with
``read_consistency_interval=0`` a second version check, a listing of the table's
version files) to look for blob columns, which a vectorport table never has; the engine
call then checks the version itself. That read was ≈ 5–8% of a small exact search
(alternating, 2 loaded cores).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from vectorport.adapters.lancedb.explain import LanceQuery

T = TypeVar("T")


def run(awaitable: Awaitable[T]) -> T:
    """``awaitable`` run on LanceDB's background loop (where its sync API runs too)."""
    from lancedb.background_loop import LOOP

    return LOOP.run(awaitable)  # type: ignore[no-untyped-call, no-any-return]


class AsyncTables:
    """Async table handles of one database, opened on first use and kept."""

    def __init__(self, connect: Callable[[], Awaitable[Any]]) -> None:
        self._connect = connect
        self._db: Any = None
        self._tables: dict[str, Any] = {}
        self._lock = threading.Lock()

    def table(self, name: str) -> Any:
        table = self._tables.get(name)
        if table is None:
            with self._lock:
                if self._db is None:
                    self._db = run(self._connect())
            table = run(self._db.open_table(name))
            self._tables[name] = table
        return table

    def forget(self, name: str) -> None:
        self._tables.pop(name, None)

    def clear(self) -> None:
        self._tables.clear()


def nearest(table: Any, prepared: LanceQuery, vector: npt.NDArray[np.float32], depth: int,
           where: str | None, columns: Sequence[str], vector_column: str) -> pa.Table:
    """The best ``depth`` rows for ``vector``, as the sync builder would send them
    (``where`` prefiltered, LanceDB's default; ``nprobes`` as both bounds, as the sync
    ``nprobes`` sets them)."""
    query = (table.query().nearest_to(vector).column(vector_column)
             .distance_type(prepared.distance_type).select(list(columns)).limit(depth))
    if where is not None:
        query = query.where(where)
    if prepared.exact:
        query = query.bypass_vector_index()
    else:
        if prepared.nprobes is not None:
            query = query.nprobes(prepared.nprobes).maximum_nprobes(prepared.nprobes)
        ef = prepared.ef_at(depth)
        if ef is not None:
            query = query.ef(ef)
        if prepared.refine_factor is not None:
            query = query.refine_factor(prepared.refine_factor)
    return run(collect(query))


async def collect(query: Any) -> pa.Table:
    """The rows of a built async query, from the engine's ``execute`` (the builder's
    ``to_arrow`` adds a schema read for blob columns first); the SDK's ``to_arrow`` when
    its query has no such entry point."""
    execute = native_execute(query)
    if execute is None:
        result: pa.Table = await query.to_arrow()
        return result
    stream = await execute(max_batch_length=None, timeout=None)
    return pa.Table.from_batches([batch async for batch in stream], schema=stream.schema)


def native_execute(query: Any) -> Any:
    """The engine's ``execute`` of a built async query, or None (tests assert it is
    found, so an SDK release that moves it is noticed rather than silently slower)."""
    return getattr(getattr(query, "_inner", None), "execute", None)


__all__ = ["AsyncTables", "collect", "native_execute", "nearest", "run"]

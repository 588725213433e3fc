"""Upserts: one ``merge_insert`` on ``pk`` per batch, handed to LanceDB's engine directly.

The SDK's ``merge_insert(…).execute(data)`` does three things on LanceDB's background
loop: it reads the table schema (with ``read_consistency_interval=0`` a check for a
newer table version, a listing of the table's version files, whose cost grows with the
number of versions), passes the batch through its input sanitiser (a Python generator
the engine pulls the batch through, re-checking every vector for NaNs and casting to
the table schema), and then calls the engine's ``execute_merge_insert``. Of an upsert
of 100 records on 2 loaded cores, the first two cost ≈ 1.5 ms of ≈ 10 (measured
alternating with the public call; the engine call itself is the same).

Neither is needed for a batch of :func:`.codec` rows: the facade has validated every
vector (finite, the index's dimension) before any write, the batch is built on the
index's own schema (:func:`.codec.schema`), and the engine still checks the latest
version itself before it merges, and checks the batch against the table's schema (a
table replaced elsewhere by one of another dimension fails the merge, writing nothing).
So embedded tables get the engine call directly, with the options the SDK's own
builder holds (read from it, so they are the SDK's and not a copy of them). A table of
another kind (LanceDB Cloud's remote table, an SDK without this entry point) takes the
public call.

**One version check per merge.** Through a table of a connection with
``read_consistency_interval=0`` the engine's merge checks for a newer version four
times (four listings of the table's version files, seen with ``strace``), each as
costly as the table has versions. An embedded merge instead opens the table afresh on
a connection that never checks by itself (:class:`LatestTables`), in the same round
trip to LanceDB's loop as the merge: opening reads the latest version (one listing and
its manifest), so the merge still replaces a row its connection has not read, and
follows a table dropped and re-created elsewhere (tested). ``checkout_latest`` on a
kept handle would do with the one listing, but it never moves to a lower version: a
handle kept across a re-creation elsewhere stayed on the dropped table's manifest.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pyarrow as pa

from vectorport.adapters.lancedb import codec
from vectorport.adapters.lancedb.search import run


class LatestTables:
    """Tables of a connection that never checks for newer versions by itself (the
    adapter's options without ``read_consistency_interval``), each opened afresh, so
    at its latest version, for one merge (:func:`merge_upsert`)."""

    def __init__(self, connect: Callable[[], Awaitable[Any]]) -> None:
        self._connect = connect
        self._db: Any = None

    async def open(self, name: str) -> Any:
        """The engine table of ``name`` at its latest version (callers hold the
        adapter's write lock: one connection is made)."""
        if self._db is None:
            self._db = await self._connect()
        return (await self._db.open_table(name))._inner


def write_connection_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options of :class:`LatestTables`' connection: the adapter's own, without
    ``read_consistency_interval``."""
    return {key: value for key, value in options.items() if key != "read_consistency_interval"}


def merge_upsert(table: Any, data: pa.Table, latest: LatestTables | None = None) -> None:
    """Insert the rows of ``data``, replacing every column of rows whose ``pk`` matches.
    An embedded ``table`` is merged into as ``latest`` opens it (one version check),
    or as it is."""
    builder = (table.merge_insert(codec.PK).when_matched_update_all()
               .when_not_matched_insert_all())
    execute = _engine_merge(table)
    if execute is None:
        builder.execute(data)
        return
    params = {name[1:]: value for name, value in vars(builder).items() if name != "_table"}
    reader = pa.RecordBatchReader.from_batches(data.schema, data.to_batches())
    name = table.name

    async def send() -> Any:
        if latest is None:
            return await execute(reader, params)
        return await (await latest.open(name)).execute_merge_insert(reader, params)

    run(send())


def _engine_merge(table: Any) -> Any:
    """The engine's ``execute_merge_insert`` of an embedded table, or None."""
    from lancedb.table import LanceTable

    if not isinstance(table, LanceTable):
        return None
    return getattr(getattr(table, "_inner", None), "execute_merge_insert", None)


def direct(table: Any) -> bool:
    """Whether upserts into ``table`` go to the engine directly (tests assert it, so an
    SDK release that moves the entry point is noticed rather than silently slower)."""
    return _engine_merge(table) is not None


__all__ = ["LatestTables", "direct", "merge_upsert", "write_connection_options"]

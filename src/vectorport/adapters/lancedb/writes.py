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
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from vectorport.adapters.lancedb import codec
from vectorport.adapters.lancedb.search import run


def merge_upsert(table: Any, data: pa.Table) -> None:
    """Insert the rows of ``data``, replacing every column of rows whose ``pk`` matches."""
    builder = (table.merge_insert(codec.PK).when_matched_update_all()
               .when_not_matched_insert_all())
    execute = _engine_merge(table)
    if execute is None:
        builder.execute(data)
        return
    params = {name[1:]: value for name, value in vars(builder).items() if name != "_table"}
    reader = pa.RecordBatchReader.from_batches(data.schema, data.to_batches())

    async def send() -> Any:
        return await execute(reader, params)

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


__all__ = ["direct", "merge_upsert"]

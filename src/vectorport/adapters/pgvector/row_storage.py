"""Tables created before rows were kept whole (:func:`.schema.inline_row_bytes`).

Their ``toast_tuple_target`` is PostgreSQL's default, so every vector of more than about
450 dimensions sits in the TOAST relation, and at 1536 dimensions the planner never uses
the HNSW index. :func:`keep_rows_whole` runs in ``build_index``, the call a load ends
with: it gives such a table the target (a change of its options, no rewrite), so that
every row written from then on, and every row rewritten by an upsert, keeps its vector;
and when the TOAST relation holds data, it says once per table how to move the rows
written before into place (``VACUUM FULL``, which takes the table's exclusive lock: not
the adapter's to run in a build).
"""

from __future__ import annotations

import logging
from typing import Any

from psycopg import Connection, sql

from vectorport.adapters.pgvector.schema import Names, inline_row_bytes
from vectorport.adapters.pgvector.tables import TABLE_OID, oid_params

log = logging.getLogger("vectorport.pgvector")

_TARGET_OPTION = "toast_tuple_target="

_STORAGE = sql.SQL(
    "SELECT c.reloptions, coalesce(pg_relation_size(nullif(c.reltoastrelid, 0)), 0),"
    " current_setting('block_size')::int FROM pg_class c WHERE c.oid = {}"
).format(TABLE_OID)
"""The table's options, the bytes of its TOAST relation, and the server's page size."""

_warned: set[tuple[str, str]] = set()
"""(schema, table) already told about, in this process."""


def keep_rows_whole(conn: Connection[Any], names: Names, index_name: str) -> None:
    """Give the table of ``index_name`` the target if it has none, inside the caller's
    transaction, and warn once when rows written before may be out of line."""
    row = conn.execute(_STORAGE, oid_params(names, index_name)).fetchone()
    if row is None:
        return
    options, toast_bytes, block_size = row
    if any(option.startswith(_TARGET_OPTION) for option in options or ()):
        return
    table = names.table(index_name)
    conn.execute(sql.SQL("ALTER TABLE {} SET (toast_tuple_target = {})").format(
        table, sql.Literal(inline_row_bytes(block_size))))
    key = oid_params(names, index_name)
    if toast_bytes and key not in _warned:
        _warned.add(key)
        shown = table.as_string(conn)
        log.warning(
            "%s was created by an earlier version of vectorport, with PostgreSQL's "
            "default toast_tuple_target: the rows written to it until now may hold their "
            "vectors out of line (%d bytes in its TOAST relation), where exact searches "
            "read them slowly and the planner may not use the ANN index. Rows written "
            "from now on stay whole; to move the earlier ones, run VACUUM FULL %s (it "
            "takes the table's exclusive lock while it rewrites the table and its "
            "indexes; see docs/backends/pgvector.md, 'Rows are kept whole up to a page')",
            shown, toast_bytes, shown)


__all__ = ["keep_rows_whole"]

"""Which table an index name reaches: how a kept ``Index`` notices, without a statement
of its own, that its index was dropped and created again under its name by another
connection.

Each index's table has an OID, and a new table never has its predecessor's while
that one could still be remembered. The adapter records the OID with the catalog
row it reads (:data:`CATALOG_ROW`, one statement), and the statements of the hot
paths hand back the OID of the table they ran on at no extra round trip: the
upsert's ``RETURNING tableoid`` (compared before its ``COMMIT`` is sent, so a write
into another table is rolled back), a ``tableoid`` column in the query's and the
fetch's rows, a scalar in the count's one row. Another OID means another table:
the adapter reads the catalog again and the handle is stale unless the index there
now has its spec.
"""

from __future__ import annotations

from psycopg import sql

from vectorport.adapters.pgvector.schema import Names, table_name
from vectorport.core.errors import VectorportError

TABLE_OID = sql.SQL(
    "(SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE n.nspname = %s AND c.relname = %s)"
)
"""The OID of the table of an index now (NULL when none); parameters: :func:`oid_params`."""


def oid_params(names: Names, index_name: str) -> tuple[str, str]:
    return names.schema, table_name(index_name)


def catalog_row(names: Names, *, lock: bool) -> sql.Composed:
    """The spec, the ANN flag and the table's OID of one index (parameters: the
    :func:`oid_params`, then the name). ``lock``: ``FOR SHARE``, so that the index
    cannot be deleted (its catalog row is deleted first) before the transaction ends."""
    return sql.SQL("SELECT spec, ann_built, {} FROM {} WHERE name = %s{}").format(
        TABLE_OID, names.catalog, sql.SQL(" FOR SHARE" if lock else ""))


class TableReplacedError(VectorportError):
    """A statement ran on another table than the one the handle's spec was read with
    (raised inside a transaction to roll it back; the adapter catches it)."""


__all__ = ["TABLE_OID", "TableReplacedError", "catalog_row", "oid_params"]

"""Tables, indexes and the catalog: the DDL of the pgvector adapter.

Every identifier is composed with :class:`psycopg.sql.Identifier`, qualified by the
URL's schema. DDL cannot take bound parameters, so the few numbers it holds (the
dimension, ``m``, ``ef_construction``, ``lists``, the table's ``toast_tuple_target``)
are validated ints (or the server's own page size) rendered by
:class:`psycopg.sql.Literal`; every other value is bound.

Names: index ``docs`` is table ``vp_docs`` with indexes ``vp_docs$ann`` (HNSW or
IVFFlat) and ``vp_docs$meta`` (GIN on the metadata); the catalog
``vectorport_catalog`` keeps each index's spec, so ``describe_index`` can answer.
Canonical index names (``[a-z][a-z0-9_]{2,44}``) keep these within PostgreSQL's 63
bytes, and no index name maps to the catalog's.

**Helper relations carry a ``$``**, which no canonical index name (hence no table name)
can contain, so no index's table can collide with another index's helpers. Before
this, helpers were ``vp_docs_ann`` / ``vp_docs_meta``, and index ``docs`` blocked the
creation of indexes ``docs_ann`` and ``docs_meta``. Such legacy helpers still work as
they are (PostgreSQL picks indexes by definition, not name); the adapter renames them
to the new scheme (:func:`legacy_helpers`) before it creates an index or rebuilds an
ANN index, so old data stays readable with no manual step.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from psycopg import sql

from vectorport.adapterkit import BackendError, IndexSpec
from vectorport.adapters.pgvector.options import BACKEND, IndexLayout

CATALOG_TABLE = "vectorport_catalog"
TABLE_PREFIX = "vp_"
STAGE_TABLES = {"vector": "vp_stage_vector", "halfvec": "vp_stage_halfvec"}

_OPCLASS_SUFFIX = {"cosine": "cosine_ops", "euclidean": "l2_ops", "dotproduct": "ip_ops"}
DISTANCE_OPERATOR = {"cosine": "<=>", "euclidean": "<->", "dotproduct": "<#>"}


HELPER_MARK = "$"
"""Separates a table name from a helper's suffix; never in a canonical index name."""
HELPER_SUFFIXES = ("ann", "meta")


def table_name(index_name: str) -> str:
    return f"{TABLE_PREFIX}{index_name}"


def helper_name(index_name: str, suffix: str) -> str:
    return f"{table_name(index_name)}{HELPER_MARK}{suffix}"


class Names:
    """The qualified identifiers of one schema and the indexes in it."""

    def __init__(self, schema: str) -> None:
        self.schema = schema
        self.schema_id = sql.Identifier(schema)
        self.catalog = sql.Identifier(schema, CATALOG_TABLE)

    def table(self, index_name: str) -> sql.Identifier:
        return sql.Identifier(self.schema, table_name(index_name))

    def ann_index(self, index_name: str) -> sql.Identifier:
        return sql.Identifier(helper_name(index_name, "ann"))

    def qualified_ann_index(self, index_name: str) -> sql.Identifier:
        return sql.Identifier(self.schema, helper_name(index_name, "ann"))

    def meta_index(self, index_name: str) -> sql.Identifier:
        return sql.Identifier(helper_name(index_name, "meta"))


def create_schema(names: Names) -> sql.Composed:
    return sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(names.schema_id)


def create_catalog(names: Names) -> sql.Composed:
    return sql.SQL(
        "CREATE TABLE IF NOT EXISTS {} ("
        " name text PRIMARY KEY,"
        " spec jsonb NOT NULL,"
        " ann_built boolean NOT NULL,"
        " created_at timestamptz NOT NULL DEFAULT now())"
    ).format(names.catalog)


def create_stage_table(vector_type: str) -> sql.Composed:
    """A session-private staging table for binary COPY; emptied at every commit."""
    return sql.SQL(
        "CREATE TEMP TABLE IF NOT EXISTS {} ("
        " id text NOT NULL, embedding {} NOT NULL, sparse sparsevec,"
        " metadata jsonb NOT NULL, document text) ON COMMIT DELETE ROWS"
    ).format(sql.Identifier(STAGE_TABLES[vector_type]), sql.SQL(vector_type))


BLOCK_SIZE = sql.SQL("SELECT current_setting('block_size')::int")
"""The server's page size, which bounds :func:`inline_row_bytes`."""

_PAGE_OVERHEAD = 32
"""A heap page's header and one line pointer, rounded up to 8 bytes."""


def inline_row_bytes(block_size: int) -> int:
    """The ``toast_tuple_target`` of an index's table: the largest row one page holds
    (8160 bytes on the usual 8 KiB pages, PostgreSQL's ceiling for the setting).

    PostgreSQL's default, 2032 bytes, moves a row's largest values out of line, into the
    table's TOAST relation, once the row passes a quarter of a page, which every row
    with a float32 vector of more than about 450 dimensions does. Measured on
    PostgreSQL 18 with pgvector 0.8, 20,000 rows with metadata: at 1536 dimensions the
    table was 5 MiB with 156 MiB beside it, an exact search took 115-118 ms against
    29-30 ms with the vectors in the rows, and the planner, costing a scan by those
    5 MiB, never used the HNSW index (115-124 ms a query against 1.6-2.9 ms); at 768
    dimensions a filtered HNSW query took 21-23 ms against 1.2-2.6 ms, and
    ``build_index`` 16-17 s against 8.5-8.9 s (docs/backends/pgvector.md). With this
    target a row stays whole up to a page; a larger one (big metadata, a long document,
    or a vector over ~2,000 dimensions) is still compressed and moved out, largest
    value first, as before."""
    return block_size - _PAGE_OVERHEAD


def create_table(names: Names, layout: IndexLayout, block_size: int) -> sql.Composed:
    return sql.SQL(
        "CREATE TABLE {table} ("
        ' namespace text COLLATE "C" NOT NULL,'
        ' id text COLLATE "C" NOT NULL,'
        " embedding {vtype}({dim}) NOT NULL,"
        " sparse sparsevec,"
        " metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb,"
        " document text,"
        " PRIMARY KEY (namespace, id))"
        " WITH (toast_tuple_target = {target})"
    ).format(
        table=names.table(layout.name),
        vtype=sql.SQL(layout.vector_type),
        dim=sql.Literal(layout.dimension),
        target=sql.Literal(inline_row_bytes(block_size)),
    )


def create_meta_index(names: Names, layout: IndexLayout) -> sql.Composed:
    return sql.SQL("CREATE INDEX {} ON {} USING gin (metadata)").format(
        names.meta_index(layout.name), names.table(layout.name)
    )


def opclass(layout: IndexLayout) -> str:
    return f"{layout.vector_type}_{_OPCLASS_SUFFIX[layout.metric]}"


def create_ann_index(names: Names, layout: IndexLayout, lists: int | None) -> sql.Composed:
    """The HNSW or IVFFlat index of a layout (``lists`` given for IVFFlat)."""
    params = layout.params
    if layout.ann == "hnsw":
        method = sql.SQL("hnsw")
        with_ = sql.SQL("m = {}, ef_construction = {}").format(
            sql.Literal(params["m"]), sql.Literal(params["ef_construction"])
        )
    else:
        assert layout.ann == "ivf" and lists is not None
        method = sql.SQL("ivfflat")
        with_ = sql.SQL("lists = {}").format(sql.Literal(lists))
    return sql.SQL("CREATE INDEX {} ON {} USING {} (embedding {}) WITH ({})").format(
        names.ann_index(layout.name),
        names.table(layout.name),
        method,
        sql.SQL(opclass(layout)),
        with_,
    )


def drop_ann_index(names: Names, layout: IndexLayout) -> sql.Composed:
    return sql.SQL("DROP INDEX IF EXISTS {}").format(names.qualified_ann_index(layout.name))


def drop_table(names: Names, index_name: str) -> sql.Composed:
    return sql.SQL("DROP TABLE IF EXISTS {}").format(names.table(index_name))


def legacy_helpers(names: Names) -> tuple[sql.Composed, tuple[str, ...]]:
    """A query for the helpers still named the old way (``vp_docs_ann``), as rows
    ``(old name, new name)``: only indexes *on* a vectorport table whose name is that
    table's name plus ``_ann`` / ``_meta``, so an index's table is never mistaken for
    another index's helper."""
    query = sql.SQL(
        "SELECT c.relname, t.relname || %s || substr(c.relname, length(t.relname) + 2)"
        " FROM pg_index i"
        " JOIN pg_class c ON c.oid = i.indexrelid"
        " JOIN pg_class t ON t.oid = i.indrelid"
        " JOIN pg_namespace n ON n.oid = t.relnamespace"
        " WHERE n.nspname = %s AND starts_with(t.relname, %s)"
        " AND c.relname IN (t.relname || '_ann', t.relname || '_meta')"
    ).format()
    return query, (HELPER_MARK, names.schema, TABLE_PREFIX)


def rename_index(names: Names, old: str, new: str) -> sql.Composed:
    return sql.SQL("ALTER INDEX IF EXISTS {} RENAME TO {}").format(
        sql.Identifier(names.schema, old), sql.Identifier(new))


SET_LOCAL = sql.SQL("SELECT set_config(%s, %s, true)")
"""``SET LOCAL`` with a bound value: lasts until the end of the current transaction."""

SET_SESSION = sql.SQL("SELECT set_config(%s, %s, false)")
"""``SET`` with a bound value: lasts as long as the connection (its session defaults)."""


@lru_cache(maxsize=16)
def _set_locals(count: int) -> sql.SQL:
    return sql.SQL("SELECT " + ", ".join(["set_config(%s, %s, true)"] * count))


def set_locals(settings: tuple[tuple[str, str], ...]) -> tuple[sql.SQL, tuple[str, ...]]:
    """Every ``SET LOCAL`` of ``settings`` in one statement (one round trip, not one a
    setting): a query with ``ef``, ``probes`` and iterative-scan options sent five."""
    return _set_locals(len(settings)), tuple(part for pair in settings for part in pair)


# -- the catalog's copy of a spec ------------------------------------------------------


def spec_to_json(spec: IndexSpec) -> dict[str, Any]:
    return {
        "dimension": spec.dimension,
        "metric": spec.metric,
        "sparse": spec.sparse,
        "index_type": spec.index_type,
        "index_params": dict(spec.index_params),
        "backend_options": {
            BACKEND: dict(spec.backend_options[BACKEND])
        } if BACKEND in spec.backend_options else {},
    }


def spec_from_json(name: str, raw: Any) -> IndexSpec:
    data = json.loads(raw) if isinstance(raw, (str, bytes)) else raw
    try:
        return IndexSpec(
            name=name,
            dimension=int(data["dimension"]),
            metric=data["metric"],
            sparse=bool(data["sparse"]),
            index_type=data["index_type"],
            index_params=dict(data["index_params"]),
            backend_options=dict(data["backend_options"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise BackendError(f"the catalog entry of index {name!r} is damaged") from exc

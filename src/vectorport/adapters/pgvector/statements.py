"""The data statements (query, fetch, write, list) as ``(sql, params)`` pairs.

Pure functions, shared by the sync and the async paths, so both run exactly the same
SQL. Values are bound parameters; identifiers come from :mod:`schema`.

Scores (CONTRACT §3) from pgvector's operators, computed in SQL as ``float8``:

- cosine ``<=>`` is the cosine distance: ``score = 1 - d`` (a zero vector, NaN in
  pgvector, scores 0 as in the reference);
- euclidean ``<->`` is the L2 distance: ``score = 1 / (1 + d)``;
- dot product ``<#>`` is the negative inner product: ``score = -d``;
- sparse ``<#>`` on ``sparsevec`` likewise; a record without a sparse vector scores 0,
  and a hybrid query scores ``dense + sparse``.

A dense query orders by the bare distance expression so that the planner can use the
HNSW/IVFFlat index (the id tie-break then rides on an incremental sort). Sparse and
hybrid queries order by the combined score: an exact scan of the namespace. ``min_score``
filters the top ``top_k`` in an outer query: since it keeps a prefix of the ranking,
that equals filtering first, without making an ANN scan walk past every row below it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from psycopg import sql

from vectorport.adapters.pgvector.filters import CompiledFilter, compile_filter
from vectorport.adapters.pgvector.jsonb import encode_metadata
from vectorport.adapters.pgvector.options import IndexLayout
from vectorport.adapters.pgvector.schema import DISTANCE_OPERATOR, STAGE_TABLES, Names
from vectorport.adapters.pgvector.tables import TABLE_OID, oid_params
from vectorport.core.filters.ast import Filter
from vectorport.core.types import Include, QueryRequest, RecordPatch


@dataclass(frozen=True, slots=True)
class Statement:
    sql: sql.Composed | sql.SQL
    params: tuple[object, ...] = ()


def _where(namespace: str, node: Filter | None, *extra: Statement) -> Statement:
    parts: list[sql.Composable] = [sql.SQL("namespace = %s")]
    params: list[object] = [namespace]
    for item in extra:
        parts.append(item.sql)
        params.extend(item.params)
    if node is not None:
        compiled = compile_filter(node)
        parts.append(compiled.sql)
        params.extend(compiled.params)
    return Statement(sql.SQL(" AND ").join(parts), tuple(params))


def _vector_param(layout: IndexLayout) -> sql.Composable:
    return sql.SQL("%s::{}").format(sql.SQL(layout.vector_type))


def _dense_distance(layout: IndexLayout) -> sql.Composable:
    return sql.SQL("(embedding {} {})").format(
        sql.SQL(DISTANCE_OPERATOR[layout.metric]), _vector_param(layout)
    )


def _score_from_distance(metric: str, distance: sql.Composable) -> sql.Composable:
    if metric == "cosine":
        return sql.SQL("(1 - coalesce(nullif({}, 'NaN'::float8), 1))").format(distance)
    if metric == "euclidean":
        return sql.SQL("(1 / (1 + {}))").format(distance)
    return sql.SQL("(- {})").format(distance)


_SPARSE_SCORE = sql.SQL("coalesce(- (sparse <#> %s::sparsevec), 0)")


def query(names: Names, layout: IndexLayout, request: QueryRequest) -> Statement:
    """Top ``top_k`` matches with their scores, best first (ties by id)."""
    params: list[object] = []
    if request.vector is not None:
        params.append(request.vector)
    if request.sparse is not None:
        params.append(request.sparse)
    shape = (request.vector is not None, request.sparse is not None, request.include,
             request.min_score is not None)
    if request.filter is None:
        # the common shape's text is composed once per index: composing and rendering
        # it was a tenth of a query's time
        text: sql.Composed | sql.SQL = _unfiltered_query(names.schema, layout, *shape)
        params.append(request.namespace)
    else:
        compiled = compile_filter(request.filter)  # memoised by the kit
        text = _filtered_query(names.schema, layout, *shape, compiled)
        params.append(request.namespace)
        params.extend(compiled.params)
    params.append(request.top_k)
    if request.min_score is not None:
        params.append(request.min_score)
    return Statement(text, tuple(params))


@lru_cache(maxsize=256)
def _unfiltered_query(schema: str, layout: IndexLayout, dense: bool, sparse: bool,
                      include: Include, min_score: bool) -> sql.SQL:
    composed = _query_sql(Names(schema), layout, dense, sparse, include, min_score,
                          sql.SQL("namespace = %s"))
    return sql.SQL(composed.as_string())


_FILTERED: dict[tuple[Any, ...], tuple[CompiledFilter, sql.SQL]] = {}
_FILTERED_LIMIT = 1024


def _filtered_query(schema: str, layout: IndexLayout, dense: bool, sparse: bool,
                    include: Include, min_score: bool, compiled: CompiledFilter) -> sql.SQL:
    """The text of a filtered query, composed and rendered once per shape and compiled
    filter (the kit hands back the same compiled filter for a filter it has seen):
    composing and rendering it was ~40 µs of every filtered query's client time. The
    text holds only identifiers and placeholders (filter values are parameters), so it
    renders the same without a connection, as :func:`_unfiltered_query`'s does."""
    key = (schema, layout, dense, sparse, include, min_score, id(compiled))
    hit = _FILTERED.get(key)
    if hit is not None and hit[0] is compiled:  # the entry holds it: its id is not reused
        return hit[1]
    where = sql.SQL(" AND ").join([sql.SQL("namespace = %s"), compiled.sql])
    composed = _query_sql(Names(schema), layout, dense, sparse, include, min_score, where)
    text = sql.SQL(composed.as_string())
    if len(_FILTERED) >= _FILTERED_LIMIT:  # compiled filters come and go with the kit's memo
        _FILTERED.clear()
    _FILTERED[key] = (compiled, text)
    return text


def _query_sql(names: Names, layout: IndexLayout, dense: bool, sparse: bool,
               include: Include, min_score: bool, where: sql.Composable) -> sql.Composed:
    if dense and not sparse:
        rank = _dense_distance(layout)  # the bare index expression, ascending
        score = _score_from_distance(layout.metric, sql.SQL("vp_rank"))
    else:
        terms: list[sql.Composable] = []
        if dense:
            terms.append(_score_from_distance(layout.metric, _dense_distance(layout)))
        terms.append(_SPARSE_SCORE)
        rank = sql.SQL("(- ({}))").format(sql.SQL(" + ").join(terms))
        score = sql.SQL("(- vp_rank)")
    payload = [sql.SQL("id"), sql.SQL("{} AS vp_rank").format(rank)]
    if include.metadata:
        payload.append(sql.SQL("metadata"))
    if include.documents:
        payload.append(sql.SQL("document"))
    if include.vectors:
        payload.extend([sql.SQL("embedding"), sql.SQL("sparse")])
    payload.append(sql.SQL("tableoid AS vp_table"))  # last: which table answered (.tables)
    outer = [sql.SQL("id"), sql.SQL("{}::float8 AS score").format(score)]
    outer.extend(payload[2:-1])
    outer.append(sql.SQL("vp_table"))
    text = sql.SQL(
        "SELECT {outer} FROM (SELECT {payload} FROM {table} WHERE {where}"
        " ORDER BY vp_rank, id LIMIT %s) AS hits"
    ).format(
        outer=sql.SQL(", ").join(outer),
        payload=sql.SQL(", ").join(payload),
        table=names.table(layout.name),
        where=where,
    )
    if min_score:
        text = sql.SQL("{} WHERE {} >= %s").format(text, score)
    return sql.SQL("{} ORDER BY vp_rank, id").format(text)


def fetch(names: Names, layout: IndexLayout, namespace: str, ids: Sequence[str]) -> Statement:
    return Statement(_fetch_sql(names.schema, layout.name), (namespace, list(ids)))


@lru_cache(maxsize=256)
def _fetch_sql(schema: str, name: str) -> sql.SQL:
    composed = sql.SQL(
        "SELECT id, embedding, sparse, metadata, document, tableoid FROM {}"
        " WHERE namespace = %s AND id = ANY(%s)"
    ).format(Names(schema).table(name))
    return sql.SQL(composed.as_string())  # rendered once per index, as the query's text


def copy_into_stage(layout: IndexLayout) -> sql.Composed:
    return sql.SQL(
        "COPY {} (id, embedding, sparse, metadata, document) FROM STDIN (FORMAT BINARY)"
    ).format(sql.Identifier(STAGE_TABLES[layout.vector_type]))


def merge_stage(names: Names, layout: IndexLayout, namespace: str) -> Statement:
    """Move the staged batch into the table: insert, or wholly replace by (namespace, id)."""
    return Statement(
        sql.SQL(
            "INSERT INTO {} (namespace, id, embedding, sparse, metadata, document)"
            " SELECT %s, id, embedding, sparse, metadata, document FROM {}"
            " ON CONFLICT (namespace, id) DO UPDATE SET embedding = EXCLUDED.embedding,"
            " sparse = EXCLUDED.sparse, metadata = EXCLUDED.metadata,"
            " document = EXCLUDED.document"
        ).format(names.table(layout.name), sql.Identifier(STAGE_TABLES[layout.vector_type])),
        (namespace,),
    )


def merge_arrays(names: Names, layout: IndexLayout) -> sql.SQL:
    """Insert, or wholly replace by (namespace, id), the batch given as five arrays
    (:mod:`.array_params`) in one statement; its parameters: namespace, then the arrays."""
    return _merge_arrays(names.schema, layout.name, layout.vector_type)


@lru_cache(maxsize=256)
def _merge_arrays(schema: str, name: str, vector_type: str) -> sql.SQL:
    composed = sql.SQL(
        "INSERT INTO {} (namespace, id, embedding, sparse, metadata, document)"
        " SELECT %s, id, embedding, sparse, metadata, document FROM unnest(%s::text[],"
        " %s::{}[], %s::sparsevec[], %s::jsonb[], %s::text[])"
        " AS batch (id, embedding, sparse, metadata, document)"
        " ON CONFLICT (namespace, id) DO UPDATE SET embedding = EXCLUDED.embedding,"
        " sparse = EXCLUDED.sparse, metadata = EXCLUDED.metadata,"
        " document = EXCLUDED.document RETURNING tableoid"  # which table (.tables)
    ).format(Names(schema).table(name), sql.SQL(vector_type))
    return sql.SQL(composed.as_string())  # rendered once: composing was ~20 µs a call


def delete(
    names: Names, layout: IndexLayout, namespace: str, ids: Sequence[str] | None,
    node: Filter | None,
) -> Statement:
    extra = () if ids is None else (Statement(sql.SQL("id = ANY(%s)"), (list(ids),)),)
    where = _where(namespace, node, *extra)
    return Statement(
        sql.SQL("DELETE FROM {} WHERE {}").format(names.table(layout.name), where.sql),
        where.params,
    )


def count(names: Names, layout: IndexLayout, namespace: str, node: Filter | None) -> Statement:
    """The count, and the OID of the table counted (:mod:`.tables`)."""
    where = _where(namespace, node)
    return Statement(
        sql.SQL("SELECT count(*), {} FROM {} WHERE {}").format(
            TABLE_OID, names.table(layout.name), where.sql),
        (*oid_params(names, layout.name), *where.params),
    )


def namespace_counts(names: Names, index_name: str) -> Statement:
    return Statement(
        sql.SQL("SELECT namespace, count(*) FROM {} GROUP BY namespace").format(
            names.table(index_name)
        )
    )


def list_namespaces(names: Names, layout: IndexLayout) -> Statement:
    """The namespaces, each with the OID of the table listed (:mod:`.tables`)."""
    return Statement(
        sql.SQL("SELECT DISTINCT namespace, {} FROM {}").format(
            TABLE_OID, names.table(layout.name)),
        oid_params(names, layout.name),
    )


def list_ids(
    names: Names, layout: IndexLayout, namespace: str, *, prefix: str | None,
    node: Filter | None, limit: int, cursor: str | None,
) -> Statement:
    """One page plus one row (to know whether another page follows), ids ascending
    by code point (the column's collation is "C"), each with the OID of the table."""
    extra: list[Statement] = []
    if prefix:
        extra.append(Statement(sql.SQL("starts_with(id, %s)"), (prefix,)))
    if cursor is not None:
        extra.append(Statement(sql.SQL("id > %s"), (cursor,)))
    where = _where(namespace, node, *extra)
    return Statement(
        sql.SQL("SELECT id, {} FROM {} WHERE {} ORDER BY id LIMIT %s").format(
            TABLE_OID, names.table(layout.name), where.sql
        ),
        (*oid_params(names, layout.name), *where.params, limit + 1),
    )


def scan(
    names: Names, layout: IndexLayout, namespace: str, *, node: Filter | None, limit: int,
    cursor: str | None,
) -> Statement:
    """One page of whole records plus one row, ids ascending after ``cursor``: keyset
    paging on the primary key, with the filter evaluated by the server; the OID of the
    table last in each row (:mod:`.tables`)."""
    extra = [Statement(sql.SQL("id > %s"), (cursor,))] if cursor is not None else []
    where = _where(namespace, node, *extra)
    return Statement(
        sql.SQL(
            "SELECT id, embedding, sparse, metadata, document, {} FROM {} WHERE {}"
            " ORDER BY id LIMIT %s"
        ).format(TABLE_OID, names.table(layout.name), where.sql),
        (*oid_params(names, layout.name), *where.params, limit + 1),
    )


def patch(names: Names, layout: IndexLayout, namespace: str, change: RecordPatch) -> Statement:
    """Change only the given parts of one record, in place; returns a row if it exists."""
    sets: list[sql.Composable] = []
    params: list[object] = []
    if change.vector is not None:
        sets.append(sql.SQL("embedding = {}").format(_vector_param(layout)))
        params.append(change.vector)
    if change.sparse is not None:
        sets.append(sql.SQL("sparse = %s::sparsevec"))
        params.append(change.sparse)
    if change.unset_metadata or change.set_metadata:
        sets.append(sql.SQL("metadata = (metadata - %s::text[]) || %s::jsonb"))
        params.extend([sorted(change.unset_metadata), encode_metadata(change.set_metadata)])
    if change.document is not None:
        sets.append(sql.SQL("document = %s"))
        params.append(change.document)
    if not sets:
        sets.append(sql.SQL("id = id"))
    return Statement(
        sql.SQL("UPDATE {} SET {} WHERE namespace = %s AND id = %s RETURNING 1").format(
            names.table(layout.name), sql.SQL(", ").join(sets)
        ),
        (*params, namespace, change.id),
    )

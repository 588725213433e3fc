"""``explain`` for pgvector, and the one pure query builder the adapter runs.

:func:`prepare_query` is what :meth:`PgvectorAdapter.query` and ``aquery`` execute: the
``SET LOCAL`` settings and the ``SELECT``. :func:`explain_query` renders the same value
without a connection (psycopg composes identifiers and placeholders on its own) and
lists each bound parameter by its KIND, read from the cast at its placeholder or from
the Python type, so no value (vector, namespace, filter value) is ever shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from vectorport.adapters.pgvector import statements
from vectorport.adapters.pgvector.codec import check_query
from vectorport.adapters.pgvector.filters import compile_filter
from vectorport.adapters.pgvector.options import IndexLayout, index_layout, search_settings
from vectorport.adapters.pgvector.schema import Names
from vectorport.adapters.pgvector.statements import Statement
from vectorport.core.types import Explanation, IndexSpec, QueryRequest, SparseVector

BACKEND = "pgvector"
_PLACEHOLDER = re.compile(r"%s(?:::([A-Za-z0-9_]+(?:\[\])?))?")


@dataclass(frozen=True, slots=True)
class PreparedQuery:
    """Everything one query sends: ``SET LOCAL`` pairs (run in the query's own
    transaction when there are any), then ``statement``."""

    layout: IndexLayout
    settings: tuple[tuple[str, str], ...]
    statement: Statement


def prepare_query(names: Names, index: IndexSpec, request: QueryRequest) -> PreparedQuery:
    """The query's settings and statement; raises before any I/O on what pgvector
    cannot do (the adapter's own options, vectors it cannot store)."""
    layout = index_layout(index)
    settings = search_settings(layout, request).settings
    check_query(layout, request)
    return PreparedQuery(layout, settings, statements.query(names, layout, request))


def _kind(value: object, cast: str | None, layout: IndexLayout) -> str:
    if cast in ("vector", "halfvec"):
        return f"{cast}({layout.dimension})"
    if cast is not None:
        return cast
    if isinstance(value, np.ndarray):
        return f"{layout.vector_type}({layout.dimension})"
    if isinstance(value, SparseVector):
        return "sparsevec"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float8"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "text[]"
    return type(value).__name__


def parameter_kinds(text: str, params: tuple[object, ...], layout: IndexLayout) -> tuple[str, ...]:
    """The kind of each ``%s`` of ``text`` (in order), never its value."""
    casts = [m.group(1) for m in _PLACEHOLDER.finditer(text)]
    if len(casts) != len(params):  # a drift here would mislabel parameters: refuse
        raise AssertionError(f"{len(casts)} placeholders for {len(params)} parameters")
    return tuple(_kind(v, c, layout) for v, c in zip(params, casts, strict=True))


def explain_query(names: Names, index: IndexSpec, request: QueryRequest) -> Explanation:
    prepared = prepare_query(names, index, request)
    layout, stmt = prepared.layout, prepared.statement
    text = stmt.sql.as_string()
    flt = (compile_filter(request.filter).sql.as_string()
           if request.filter is not None else None)
    settings: dict[str, str | int | float | bool | None] = dict(prepared.settings)
    settings["ann_index"] = layout.ann
    settings["consistency"] = (f"{request.consistency} (served as strong: every "
                               "statement commits before it returns)")
    notes = ["every value is a bound parameter: shown by kind, never by value"]
    if prepared.settings:
        notes.append("the SET LOCAL settings and the query run in one transaction")
    if request.ef is not None and request.ef < request.top_k:
        notes.append(f"ef {request.ef} is raised to top_k {request.top_k}: HNSW returns "
                     "at most ef_search rows")
    return Explanation(
        backend=BACKEND, index=index.name, namespace=request.namespace,
        top_k=request.top_k, language="sql", request=text,
        parameters=parameter_kinds(text, stmt.params, layout), filter=flt,
        settings=settings,
        statements=tuple(f"SET LOCAL {name} = {value}" for name, value in prepared.settings),
        notes=tuple(notes),
    )

"""``explain`` for Chroma, and the one pure builder of the query arguments.

:func:`prepare_query` is what :meth:`ChromaAdapter.query` and ``query_many`` send to
``Collection.query`` (the ``where`` JSON, with ``backend_options.chroma.where`` and-ed
in, the ``where_document``, the ``include`` list); :func:`explain_query` shows it with
the query embeddings replaced by their kind. Chroma's ``where`` is the backend's own
request document, so it is shown as sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from vectorport.adapterkit import Explanation, Include, IndexSpec, QueryRequest, first_ask
from vectorport.adapters.chroma import naming
from vectorport.adapters.chroma.filters import CompiledFilter, combine, compile_filter
from vectorport.adapters.chroma.layout import CURRENT, Layout
from vectorport.adapters.chroma.options import query_options

BACKEND = "chroma"


@dataclass(frozen=True, slots=True)
class ChromaQuery:
    """``Collection.query`` arguments but the embeddings and ``n_results``."""

    compiled: CompiledFilter
    where_document: dict[str, Any] | None
    include: tuple[str, ...]
    layout: Layout
    """The record layout ``compiled`` was made for."""


def prepare_query(request: QueryRequest, layout: Layout = CURRENT) -> ChromaQuery:
    """Raises before any I/O on what Chroma cannot express (string ranges, options);
    ``layout`` is that of the records asked (:mod:`.layout`). Explain shows the current
    layout's form, which is what every collection created by this version gets."""
    if request.filter is None and BACKEND not in request.backend_options:
        # No filter and no options: one of a handful of shared answers (by the parts
        # returned), rather than options parsed and two filters compiled on every query.
        key = (request.include, layout.version)
        plain = _PLAIN.get(key)
        if plain is None:
            plain = _PLAIN[key] = _prepared(request, layout)
        return plain
    return _prepared(request, layout)


_PLAIN: dict[tuple[Include, int], ChromaQuery] = {}
""":func:`prepare_query`'s answers for requests with no filter and no ``chroma`` options."""


def _prepared(request: QueryRequest, layout: Layout) -> ChromaQuery:
    options = query_options(request)
    compiled = combine(compile_filter(request.filter, layout),
                       compile_filter(options.where, layout))
    include = ["distances"]
    if request.include.metadata or request.include.documents:
        include.append("metadatas")  # documents need the vectorport:nodoc flag
    if request.include.documents:
        include.append("documents")
    if request.include.vectors:
        include.append("embeddings")
    return ChromaQuery(compiled, options.where_document, tuple(include), layout)


def explain_query(index: IndexSpec, request: QueryRequest, cap: int) -> Explanation:
    prepared = prepare_query(request)
    depth = first_ask(request.top_k, cap)
    where = prepared.compiled.where
    body = {"collection": naming.data_collection(index.name, request.namespace),
            "query_embeddings": f"<float32[1][{index.dimension}]>", "n_results": depth,
            "where": where, "where_document": prepared.where_document,
            "include": list(prepared.include)}
    notes = [f"asks top_k+1 = {depth} first, then twice as deep while a tie runs "
             "across the cut"]
    if prepared.compiled.matches_nothing:
        notes.insert(0, "the filter matches nothing: no request is sent, the answer is empty")
    return Explanation(
        backend=BACKEND, index=index.name, namespace=request.namespace,
        top_k=request.top_k, language="json", request=json.dumps(body, sort_keys=True),
        parameters=(f"float32[{index.dimension}]",),
        filter=json.dumps(where, sort_keys=True) if where is not None else None,
        settings={"first_depth": depth, "consistency": request.consistency,
                  "search_ef": "fixed per collection at creation"},
        notes=tuple(notes),
    )

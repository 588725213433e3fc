"""``explain`` for the reference adapter: there is no wire request, so the explanation
says how the in-process engine answers the query (an exact scan, the filter evaluated
by the oracle on each record's metadata) and shows the filter in its canonical form."""

from __future__ import annotations

import json

from vectorport.core.filters.parse import render_filter
from vectorport.core.types import Explanation, IndexSpec, QueryRequest

BACKEND = "local"


def describe_search(index: IndexSpec, request: QueryRequest) -> str:
    """What :meth:`LocalAdapter.query` computes, in words (it sends nothing)."""
    parts = []
    if request.vector is not None:
        parts.append(f"{index.metric} scores of every record by one matrix product")
    if request.sparse is not None:
        parts.append("sparse dot products")
    where = "the records matching the filter" if request.filter is not None else "all records"
    return (f"exact scan of namespace {request.namespace!r} over {where}: "
            + " + ".join(parts) + f", best {request.top_k} with every tie at the cut")


def explain_query(index: IndexSpec, request: QueryRequest) -> Explanation:
    rendered = (json.dumps(render_filter(request.filter), sort_keys=True)
                if request.filter is not None else None)
    return Explanation(
        backend=BACKEND, index=index.name, namespace=request.namespace,
        top_k=request.top_k, language="text", request=describe_search(index, request),
        filter=rendered,
        settings={"search": "exact", "consistency": request.consistency,
                  "min_score": request.min_score},
        notes=("filters are evaluated in process by the reference oracle "
               "(vectorport.core.filters.oracle)",),
    )

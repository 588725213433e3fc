"""``explain`` for turbopuffer, and the one pure builder of the query arguments.

:func:`query_arguments` is what :meth:`TurbopufferAdapter.query` sends to
``Namespace.query`` at each depth (``rank_by``, ``filters``, consistency, attribute
selection). The filter tuple is compiled against the namespace's schema (the adapter
reads it, cached, as for a query; the query itself is not sent). turbopuffer's filter
tuple is the backend's own request document, so it is shown as sent, the query
vector by its kind.
"""

from __future__ import annotations

import json
from typing import Any

from vectorport.adapterkit import Explanation, IndexSpec, QueryRequest, first_ask
from vectorport.adapters.turbopuffer.filters import Compiled
from vectorport.adapters.turbopuffer.naming import (
    DOCUMENT_ATTRIBUTE,
    ID_ATTRIBUTE,
    VECTOR_ATTRIBUTE,
)

BACKEND = "turbopuffer"
EVERY_RECORD: list[Any] = [ID_ATTRIBUTE, "NotEq", None]
"""A filter every record written by vectorport matches (each one has ``vp_id``)."""


def attribute_selection(request: QueryRequest) -> dict[str, Any]:
    """``include_attributes`` / ``exclude_attributes`` for what the query returns."""
    include = request.include
    if include.metadata:
        excluded = [name for name, wanted in ((VECTOR_ATTRIBUTE, include.vectors),
                                              (DOCUMENT_ATTRIBUTE, include.documents))
                    if not wanted]
        return {"exclude_attributes": excluded} if excluded else {"include_attributes": True}
    attributes = [ID_ATTRIBUTE]
    if include.documents:
        attributes.append(DOCUMENT_ATTRIBUTE)
    if include.vectors:
        attributes.append(VECTOR_ATTRIBUTE)
    return {"include_attributes": attributes}


def query_arguments(request: QueryRequest, compiled: Compiled, exact: bool,
                    vector: Any) -> dict[str, Any]:
    """``Namespace.query`` keyword arguments but ``top_k``. ``compiled`` is the filter
    (``True``: none; an exact kNN scan still needs one to visit every record)."""
    kwargs: dict[str, Any] = {
        "rank_by": [VECTOR_ATTRIBUTE, "kNN" if exact else "ANN", vector],
        "consistency": {"level": request.consistency}, "vector_encoding": "base64",
        **attribute_selection(request)}
    filters = compiled if compiled is not True else (EVERY_RECORD if exact else None)
    if filters is not None:
        kwargs["filters"] = filters
    return kwargs


def explain_query(index: IndexSpec, request: QueryRequest, native: str, compiled: Compiled,
                  exact: bool, cap: int) -> Explanation:
    depth = first_ask(request.top_k, cap)
    notes = [f"asks top_k+1 = {depth} first, then twice as deep while a tie runs across "
             f"the cut (up to {cap})"]
    if compiled is False:
        notes.insert(0, "the filter matches nothing here (or the namespace does not exist): "
                        "no query is sent, the answer is empty")
        body: dict[str, Any] = {"namespace": native}
        flt = None
    else:
        body = {"namespace": native, "top_k": depth,
                **query_arguments(request, compiled, exact, f"<float32[{index.dimension}]>")}
        flt = json.dumps(body["filters"]) if compiled is not True else None
    return Explanation(
        backend=BACKEND, index=index.name, namespace=request.namespace,
        top_k=request.top_k, language="json", request=json.dumps(body),
        parameters=(f"float32[{index.dimension}]",), filter=flt,
        settings={"rank_by": "kNN (exact)" if exact else "ANN", "first_depth": depth,
                  "depth_cap": cap, "consistency": request.consistency},
        notes=tuple(notes),
    )

"""``explain`` for Pinecone, and the one pure builder of the query request.

:func:`prepare_query` builds the arguments :meth:`PineconeAdapter.query` sends to the
SDK's ``Index.query`` (the filter JSON, namespace, include flags, the sparse part and
the first depth asked for); :func:`explain_query` shows the same value with the
vectors replaced by their kinds. Pinecone's filter JSON is the backend's own request
document, so it is shown as sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from vectorport.adapterkit import Explanation, IndexSpec, QueryRequest, first_ask
from vectorport.adapters.pinecone.codec import BACKEND, sparse_values
from vectorport.adapters.pinecone.filters import compile_filter
from vectorport.adapters.pinecone.options import QUERY_OPTIONS


@dataclass(frozen=True, slots=True)
class PineconeQuery:
    """The SDK ``query`` arguments but ``top_k`` (the ranking loop picks each depth)."""

    vector: list[float]
    sparse_vector: dict[str, list[Any]] | None
    namespace: str
    filter: Any
    include_values: bool
    include_metadata: bool
    first_depth: int
    cap: int

    def arguments(self, top_k: int) -> dict[str, Any]:
        return {"top_k": top_k, "vector": self.vector, "sparse_vector": self.sparse_vector,
                "namespace": self.namespace, "filter": self.filter,
                "include_values": self.include_values,
                "include_metadata": self.include_metadata}


def prepare_query(index: IndexSpec, request: QueryRequest, cap: int) -> PineconeQuery:
    """Raises before any I/O on what Pinecone cannot express (filters, options)."""
    flt = compile_filter(request.filter)  # unsupported shapes fail before any I/O
    QUERY_OPTIONS.query(request)
    sparse = sparse_values(request.sparse) if request.sparse is not None else None
    # A sparse-only query goes out as a hybrid one with a zero dense part: Pinecone
    # then scores every record (0 + sparse), not only those sharing a term.
    vector: list[float] = (request.vector.tolist() if request.vector is not None
                           else [0.0] * index.dimension)
    include = request.include
    return PineconeQuery(vector, sparse, request.namespace, flt, include.vectors,
                         include.metadata or include.documents,
                         first_ask(request.top_k, cap), cap)


def explain_query(index: IndexSpec, request: QueryRequest, cap: int) -> Explanation:
    prepared = prepare_query(index, request, cap)
    body = prepared.arguments(prepared.first_depth)
    dense_kind = ("zeros" if request.vector is None else "float32") + f"[{index.dimension}]"
    body["vector"] = f"<{dense_kind}>"
    if prepared.sparse_vector is not None:
        body["sparse_vector"] = f"<sparse: {len(prepared.sparse_vector['indices'])} terms>"
    flt = json.dumps(prepared.filter, sort_keys=True) if prepared.filter is not None else None
    notes = [f"asks top_k+1 = {prepared.first_depth} first, then twice as deep while a "
             f"tie runs across the cut (up to {cap})"]
    if request.consistency == "strong":
        notes.append("strong: after a write, the first search repeats until it reflects "
                     "the write (bounded wait)")
    return Explanation(
        backend=BACKEND, index=index.name, namespace=request.namespace,
        top_k=request.top_k, language="json",
        request=json.dumps(body, sort_keys=True), filter=flt,
        parameters=(dense_kind,),
        settings={"first_depth": prepared.first_depth, "depth_cap": cap,
                  "consistency": request.consistency},
        notes=tuple(notes),
    )

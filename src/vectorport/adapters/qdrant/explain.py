"""``explain`` for Qdrant: the search the adapter sends, from the same builders.

The query goes to Qdrant as a search on the named vector (``dense`` or ``sparse``) with
the namespace-scoped filter (Qdrant's REST filter JSON, shown as sent), ``hnsw_ef`` and
``exact`` as search parameters (and ACORN for a filtered dense search on Edge), and a
first depth a little past ``top_k``; the adapter then rescores exactly and widens while
a tie runs across the cut.
"""

from __future__ import annotations

import json

from vectorport.adapterkit import Explanation, IndexSpec, QueryRequest
from vectorport.adapters.qdrant import naming
from vectorport.adapters.qdrant.filters import compile_filter, scoped
from vectorport.adapters.qdrant.options import (
    ACORN_MAX_SELECTIVITY,
    asks_acorn,
    search_options,
)
from vectorport.adapters.qdrant.ranking import SEARCH_CAP, first_depth

BACKEND = "qdrant"


def explain_query(index: IndexSpec, request: QueryRequest, *, bools_native: bool,
                  numbers_exact: bool, engine: str, acorn: bool = False) -> Explanation:
    """``acorn``: the engine asks ACORN of a filtered dense search (Edge), unless the
    query turns it off."""
    options = search_options(request)
    flt = scoped(request.namespace, request.filter, bools_native=bools_native,
                 numbers_exact=numbers_exact)
    user_filter = compile_filter(request.filter, bools_native=bools_native,
                                 numbers_exact=numbers_exact)
    depth = first_depth(request.top_k, request.sparse is None)
    searches = []
    if request.vector is not None:
        searches.append((naming.DENSE, f"<float32[{index.dimension}]>"))
    if request.sparse is not None:
        searches.append((naming.SPARSE, f"<sparse: {len(request.sparse.indices)} terms>"))
    with_acorn = {using: asks_acorn(options, engine_uses_acorn=acorn, filtered=bool(flt),
                                    dense=using == naming.DENSE) for using, _ in searches}
    acorn_params = {"acorn": {"enable": True, "max_selectivity": ACORN_MAX_SELECTIVITY}}
    body = [{"using": using, "query": kind, "filter": flt, "limit": depth,
             "params": {"hnsw_ef": options.ef, "exact": options.exact,
                        **(acorn_params if with_acorn[using] else {})}}
            for using, kind in searches]
    notes = [f"{engine}: each search asks {depth} first, rescored exactly in float64; "
             f"deeper (up to {SEARCH_CAP}) while a tie runs across the cut"]
    if len(searches) == 2:
        notes.append("hybrid: the dense and sparse searches are merged and scored as "
                     "dense + sparse")
    return Explanation(
        backend=BACKEND, index=index.name, namespace=request.namespace,
        top_k=request.top_k, language="json", request=json.dumps(body, sort_keys=True),
        parameters=tuple(kind for _, kind in searches),
        filter=json.dumps(user_filter, sort_keys=True) if user_filter is not None else None,
        settings={"hnsw_ef": options.ef, "exact": options.exact,
                  "acorn": any(with_acorn.values()),
                  "first_depth": depth,
                  "depth_cap": SEARCH_CAP, "consistency": request.consistency},
        notes=tuple(notes),
    )

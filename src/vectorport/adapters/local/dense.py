"""Dense-only queries over one namespace: the float32 keys of one matrix product, the
candidates within the proven rounding bound of each query's k-th best (:mod:`bounds`)
rescored in float64 (so ranks and scores are exact), then matches in contract order.

A batch does each step for all its queries at once (:mod:`ranking`); a single query
takes a path of its own with the same arithmetic, in as few numpy calls as it can:
after the product over a 10,000-row subset (~100 µs) the caches are cold, and each
numpy call there costs 2-4 µs, more than the arithmetic of a dozen candidates.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from vectorport.adapterkit import read_only_float32
from vectorport.adapters.local import bounds, ranking, results, single
from vectorport.adapters.local.engine import KeyBuffer, NamespaceData, Subset
from vectorport.core.types import Match, Metric, QueryRequest


def answer_one(data: NamespaceData, metric: Metric, request: QueryRequest,
               query: npt.NDArray[np.float32], subset: Subset | None,
               buffer: KeyBuffer | None = None) -> list[Match]:
    """:func:`dense_answers` of one query (a 1 × d matrix): the same candidates, scores and
    order, fused into as few numpy calls as the arithmetic allows (:mod:`single`)."""
    include = request.include
    found = single.best(data, metric, query, subset, request.top_k, request.min_score,
                        buffer)
    if include.vectors:
        return [full_match(data, row, -neg, request) for neg, _, row in found]
    return results.ranked_matches(found, data.metadata_of if include.metadata else None,
                                  data.documents if include.documents else None)


def dense_answers(data: NamespaceData, metric: Metric, request: QueryRequest,
                  queries: npt.NDArray[np.float32], subset: Subset | None
                  ) -> list[list[Match]]:
    """Dense-only queries, the whole batch at once: every row whose float32 key is
    within the proven rounding bound of its query's k-th best (:mod:`bounds`) is
    rescored in float64 (ranks and scores are exact), with no Python work per
    candidate."""
    # the queries' float64 copies and norms before the product, while the caches
    # still hold what the call touched so far (the product evicts them)
    prepared = ranking.prepare(queries)
    margins = bounds.key_margins(metric, data.dimension, prepared.norms,
                                 0.0 if metric == "cosine" else data.max_norm(subset))
    keys = data.keys(metric, queries, subset)
    hits, cols = ranking.candidate_pairs(keys, request.top_k, margins)
    rows = cols if subset is None else subset.rows[cols]
    scores = ranking.pair_scores(metric, prepared, hits, data.vectors, rows,
                                 data.wide_norms)
    best = ranking.best_pairs(data.id_array, len(queries), hits, rows, scores,
                              request.top_k, request.min_score)
    include = request.include
    if include.vectors:
        return [[full_match(data, row, score, request) for row, score in best.pairs(b)]
                for b in range(len(queries))]
    # the common case, without the per-match checks of full_match: ids, scores and
    # the parts asked for (metadata copied, as the caller may change what it is given)
    return results.dense_matches(
        best, data.metadata_of if include.metadata else None,
        data.documents if include.documents else None)


def full_match(data: NamespaceData, row: int, score: float, request: QueryRequest) -> Match:
    """Row ``row``'s match with every part the request includes."""
    include = request.include
    return Match(
        id=data.ids[row],
        score=score,
        metadata=data.metadata_of(row) if include.metadata else None,
        vector=read_only_float32(data.vectors[row]) if include.vectors else None,
        sparse=data.sparse[row] if include.vectors else None,
        document=data.documents[row] if include.documents else None,
    )

"""The reference query: what any backend must answer, in plain Python.

Deliberately independent of the ``local`` adapter's numpy engine (no shared scoring
code beyond the filter oracle, which *is* the spec), so that the suite run on ``local``
still compares two implementations.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vectorport.core.filters.ast import Filter
from vectorport.core.filters.oracle import matches
from vectorport.core.types import HybridMode, Metric, Record, SparseVector


@dataclass(frozen=True)
class Expected:
    id: str
    score: float


def dense_score(metric: Metric, query: Sequence[float], vector: Iterable[float]) -> float:
    q = [float(x) for x in query]
    x = [float(v) for v in vector]
    if metric == "dotproduct":
        return sum(a * b for a, b in zip(q, x, strict=True))
    if metric == "cosine":
        nq = math.sqrt(sum(a * a for a in q))
        nx = math.sqrt(sum(b * b for b in x))
        if nq == 0 or nx == 0:
            return 0.0
        return sum(a * b for a, b in zip(q, x, strict=True)) / (nq * nx)
    return 1.0 / (1.0 + math.sqrt(sum((a - b) ** 2 for a, b in zip(q, x, strict=True))))


def sparse_score(query: SparseVector, stored: SparseVector | None) -> float:
    if stored is None:
        return 0.0
    weights = dict(zip(stored.indices, stored.values, strict=True))
    return sum(v * weights.get(i, 0.0) for i, v in zip(query.indices, query.values, strict=True))


def _ordered(scored: Iterable[tuple[str, float]]) -> list[Expected]:
    return [Expected(i, s) for i, s in sorted(scored, key=lambda p: (-p[1], p[0]))]


def reference_query(
    records: Iterable[Record],
    metric: Metric,
    *,
    vector: Sequence[float] | None = None,
    sparse: SparseVector | None = None,
    filter: Filter | None = None,
    top_k: int = 10,
    min_score: float | None = None,
    hybrid: HybridMode = "sum",
) -> list[Expected]:
    """The contract's answer: filter by the oracle, score per §3, sort, cut."""
    candidates = [r for r in records if matches(filter, r.metadata)]
    if vector is not None and sparse is not None and hybrid == "rrf":
        dense_rank = [e.id for e in _ordered(
            (r.id, dense_score(metric, vector, r.vector)) for r in candidates)]
        sparse_rank = [e.id for e in _ordered(
            (r.id, sparse_score(sparse, r.sparse)) for r in candidates)]
        fused: dict[str, float] = {}
        for ranking in (dense_rank, sparse_rank):
            for rank, rid in enumerate(ranking, start=1):
                fused[rid] = fused.get(rid, 0.0) + 1.0 / (60 + rank)
        scored = list(fused.items())
    else:
        scored = []
        for r in candidates:
            score = 0.0
            if vector is not None:
                score += dense_score(metric, vector, r.vector)
            if sparse is not None:
                score += sparse_score(sparse, r.sparse)
            scored.append((r.id, score))
    if min_score is not None:
        scored = [(i, s) for i, s in scored if s >= min_score]
    return _ordered(scored)[:top_k]

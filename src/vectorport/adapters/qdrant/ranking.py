"""Exact CONTRACT §3 rankings on top of Qdrant searches.

Qdrant finds candidates; the adapter scores them itself, in float64, from the vectors
the searches return (on cosine indexes, the vectors as written). That makes scores
exact and the same on every engine, and gives what one native search cannot:

- **ties at the cut**: a search of ``top_k`` may return any of several points with the
  same score, where the contract wants the smallest ids. The search goes a little
  deeper than ``top_k`` and widens until the ``top_k``-th score is strictly above
  anything not yet seen.
- **"sum" hybrid**: Qdrant fuses rankings by RRF or DBSF only, never by the sum of the
  scores. The dense and the sparse search each return their best ``L``; a point in
  neither list scores at most (dense score at depth ``L``) + max(sparse score at depth
  ``L``, 0) — 0 because a point sharing no term with the query is not in the sparse
  list at all and scores exactly 0 there. Once the ``top_k``-th exact score beats that
  bound the answer is exact (Fagin's threshold algorithm); otherwise ``L`` grows, and
  past :data:`SEARCH_CAP` every matching point is scanned.
- **sparse-only queries** whose sparse list runs out before ``top_k`` positive
  scores: every point sharing a term was seen, the rest score exactly 0 and come in
  id order, before the negative scores. Qdrant cannot order by a string (its
  ``order_by`` takes numeric fields only), so the smallest ids are read from the
  payloads of the scope (no vectors), and only those needed are fetched.

This module is pure: the Qdrant calls are behind :class:`CandidateSource`. It is the
one generic piece of the adapter ("ranking under ties"), kept apart to be swapped for
the adapter kit's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from vectorport.adapters.qdrant import naming
from vectorport.adapters.qdrant.codec import Hit
from vectorport.core.types import Metric, SparseVector

SEARCH_CAP = 16_384
"""Deepest native search before falling back to a scan."""
_RELATIVE_EPS = 1e-5
"""How far the engine's float32 order may stray from the exact float64 one."""

Scored = tuple[Hit, float]


@dataclass(frozen=True, slots=True)
class Scorer:
    """The exact score of a stored point for one query."""

    metric: Metric
    vector_name: str
    dense_query: npt.NDArray[np.float64] | None
    sparse_query: dict[int, float] | None

    @classmethod
    def for_query(cls, metric: Metric, vector_name: str,
                  vector: npt.NDArray[np.float32] | None,
                  sparse: SparseVector | None) -> Scorer:
        dense = None if vector is None else np.asarray(vector, dtype=np.float64)
        return cls(metric, vector_name, dense, None if sparse is None else sparse.as_dict())

    def dense(self, hit: Hit) -> float:
        q = self.dense_query
        if q is None:
            return 0.0
        x = np.asarray(hit.vectors[self.vector_name], dtype=np.float64)
        if self.metric == "dotproduct":
            return float(q @ x)
        if self.metric == "cosine":
            norms = float(np.linalg.norm(q) * np.linalg.norm(x))
            return float(q @ x) / norms if norms > 0 else 0.0
        return 1.0 / (1.0 + float(np.linalg.norm(q - x)))

    def sparse(self, hit: Hit) -> float:
        if self.sparse_query is None:
            return 0.0
        stored = hit.vectors.get(naming.SPARSE)
        if not isinstance(stored, SparseVector):
            return 0.0
        weights = stored.as_dict()
        return math.fsum(v * weights[i] for i, v in self.sparse_query.items() if i in weights)

    def total(self, hit: Hit) -> float:
        return self.dense(hit) + self.sparse(hit)


class CandidateSource(Protocol):
    """The Qdrant calls a ranking needs, all scoped to one namespace and filter."""

    def dense(self, limit: int) -> Sequence[Hit]:
        """Best points by the dense vector, engine order, at most ``limit``."""
        ...

    def sparse(self, limit: int) -> Sequence[Hit]:
        """Points sharing a term with the sparse query, best first, at most ``limit``."""
        ...

    def scan(self) -> Iterable[Hit]:
        """Every matching point."""
        ...

    def smallest_ids(self, exclude: set[str], limit: int) -> Sequence[Hit]:
        """The matching points with the smallest record ids, ``exclude`` (point uids)
        left out, at most ``limit``, with their vectors."""
        ...


@dataclass(frozen=True, slots=True)
class _RankedList:
    search: Callable[[int], Sequence[Hit]]
    part: Callable[[Hit], float]
    complete: bool
    """Running out means every matching point was seen (the dense search)."""


def ordered(scored: Iterable[Scored]) -> list[Scored]:
    """Score descending, ties by record id ascending: the contract's one order."""
    return sorted(scored, key=lambda p: (-p[1], p[0].record_id))


def _slack(score: float) -> float:
    return _RELATIVE_EPS * (1.0 + abs(score))


def first_depth(top_k: int) -> int:
    """How deep the first search goes: a little past ``top_k`` to see ties at the cut."""
    return min(SEARCH_CAP, top_k + max(16, top_k // 4))


def exact_top_k(scorer: Scorer, source: CandidateSource, top_k: int,
                min_score: float | None) -> list[Scored]:
    """The contract's answer: the best ``top_k`` points by exact score, ties by id."""
    lists: list[_RankedList] = []
    if scorer.dense_query is not None:
        lists.append(_RankedList(source.dense, scorer.dense, True))
    if scorer.sparse_query is not None:
        lists.append(_RankedList(source.sparse, scorer.sparse, False))
    depth = first_depth(top_k)
    while True:
        results = [ranked.search(depth) for ranked in lists]
        candidates: dict[str, Hit] = {}
        for hits in results:
            for hit in hits:
                candidates.setdefault(hit.uid, hit)
        best = ordered((hit, scorer.total(hit)) for hit in candidates.values())
        if min_score is not None:
            best = [p for p in best if p[1] >= min_score]
        bound = 0.0
        for ranked, hits in zip(lists, results, strict=True):
            if len(hits) < depth:
                if ranked.complete:
                    return best[:top_k]  # the dense search returned every matching point
                continue  # unseen points share no term: their sparse part is 0
            last = ranked.part(hits[-1])
            if not ranked.complete:
                last = max(last, 0.0)
            bound += last + _slack(last)
        if len(best) >= top_k and best[top_k - 1][1] > bound:
            return best[:top_k]
        if min_score is not None and bound < min_score:
            return best[:top_k]  # nothing unseen can reach min_score
        if all(len(h) < depth for h in results):  # sparse-only, every term-sharer seen
            return _zero_fill(scorer, source, candidates, top_k, min_score)
        if depth >= SEARCH_CAP:
            return scan_top_k(scorer, source, top_k, min_score)
        depth = min(SEARCH_CAP, depth * 4)


def _zero_fill(scorer: Scorer, source: CandidateSource, seen: dict[str, Hit], top_k: int,
               min_score: float | None) -> list[Scored]:
    """Sparse-only, every point sharing a term in ``seen``: positive scores first, then
    the points scoring 0 by id (seen or not), then the negative scores."""
    scored = ordered((hit, scorer.total(hit)) for hit in seen.values())
    positive = [p for p in scored if p[1] > 0]
    negative = [p for p in scored if p[1] < 0]
    need = top_k - len(positive)
    if need <= 0 or (min_score is not None and min_score > 0):
        return positive[:top_k]
    zeros = [p for p in scored if p[1] == 0]
    zeros += [(hit, 0.0) for hit in source.smallest_ids(set(seen), need)]
    ranked = positive + ordered(zeros)[:need] + negative
    if min_score is not None:
        ranked = [p for p in ranked if p[1] >= min_score]
    return ranked[:top_k]


def scan_top_k(scorer: Scorer, source: CandidateSource, top_k: int,
               min_score: float | None) -> list[Scored]:
    scored: Iterable[Scored] = ((hit, scorer.total(hit)) for hit in source.scan())
    if min_score is not None:
        scored = (p for p in scored if p[1] >= min_score)
    return ordered(scored)[:top_k]


__all__ = ["SEARCH_CAP", "CandidateSource", "Scorer", "exact_top_k", "first_depth",
           "ordered", "scan_top_k"]

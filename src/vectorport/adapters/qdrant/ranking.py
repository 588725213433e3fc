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

The widening and the bound are the adapter kit's
(:func:`~vectorport.adapterkit.threshold_top_k`, shared with Milvus); this module says
which lists Qdrant has and how the zero scores are filled. It is pure: the Qdrant
calls are behind :class:`CandidateSource`.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

from vectorport.adapterkit import (
    DenseScores,
    RankedList,
    contract_order,
    threshold_top_k,
)
from vectorport.adapterkit import first_depth as kit_first_depth
from vectorport.adapters.qdrant import naming
from vectorport.adapters.qdrant.codec import Hit, dense_matrix
from vectorport.core.types import Metric, SparseVector

SEARCH_CAP = 16_384
"""Deepest native search before falling back to a scan."""

Scored = tuple[Hit, float]


def first_depth(top_k: int, dense_only: bool) -> int:
    """How deep the first search goes. A dense-only query asks two points past the cut:
    every point returned carries its payload and stored vector (local mode deep-copies
    both), and the kit's 16 spare points were a tenth of a query; but with one spare
    point a float32 near-tie between the ``top_k``-th and the next (within
    :func:`~vectorport.adapterkit.float32_slack`) forces a search four times as deep,
    which on the benchmarks' clustered data (2,000 × 384) happened to 15 queries in
    400, and with two spare points to 1 in 400. Sparse and hybrid lists keep the kit's
    depth, which their bound needs more often."""
    return min(SEARCH_CAP, top_k + 2) if dense_only else kit_first_depth(top_k, SEARCH_CAP)


record_id: Callable[[Hit], str] = operator.attrgetter("record_id")


@dataclass(frozen=True, slots=True)
class Scorer:
    """The exact score of a stored point for one query; dense scores a search at a time
    (:class:`~vectorport.adapterkit.DenseScores`, through :meth:`primed`: the stored
    vectors of its hits as one matrix, :func:`~.codec.dense_matrix`)."""

    metric: Metric
    vector_name: str
    dense_query: npt.NDArray[np.float64] | None
    sparse_query: dict[int, float] | None
    _dense: DenseScores[Hit] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def for_query(cls, metric: Metric, vector_name: str,
                  vector: npt.NDArray[np.float32] | None,
                  sparse: SparseVector | None) -> Scorer:
        dense = None if vector is None else np.asarray(vector, dtype=np.float64)
        scores = None if dense is None else DenseScores(
            metric, dense, record_id, functools.partial(dense_matrix, name=vector_name))
        return cls(metric, vector_name, dense, None if sparse is None else sparse.as_dict(),
                   scores)

    def primed(self, hits: Sequence[Hit]) -> Sequence[Hit]:
        """``hits``, their dense scores computed together."""
        return hits if self._dense is None else self._dense.primed(hits)

    def dense(self, hit: Hit) -> float:
        return 0.0 if self._dense is None else self._dense(hit)

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


def ordered(scored: Iterable[Scored]) -> list[Scored]:
    """Score descending, ties by record id ascending: the contract's one order."""
    return contract_order(scored, record_id)


def exact_top_k(scorer: Scorer, source: CandidateSource, top_k: int,
                min_score: float | None) -> list[Scored]:
    """The contract's answer: the best ``top_k`` points by exact score, ties by id."""
    lists: list[RankedList[Hit]] = []
    if scorer.dense_query is not None:
        lists.append(RankedList(lambda depth: scorer.primed(source.dense(depth)),
                                scorer.dense))
    if scorer.sparse_query is not None:
        # A point sharing no term with the query is not in the sparse list: 0 there.
        lists.append(RankedList(lambda depth: scorer.primed(source.sparse(depth)),
                                scorer.sparse, missing=0.0))
    # a dense-only query's total is its dense score: one call a hit fewer
    total = scorer.total if scorer.sparse_query is not None else scorer.dense
    return threshold_top_k(
        lists, total, record_id, top_k, min_score=min_score, cap=SEARCH_CAP,
        first=first_depth(top_k, scorer.sparse_query is None), scan=source.scan,
        exhausted=lambda ranked, seen: _zero_fill(source, ranked, seen, top_k, min_score),
    )


def _zero_fill(source: CandidateSource, ranked: list[Scored], seen: Mapping[str, Hit],
               top_k: int, min_score: float | None) -> list[Scored]:
    """Sparse-only, every point sharing a term seen (``ranked``, ``min_score`` applied):
    positive scores first, then the points scoring 0 by id (seen or not), then the
    negative scores."""
    positive = [p for p in ranked if p[1] > 0]
    negative = [p for p in ranked if p[1] < 0]
    need = top_k - len(positive)
    if need <= 0 or (min_score is not None and min_score > 0):
        return positive[:top_k]
    zeros = [p for p in ranked if p[1] == 0]
    exclude = {hit.uid for hit in seen.values()}
    zeros += [(hit, 0.0) for hit in source.smallest_ids(exclude, need)]
    return (positive + ordered(zeros)[:need] + negative)[:top_k]


__all__ = ["SEARCH_CAP", "CandidateSource", "Scorer", "exact_top_k", "first_depth", "ordered"]

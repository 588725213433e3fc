"""Exact CONTRACT §3 rankings on top of Milvus searches.

Milvus finds candidates; the adapter scores them itself, in float64, from the vectors
the searches return. That makes scores exact and engine-independent (milvus-lite
reports squared L2 from one index type and plain L2 from another, the Milvus server
always squared), and it gives what one native search cannot:

- **ties at the cut**: a search of ``top_k`` may return any of several records with the
  same score, where the contract wants the smallest ids. Candidates are fetched deeper
  than ``top_k`` and the search widens until the ``top_k``-th score is strictly above
  anything not yet seen (the kit's :func:`~vectorport.adapterkit.complete_at_cut`, with
  the bound below).
- **"sum" hybrid**: each ranked list (dense; the positive and the negative query
  weights against the stored positive and negated-negative sparse rows) returns its
  best ``L``. A record in no list scores at most the sum of the lists' scores at depth
  ``L`` (0 for an exhausted sparse list: the records it misses share no term with that
  part of the query, and the terms of opposite sign only lower a score). Once the
  ``top_k``-th exact score beats that bound the answer is exact (Fagin's threshold
  algorithm); otherwise the depth grows, and past Milvus' search limit the matching
  records are scanned.
- **zero sparse scores**: records sharing no term with a sparse-only query score 0
  and come, by the tie rule, in id order, which an ordered scalar query gives. If
  records in scope have weights of the opposite sign to the query's (scores below 0
  exist), the tail is found by a scan instead.

Everything here is pure: the Milvus calls are behind :class:`CandidateSource`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from vectorport.adapterkit import complete_at_cut
from vectorport.adapters.milvus import layout
from vectorport.core.types import Metric, SparseVector

Row = Mapping[str, Any]
"""One entity as pymilvus returns it: field name → value, with ``pk``."""

Weights = Mapping[int, float]
Scored = tuple[Row, float]

_RELATIVE_EPS = 1e-5
"""How far the engine's float32 order may stray from the exact float64 one."""


def _dot(query: Weights, stored: Weights) -> float:
    return math.fsum(v * stored[i] for i, v in query.items() if i in stored)


@dataclass(frozen=True, slots=True)
class Scorer:
    """The exact score of a stored row for one query."""

    metric: Metric
    dense_query: npt.NDArray[np.float64] | None
    sparse_query: Weights | None

    @classmethod
    def for_query(
        cls, metric: Metric, vector: npt.NDArray[np.float32] | None, sparse: SparseVector | None
    ) -> Scorer:
        dense = None if vector is None else np.asarray(vector, dtype=np.float64)
        return cls(metric, dense, None if sparse is None else sparse.as_dict())

    @property
    def positive_part(self) -> dict[int, float]:
        return {i: v for i, v in (self.sparse_query or {}).items() if v > 0}

    @property
    def negative_part(self) -> dict[int, float]:
        """The query's negative weights, negated (to search the negated stored ones)."""
        return {i: -v for i, v in (self.sparse_query or {}).items() if v < 0}

    def dense(self, row: Row) -> float:
        if self.dense_query is None:
            return 0.0
        x = np.asarray(row[layout.VECTOR], dtype=np.float64)
        q = self.dense_query
        if self.metric == "dotproduct":
            return float(q @ x)
        if self.metric == "cosine":
            norms = float(np.linalg.norm(q) * np.linalg.norm(x))
            return float(q @ x) / norms if norms > 0 else 0.0
        return 1.0 / (1.0 + float(np.linalg.norm(q - x)))

    def sparse(self, row: Row) -> float:
        if self.sparse_query is None:
            return 0.0
        return _dot(self.sparse_query, layout.signed_weights(row))

    def total(self, row: Row) -> float:
        return self.dense(row) + self.sparse(row)


class CandidateSource(Protocol):
    """The Milvus calls the ranking needs, all scoped to one namespace and filter."""

    def dense(self, limit: int) -> Sequence[Row]:
        """Best rows by the dense vector, engine order, at most ``limit``."""
        ...

    def sparse(self, query: Weights, field: str, limit: int) -> Sequence[Row]:
        """Rows sharing a term with ``query`` (positive weights) in the sparse ``field``,
        best inner product first, at most ``limit``."""
        ...

    def in_id_order(self, exclude: Sequence[str], limit: int) -> Sequence[Row]:
        """Rows not in ``exclude`` (primary keys), by primary key, at most ``limit``."""
        ...

    def scan(self) -> Iterable[Row]:
        """Every matching row."""
        ...


@dataclass(frozen=True, slots=True)
class _RankedList:
    """One native ranking and the part of the exact score it orders by."""

    search: Callable[[int], Sequence[Row]]
    part: Callable[[Row], float]
    exhausted_bound: float | None
    """Bound on the part for rows the exhausted list misses; None: it misses none."""


def _ordered(scored: Iterable[Scored]) -> list[Scored]:
    return sorted(scored, key=lambda p: (-p[1], str(p[0][layout.PK])))


def _slack(score: float) -> float:
    return _RELATIVE_EPS * (1.0 + abs(score))


def first_depth(top_k: int, cap: int) -> int:
    """How deep the first search goes: a little past ``top_k`` to see ties at the cut."""
    return min(cap, top_k + max(16, top_k // 4))


def _lists(scorer: Scorer, source: CandidateSource) -> list[_RankedList]:
    lists: list[_RankedList] = []
    if scorer.dense_query is not None:
        lists.append(_RankedList(source.dense, scorer.dense, None))
    positive, negative = scorer.positive_part, scorer.negative_part
    if positive:
        stored = layout.SPARSE
        lists.append(_RankedList(
            lambda depth: source.sparse(positive, stored, depth),
            lambda row: _dot(positive, layout.stored_weights(row.get(stored))),
            0.0,
        ))
    if negative:
        stored_negative = layout.SPARSE_NEGATIVE
        lists.append(_RankedList(
            lambda depth: source.sparse(negative, stored_negative, depth),
            lambda row: _dot(negative, layout.stored_weights(row.get(stored_negative))),
            0.0,
        ))
    return lists


def exact_top_k(
    scorer: Scorer,
    source: CandidateSource,
    top_k: int,
    min_score: float | None,
    cap: int,
) -> list[Scored]:
    """The contract's answer: the best ``top_k`` rows by exact score, ties by id."""
    lists = _lists(scorer, source)
    if not lists:  # a sparse-only query of zero weights: every record scores 0
        if min_score is not None and min_score > 0:
            return []
        return [(row, 0.0) for row in source.in_id_order([], top_k)]
    depth = first_depth(top_k, cap)
    while True:
        results = [ranked.search(depth) for ranked in lists]
        candidates: dict[str, Row] = {}
        for rows in results:
            for row in rows:
                candidates.setdefault(str(row[layout.PK]), row)
        ranked_rows = _ordered((row, scorer.total(row)) for row in candidates.values())
        if min_score is not None:
            ranked_rows = [p for p in ranked_rows if p[1] >= min_score]

        bound = 0.0
        saw_everything = False
        for ranked, rows in zip(lists, results, strict=True):
            if len(rows) < depth:
                if ranked.exhausted_bound is None:
                    saw_everything = True  # the dense search returns every matching row
                else:
                    bound += ranked.exhausted_bound
            else:
                last = ranked.part(rows[-1])
                bound += last + _slack(last)
        if complete_at_cut([score for _, score in ranked_rows], top_k,
                           unseen_bound=None if saw_everything else bound,
                           min_score=min_score):
            return ranked_rows[:top_k]
        if scorer.dense_query is None and all(len(r) < depth for r in results):
            return _tail(scorer, source, ranked_rows, top_k, min_score)
        if depth >= cap:
            return _scan(scorer, source, top_k, min_score)
        depth = min(cap, depth * 4)


def _tail(
    scorer: Scorer,
    source: CandidateSource,
    ranked: list[Scored],
    top_k: int,
    min_score: float | None,
) -> list[Scored]:
    """Sparse-only, every record with a positive score seen, too few of them: the rest
    score 0 in id order, unless some record in scope can score below 0."""
    positive = [p for p in ranked if p[1] > 0]
    if min_score is not None and min_score > 0:
        return positive[:top_k]
    can_be_negative = (
        (scorer.positive_part and source.sparse(scorer.positive_part, layout.SPARSE_NEGATIVE, 1))
        or (scorer.negative_part and source.sparse(scorer.negative_part, layout.SPARSE, 1))
    )
    if can_be_negative:
        return _scan(scorer, source, top_k, min_score)
    exclude = [str(row[layout.PK]) for row, _ in positive]
    zeros = source.in_id_order(exclude, top_k - len(positive))
    return positive + [(row, 0.0) for row in zeros]


def _scan(
    scorer: Scorer, source: CandidateSource, top_k: int, min_score: float | None
) -> list[Scored]:
    scored: Iterable[Scored] = ((row, scorer.total(row)) for row in source.scan())
    if min_score is not None:
        scored = (p for p in scored if p[1] >= min_score)
    return _ordered(scored)[:top_k]


__all__ = ["CandidateSource", "Scorer", "exact_top_k", "first_depth"]

"""Exact CONTRACT §3 rankings on top of Milvus searches.

Milvus finds candidates; the adapter scores them itself, in float64, from the vectors
the searches return. That makes scores exact and engine-independent (milvus-lite
reports squared L2 from one index type and plain L2 from another, the Milvus server
always squared), and it gives what one native search cannot:

- **ties at the cut**: a search of ``top_k`` may return any of several records with the
  same score, where the contract wants the smallest ids. Candidates are fetched deeper
  than ``top_k`` and the search widens until the ``top_k``-th score is strictly above
  anything not yet seen.
- **"sum" hybrid**: each ranked list (dense; the positive and the negative query
  weights against the stored positive and negated-negative sparse rows) returns its
  best ``L``. A record in no list scores at most the sum of the lists' scores at depth
  ``L`` (0 for an exhausted sparse list: the records it misses share no term with that
  part of the query, and the terms of opposite sign only lower a score). Once the
  ``top_k``-th exact score beats that bound the answer is exact (Fagin's threshold
  algorithm); otherwise the depth grows, and past Milvus' search limit the matching
  records are scanned. Both are the kit's
  :func:`~vectorport.adapterkit.threshold_top_k`, given the lists below.
- **zero sparse scores**: records sharing no term with a sparse-only query score 0
  and come, by the tie rule, in id order, which an ordered scalar query gives. If
  records in scope have weights of the opposite sign to the query's (scores below 0
  exist), the tail is found by a scan instead.

Everything here is pure: the Milvus calls are behind :class:`CandidateSource`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from vectorport.adapterkit import (
    DenseScores,
    RankedList,
    first_depth,
    scan_top_k,
    threshold_top_k,
)
from vectorport.adapters.milvus import layout
from vectorport.core.types import Metric, SparseVector

Row = Mapping[str, Any]
"""One entity as pymilvus returns it: field name → value, with ``pk``."""

Weights = Mapping[int, float]
Scored = tuple[Row, float]


def _dot(query: Weights, stored: Weights) -> float:
    return math.fsum(v * stored[i] for i, v in query.items() if i in stored)


def _pk(row: Row) -> str:
    return str(row[layout.PK])


def _vectors(rows: Sequence[Row]) -> npt.NDArray[np.float64]:
    """The dense vectors searches returned with ``rows``, one matrix row each."""
    return np.asarray([row[layout.VECTOR] for row in rows], dtype=np.float64)


@dataclass(frozen=True, slots=True)
class Scorer:
    """The exact score of a stored row for one query; dense scores a search at a time
    (:class:`~vectorport.adapterkit.DenseScores`, through :meth:`primed`)."""

    metric: Metric
    dense_query: npt.NDArray[np.float64] | None
    sparse_query: Weights | None
    _dense: DenseScores[Row] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def for_query(
        cls, metric: Metric, vector: npt.NDArray[np.float32] | None, sparse: SparseVector | None
    ) -> Scorer:
        dense = None if vector is None else np.asarray(vector, dtype=np.float64)
        scores = None if dense is None else DenseScores(metric, dense, _pk, _vectors)
        return cls(metric, dense, None if sparse is None else sparse.as_dict(), scores)

    def primed(self, rows: Sequence[Row]) -> Sequence[Row]:
        """``rows``, their dense scores computed together."""
        return rows if self._dense is None else self._dense.primed(rows)

    @property
    def positive_part(self) -> dict[int, float]:
        return {i: v for i, v in (self.sparse_query or {}).items() if v > 0}

    @property
    def negative_part(self) -> dict[int, float]:
        """The query's negative weights, negated (to search the negated stored ones)."""
        return {i: -v for i, v in (self.sparse_query or {}).items() if v < 0}

    def dense(self, row: Row) -> float:
        return 0.0 if self._dense is None else self._dense(row)

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


def _sparse_list(source: CandidateSource, query: dict[int, float], field: str
                 ) -> RankedList[Row]:
    # Rows sharing no term with this part of the query are never returned: 0 there.
    return RankedList(lambda depth: source.sparse(query, field, depth),
                      lambda row: _dot(query, layout.stored_weights(row.get(field))),
                      missing=0.0)


def _lists(scorer: Scorer, source: CandidateSource) -> list[RankedList[Row]]:
    lists: list[RankedList[Row]] = []
    if scorer.dense_query is not None:
        lists.append(RankedList(lambda depth: scorer.primed(source.dense(depth)),
                                scorer.dense))
    if scorer.positive_part:
        lists.append(_sparse_list(source, scorer.positive_part, layout.SPARSE))
    if scorer.negative_part:
        lists.append(_sparse_list(source, scorer.negative_part, layout.SPARSE_NEGATIVE))
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
    return threshold_top_k(
        lists, scorer.total, _pk, top_k, min_score=min_score, cap=cap, scan=source.scan,
        exhausted=lambda ranked, _seen: _tail(scorer, source, ranked, top_k, min_score),
        first=first_search_depth(top_k, cap, dense_only=scorer.sparse_query is None),
    )


DENSE_SPARE = 2
"""Rows past the cut that a dense-only search first asks for."""


def first_search_depth(top_k: int, cap: int, *, dense_only: bool) -> int:
    """How deep the first native search goes. A dense-only query asks
    :data:`DENSE_SPARE` rows past the cut: every row returned carries its stored vector
    (and metadata), and the kit's 16 spare rows made pymilvus' search 1.07× one of
    ``top_k`` without vectors. One spare row would prove an untied cut too, but a
    float32 near-tie between the ``top_k``-th and the next (within
    :func:`~vectorport.adapterkit.float32_slack`) then forces a search four times as
    deep; the ranking widens whenever the cut is not proven, so the answer is the
    same at any first depth. Sparse and hybrid queries keep the kit's depth, which
    their threshold bound needs more often."""
    return min(cap, top_k + DENSE_SPARE) if dense_only else first_depth(top_k, cap)


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
        return scan_top_k(source.scan(), scorer.total, _pk, top_k, min_score=min_score)
    exclude = [_pk(row) for row, _ in positive]
    zeros = source.in_id_order(exclude, top_k - len(positive))
    return positive + [(row, 0.0) for row in zeros]


__all__ = ["CandidateSource", "Scorer", "exact_top_k", "first_depth", "first_search_depth"]

"""The exact top k of a batch of dense queries, from the float32 score matrix, with no
Python work per candidate.

The score matrix is computed in float32 (one BLAS product); every candidate within the
proven float32 error margin of its query's k-th best (:mod:`bounds`) is rescored in
float64 and the candidates are put in the contract's order (score down, id up) for all
queries at once: one gather of their vectors, one row-wise float64 product, one sort.
Only equal exact scores (rare: the same vector stored under two ids, say) are ordered by
id in Python. Each candidate's score is a function of its own vector and its query alone
(a row-wise reduction, no blocked BLAS kernel), so a record scores the same in a single
query and in any batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from vectorport.adapterkit import contract_order
from vectorport.adapters.local import bounds
from vectorport.core.types import Metric

Pairs = list[tuple[int, float]]


def candidate_pairs(keys: npt.NDArray[np.float32], top_k: int,
                    margins: npt.NDArray[np.float64]
                    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """``(query, column)`` of every key at most ``margins`` (per query, in key units:
    :func:`bounds.key_margins`) below its row's k-th best, in no particular order: the
    rows that can still make the top k once rescored exactly (boundary ties all stay)."""
    batch, width = keys.shape
    if width <= top_k:
        return np.repeat(np.arange(batch), width), np.tile(np.arange(width), batch)
    if batch == 1:  # one query: the 1-d form
        cols = one_candidates(keys[0], top_k, float(margins[0]))
        return np.zeros(len(cols), dtype=np.intp), cols
    groups = width // _STRIDES
    if groups < 4 * top_k:  # too few groups to keep the best apart: the exact k-th
        kth = np.partition(keys, width - top_k, axis=1)[:, width - top_k]
        floors = bounds.float32_floors(kth - margins)
        # the 1-d nonzero of the flattened mask, then divmod: a tenth of the time of
        # the 2-d nonzero, with the same (row-major) pairs
        hits, cols = np.divmod(np.flatnonzero(keys >= floors[:, None]), width)
        return hits, cols
    folded = _fold(keys, groups)
    floors = bounds.float32_floors(
        np.partition(folded, groups - top_k, axis=1)[:, groups - top_k] - margins)
    # a key reaching the floor lies in a group whose maximum does: look inside those
    # groups alone (a dozen a query), not at every key again
    queries, starts = np.divmod(np.flatnonzero(folded >= floors[:, None]), groups)
    flat = (queries * width + starts)[:, None] + groups * np.arange(_STRIDES)
    inside = keys.ravel().take(flat) >= floors[queries][:, None]
    found = flat[inside]
    if width > groups * _STRIDES:  # the last few columns, in no group
        rest = keys[:, groups * _STRIDES:]
        tail, offset = np.divmod(np.flatnonzero(rest >= floors[:, None]), rest.shape[1])
        found = np.concatenate([found, tail * width + groups * _STRIDES + offset])
    hits, cols = np.divmod(found, width)
    return hits, cols


def one_candidates(keys: npt.NDArray[np.float32], top_k: int, margin: float
                   ) -> npt.NDArray[np.intp]:
    """:func:`candidate_pairs` of one query's keys (1-d), ``margin`` a Python float:
    the columns within it of the k-th best, ascending."""
    if len(keys) <= top_k:
        return np.arange(len(keys))
    floor = bounds.float32_floor(float(kth_bound(keys, top_k)) - margin)
    # the array methods, not np.flatnonzero / np.repeat / ndarray.max: numpy's Python
    # wrappers around them cost ~0.5 µs a call, a few % of a filtered single query
    cols: npt.NDArray[np.intp] = (keys >= floor).nonzero()[0]
    return cols


_STRIDES = 16
"""Columns folded into one group maximum by :func:`_fold`."""
_maximum = np.maximum.reduce


def _fold(keys: npt.NDArray[np.float32], groups: int) -> npt.NDArray[np.float32]:
    """For each row, the maxima of ``_STRIDES`` interleaved column groups (group ``j``:
    columns ``j, j + groups, j + 2·groups, …``). The k-th best of these maxima is no
    greater than the row's k-th best (k distinct maxima are k distinct entries), so it
    bounds the k-th best from one elementwise pass over the matrix and a partition of a
    sixteenth of it, instead of a partition of a copy of all of it (twice the time for
    a batch of 200); it is almost always the k-th best itself, as the best few rarely
    share a group, and a lower one only adds a few candidates."""
    # one reduction over a (rows, strides, groups) view of the matrix (no copy, also
    # when the width is not a multiple of the strides): 30% less than 15 elementwise
    # maxima over column slices
    keys = np.ascontiguousarray(keys)  # the product's own array: no copy
    item = keys.itemsize
    view: npt.NDArray[np.float32] = np.ndarray(
        (len(keys), _STRIDES, groups), keys.dtype, keys,
        strides=(keys.strides[0], groups * item, item))
    folded: npt.NDArray[np.float32] = _maximum(view, axis=1)
    return folded


def kth_bound(row: npt.NDArray[np.float32], top_k: int, strides: int = _STRIDES
              ) -> np.float32:
    """The k-th best of the maxima of ``strides`` interleaved column groups of one row
    (:func:`_fold`), folded by one reduction (a single query spent 8 µs of ~20
    partitioning all of a 10,000-row subset)."""
    width = len(row)
    groups = width // strides
    if groups < 4 * top_k:
        kth: np.float32 = np.partition(row, width - top_k)[width - top_k]
        return kth
    folded = _maximum(row[:groups * strides].reshape(strides, groups), axis=0)
    folded.partition(groups - top_k)
    bound: np.float32 = folded[groups - top_k]
    return bound


@dataclass(frozen=True)
class Prepared:
    """The queries widened to float64 and their float64 norms, computed once per call
    for both the margins and the rescoring."""

    wide: npt.NDArray[np.float64]
    norms: npt.NDArray[np.float64]


def prepare(queries: npt.NDArray[np.float32]) -> Prepared:
    wide = queries.astype(np.float64)
    return Prepared(wide, np.sqrt(np.einsum("ij,ij->i", wide, wide)))


_CHUNK = 512
"""Candidates widened to float64 at a time: a batch of 200 queries at 10k rows has ~2,700
candidates, whose float64 copies (8 MB each for the rows and their queries) cost more
in page faults than in arithmetic; 512 rows (1.5 MB) stay in the cache and the heap."""


def wide_norms(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """Each row's norm in float64: the row-wise reduction :func:`pair_scores` would
    compute for it (the same values, whichever rows are computed together)."""
    wide = vectors.astype(np.float64)
    norms: npt.NDArray[np.float64] = np.sqrt(np.einsum("ij,ij->i", wide, wide))
    return norms


def pair_scores(metric: Metric, queries: Prepared, hits: npt.NDArray[np.intp],
                matrix: npt.NDArray[np.float32], rows: npt.NDArray[np.intp],
                norms: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The contract's float64 score of ``matrix[rows[i]]`` for ``queries[hits[i]]``: what
    :func:`vectorport.adapterkit.exact_scores` computes, for many (query, row) pairs.
    Each pair's score is a row-wise float64 reduction of its own two vectors, computed
    the same way whichever chunk it falls in, so a single query and a batch agree.
    ``norms`` are the rows' :func:`wide_norms` (for cosine)."""
    if len(rows) <= _CHUNK:  # a single query's few candidates: no output to assemble
        return _chunk_scores(metric, matrix.take(rows, axis=0).astype(np.float64), queries, hits,
                             norms[rows] if metric == "cosine" else None)
    out = np.empty(len(rows), dtype=np.float64)
    for lo in range(0, len(rows), _CHUNK):
        chunk = rows[lo:lo + _CHUNK]
        out[lo:lo + _CHUNK] = _chunk_scores(
            metric, matrix.take(chunk, axis=0).astype(np.float64), queries, hits[lo:lo + _CHUNK],
            norms[chunk] if metric == "cosine" else None)
    return out


def _chunk_scores(metric: Metric, x: npt.NDArray[np.float64], queries: Prepared,
                  hits: npt.NDArray[np.intp], norms: npt.NDArray[np.float64] | None
                  ) -> npt.NDArray[np.float64]:
    """:func:`pair_scores` of rows ``x`` (float64 copies, changed in place) whose float64
    norms are ``norms`` (cosine only)."""
    paired = queries.wide.take(hits, axis=0)
    if metric == "euclidean":
        x -= paired
        distances = np.sqrt(np.einsum("ij,ij->i", x, x))
        distances += 1.0
        scores: npt.NDArray[np.float64] = np.reciprocal(distances, out=distances)
        return scores
    dots: npt.NDArray[np.float64] = np.einsum("ij,ij->i", x, paired)
    if norms is None:  # dot product
        return dots
    query_norms = queries.norms
    # one query: its norm as a scalar (the same products), no gather of it per row
    norms = norms * (float(query_norms[0]) if len(query_norms) == 1 else query_norms[hits])
    cosines = np.zeros(len(x), dtype=np.float64)
    np.divide(dots, norms, out=cosines, where=norms > 0)  # a zero vector scores 0
    return cosines


@dataclass(frozen=True)
class Ranked:
    """Each query's best matches, in contract order: query ``b``'s are the rows, ids and
    scores at ``spans[b] = (lo, hi)``; flat lists, so that matches are built in one pass
    with no (row, score) pair or list per query in between."""

    rows: list[int]
    ids: list[str]
    scores: list[float]
    spans: list[tuple[int, int]]

    def pairs(self, query: int) -> Pairs:
        lo, hi = self.spans[query]
        return list(zip(self.rows[lo:hi], self.scores[lo:hi], strict=True))


def best_pairs(id_array: npt.NDArray[np.object_], batch: int,
               hits: npt.NDArray[np.intp], rows: npt.NDArray[np.intp],
               scores: npt.NDArray[np.float64], top_k: int,
               min_score: float | None) -> Ranked:
    """For each query, its best ``top_k`` (row, score) pairs in contract order (score
    descending, id ascending) among the candidates ``rows`` (``hits`` their queries);
    ``id_array`` holds each row's id."""
    if min_score is not None:
        keep = scores >= min_score
        hits, rows, scores = hits[keep], rows[keep], scores[keep]
    if batch == 1:
        return _best_of_one(id_array, rows, scores, top_k)
    order = np.lexsort((-scores, hits))  # by query, then score down (stable)
    hits, rows, scores = hits[order], rows[order], scores[order]
    starts = np.searchsorted(hits, np.arange(batch + 1)).tolist()
    row_list, score_list = rows.tolist(), scores.tolist()
    id_list: list[str] = id_array[rows].tolist()
    # equal scores next to each other in one query: ids decide (rare, so found first)
    same = (scores[1:] == scores[:-1]) & (hits[1:] == hits[:-1])
    spans = [(lo, min(hi, lo + top_k)) for lo, hi in pairwise(starts)]
    if same.any():
        tied = np.zeros(len(scores) + 1, dtype=np.intp)
        np.cumsum(same, out=tied[2:])
        ties = tied.tolist()
        for lo, hi in pairwise(starts):
            if lo < hi and ties[hi] != ties[lo + 1]:  # reorder this query's run in place
                ordered = contract_order(zip(range(lo, hi), score_list[lo:hi], strict=True),
                                         id_list.__getitem__)
                positions = [i for i, _ in ordered]
                row_list[lo:hi] = [row_list[i] for i in positions]
                id_list[lo:hi] = [id_list[i] for i in positions]
                score_list[lo:hi] = [score_list[i] for i in positions]
    return Ranked(row_list, id_list, score_list, spans)


def _best_of_one(id_array: npt.NDArray[np.object_], rows: npt.NDArray[np.intp],
                 scores: npt.NDArray[np.float64], top_k: int) -> Ranked:
    """:func:`best_pairs` of one query (:func:`one_best`)."""
    picked, ids, best = one_best(id_array, rows, scores.tolist(), top_k, None)
    return Ranked(picked, ids, best, [(0, len(picked))])


def one_best(id_array: npt.NDArray[np.object_], rows: npt.NDArray[np.intp],
             scores: list[float], top_k: int, min_score: float | None
             ) -> tuple[list[int], list[str], list[float]]:
    """The rows, ids and scores of one query's best ``top_k`` candidates in contract
    order (``scores[i]`` is ``rows[i]``'s), those below ``min_score`` left out: its
    dozen candidates sorted in Python (a third of the time of numpy's sort and gathers
    at that size); ids decide only when equal scores meet within the top k or at its
    cut."""
    # the ids in one gather (their strings are cache misses after the product: in C
    # they overlap, in a Python loop each waits for the one before)
    row_list: list[int] = rows.tolist()
    id_list: list[str] = id_array[rows].tolist()
    if min_score is not None:
        keep = [i for i, score in enumerate(scores) if score >= min_score]
        row_list = [row_list[i] for i in keep]
        id_list = [id_list[i] for i in keep]
        scores = [scores[i] for i in keep]
    order = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
    best = order[:top_k + 1]
    top = [scores[i] for i in best]
    if len(set(top)) < len(top):  # sorted, so equal scores are neighbours: a tie
        ordered = contract_order(zip(range(len(scores)), scores, strict=True),
                                 id_list.__getitem__)[:top_k]
        positions = [i for i, _ in ordered]
    else:
        positions = best[:top_k]
    return ([row_list[i] for i in positions], [id_list[i] for i in positions],
            [scores[i] for i in positions])

"""Rankings complete under ties at the ``top_k`` cut.

The facade orders matches (score descending, then id) and cuts them at ``top_k``; it can
only do that right when the adapter's candidates hold *every* record scoring at least
the ``top_k``-th best. Engines break ties at the cut arbitrarily, so an adapter asks for
more than ``top_k`` and widens until the answer is complete: the ``top_k``-th score is
strictly above anything the engine has not returned yet.

:func:`complete_at_cut` is that test, given a bound on the unseen scores;
:func:`fetch_until_settled` (one query) and :func:`fetch_many_until_settled` (several
queries answered by one engine call) are the loop around an engine search.

Adapters that rescore candidates exactly (the engine ranks in float32, or fuses dense
and sparse scores in a way the contract does not) use :func:`threshold_top_k` instead:
one or more native ranked lists, each ordering by one part of the exact score, searched
ever deeper until the ``top_k``-th exact score beats a proven bound on everything not
yet seen (Fagin's threshold algorithm). :func:`exact_scores` is the contract's score
(CONTRACT §3) in float64, and :func:`contract_order` its one order.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

from vectorport.core.types import Metric

try:  # np.einsum without its Python wrapper (~0.9 µs a call); the same C function
    from numpy._core.multiarray import c_einsum as einsum
except ImportError:  # pragma: no cover - other numpy layouts: the public function
    einsum = np.einsum

T = TypeVar("T")


def complete_at_cut(
    scores: Sequence[float],
    top_k: int,
    *,
    unseen_bound: float | None,
    min_score: float | None = None,
) -> bool:
    """Whether candidates with ``scores`` (any order) surely hold the contract's top_k.

    ``unseen_bound`` bounds the score of every record *not* among the candidates
    (``None``: there is none, the engine returned everything that matches). Complete
    when nothing is unseen, when nothing unseen can reach ``min_score``, or when the
    ``top_k``-th best score is strictly above the bound (a tie with the bound could be
    an unseen record with a smaller id).
    """
    if unseen_bound is None:
        return True
    if min_score is not None and unseen_bound < min_score:
        return True
    if len(scores) < top_k:
        return False
    return heapq.nlargest(top_k, scores)[-1] > unseen_bound


def first_ask(top_k: int, cap: int) -> int:
    """The first depth to ask for: one past ``top_k``, to see whether a tie runs across."""
    return min(top_k + 1, cap)


def at_or_above_cut(candidates: list[T], top_k: int, score: Callable[[T], float]) -> list[T]:
    """``candidates`` less those scoring below the ``top_k``-th best, which the facade's
    cut drops anyway; ties with it stay (the facade orders them by id). An adapter
    decodes only these: the candidate past ``top_k`` asked to see a tie is rarely kept,
    and a search widened by a long tie returns many more. ``not <`` keeps NaN scores,
    and keeps everything when the cut is NaN: the facade decides those."""
    if len(candidates) <= top_k:
        return candidates
    if top_k <= 0:
        return []
    cut = heapq.nlargest(top_k, map(score, candidates))[-1]
    return [c for c in candidates if not score(c) < cut]


def fetch_many_until_settled(
    count: int,
    search: Callable[[Sequence[int], int], Sequence[Sequence[T]]],
    score: Callable[[T], float],
    top_k: int,
    *,
    cap: int,
    min_score: float | None = None,
) -> list[list[T]]:
    """Candidates for ``count`` queries, each complete under ties at the cut.

    ``search(positions, depth)`` asks the engine for the best ``depth`` candidates of
    each query at ``positions`` (one engine call for all of them is fine) and returns
    one list per position, best first as the engine ranks. Queries whose answer is not
    complete are asked again, together, twice as deep, up to ``cap`` (the engine's
    limit): at the cap the answer is what the engine can give. ``min_score`` only lets
    the loop stop earlier; the caller (the facade) still applies it.
    """
    answers: list[list[T]] = [[] for _ in range(count)]
    pending = list(range(count))
    depth = first_ask(top_k, cap)
    while pending:
        results = search(pending, depth)
        unsettled: list[int] = []
        for position, found in zip(pending, results, strict=True):
            candidates = list(found)
            answers[position] = candidates
            scores = [score(c) for c in candidates]
            exhausted = len(candidates) < depth
            bound = None if exhausted or not scores else min(scores)
            if depth < cap and not complete_at_cut(scores, top_k, unseen_bound=bound,
                                                   min_score=min_score):
                unsettled.append(position)
        pending = unsettled
        depth = min(depth * 2, cap)
    return answers


def fetch_until_settled(
    search: Callable[[int], Sequence[T]],
    score: Callable[[T], float],
    top_k: int,
    *,
    cap: int,
    min_score: float | None = None,
) -> list[T]:
    """Candidates for one query, complete under ties at the cut (see
    :func:`fetch_many_until_settled`); ``search(depth)`` returns the best ``depth``."""
    return fetch_many_until_settled(
        1, lambda _positions, depth: [search(depth)], score, top_k, cap=cap,
        min_score=min_score,
    )[0]


# -- exact rescoring ---------------------------------------------------------------

RELATIVE_EPS = 1e-5
"""How far an engine's float32 order may stray from the exact float64 one."""


def float32_slack(score: float) -> float:
    """How much an item the engine ranked below one scoring ``score`` may still score
    above it exactly (float32 ranking, float64 rescoring)."""
    return RELATIVE_EPS * (1.0 + abs(score))


def exact_scores(metric: Metric, query: npt.ArrayLike, vectors: npt.ArrayLike
                 ) -> npt.NDArray[np.float64]:
    """The contract's score (CONTRACT §3) of each row of ``vectors`` (one vector is one
    row) for ``query``, computed in float64: cosine similarity (0 against a zero
    vector), the dot product, or ``1 / (1 + euclidean distance)``.

    Every row's score is a float64 reduction over that row and the query alone (numpy's
    einsum inner loop: ``ij,j->i`` for the dot products, ``ij,ij->i`` for the norms), so
    it has the same bits whichever rows are scored with it. A BLAS product ``x @ q`` does
    not: its blocking changes the order of the sums with the number of rows (of 2,000
    random 12 × 384 matrices, 1,980 gave rows 0–9 other last bits than the same 10 rows
    alone), so a record's score, and with it a tie at the cut, depended on how many
    candidates were rescored with it, and two backends rescoring 11 and 12 rows
    disagreed. These are also the local engine's reductions
    (:func:`vectorport.adapters.local.ranking.pair_scores`), so every backend that
    rescores gives the same score, bit for bit, as the embedded default store."""
    q = query if type(query) is np.ndarray and query.dtype == np.float64 else np.asarray(
        query, dtype=np.float64)
    x = vectors if (type(vectors) is np.ndarray and vectors.dtype == np.float64
                    and vectors.ndim == 2) else np.asarray(vectors, dtype=np.float64
                                                           ).reshape(-1, q.shape[0])
    if not (x.flags.c_contiguous and q.flags.c_contiguous):
        # einsum's strided loops sum in another order than its contiguous ones
        x, q = np.ascontiguousarray(x), np.ascontiguousarray(q)
    if metric == "dotproduct":
        dots: npt.NDArray[np.float64] = einsum("ij,j->i", x, q)
        return dots
    if metric == "cosine":
        norms = np.sqrt(einsum("ij,ij->i", x, x))
        norms *= math.sqrt(einsum("i,i", q, q))
        if norms.all():
            cosines: npt.NDArray[np.float64] = einsum("ij,j->i", x, q) / norms
            return cosines
        out = np.zeros(len(x), dtype=np.float64)
        np.divide(einsum("ij,j->i", x, q), norms, out=out, where=norms > 0)
        return out
    diff = x - q
    distances: npt.NDArray[np.float64] = np.sqrt(einsum("ij,ij->i", diff, diff))
    return 1.0 / (1.0 + distances)


class DenseScores(Generic[T]):
    """One query's exact dense scores of its candidates (:func:`exact_scores`), computed
    a search at a time: :meth:`primed` turns the rows a search returned into one matrix
    and scores them together, not with a NumPy call a row (a dozen calls were a fifth of
    an adapter's own time in a top-10 query), and remembers each score by id (one query
    reads one namespace, where ids are unique), so a row met again when the search
    widens, or read again for the ranking's bound, is not scored twice. Scores are the
    same bits either way (see :func:`exact_scores`)."""

    __slots__ = ("_ident", "_matrix", "_memo", "_metric", "_query")

    def __init__(self, metric: Metric, query: npt.NDArray[np.float64],
                 ident: Callable[[T], str],
                 matrix: Callable[[Sequence[T]], npt.ArrayLike]) -> None:
        self._metric = metric
        self._query = query
        self._ident = ident
        self._matrix = matrix
        """The stored vectors of some rows, one row each."""
        self._memo: dict[str, float] = {}

    def primed(self, rows: Sequence[T]) -> Sequence[T]:
        """``rows``, the scores of those not yet scored computed in one go."""
        memo, ident = self._memo, self._ident
        fresh = [row for row in rows if ident(row) not in memo]
        if fresh:
            scores = exact_scores(self._metric, self._query, self._matrix(fresh))
            memo.update(zip([ident(row) for row in fresh], scores.tolist(), strict=True))
        return rows

    def __call__(self, row: T) -> float:
        """The score of ``row`` (scored alone if no search returned it primed)."""
        key = self._ident(row)
        score = self._memo.get(key)
        if score is None:
            score = self._memo[key] = float(exact_scores(self._metric, self._query,
                                                         self._matrix([row]))[0])
        return score


def contract_order(scored: Iterable[tuple[T, float]], ident: Callable[[T], str]
                   ) -> list[tuple[T, float]]:
    """``(item, score)`` pairs by score descending, ties by id ascending: the contract's
    one order (:func:`~vectorport.core.scoring.sort_matches` for matches)."""
    return sorted(scored, key=lambda pair: (-pair[1], ident(pair[0])))


def first_depth(top_k: int, cap: int | None = None) -> int:
    """How deep a rescoring search first goes: a little past ``top_k``, so that ties
    and float32 reordering at the cut are usually seen at once."""
    depth = top_k + max(16, top_k // 4)
    return depth if cap is None else min(cap, depth)


@dataclass(frozen=True, slots=True)
class RankedList(Generic[T]):
    """One native ranking and the part of the exact score it orders by."""

    search: Callable[[int], Sequence[T]]
    """The best items by this part, engine order, at most ``depth``."""
    part: Callable[[T], float]
    """This list's part of an item's exact score."""
    missing: float | None = None
    """The part's score for an item this list never returns however deep it goes (a
    sparse search returns only items sharing a term with the query; the others score
    0 there). ``None``: a search that comes back short has returned every matching item
    (a dense search)."""


def threshold_top_k(
    lists: Sequence[RankedList[T]],
    total: Callable[[T], float],
    ident: Callable[[T], str],
    top_k: int,
    *,
    min_score: float | None = None,
    cap: int | None = None,
    scan: Callable[[], Iterable[T]] | None = None,
    exhausted: Callable[[list[tuple[T, float]], Mapping[str, T]],
                        list[tuple[T, float]]] | None = None,
    slack: Callable[[float], float] = float32_slack,
    first: int | None = None,
) -> list[tuple[T, float]]:
    """The best ``top_k`` items by exact ``total`` score (the sum of the lists' parts),
    ties by ``ident``, ``min_score`` applied: the contract's answer, complete.

    Every list is searched to the same depth. An item in none of them scores at most
    the sum, over the lists, of the part at the list's last item (or its ``missing``
    score when higher, plus ``slack`` for float32 ranking; a list that came back short
    adds its ``missing`` score). Once the ``top_k``-th exact score is strictly above
    that bound, or the bound is below ``min_score``, the answer is exact; otherwise
    the depth grows fourfold. At ``cap`` (the engine's deepest search), ``scan()``
    yields every matching item and they are all scored. When every list came back
    short and none returns everything, the unseen items score exactly the sum of the
    ``missing`` scores: ``exhausted(ranked, seen)`` completes the answer from the
    ordered, ``min_score``-filtered candidates and every candidate seen (by id).
    ``first`` is the depth of the first search (default :func:`first_depth`): an
    engine whose rows cost more the more it returns asks ``top_k + 1``, the least
    that can prove the cut, and widens only when it does not.
    """
    depth = first_depth(top_k, cap) if first is None else max(1, first)
    if cap is not None:
        depth = min(cap, depth)
    while True:
        results = [ranked.search(depth) for ranked in lists]
        seen: dict[str, T] = {}
        for found in results:
            for item in found:
                seen.setdefault(ident(item), item)
        best = contract_order(((item, total(item)) for item in seen.values()), ident)
        if min_score is not None:
            best = [pair for pair in best if pair[1] >= min_score]
        bound = 0.0
        saw_everything = False  # some list returned every matching item
        for ranked, found in zip(lists, results, strict=True):
            if len(found) < depth:
                saw_everything = saw_everything or ranked.missing is None
                bound += ranked.missing or 0.0
            else:
                last = ranked.part(found[-1])
                if ranked.missing is not None:
                    last = max(last, ranked.missing)
                bound += last + slack(last)
        if _settled(best, top_k, None if saw_everything else bound, min_score):
            return best[:top_k]
        if all(len(found) < depth for found in results):
            if exhausted is None:
                raise ValueError("lists that can miss items need an exhausted completion")
            return exhausted(best, seen)
        if cap is not None and depth >= cap:
            if scan is None:
                raise ValueError("a capped search needs a scan to fall back on")
            return scan_top_k(scan(), total, ident, top_k, min_score=min_score)
        depth = depth * 4 if cap is None else min(cap, depth * 4)


def _settled(best: Sequence[tuple[T, float]], top_k: int, unseen_bound: float | None,
             min_score: float | None) -> bool:
    """:func:`complete_at_cut` of candidates already in the contract's order (score
    descending): the ``top_k``-th score is read off, not found again by a heap."""
    if unseen_bound is None:
        return True
    if min_score is not None and unseen_bound < min_score:
        return True
    return top_k <= 0 or (len(best) >= top_k and best[top_k - 1][1] > unseen_bound)


def scan_top_k(items: Iterable[T], total: Callable[[T], float], ident: Callable[[T], str],
               top_k: int, *, min_score: float | None = None) -> list[tuple[T, float]]:
    """The contract's answer from every matching item, each scored."""
    scored: Iterable[tuple[T, float]] = ((item, total(item)) for item in items)
    if min_score is not None:
        scored = (pair for pair in scored if pair[1] >= min_score)
    return contract_order(scored, ident)[:top_k]


__all__ = [
    "RELATIVE_EPS",
    "RankedList",
    "at_or_above_cut",
    "complete_at_cut",
    "contract_order",
    "einsum",
    "exact_scores",
    "fetch_many_until_settled",
    "fetch_until_settled",
    "first_ask",
    "first_depth",
    "float32_slack",
    "scan_top_k",
    "threshold_top_k",
]

"""Rankings complete under ties at the ``top_k`` cut.

The facade orders matches (score descending, then id) and cuts them at ``top_k``; it can
only do that right when the adapter's candidates hold *every* record scoring at least
the ``top_k``-th best. Engines break ties at the cut arbitrarily, so an adapter asks for
more than ``top_k`` and widens until the answer is complete: the ``top_k``-th score is
strictly above anything the engine has not returned yet.

:func:`complete_at_cut` is that test, given a bound on the unseen scores;
:func:`fetch_until_settled` (one query) and :func:`fetch_many_until_settled` (several
queries answered by one engine call) are the loop around an engine search.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import TypeVar

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


__all__ = ["complete_at_cut", "fetch_many_until_settled", "fetch_until_settled", "first_ask"]

"""Exact CONTRACT §3 rankings on top of LanceDB's vector search.

LanceDB finds candidates in float32 and reports ``_distance`` in its own conventions
(squared L2, ``1 − cos``, ``1 − q·x``); the adapter scores candidates itself, in float64,
from the stored vectors the search returns (the kit's
:func:`~vectorport.adapterkit.exact_scores`), so scores are exact. A search of ``top_k``
may return any of several records tied at the cut, where the contract wants the
smallest ids: the search is one ranked list for the kit's
:func:`~vectorport.adapterkit.threshold_top_k`, which widens it until the ``top_k``-th
exact score is strictly above anything not returned (at most the last returned one's,
up to float32 rounding), or until it returns fewer rows than asked (it has then
returned every matching row). LanceDB has no search depth limit, so no cap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from vectorport.adapterkit import RankedList, threshold_top_k

Scored = tuple[str, float, int]
"""(id, exact score, position in the candidate batch)."""


def first_depth(top_k: int) -> int:
    """How deep the first search goes: one row past the cut, the least that can show
    the cut is not tied. Each row returned is a random read of its vector and metadata
    (a tenth of a small exact search went to the kit's 16 spare rows); a tie widens."""
    return top_k + 1


def _id(candidate: Scored) -> str:
    return candidate[0]


def _score(candidate: Scored) -> float:
    return candidate[1]


def exact_top_k(
    search: Callable[[int], tuple[Sequence[str], npt.NDArray[np.float64]]],
    top_k: int,
    min_score: float | None,
) -> list[Scored]:
    """The best ``top_k`` candidates by exact score, ties by id.

    ``search(depth)`` returns the ids and exact scores of at most ``depth`` rows in the
    engine's order (best first)."""

    def candidates(depth: int) -> list[Scored]:
        ids, scores = search(depth)
        return [(rid, float(score), position)
                for position, (rid, score) in enumerate(zip(ids, scores, strict=True))]

    ranked = threshold_top_k([RankedList(candidates, _score)], _score, _id, top_k,
                             min_score=min_score, first=first_depth(top_k))
    return [candidate for candidate, _ in ranked]


__all__ = ["exact_top_k", "first_depth"]

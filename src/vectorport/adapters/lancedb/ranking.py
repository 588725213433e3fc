"""Exact CONTRACT §3 rankings on top of LanceDB's vector search (generic: no LanceDB
code here, so the adapter kit's copy can replace it).

LanceDB finds candidates in float32 and reports ``_distance`` in its own conventions
(squared L2, ``1 − cos``, ``1 − q·x``); the adapter scores candidates itself, in float64,
from the stored vectors the search returns, so scores are exact. A search of ``top_k``
may return any of several records tied at the cut, where the contract wants the
smallest ids: candidates are fetched deeper than ``top_k`` and the search widens until
the ``top_k``-th exact score is strictly above anything the search has not returned
(whose scores are at most the last returned one's, up to float32 rounding), or until
the search returns fewer rows than asked (it has then returned every matching row).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from vectorport.core.types import Metric

RELATIVE_EPS = 1e-5
"""How far the engine's float32 order may stray from the exact float64 one."""

Scored = tuple[str, float, int]
"""(id, exact score, position in the candidate batch)."""


def exact_scores(metric: Metric, query: npt.NDArray[Any], vectors: npt.NDArray[Any]
                 ) -> npt.NDArray[np.float64]:
    """The §3 score of each row of ``vectors`` for ``query``, in float64."""
    q = np.asarray(query, dtype=np.float64)
    x = np.asarray(vectors, dtype=np.float64).reshape(-1, q.shape[0])
    if metric == "dotproduct":
        return x @ q
    if metric == "cosine":
        norms = np.linalg.norm(x, axis=1) * np.linalg.norm(q)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(norms > 0, (x @ q) / np.where(norms > 0, norms, 1.0), 0.0)
        return np.asarray(out, dtype=np.float64)
    return np.asarray(1.0 / (1.0 + np.linalg.norm(x - q, axis=1)), dtype=np.float64)


def first_depth(top_k: int) -> int:
    """How deep the first search goes: a little past ``top_k`` to see ties at the cut."""
    return top_k + max(16, top_k // 4)


def _slack(score: float) -> float:
    return RELATIVE_EPS * (1.0 + abs(score))


def exact_top_k(
    search: Callable[[int], tuple[Sequence[str], npt.NDArray[np.float64]]],
    top_k: int,
    min_score: float | None,
) -> list[Scored]:
    """The best ``top_k`` candidates by exact score, ties by id.

    ``search(depth)`` returns the ids and exact scores of at most ``depth`` rows in the
    engine's order (best first)."""
    depth = first_depth(top_k)
    while True:
        ids, scores = search(depth)
        ranked = sorted(((rid, float(s), i) for i, (rid, s) in enumerate(
            zip(ids, scores, strict=True))), key=lambda t: (-t[1], t[0]))
        if min_score is not None:
            ranked = [t for t in ranked if t[1] >= min_score]
        if len(ids) < depth:
            return ranked[:top_k]  # the search returned every matching row
        last = float(scores[-1])
        unseen_bound = last + _slack(last)
        if len(ranked) >= top_k and ranked[top_k - 1][1] > unseen_bound:
            return ranked[:top_k]
        if min_score is not None and unseen_bound < min_score:
            return ranked[:top_k]  # nothing unseen can reach min_score
        depth *= 4


__all__ = ["exact_scores", "exact_top_k", "first_depth"]

"""The common query answered from its first search's payloads.

A dense-only query on a cosine index of point layout 2 without sparse vectors finds in
each payload all it needs: the record id (after the revision token), the vector as
written (``_v``, for the exact score) and what a match returns. Its first search
(``top_k + 2`` points, :func:`.ranking.first_depth`) nearly always settles the answer
(on the benchmarks' clustered data 399 queries in 400): the ``top_k``-th exact score
is strictly above the last point's plus the float32 slack. :func:`settled_top_k` tells
that from the payloads alone, with no :class:`~.codec.Hit`, memo, ranked-list or
per-hit callback of the general ranking (:func:`.ranking.exact_top_k`), which took
about a third of vectorport's own time in such a query. When the first search does not
settle the answer it returns None, and the adapter takes the general path from the
same first depth, which widens as it always did.

The answer is the general path's: the same exact scores (one hex decode of all the
texts, the kit's :func:`~vectorport.adapterkit.exact_scores`), the same order (score
descending, ids ascending), the same test of the cut as the kit's
:func:`~vectorport.adapterkit.threshold_top_k` for one dense list
(``tests/backends/qdrant/test_shortcuts.py`` holds them side by side).
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from vectorport.adapterkit import exact_scores, float32_slack
from vectorport.adapters.qdrant import naming

Settled = tuple[float, str, Mapping[str, Any]]
"""A point of the answer: its exact score, record id and payload."""

_ID_AT = naming.REVISION_CHARS


def settled_top_k(payloads: Sequence[Mapping[str, Any]], query: npt.NDArray[np.float64],
                  top_k: int, depth: int, min_score: float | None) -> list[Settled] | None:
    """The best ``top_k`` of the ``payloads`` a cosine search of ``depth`` points
    returned (engine order), by exact score, ties by id, ``min_score`` applied; None
    when points not returned could still belong (or a payload lacks the id or the
    vector as written: the general path says which)."""
    count = len(payloads)
    if not count:
        return []
    try:
        buffer = binascii.a2b_hex("".join([p[naming.VECTOR] for p in payloads]))
        ids = [p[naming.REVISION_ID][_ID_AT:] for p in payloads]
    except (KeyError, TypeError, binascii.Error):
        return None
    matrix = np.frombuffer(buffer, dtype="<f4").reshape(count, -1).astype(np.float64)
    scores: list[float] = exact_scores("cosine", query, matrix).tolist()
    # (-score, id) is the contract's order; ids are unique in a namespace, so the
    # payload (not comparable) is never reached
    ranked = sorted(zip([-s for s in scores], ids, payloads, strict=True))
    if min_score is not None:
        ranked = [entry for entry in ranked if -entry[0] >= min_score]
    if count >= depth:  # points may lie beyond the last one returned
        last = scores[-1]
        bound = last + float32_slack(last)
        if not ((min_score is not None and bound < min_score) or top_k <= 0
                or (len(ranked) >= top_k and -ranked[top_k - 1][0] > bound)):
            return None
    return [(-negated, record_id, payload) for negated, record_id, payload in ranked[:top_k]]


__all__ = ["Settled", "settled_top_k"]

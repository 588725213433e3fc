"""One dense query's exact top k (``Index.query``), fused into as few numpy calls as its
arithmetic allows.

After the float32 product over a 10,000-row subset the caches are cold and each numpy
call costs 2-4 µs, more than the arithmetic of a dozen candidates, so this path does
the batch's steps (:mod:`ranking`) with the same values and fewer calls:

- the query's float64 copy and norm before the product (one cast, one reduction);
- the k-th best bound and the candidates from one reduction, one partition of a
  thirty-second of the keys and one comparison (:func:`ranking.kth_bound`);
- the candidates' float64 dot products in ONE reduction against the query (``ij,j->i``
  runs numpy's einsum inner loop of ``ij,ij->i`` on the same operands, so the same
  bits as the batch's row-wise reduction over repeated query copies, without them);
  divisions, square roots and reciprocals in Python (IEEE operations, rounded as
  numpy's);
- the contract's order in one ``sort`` of ``(-score, id, row)`` tuples: score down,
  id up, so ties at the cut are settled by id with no separate tie check.

``tests/backends/local/test_single_query_path.py`` checks every answer against an
unpruned float64 ranking, and against the batch path, with exact ties and near-ties.
"""

from __future__ import annotations

import math
from operator import neg

import numpy as np
import numpy.typing as npt

from vectorport.adapterkit.ranking import einsum as _einsum
from vectorport.adapters.local import bounds, ranking
from vectorport.adapters.local.engine import KeyBuffer, NamespaceData, Subset
from vectorport.core.types import Metric

_STRIDES = 32
"""Column groups of the k-th best bound: twice the batch's (:data:`ranking._STRIDES`), so
a partition of 312 maxima, not 625, for 0.05 more candidates a query (10.44 against
10.39 over the benchmark's 10,000-row subset): 2.5 µs less."""

Ranked = list[tuple[float, str, int]]
"""``(-score, id, row)`` per match, in the contract's order."""


def best(data: NamespaceData, metric: Metric, query: npt.NDArray[np.float32],
         subset: Subset | None, top_k: int, min_score: float | None,
         buffer: KeyBuffer | None = None) -> Ranked:
    """The query's best ``top_k`` rows of the subset (all rows when ``subset`` is None)
    in contract order, as :data:`Ranked` tuples; those below ``min_score`` left out.
    The product goes into ``buffer`` when given (:class:`KeyBuffer`)."""
    # the float64 copy and norm before the product, while the caches still hold what
    # the call touched so far (the product evicts them)
    wide: npt.NDArray[np.float64] = query[0].astype(np.float64)
    norm = math.sqrt(_einsum("i,i", wide, wide))
    margin = bounds.key_margins(metric, data.dimension, norm,
                                0.0 if metric == "cosine" else data.max_norm(subset))
    keys = data.keys(metric, query, subset, buffer)[0]
    if len(keys) > top_k:
        floor = bounds.float32_floor(
            float(ranking.kth_bound(keys, top_k, _STRIDES)) - margin)
        cols: npt.NDArray[np.intp] = (keys >= floor).nonzero()[0]
    else:
        cols = np.arange(len(keys))
    rows = cols if subset is None else subset.rows.take(cols)
    vectors, wide_norms, id_array = data.columns()
    ids: list[str] = id_array.take(rows).tolist()
    # take, not vectors[rows]: half the cost for a dozen rows (no fancy-index setup)
    negated = _negated_scores(metric, vectors.take(rows, axis=0), wide, norm,
                              wide_norms.take(rows) if metric == "cosine" else None)
    ranked = list(zip(negated, ids, rows.tolist(), strict=True))
    if min_score is not None:
        ranked = [entry for entry in ranked if -entry[0] >= min_score]
    ranked.sort()
    return ranked[:top_k]


def _negated_scores(metric: Metric, vectors: npt.NDArray[np.float32],
                    wide: npt.NDArray[np.float64], norm: float,
                    wide_norms: npt.NDArray[np.float64] | None) -> list[float]:
    """:func:`ranking.pair_scores` of one query's candidate ``vectors`` (their float64
    norms ``wide_norms`` for cosine), negated (exactly: IEEE negation and
    ``(-a) / b = -(a / b)`` lose nothing), as Python floats: sorted ascending with the
    ids, the contract's order."""
    x = vectors.astype(np.float64)
    if metric == "euclidean":
        x -= wide  # what pair_scores subtracts: the query's float64 copy, per row
        sqrt = math.sqrt
        return [-1.0 / (sqrt(s) + 1.0) for s in _einsum("ij,ij->i", x, x).tolist()]
    dots: list[float] = _einsum("ij,j->i", x, wide).tolist()
    if wide_norms is None:  # dot product
        return list(map(neg, dots))
    # as pair_scores: divided by |x|·|q| where that is positive, 0 for a zero vector
    return [-dot / scale if (scale := row_norm * norm) > 0 else -0.0
            for dot, row_norm in zip(dots, wide_norms.tolist(), strict=True)]

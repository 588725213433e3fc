"""How far below its query's k-th best float32 key a row may be and still make the top k
once scored exactly: a proven bound on the float32 rounding error of the keys, so that
only rows that can reach the top k are rescored in float64.

Notation: ``u = 2**-24`` (float32 unit roundoff), ``d`` the dimension, and
``γ_d = d·u / (1 − d·u)``. A float32 dot product of length ``d``, computed by any
BLAS kernel in any summation order (with or without fused multiply-adds), is within
``γ_d · Σ|a_i·b_i| ≤ γ_d · |a|·|b|`` of the real one (Higham, *Accuracy and Stability
of Numerical Algorithms*, §3.1). The stored norms are float32 ``sqrt(Σ x²)``: a
relative error of at most ``γ_d/2 + u``; their inverses one more ``u``.

Per-row error ``E`` of each key against its real value (first order; the constant
``c = 2·γ_d + 16·u`` below covers the second-order terms and the float64 rescoring's
own rounding, which is ~``d·2**-53``, with room to spare):

- cosine, key ``|q|·cos`` (:meth:`NamespaceData.keys`): the row is scaled by
  its float32 inverse norm (relative ``γ_d/2 + 3u``, in the subset copy or after the
  product) and rounded (``u`` per component, at most ``u·|q|`` in the product), and the
  product adds ``γ_d·|q|``: ``E ≤ |q|·(1.5·γ_d + 4u) ≤ c·|q|``.
- dot product, key ``q·x``: ``E ≤ γ_d·|q|·|x| ≤ c·|q|·M`` with ``M`` the largest
  stored norm among the rows scored.
- euclidean, key ``2x·q − |x|²`` (:meth:`NamespaceData.keys`): the product
  ``2γ_d·|q||x|``, the squared float32 norm ``(γ_d + 3u)·|x|²``, the subtraction
  ``u·(2|q||x| + |x|²)``: ``E ≤ c·(2|q|M + M²) ≤ c·(1 + |q| + M)²``.

Why ``2E``: k rows have keys at least the k-th best key ``K``, so their real values are
at least ``K − E``, hence so is the real k-th best; a row whose real value reaches that
has a key of at least ``K − 2E``. Rows below ``K − 2E`` cannot reach the top k (nor tie
at the cut), so every row the contract's order could place in the top k is rescored.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from vectorport.core.types import Metric

_UNIT = 2.0 ** -24
"""float32 unit roundoff."""
_LOWEST = float(np.finfo(np.float32).min)
_ABOVE_LOWEST = float(np.nextafter(np.float32(_LOWEST), np.float32(0)))
"""Where :func:`float32_floors` clamps, so that its step down stays finite."""


def error_constant(dimension: int) -> float:
    """``c = 2·γ_d + 16·u``: a key's rounding error per unit of its scale (see the
    module docstring)."""
    du = dimension * _UNIT
    return 2.0 * du / (1.0 - du) + 16.0 * _UNIT


Norms = TypeVar("Norms", float, npt.NDArray[np.float64])


def key_margins(metric: Metric, dimension: int, query_norms: Norms, max_norm: float
                ) -> Norms:
    """``2E`` per query, in key units: how far below its k-th best key a row can still
    make the top k. ``query_norms`` are float64 ``|q|`` (an array, or one query's as a
    Python float: the same operations give the same values); ``max_norm`` the largest
    stored norm of the rows scored (not used by cosine, whose keys are scaled by |x|)."""
    twice = 2.0 * error_constant(dimension)
    if metric == "cosine":
        return twice * query_norms
    if metric == "dotproduct":
        return (twice * max_norm) * query_norms
    spread = query_norms + (1.0 + max_norm)
    return twice * (spread * spread)


def score_margins(metric: Metric, dimension: int, query_norms: npt.NDArray[np.float64],
                  max_norm: float) -> npt.NDArray[np.float64]:
    """``2E`` per query in score units, for the float32 scores of
    :meth:`NamespaceData.dense_scores` (hybrid queries add their sparse part to those).

    Cosine: the query is normalised in float32 (``γ_d/2 + 3u``, then ``u`` per
    component) before the same product as the keys: ``E ≤ 2γ_d + 8u ≤ c``. Dot product:
    as its keys. Euclidean: the squared distance ``|q|² + |x|² − 2x·q`` is within
    ``Δ = c·(1 + |q| + M)²`` (as the keys); ``|√a − √b| ≤ √|a − b|`` and
    ``|1/(1+a) − 1/(1+b)| ≤ |a − b|`` make the score within ``√Δ`` plus the rounding of
    the square root, the sum and the reciprocal: ``E ≤ (√c + 4u)·(1 + |q| + M)``. The
    square root is what a cancellation near zero distance costs: a wide margin, so many
    more rows are rescored than for the keys of dense-only queries, but none that can
    reach the top k is dropped."""
    c = error_constant(dimension)
    if metric == "cosine":
        return np.full(len(query_norms), 2.0 * c)
    if metric == "dotproduct":
        return (2.0 * c * max_norm) * query_norms
    margins: npt.NDArray[np.float64] = (2.0 * (np.sqrt(c) + 4.0 * _UNIT)) * (
        query_norms + (1.0 + max_norm))
    return margins


def float32_floor(value: float) -> float:
    """A number whose float32 rounding is at most ``value``: compared with float32 keys
    (numpy rounds a Python float to the array's float32), it never drops a key that is
    at least ``value``. Rounding to nearest moves a number by at most half an ulp
    (``2**-24`` relative, ``2**-150`` among subnormals); this steps down by more.
    Clamped to float32's lowest finite value (below it every key qualifies anyway, and
    the cast would overflow)."""
    return max(value - abs(value) * 2.0 ** -22 - 2.0 ** -148, _LOWEST)


def float32_floors(values: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.float32]:
    """For each value, a float32 number at most it (round to nearest, then one step
    down): compared with the keys in float32, never by widening the key matrix."""
    narrow = np.maximum(values, _ABOVE_LOWEST).astype(np.float32)
    lowered: npt.NDArray[np.float32] = np.nextafter(narrow, np.float32(-np.inf))
    return lowered

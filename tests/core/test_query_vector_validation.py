"""A query vector given as a native float32 array takes a shorter check
(``validation.query_vector``'s first branch); it must accept and refuse exactly what the
general check does for the same numbers given as a list of floats or a float64 array."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from vectorport.core import validation
from vectorport.core.errors import ValidationError

DIM = 6


def _outcome(value: Any, dimension: int, cosine: bool) -> tuple[str, Any]:
    try:
        checked = validation.query_vector(value, dimension, cosine)
    except ValidationError as exc:
        return type(exc).__name__, str(exc)
    assert checked.dtype == np.float32 and checked.ndim == 1
    assert not checked.flags.writeable and checked.flags.c_contiguous
    return "ok", checked.tolist()


CASES = [
    [0.5, -1.0, 2.0, 0.0, 3.25, 1e-3],
    [0.0] * DIM,  # refused for cosine only
    [1e-30, 0.0, 0.0, 0.0, 0.0, 0.0],  # below the smallest cosine norm
    [float("nan"), 1.0, 0.0, 0.0, 0.0, 0.0],
    [float("inf"), 1.0, 0.0, 0.0, 0.0, 0.0],
    [-float("inf"), 1.0, 0.0, 0.0, 0.0, 0.0],
    [1e19, 1e19, 0.0, 0.0, 0.0, 0.0],  # beyond the largest norm
    [7e17, 7e17, 0.0, 0.0, 0.0, 0.0],  # just below it (9.9e17)
    [3e38, 3e38, 3e38, 0.0, 0.0, 0.0],  # float32 values whose float32 norm overflows
]


@pytest.mark.parametrize("values", CASES)
@pytest.mark.parametrize("cosine", [True, False])
def test_float32_arrays_are_checked_as_lists_are(values: list[float], cosine: bool) -> None:
    as32 = np.array(values, dtype=np.float32)
    general = _outcome([float(x) for x in as32], DIM, cosine)  # the same float32 numbers
    assert _outcome(as32, DIM, cosine) == general
    assert _outcome(as32.astype(np.float64), DIM, cosine) == general
    # strided, byte-swapped and 2-d views of the same numbers
    wide = np.zeros(2 * DIM, dtype=np.float32)
    wide[::2] = as32
    assert _outcome(wide[::2], DIM, cosine) == general
    assert _outcome(as32.astype(">f4"), DIM, cosine) == general


def test_a_float32_array_of_another_length_or_shape_is_refused_as_before() -> None:
    vector = np.ones(DIM + 1, dtype=np.float32)
    with pytest.raises(ValidationError, match="has 7 dimensions"):
        validation.query_vector(vector, DIM, True)
    with pytest.raises(ValidationError, match="1-dimensional"):
        validation.query_vector(np.ones((1, DIM), dtype=np.float32), DIM, True)


def test_the_checked_vector_is_a_copy_the_caller_cannot_change() -> None:
    vector = np.arange(1, DIM + 1, dtype=np.float32)
    checked = validation.query_vector(vector, DIM, True)
    vector[0] = 100.0
    assert checked[0] == 1.0
    assert not np.shares_memory(checked, vector)
    assert vector.flags.writeable  # the caller's array is left as it was

"""Small conversions between vectorport values and wire formats."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vectorport.core.types import DenseVector

_MAX_CODE_POINT = 0x10FFFF
_SURROGATES = range(0xD800, 0xE000)


def prefix_upper_bound(prefix: str) -> str | None:
    """The smallest string above every string starting with ``prefix`` in code point
    order, or ``None`` when there is none (``prefix`` is all U+10FFFF, or empty).

    ``prefix <= s < prefix_upper_bound(prefix)`` is then "``s`` starts with ``prefix``",
    a range an engine can serve from an ordered key."""
    chars = list(prefix)
    while chars:
        code = ord(chars.pop())
        if code < _MAX_CODE_POINT:
            code += 1
            if code in _SURROGATES:  # surrogates are not characters
                code = _SURROGATES.stop
            return "".join(chars) + chr(code)
    return None


def read_only_float32(values: Sequence[float] | Any) -> DenseVector:
    """A float32 array that callers cannot change by accident (records are values)."""
    array = np.array(values, dtype=np.float32)
    array.setflags(write=False)
    return array


__all__ = ["prefix_upper_bound", "read_only_float32"]

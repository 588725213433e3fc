"""Small conversions between vectorport values and wire formats."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from vectorport.core.types import DenseVector, IndexSpec

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


def spec_to_json(spec: IndexSpec) -> str:
    """An IndexSpec as JSON text, for engines that keep it beside the index (collection
    metadata, a file, a row): every field, keys sorted, so equal specs give equal text."""
    return json.dumps(asdict(spec), sort_keys=True)


def spec_from_json(text: str) -> IndexSpec:
    """The IndexSpec :func:`spec_to_json` wrote (absent or null parameter sections
    read as empty)."""
    data: dict[str, Any] = json.loads(text)
    data["index_params"] = dict(data.get("index_params") or {})
    data["backend_options"] = dict(data.get("backend_options") or {})
    return IndexSpec(**data)


__all__ = ["prefix_upper_bound", "read_only_float32", "spec_from_json", "spec_to_json"]

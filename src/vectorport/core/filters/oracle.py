"""The filter oracle: CONTRACT §2 as executable code.

This is the meaning of every filter. The reference adapter evaluates filters with it and
the conformance suite derives every expected result from it, so it is written for
clarity, one branch per rule of the contract's table.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from vectorport.core.filters.ast import And, Condition, Filter, Nor, Or, Scalar
from vectorport.core.filters.parse import kind_of

_MISSING = object()
_RANGE: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def _same(stored: object, wanted: Scalar) -> bool:
    """Equal and of one kind: ``1 == 1.0`` holds, ``True == 1`` and ``"1" == 1`` do not."""
    if not isinstance(stored, (str, int, float, bool)):
        return False
    return kind_of(stored) == kind_of(wanted) and stored == wanted


def _elements(stored: object) -> tuple[object, ...]:
    return tuple(stored) if isinstance(stored, (list, tuple)) else (stored,)


def _eq(stored: object, wanted: Scalar) -> bool:
    return any(_same(element, wanted) for element in _elements(stored))


def _condition(node: Condition, metadata: Mapping[str, Any]) -> bool:
    stored = metadata.get(node.field, _MISSING)
    present = stored is not _MISSING
    op, value = node.op, node.value
    if op == "$exists":
        return present == value
    if op == "$ne":
        return not (present and _eq(stored, value))  # type: ignore[arg-type]
    if op == "$nin":
        return not (present and any(_eq(stored, v) for v in value))  # type: ignore[union-attr]
    if not present:
        return False
    if op == "$eq":
        return _eq(stored, value)  # type: ignore[arg-type]
    if op == "$in":
        return any(_eq(stored, v) for v in value)  # type: ignore[union-attr]
    if op == "$all":
        if isinstance(stored, (list, tuple)):
            return all(_eq(stored, v) for v in value)  # type: ignore[union-attr]
        return all(_same(stored, v) for v in value)  # type: ignore[union-attr]
    compare = _RANGE[op]
    wanted_kind = kind_of(value)  # type: ignore[arg-type]
    return any(
        isinstance(element, (str, int, float))
        and not isinstance(element, bool)
        and kind_of(element) == wanted_kind
        and compare(element, value)
        for element in _elements(stored)
    )


def matches(node: Filter | None, metadata: Mapping[str, Any]) -> bool:
    """Whether a record with this metadata matches the filter (``None`` matches all)."""
    if node is None:
        return True
    if isinstance(node, Condition):
        return _condition(node, metadata)
    if isinstance(node, And):
        return all(matches(child, metadata) for child in node.children)
    if isinstance(node, Or):
        return any(matches(child, metadata) for child in node.children)
    if isinstance(node, Nor):
        return not any(matches(child, metadata) for child in node.children)
    return not matches(node.child, metadata)

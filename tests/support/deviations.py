"""Filter shapes that bindings declare refused (``filter_deviation``), stated from the
contract's side, independently of any adapter's code."""

from __future__ import annotations

from vectorport.core.filters.ast import Condition, Filter, walk

RANGES = frozenset({"$gt", "$gte", "$lt", "$lte"})


def _conditions(node: Filter) -> list[Condition]:
    return [part for part in walk(node) if isinstance(part, Condition)]


def string_range(node: Filter) -> bool:
    """A range operator over a string anywhere in ``node`` (engines whose ranges compare
    numbers only)."""
    return any(c.op in RANGES and isinstance(c.value, str) for c in _conditions(node))


def inexact_number(node: Filter) -> bool:
    """A number operand of magnitude 2^53 or more anywhere in ``node`` (engines that
    compare numbers as float64)."""
    for condition in _conditions(node):
        values = condition.value if isinstance(condition.value, tuple) else (condition.value,)
        if any(isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) >= 2**53
               for v in values):
            return True
    return False

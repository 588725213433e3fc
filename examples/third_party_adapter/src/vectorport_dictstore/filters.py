"""Compile vectorport's filter AST into this database's filter form: a predicate.

A real adapter would produce SQL with bound parameters or the database's structured
filter objects. The shape is the same: walk the AST once, refuse what cannot be
expressed exactly with ``UnsupportedFeatureError``, never drop a clause.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from vectorport.adapterkit import And, Condition, Filter, FilterCompiler, Or, UnsupportedFeatureError

Predicate = Callable[[Mapping[str, Any]], bool]
_MISSING = object()


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, (int, float)) else "string"


def _elements(stored: object) -> tuple[object, ...]:
    return tuple(stored) if isinstance(stored, (list, tuple)) else (stored,)


def _equals(stored: object, wanted: object) -> bool:
    return any(_kind(e) == _kind(wanted) and e == wanted for e in _elements(stored))


def _condition(node: Condition) -> Predicate:
    field, op, value = node.field, node.op, node.value
    if op == "$eq":
        return lambda m: field in m and _equals(m[field], value)
    if op == "$ne":
        return lambda m: not (field in m and _equals(m[field], value))
    if op == "$in":
        return lambda m: field in m and any(_equals(m[field], v) for v in value)  # type: ignore[union-attr]
    if op == "$nin":
        return lambda m: not (field in m and any(_equals(m[field], v) for v in value))  # type: ignore[union-attr]
    if op == "$exists":
        return lambda m: (field in m) == value
    if op in ("$gt", "$gte", "$lt", "$lte"):
        import operator

        cmp = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}[op]
        return lambda m: any(
            _kind(e) == _kind(value) and cmp(e, value) for e in _elements(m.get(field, _MISSING))
            if e is not _MISSING
        )
    raise UnsupportedFeatureError("dictstore", f"filter operator {op}")


class _Compiler(FilterCompiler[Predicate]):
    """The kit's base memoises: the same filter asked again reuses its predicate."""

    def build(self, node: Filter) -> Predicate:
        if isinstance(node, Condition):
            return _condition(node)
        if isinstance(node, And):
            parts = [self.build(c) for c in node.children]
            return lambda m: all(p(m) for p in parts)
        if isinstance(node, Or):
            parts = [self.build(c) for c in node.children]
            return lambda m: any(p(m) for p in parts)
        raise UnsupportedFeatureError("dictstore", f"filter node {type(node).__name__}")


_COMPILER = _Compiler()


def compile_filter(node: Filter | None) -> Predicate:
    return (lambda m: True) if node is None else _COMPILER.compile(node)

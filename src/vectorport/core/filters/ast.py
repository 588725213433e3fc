"""The filter AST: small, immutable, hashable nodes.

A field-level ``$not`` parses to :class:`Not` over the field's conditions, so adapters
see one negation node whatever the user wrote. Several clauses in one object become an
:class:`And`. ``None`` (not a node) stands for "match everything".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, TypeAlias

Scalar: TypeAlias = str | int | float | bool
FieldOperator: TypeAlias = Literal[
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$all"
]
FIELD_OPERATORS: frozenset[str] = frozenset(
    {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$all"}
)
LOGICAL_OPERATORS: frozenset[str] = frozenset({"$and", "$or", "$nor", "$not"})
RANGE_OPERATORS: frozenset[str] = frozenset({"$gt", "$gte", "$lt", "$lte"})
LIST_OPERATORS: frozenset[str] = frozenset({"$in", "$nin", "$all"})


def _kind_tagged(value: Scalar | tuple[Scalar, ...]) -> object:
    """The value with each scalar's kind beside it. Python has ``True == 1`` and
    ``hash(True) == hash(1)``, but a filter on ``True`` and one on ``1`` match different
    records, so equality and hashing of conditions (which caches of compiled filters
    key on) must tell them apart. ``1`` and ``1.0`` stay equal: numbers compare by value."""
    if isinstance(value, tuple):
        return tuple(_kind_tagged(v) for v in value)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    return ("string", value)


@dataclass(frozen=True, slots=True, eq=False)
class Condition:
    """``field op value``. ``value`` is a tuple for ``$in``/``$nin``/``$all``, a bool for
    ``$exists``, and a scalar otherwise."""

    field: str
    op: FieldOperator
    value: Scalar | tuple[Scalar, ...]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Condition):
            return NotImplemented
        return (self.field, self.op, _kind_tagged(self.value)) == (
            other.field, other.op, _kind_tagged(other.value))

    def __hash__(self) -> int:
        return hash((self.field, self.op, _kind_tagged(self.value)))


@dataclass(frozen=True, slots=True)
class And:
    children: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Or:
    children: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Nor:
    children: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Not:
    child: Filter


Filter: TypeAlias = Condition | And | Or | Nor | Not


def walk(node: Filter) -> Iterator[Filter]:
    """Every node of the tree, depth first, the root first."""
    stack: list[Filter] = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, (And, Or, Nor)):
            stack.extend(reversed(current.children))
        elif isinstance(current, Not):
            stack.append(current.child)


def operators_used(node: Filter | None) -> frozenset[str]:
    """The ``$``-operators a filter uses, for checking against declared capabilities."""
    if node is None:
        return frozenset()
    found: set[str] = set()
    for current in walk(node):
        if isinstance(current, Condition):
            found.add(current.op)
        elif isinstance(current, And):
            found.add("$and")
        elif isinstance(current, Or):
            found.add("$or")
        elif isinstance(current, Nor):
            found.add("$nor")
        else:
            found.add("$not")
    return frozenset(found)


def fields_used(node: Filter | None) -> frozenset[str]:
    if node is None:
        return frozenset()
    return frozenset(n.field for n in walk(node) if isinstance(n, Condition))

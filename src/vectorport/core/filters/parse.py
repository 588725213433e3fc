"""Parse a Mongo-style filter dict into the AST, and render the AST back.

The parser is the single gate for filters: every rejection of CONTRACT §2 happens here,
with the JSON path of the fault, so adapters compile only well-formed trees. Field names
must follow the metadata key rule, which also keeps them safe to place in any query
language as identifiers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, cast

from vectorport.core.errors import FilterError
from vectorport.core.filters.ast import (
    FIELD_OPERATORS,
    LIST_OPERATORS,
    RANGE_OPERATORS,
    And,
    Condition,
    FieldOperator,
    Filter,
    Nor,
    Not,
    Or,
    Scalar,
)
from vectorport.core.validation import INT64_MAX, INT64_MIN, METADATA_KEY_RE

MAX_DEPTH = 32
MAX_NODES = 1024


def kind_of(value: Scalar) -> str:
    """The comparison kind: numbers (int and float) are one kind; bool is its own."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "string"


class _Parser:
    def __init__(self) -> None:
        self.nodes = 0

    def count(self, path: str, depth: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise FilterError(f"filter has more than {MAX_NODES} nodes", path)
        if depth > MAX_DEPTH:
            raise FilterError(f"filter is nested more than {MAX_DEPTH} levels deep", path)

    def filter(self, raw: object, path: str, depth: int) -> Filter:
        if not isinstance(raw, Mapping):
            raise FilterError(f"a filter must be an object, got {_type_name(raw)}", path)
        if not raw:
            raise FilterError("an empty filter is not allowed here", path)
        clauses = [self.clause(key, value, path, depth) for key, value in raw.items()]
        if len(clauses) == 1:
            return clauses[0]
        self.count(path, depth)
        return And(tuple(clauses))

    def clause(self, key: object, value: object, path: str, depth: int) -> Filter:
        if not isinstance(key, str):
            raise FilterError(f"keys must be str, got {_type_name(key)}", path)
        here = _join(path, key)
        if key in ("$and", "$or", "$nor"):
            if not isinstance(value, (list, tuple)):
                raise FilterError(f"{key} takes a list of filters", here)
            if not value:
                raise FilterError(f"{key} needs at least one filter", here)
            self.count(here, depth + 1)
            children = tuple(
                self.filter(item, f"{here}[{i}]", depth + 2) for i, item in enumerate(value)
            )
            if key == "$and":
                return And(children)
            return Or(children) if key == "$or" else Nor(children)
        if key == "$not":
            if not isinstance(value, Mapping) or not value:
                raise FilterError("$not takes a non-empty filter", here)
            self.count(here, depth + 1)
            return Not(self.filter(value, here, depth + 2))
        if key.startswith("$"):
            raise FilterError(f"unknown operator {key!r}", here)
        if not METADATA_KEY_RE.match(key):
            raise FilterError(
                f"invalid field name {key!r}: fields follow the metadata key rule "
                "(A-Z, a-z, 0-9, _; not starting with a digit; at most 64)",
                path,
            )
        return self.field(key, value, here, depth + 1)

    def field(self, name: str, value: object, path: str, depth: int) -> Filter:
        if not isinstance(value, Mapping):
            self.count(path, depth)
            return Condition(name, "$eq", _scalar(value, path))
        if not value:
            raise FilterError("an empty operator object is not allowed", path)
        conditions: list[Filter] = []
        for op, operand in value.items():
            here = _join(path, str(op))
            if op == "$not":
                if not isinstance(operand, Mapping) or not operand:
                    raise FilterError("$not takes a non-empty operator object", here)
                self.count(here, depth + 1)
                conditions.append(Not(self.field(name, operand, here, depth + 2)))
            elif op in FIELD_OPERATORS:
                self.count(here, depth + 1)
                conditions.append(Condition(name, cast(FieldOperator, op), _operand(op, operand, here)))
            elif isinstance(op, str) and op.startswith("$"):
                raise FilterError(f"unknown operator {op!r}", here)
            else:
                raise FilterError(
                    "a dict is not a valid value; operator objects have only $-keys", path
                )
        if len(conditions) == 1:
            return conditions[0]
        self.count(path, depth)
        return And(tuple(conditions))


def _operand(op: str, operand: object, path: str) -> Scalar | tuple[Scalar, ...]:
    if op == "$exists":
        if not isinstance(operand, bool):
            raise FilterError(f"$exists takes true or false, got {_type_name(operand)}", path)
        return operand
    if op in LIST_OPERATORS:
        if not isinstance(operand, (list, tuple)):
            raise FilterError(f"{op} takes a list, got {_type_name(operand)}", path)
        if not operand:
            raise FilterError(f"{op} needs a non-empty list", path)
        items = tuple(_scalar(item, f"{path}[{i}]") for i, item in enumerate(operand))
        kinds = {kind_of(item) for item in items}
        if len(kinds) > 1:
            raise FilterError(
                f"{op} list mixes kinds ({', '.join(sorted(kinds))}); use one kind", path
            )
        return items
    scalar = _scalar(operand, path)
    if op in RANGE_OPERATORS and isinstance(scalar, bool):
        raise FilterError(f"{op} takes a number or a string, not a bool", path)
    return scalar


def _scalar(value: object, path: str) -> Scalar:
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise FilterError(f"int {value} is outside the int64 range", path)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FilterError(f"{value} is not a finite number", path)
        return value
    if isinstance(value, (list, tuple)):
        raise FilterError(
            "a list is only allowed as the operand of $in, $nin or $all", path
        )
    raise FilterError(f"{_type_name(value)} is not a valid filter value", path)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def parse_filter(raw: Mapping[str, Any] | Filter | None) -> Filter | None:
    """Parse a filter dict into the AST. ``None`` and ``{}`` match everything.

    An AST node passes through unchanged, so callers may parse once and reuse.
    """
    if raw is None:
        return None
    if isinstance(raw, (Condition, And, Or, Nor, Not)):
        return raw
    if isinstance(raw, Mapping) and not raw:
        return None
    return _Parser().filter(raw, "", 0)


def render_filter(node: Filter | None) -> dict[str, Any]:
    """The canonical dict form of an AST; ``parse_filter(render_filter(n)) == n``."""
    if node is None:
        return {}
    if isinstance(node, Condition):
        value = list(node.value) if isinstance(node.value, tuple) else node.value
        return {node.field: {node.op: value}}
    if isinstance(node, And):
        return {"$and": [render_filter(c) for c in node.children]}
    if isinstance(node, Or):
        return {"$or": [render_filter(c) for c in node.children]}
    if isinstance(node, Nor):
        return {"$nor": [render_filter(c) for c in node.children]}
    return {"$not": render_filter(node.child)}

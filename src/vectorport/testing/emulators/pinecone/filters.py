"""Pinecone's metadata filter language, parsed and evaluated the way Pinecone documents it.

This is deliberately *not* vectorport's filter oracle: it is what the service does, so
that an adapter compiling the contract's filters to Pinecone's language is tested against
Pinecone's semantics, differences included:

- Stored values are strings, numbers (every number is a 64-bit float), booleans or lists
  of strings. A boolean is never equal to a number, a string never equal to a number.
- ``$eq`` / ``$in`` on a list field match when an element matches.
- ``$ne`` / ``$nin`` match only records that **have** the field (a record without it does
  not match), and on a list field require that no element matches.
- ``$gt`` ``$gte`` ``$lt`` ``$lte`` take numbers only, and only match number values.
- ``$in`` / ``$nin`` take a non-empty list of strings or numbers (not booleans).
- ``$exists`` takes a boolean.
- ``$and`` / ``$or`` take a non-empty list of filters; several keys in one object, and
  several operators on one field, are an implicit ``$and``. There is no ``$not``/``$nor``.

A malformed filter raises :class:`FilterSyntaxError`, which the server turns into a 400.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

Predicate: TypeAlias = Callable[[Mapping[str, Any]], bool]

_MISSING = object()
_RANGE_OPS = ("$gt", "$gte", "$lt", "$lte")
_FIELD_OPS = ("$eq", "$ne", *_RANGE_OPS, "$in", "$nin", "$exists")


class FilterSyntaxError(ValueError):
    """The filter does not follow Pinecone's filter grammar."""


@dataclass(frozen=True, slots=True)
class _Value:
    """A scalar operand with its Pinecone kind: ``"string"``, ``"number"`` or ``"bool"``."""

    kind: str
    value: str | float | bool


def _kind_of(value: object) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _operand(op: str, raw: object) -> _Value:
    kind = _kind_of(raw)
    if kind is None:
        raise FilterSyntaxError(f"invalid value for {op}: {_show(raw)}")
    if kind == "number":
        number = float(raw)  # type: ignore[arg-type]
        if not math.isfinite(number):
            raise FilterSyntaxError(f"invalid value for {op}: {_show(raw)}")
        return _Value(kind, number)
    return _Value(kind, raw)  # type: ignore[arg-type]


def _show(raw: object) -> str:
    text = repr(raw)
    return text if len(text) <= 40 else text[:37] + "..."


def _equal(stored: object, wanted: _Value) -> bool:
    """Type-aware equality of one stored scalar (or a list of strings) with an operand."""
    if isinstance(stored, list):
        return wanted.kind == "string" and wanted.value in stored
    kind = _kind_of(stored)
    if kind != wanted.kind:
        return False
    if kind == "number":
        return float(stored) == wanted.value  # type: ignore[arg-type]
    return stored == wanted.value


def _compare(op: str, stored: object, bound: float) -> bool:
    if _kind_of(stored) != "number":
        return False
    value = float(stored)  # type: ignore[arg-type]
    if op == "$gt":
        return value > bound
    if op == "$gte":
        return value >= bound
    if op == "$lt":
        return value < bound
    return value <= bound


def _condition(field: str, op: str, raw: object) -> Predicate:
    if op in ("$eq", "$ne"):
        wanted = _operand(op, raw)
        if op == "$eq":
            return lambda m: (s := m.get(field, _MISSING)) is not _MISSING and _equal(s, wanted)
        return lambda m: (s := m.get(field, _MISSING)) is not _MISSING and not _equal(s, wanted)
    if op in _RANGE_OPS:
        bound = _operand(op, raw)
        if bound.kind != "number":
            raise FilterSyntaxError(f"{op} takes a number, got {_show(raw)}")
        limit = float(bound.value)
        return lambda m: (s := m.get(field, _MISSING)) is not _MISSING and _compare(op, s, limit)
    if op in ("$in", "$nin"):
        if not isinstance(raw, list) or not raw:
            raise FilterSyntaxError(f"{op} takes a non-empty array, got {_show(raw)}")
        values = tuple(_operand(op, item) for item in raw)
        if any(v.kind == "bool" for v in values):
            raise FilterSyntaxError(f"{op} takes strings or numbers, got {_show(raw)}")
        if op == "$in":
            return lambda m: (s := m.get(field, _MISSING)) is not _MISSING and any(
                _equal(s, v) for v in values
            )
        return lambda m: (s := m.get(field, _MISSING)) is not _MISSING and not any(
            _equal(s, v) for v in values
        )
    if op == "$exists":
        if not isinstance(raw, bool):
            raise FilterSyntaxError(f"$exists takes a boolean, got {_show(raw)}")
        return lambda m: (field in m) == raw
    raise FilterSyntaxError(f"unsupported operator {op!r}")


def _all(predicates: list[Predicate]) -> Predicate:
    if len(predicates) == 1:
        return predicates[0]
    return lambda m: all(p(m) for p in predicates)


def _any(predicates: list[Predicate]) -> Predicate:
    if len(predicates) == 1:
        return predicates[0]
    return lambda m: any(p(m) for p in predicates)


def _field(field: str, raw: object) -> Predicate:
    if not field or field.startswith("$"):
        raise FilterSyntaxError(f"unsupported operator {field!r}")
    if isinstance(raw, Mapping):
        if not raw:
            raise FilterSyntaxError(f"empty operator object for field {field!r}")
        predicates = []
        for op, operand in raw.items():
            if op not in _FIELD_OPS:
                raise FilterSyntaxError(f"unsupported operator {op!r} for field {field!r}")
            predicates.append(_condition(field, op, operand))
        return _all(predicates)
    if isinstance(raw, list):
        raise FilterSyntaxError(f"field {field!r}: an array is only valid under $in/$nin")
    return _condition(field, "$eq", raw)


def compile_filter(raw: object) -> Predicate:
    """A predicate over stored metadata, or :class:`FilterSyntaxError`."""
    if not isinstance(raw, Mapping):
        raise FilterSyntaxError("a filter must be a JSON object")
    if not raw:
        return lambda m: True
    predicates: list[Predicate] = []
    for key, value in raw.items():
        if key in ("$and", "$or"):
            if not isinstance(value, list) or not value:
                raise FilterSyntaxError(f"{key} takes a non-empty array of filters")
            children = []
            for child in value:
                if not isinstance(child, Mapping) or not child:
                    raise FilterSyntaxError(f"{key} members must be non-empty objects")
                children.append(compile_filter(child))
            predicates.append(_all(children) if key == "$and" else _any(children))
        elif isinstance(key, str) and key.startswith("$"):
            raise FilterSyntaxError(
                f"unsupported operator {key!r} at the top level; use a field name, $and or $or"
            )
        else:
            predicates.append(_field(str(key), value))
    return _all(predicates)


__all__ = ["FilterSyntaxError", "Predicate", "compile_filter"]

"""Compile the contract's filter AST (CONTRACT §2) to Pinecone's filter objects.

The tree is first put in negation normal form (:func:`to_nnf`), since Pinecone has no
``$not`` / ``$nor``. Then, node by node:

- ``$eq``, ``$exists``, ``$gt`` ``$gte`` ``$lt`` ``$lte`` (numbers) and ``$in`` (strings
  or numbers) are Pinecone's own operators with the contract's meaning: Pinecone keeps
  kinds apart (a bool never equals a number) and matches list fields element-wise.
- ``$ne`` / ``$nin``: Pinecone's versions never match a record *without* the field, the
  contract's do, so ``{"$or": [{f: {"$exists": false}}, {f: {"$ne": v}}]}`` is sent.
- ``$in`` / ``$nin`` over booleans (Pinecone takes strings and numbers only) become
  ``$or`` of ``$eq`` / ``$and`` of ``$ne``.
- ``$all [v…]`` is ``$and`` of ``$eq v``: exactly the contract's rule for lists and
  scalars alike. Its negation is ``$or`` of ``$ne`` plus "field missing".
- A negated range, ``not (f > x)``, is "f missing, or f not a number, or f <= x". "Not a
  number" is read from the reserved ``vp:num`` key the adapter writes (see
  :mod:`.codec`), so the rewrite is exact for records written through vectorport.

Refused with :class:`UnsupportedFeatureError`, at compile time and before any I/O:

- ranges over strings: Pinecone's ``$gt``/``$gte``/``$lt``/``$lte`` take numbers only;
- numbers whose magnitude is 2^53 or more: Pinecone compares every number as a float64,
  so such an operand can equal or order differently from an exact int. (Any operand
  below 2^53 compares exactly even with larger stored ints, because rounding to float64
  is monotonic and never crosses an operand that is exactly representable below 2^53.)
"""

from __future__ import annotations

from typing import Any

from vectorport import adapterkit as kit
from vectorport.adapterkit import (
    And,
    Condition,
    Filter,
    Not,
    Or,
    Scalar,
    UnsupportedFeatureError,
    to_nnf,
)
from vectorport.adapters.pinecone.codec import BACKEND, NUMBER_KEYS

_COMPLEMENT = {"$gt": "$lte", "$gte": "$lt", "$lt": "$gte", "$lte": "$gt"}
_RANGE = frozenset(_COMPLEMENT)

PineconeFilter = dict[str, Any]


class _Compiler(kit.FilterCompiler[PineconeFilter]):
    def build(self, node: Filter) -> PineconeFilter:
        return _compile(to_nnf(node))


_COMPILER = _Compiler()


def compile_filter(node: Filter | None) -> PineconeFilter | None:
    """Pinecone's filter for ``node`` (``None`` for everything); raises
    :class:`UnsupportedFeatureError` for what Pinecone cannot express exactly.

    Memoised by the kit and shared: callers must not change the result.
    """
    return None if node is None else _COMPILER.compile(node)


def _compile(node: Filter) -> PineconeFilter:
    if isinstance(node, And):
        return _join("$and", [_compile(c) for c in node.children])
    if isinstance(node, Or):
        return _join("$or", [_compile(c) for c in node.children])
    if isinstance(node, Condition):
        return _condition(node)
    if isinstance(node, Not) and isinstance(node.child, Condition):
        return _negated(node.child)
    raise UnsupportedFeatureError(BACKEND, "$not", f"cannot compile {node!r}")  # not in NNF


def _join(op: str, parts: list[PineconeFilter]) -> PineconeFilter:
    flat: list[PineconeFilter] = []
    for part in parts:
        if set(part) == {op}:
            flat.extend(part[op])
        else:
            flat.append(part)
    return flat[0] if len(flat) == 1 else {op: flat}


def _number_check(value: Scalar, op: str) -> None:
    kit.check_exact_number(BACKEND, op, value, "Pinecone compares numbers as 64-bit floats, "
                           "which cannot hold such a value exactly")


def _missing(field: str) -> PineconeFilter:
    return {field: {"$exists": False}}


def _range_operand(node: Condition) -> Scalar:
    value = node.value
    if isinstance(value, str):
        raise UnsupportedFeatureError(
            BACKEND, f"{node.op} on strings", "Pinecone's range operators compare numbers only"
        )
    assert not isinstance(value, tuple)
    _number_check(value, node.op)
    return value


def _condition(node: Condition) -> PineconeFilter:
    field, op, value = node.field, node.op, node.value
    if op == "$exists":
        return {field: {"$exists": value}}
    if op in _RANGE:
        return {field: {op: _range_operand(node)}}
    if op in ("$eq", "$ne"):
        assert not isinstance(value, tuple)
        _number_check(value, op)
        if op == "$eq":
            return {field: {"$eq": value}}
        return {"$or": [_missing(field), {field: {"$ne": value}}]}
    assert isinstance(value, tuple)
    values = list(dict.fromkeys(value))
    for item in values:
        _number_check(item, op)
    booleans = isinstance(values[0], bool)
    if op == "$in":
        if booleans:
            return _join("$or", [{field: {"$eq": v}} for v in values])
        return {field: {"$in": values}}
    if op == "$nin":
        if booleans:
            return {"$or": [_missing(field),
                            _join("$and", [{field: {"$ne": v}} for v in values])]}
        return {"$or": [_missing(field), {field: {"$nin": values}}]}
    # $all: every value present (a scalar field matches only $all of itself)
    return _join("$and", [{field: {"$eq": v}} for v in values])


def _negated(node: Condition) -> PineconeFilter:
    field, op = node.field, node.op
    if op in _RANGE:
        bound = _range_operand(node)
        return {"$or": [
            _missing(field),
            {NUMBER_KEYS: {"$exists": False}},
            {NUMBER_KEYS: {"$ne": field}},
            {field: {_COMPLEMENT[op]: bound}},
        ]}
    if op == "$all":
        assert isinstance(node.value, tuple)
        values = list(dict.fromkeys(node.value))
        for item in values:
            _number_check(item, "$all")
        return {"$or": [_missing(field)] + [{field: {"$ne": v}} for v in values]}
    raise UnsupportedFeatureError(BACKEND, "$not", f"cannot negate {op}")  # not in NNF


__all__ = ["PineconeFilter", "compile_filter"]

"""Compile the filter AST (CONTRACT §2) to a Chroma ``where``, exactly or not at all.

What Chroma 1.5's ``where`` does, as measured on the engine (``tests/backends/chroma/test_filters.py``
checks every rule below against the oracle, in process and through the server):

- ``$eq``/``$ne``/``$in``/``$nin`` keep the kind rules: ``1`` matches ``1`` and ``1.0``,
  never ``True`` or ``"1"``. ``$ne``/``$nin`` match records without the key.
- On a list field ``$eq``/``$in`` match nothing and ``$ne``/``$nin`` match everything;
  list membership is ``$contains``/``$not_contains``, which never match a scalar field
  and (``$not_contains``) match records without the key. So a string ``$eq v`` becomes
  ``$eq v OR $contains v``, and ``$ne v`` becomes ``$ne v AND $not_contains v``.
- ``$gt``/``$gte``/``$lt``/``$lte`` take only numbers (a string operand is refused) and
  never match bools, strings or lists.
- An int field is compared with a float operand truncated to an integer
  (``0 >= 0.5`` holds), and a float field with an int operand rounded to a double
  (``9007199254740996.0 == 9007199254740995`` holds). An int operand of magnitude at
  most 2**53 is exact for both kinds and is sent as is (an integral float operand is
  sent as that int). Any other operand is split by the stored kind using the reserved
  lists of :mod:`vectorport.adapters.chroma.layout`: ints get an exactly equivalent
  integer bound, floats an exactly equivalent double bound.
- There is no ``$exists``, ``$not`` or ``$nor``: ``$exists`` uses the reserved lists,
  and negations are pushed to the leaves (:func:`to_nnf`), where every leaf has an exact
  complement (a negated range is "the complementary range, or not a number").

String ranges (``{"genre": {"$gt": "d"}}``) cannot be expressed and raise
:class:`UnsupportedFeatureError` before any I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from vectorport import adapterkit as kit
from vectorport.adapterkit import (
    RANGE_OPERATORS,
    And,
    Condition,
    Filter,
    Nor,
    Not,
    Or,
    Scalar,
    UnsupportedFeatureError,
    to_nnf,
    walk,
)
from vectorport.adapters.chroma.layout import CURRENT, KINDS, LISTS, Layout

BACKEND = "chroma"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
EXACT_INT_LIMIT = 2**53
"""Ints up to this magnitude are exact as doubles: such an operand is exact on both kinds."""

Where: TypeAlias = dict[str, Any]
Clause: TypeAlias = "Where | bool"
"""A compiled clause; ``True``/``False`` are constants folded away before Chroma sees them."""

_COMPLEMENT_RANGE = {"$gt": "$lte", "$gte": "$lt", "$lt": "$gte", "$lte": "$gt"}
_NEGATE_ATOM = {"$eq": "$ne", "$ne": "$eq", **_COMPLEMENT_RANGE}


@dataclass(frozen=True, slots=True)
class CompiledFilter:
    """A Chroma ``where`` (``None``: no condition), or a filter that matches nothing."""

    where: Where | None
    matches_nothing: bool = False

    @property
    def matches_everything(self) -> bool:
        return self.where is None and not self.matches_nothing


MATCH_ALL = CompiledFilter(None)
MATCH_NONE = CompiledFilter(None, matches_nothing=True)


class _Compiler(kit.FilterCompiler[CompiledFilter]):
    """Compiles for one record layout (the reserved lists differ, nothing else)."""

    def __init__(self, layout: Layout) -> None:
        super().__init__()
        self.layout = layout

    def build(self, node: Filter) -> CompiledFilter:
        return _finish(_compile(self.layout, to_nnf(node)))


_COMPILERS = {layout.version: _Compiler(layout) for layout in (KINDS, LISTS)}
_COMPILER = _COMPILERS[CURRENT.version]
"""The current layout's compiler (whose ``cache_clear`` the filter benchmark finds)."""


def compile_filter(node: Filter | None, layout: Layout = CURRENT) -> CompiledFilter:
    """The exact Chroma form of ``node`` over records in ``layout``;
    ``UnsupportedFeatureError`` if there is none (the same for every layout).
    Memoised: the result is shared, callers must not change its ``where``."""
    return MATCH_ALL if node is None else _COMPILERS[layout.version].compile(node)


def refuses(node: Filter | None) -> bool:
    """Whether :func:`compile_filter` refuses ``node`` (it holds a string range), for
    conformance bindings and callers that want to know before they ask."""
    return node is not None and any(
        isinstance(n, Condition) and n.op in RANGE_OPERATORS and isinstance(n.value, str)
        for n in walk(node)
    )


def combine(*filters: CompiledFilter) -> CompiledFilter:
    """The conjunction of compiled filters."""
    clauses: list[Clause] = []
    for compiled in filters:
        if compiled.matches_nothing:
            return MATCH_NONE
        if compiled.where is not None:
            clauses.append(compiled.where)
    return _finish(_all(clauses))


def _finish(clause: Clause) -> CompiledFilter:
    if clause is True:
        return MATCH_ALL
    if clause is False:
        return MATCH_NONE
    assert isinstance(clause, dict)
    return CompiledFilter(clause)


# -- boolean structure, with constant folding ------------------------------------------


def _all(clauses: Sequence[Clause]) -> Clause:
    kept: list[Where] = []
    for clause in clauses:
        if clause is False:
            return False
        if clause is not True:
            assert isinstance(clause, dict)
            kept.extend(clause["$and"] if set(clause) == {"$and"} else [clause])
    if not kept:
        return True
    return kept[0] if len(kept) == 1 else {"$and": kept}


def _any(clauses: Sequence[Clause]) -> Clause:
    kept: list[Where] = []
    for clause in clauses:
        if clause is True:
            return True
        if clause is not False:
            assert isinstance(clause, dict)
            kept.extend(clause["$or"] if set(clause) == {"$or"} else [clause])
    if not kept:
        return False
    return kept[0] if len(kept) == 1 else {"$or": kept}


def _compile(lay: Layout, node: Filter) -> Clause:
    if isinstance(node, Condition):
        return _condition(lay, node)
    if isinstance(node, And):
        return _all([_compile(lay, child) for child in node.children])
    if isinstance(node, Or):
        return _any([_compile(lay, child) for child in node.children])
    if isinstance(node, Not) and isinstance(node.child, Condition):
        return _negated_condition(lay, node.child)
    # to_nnf leaves no Nor, and Not only directly over a range or $all condition.
    assert not isinstance(node, (Nor, Not)), f"not in negation normal form: {node!r}"
    raise AssertionError(f"unknown filter node {node!r}")


# -- leaves -----------------------------------------------------------------------------


def _condition(lay: Layout, node: Condition) -> Clause:
    field, op, value = node.field, node.op, node.value
    if op == "$exists":
        return lay.has_key(field, bool(value))
    if op == "$eq":
        return _eq(lay, field, _scalar(value))
    if op == "$ne":
        return _ne(lay, field, _scalar(value))
    if op == "$in":
        return _in(lay, field, _values(value))
    if op == "$nin":
        return _nin(lay, field, _values(value))
    if op == "$all":
        return _all([_eq(lay, field, v) for v in _unique(_values(value))])
    if op in RANGE_OPERATORS:
        return _number(lay, field, op, _number_operand(op, value))
    raise UnsupportedFeatureError(BACKEND, f"filter operator {op}")


def _negated_condition(lay: Layout, node: Condition) -> Clause:
    field, op, value = node.field, node.op, node.value
    if op == "$all":
        return _any([_ne(lay, field, v) for v in _unique(_values(value))])
    if op in RANGE_OPERATORS:
        operand = _number_operand(op, value)
        return _any([_number(lay, field, _COMPLEMENT_RANGE[op], operand),
                     _not_a_number(lay, field)])
    # to_nnf rewrites every other negated leaf into its complement.
    raise AssertionError(f"unexpected negated condition {node!r}")


def _eq(lay: Layout, field: str, value: Scalar) -> Clause:
    if isinstance(value, bool):
        return {field: {"$eq": value}}
    if isinstance(value, str):
        return _any([{field: {"$eq": value}}, {field: {"$contains": value}}])
    return _number(lay, field, "$eq", value)


def _ne(lay: Layout, field: str, value: Scalar) -> Clause:
    if isinstance(value, bool):
        return {field: {"$ne": value}}
    if isinstance(value, str):
        return _all([{field: {"$ne": value}}, {field: {"$not_contains": value}}])
    return _number(lay, field, "$ne", value)


def _in(lay: Layout, field: str, values: tuple[Scalar, ...]) -> Clause:
    first = values[0]
    if isinstance(first, bool):
        return {field: {"$in": list(_unique(values))}}
    if isinstance(first, str):
        strings = list(_unique(values))
        return _any([{field: {"$in": strings}},
                     *({field: {"$contains": s}} for s in strings)])
    exact, rest = _split_numbers(values)
    return _any([{field: {"$in": exact}} if exact else False,
                 *(_number(lay, field, "$eq", v) for v in rest)])


def _nin(lay: Layout, field: str, values: tuple[Scalar, ...]) -> Clause:
    first = values[0]
    if isinstance(first, bool):
        return {field: {"$nin": list(_unique(values))}}
    if isinstance(first, str):
        strings = list(_unique(values))
        return _all([{field: {"$nin": strings}},
                     *({field: {"$not_contains": s}} for s in strings)])
    exact, rest = _split_numbers(values)
    return _all([{field: {"$nin": exact}} if exact else True,
                 *(_number(lay, field, "$ne", v) for v in rest)])


def _not_a_number(lay: Layout, field: str) -> Clause:
    return _all([lay.holds(field, "int", False), lay.holds(field, "float", False)])


# -- numbers ----------------------------------------------------------------------------


def _number(lay: Layout, field: str, op: str, value: int | float) -> Clause:
    """``field op value`` for a number (``op`` is ``$eq $ne $gt $gte $lt $lte``), exact.

    An int of magnitude ≤ 2**53 (or an integral float that is one) is exact against
    both stored kinds. Any other operand is split by the stored kind.
    """
    exact = _exact_int(value)
    if exact is not None:
        return {field: {op: exact}}
    if op == "$ne":
        # Not ($eq): a record matches unless it holds a number equal to value.
        return _all([
            _any([lay.holds(field, "int", False), _atom(field, _int_atom("$ne", value))]),
            _any([lay.holds(field, "float", False), _atom(field, _float_atom("$ne", value))]),
        ])
    return _any([
        _all([lay.holds(field, "int", True), _atom(field, _int_atom(op, value))]),
        _all([lay.holds(field, "float", True), _atom(field, _float_atom(op, value))]),
    ])


Atom: TypeAlias = "tuple[str, int | float] | bool"
"""An operator and operand for one stored kind, or a constant."""


def _atom(field: str, atom: Atom) -> Clause:
    if isinstance(atom, bool):
        return atom
    op, operand = atom
    return {field: {op: operand}}


def _negate(atom: Atom) -> Atom:
    if isinstance(atom, bool):
        return not atom
    op, operand = atom
    return _NEGATE_ATOM[op], operand


def _int_atom(op: str, value: int | float) -> Atom:
    """For int64 ``x``: an int operand with ``x op' b  ⇔  x op value``, or a constant."""
    if op == "$ne":
        return _negate(_int_atom("$eq", value))
    if op == "$eq":
        if isinstance(value, float) and not value.is_integer():
            return False
        whole = int(value)
        return ("$eq", whole) if INT64_MIN <= whole <= INT64_MAX else False
    if op in ("$gt", "$gte"):
        bound = math.floor(value) + 1 if op == "$gt" else math.ceil(value)  # x >= bound
        if bound > INT64_MAX:
            return False
        return True if bound <= INT64_MIN else ("$gte", bound)
    bound = math.ceil(value) - 1 if op == "$lt" else math.floor(value)  # x <= bound
    if bound < INT64_MIN:
        return False
    return True if bound >= INT64_MAX else ("$lte", bound)


def _float_atom(op: str, value: int | float) -> Atom:
    """For a double ``x``: a float operand with ``x op' u  ⇔  x op value``, or a constant.

    A float ``value`` is its own operand. For an int, ``u = float(value)`` is the
    nearest double, so no double lies strictly between ``value`` and ``u``: a strict
    bound on one side of ``u`` becomes inclusive, or an inclusive one strict.
    """
    if op == "$ne":
        return _negate(_float_atom("$eq", value))
    if isinstance(value, float):
        return op, value
    nearest = float(value)
    if op == "$eq":
        return ("$eq", nearest) if nearest == value else False
    if nearest == value:
        return op, nearest
    above = nearest > value
    adjusted = {
        "$gt": "$gte" if above else "$gt",
        "$gte": "$gte" if above else "$gt",
        "$lt": "$lt" if above else "$lte",
        "$lte": "$lt" if above else "$lte",
    }[op]
    return adjusted, nearest


def _exact_int(value: Scalar) -> int | None:
    """``value`` as an int operand exact against ints and doubles alike, if it is one."""
    if isinstance(value, (bool, str)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    whole = int(value)
    return whole if -EXACT_INT_LIMIT <= whole <= EXACT_INT_LIMIT else None


def _split_numbers(values: Sequence[Scalar]) -> tuple[list[int], list[int | float]]:
    """Numbers as int operands exact on both stored kinds, and the rest."""
    exact: list[int] = []
    rest: list[int | float] = []
    for value in _unique(values):
        assert isinstance(value, (int, float)) and not isinstance(value, bool)
        whole = _exact_int(value)
        if whole is None:
            rest.append(value)
        elif whole not in exact:
            exact.append(whole)
    return exact, rest


# -- operands ---------------------------------------------------------------------------


def _scalar(value: Scalar | tuple[Scalar, ...]) -> Scalar:
    assert not isinstance(value, tuple)
    return value


def _values(value: Scalar | tuple[Scalar, ...]) -> tuple[Scalar, ...]:
    assert isinstance(value, tuple) and value
    return value


def _number_operand(op: str, value: Scalar | tuple[Scalar, ...]) -> int | float:
    if isinstance(value, str):
        raise UnsupportedFeatureError(
            BACKEND, f"filter operator {op} with a string operand",
            "Chroma compares only numbers with $gt, $gte, $lt and $lte",
        )
    assert isinstance(value, (int, float)) and not isinstance(value, bool)
    return value


def _unique(values: Sequence[Scalar]) -> tuple[Scalar, ...]:
    """Distinct values, kind-aware (``1`` and ``True`` are different)."""
    seen: list[Scalar] = []
    for value in values:
        if not any(type(value) is type(s) and value == s for s in seen):
            seen.append(value)
    return tuple(seen)


__all__ = ["MATCH_ALL", "MATCH_NONE", "CompiledFilter", "combine", "compile_filter", "refuses"]

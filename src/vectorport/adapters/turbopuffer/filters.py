"""Compile the filter AST into turbopuffer's array filters, exactly (CONTRACT §2).

Each field is stored in typed columns (see :mod:`.naming`), so a condition becomes an
``Or`` over the columns whose kind it can match: ``{"year": 2020}`` is
``["Or", [["i__year", "Eq", 2020], ["f__year", "Eq", 2020.0]]]``, and a str operand also
looks inside the list column with ``Contains``. The rules of the contract then follow
from turbopuffer's documented semantics:

- a missing field is ``null`` in every column, and ``Eq`` / ``In`` / ``Contains`` never
  match ``null``, so equality needs no extra clause; ``$ne``, ``$nin`` and ``$not`` are
  ``Not`` over the positive form, which therefore *keeps* records without the field;
- ``Lt`` / ``Lte`` (and ``AnyLt`` / ``AnyLte``) match ``null``, so every range clause is
  paired with ``[column, "NotEq", null]``;
- kinds never mix: an int operand meets the int and float columns (converted exactly,
  for instance ``> 2020.5`` on ints is ``> 2020``; an int that is not a float value
  matches no float), a bool only the bool column, a str the string and list columns;
- ``$exists`` is "some column of the field is not null".

Only columns present in the namespace schema are named (turbopuffer may reject
unknown attributes); a column that does not exist holds ``null`` everywhere, so its
clauses fold to constants. Compilation therefore returns a filter, or ``True`` / ``False``
when the whole filter folds away. Values travel as JSON values inside the filter array,
never spliced into any text.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from typing import Any, TypeAlias

from vectorport import adapterkit as kit
from vectorport.adapterkit import And, Condition, Filter, Nor, Or, Scalar
from vectorport.adapters.turbopuffer.naming import column
from vectorport.core.validation import INT64_MAX, INT64_MIN

NativeFilter: TypeAlias = list[Any]
Compiled: TypeAlias = NativeFilter | bool
"""A turbopuffer filter, or a constant when the filter folds (``True`` = everything)."""

_RANGE_OPS = {"$gt": "Gt", "$gte": "Gte", "$lt": "Lt", "$lte": "Lte"}


def _combine(children: Iterable[Compiled], word: str, absorbing: bool) -> Compiled:
    """``And`` (absorbed by False) or ``Or`` (absorbed by True), folding constants."""
    kept: list[NativeFilter] = []
    for child in children:
        if isinstance(child, bool):
            if child is absorbing:
                return absorbing
            continue  # the identity constant drops out
        kept.append(child)
    if not kept:
        return not absorbing
    return kept[0] if len(kept) == 1 else [word, kept]


def conjunction(children: Iterable[Compiled]) -> Compiled:
    return _combine(children, "And", absorbing=False)


def disjunction(children: Iterable[Compiled]) -> Compiled:
    return _combine(children, "Or", absorbing=True)


def negation(child: Compiled) -> Compiled:
    if isinstance(child, bool):
        return not child
    if child[0] == "Not":
        return child[1]  # type: ignore[no-any-return]
    return ["Not", child]


def _int_bound(op: str, value: float) -> tuple[str, int] | bool:
    """``x op value`` for an integer column, as an integer comparison (or a constant)."""
    bound = math.floor(value) if op in ("Gt", "Lte") else math.ceil(value)
    if bound > INT64_MAX:
        return op in ("Lt", "Lte")
    if bound < INT64_MIN:
        return op in ("Gt", "Gte")
    return op, bound


def _float_bound(op: str, value: int) -> tuple[str, float]:
    """``x op value`` for a float column and an int operand, exactly: an int that is
    not a float value lies strictly between two neighbouring floats."""
    nearest = float(value)
    if nearest == value:
        return op, nearest
    if nearest > value:
        upper, lower = nearest, math.nextafter(nearest, -math.inf)
    else:
        lower, upper = nearest, math.nextafter(nearest, math.inf)
    if op in ("Gt", "Gte"):
        return "Gte", upper
    return "Lte", lower


class FilterCompiler(kit.FilterCompiler[Compiled]):
    """Compiles ASTs for one namespace, knowing which columns its schema has; memoised
    per instance (the adapter keeps one instance per column set)."""

    def __init__(self, columns: Collection[str]) -> None:
        super().__init__()
        self.columns = columns

    def has(self, kind: str, field: str) -> str | None:
        name = column(kind, field)
        return name if name in self.columns else None

    def compile(self, node: Filter | None) -> Compiled:
        return True if node is None else super().compile(node)

    def build(self, node: Filter) -> Compiled:
        if isinstance(node, Condition):
            return self.condition(node)
        if isinstance(node, And):
            return conjunction(self.build(c) for c in node.children)
        if isinstance(node, Or):
            return disjunction(self.build(c) for c in node.children)
        if isinstance(node, Nor):
            return negation(disjunction(self.build(c) for c in node.children))
        return negation(self.build(node.child))

    # -- conditions ---------------------------------------------------------------

    def condition(self, node: Condition) -> Compiled:
        field, op, value = node.field, node.op, node.value
        if op == "$exists":
            present = self.exists(field)
            return present if value else negation(present)
        if op == "$eq":
            return self.eq(field, value)  # type: ignore[arg-type]
        if op == "$ne":
            return negation(self.eq(field, value))  # type: ignore[arg-type]
        if op == "$in":
            return self.in_(field, value)  # type: ignore[arg-type]
        if op == "$nin":
            return negation(self.in_(field, value))  # type: ignore[arg-type]
        if op == "$all":
            return self.all_(field, value)  # type: ignore[arg-type]
        return self.range(field, _RANGE_OPS[op], value)  # type: ignore[arg-type]

    def exists(self, field: str) -> Compiled:
        return disjunction(
            [name, "NotEq", None]
            for kind in ("s", "i", "f", "b", "l")
            if (name := self.has(kind, field)) is not None
        )

    def eq(self, field: str, value: Scalar) -> Compiled:
        if isinstance(value, str):
            parts: list[Compiled] = []
            if (s := self.has("s", field)) is not None:
                parts.append([s, "Eq", value])
            if (lst := self.has("l", field)) is not None:
                parts.append([lst, "Contains", value])
            return disjunction(parts)
        if isinstance(value, bool):
            b = self.has("b", field)
            return [b, "Eq", value] if b is not None else False
        return disjunction([self._int_eq(field, value), self._float_eq(field, value)])

    def _int_eq(self, field: str, value: int | float) -> Compiled:
        i = self.has("i", field)
        if i is None:
            return False
        if isinstance(value, float):
            if not value.is_integer() or not INT64_MIN <= value <= INT64_MAX:
                return False
            return [i, "Eq", int(value)]
        return [i, "Eq", value]

    def _float_eq(self, field: str, value: int | float) -> Compiled:
        f = self.has("f", field)
        if f is None:
            return False
        if isinstance(value, int) and float(value) != value:
            return False  # no float equals this int exactly
        return [f, "Eq", float(value)]

    def in_(self, field: str, values: tuple[Scalar, ...]) -> Compiled:
        first = values[0]
        if isinstance(first, str):
            strings = list(dict.fromkeys(values))
            parts: list[Compiled] = []
            if (s := self.has("s", field)) is not None:
                parts.append([s, "In", strings])
            if (lst := self.has("l", field)) is not None:
                parts.append([lst, "ContainsAny", strings])
            return disjunction(parts)
        if isinstance(first, bool):
            b = self.has("b", field)
            return [b, "In", list(dict.fromkeys(values))] if b is not None else False
        ints: list[int] = []
        floats: list[float] = []
        for v in values:
            as_int = self._int_eq(field, v)  # type: ignore[arg-type]
            if isinstance(as_int, list):
                ints.append(as_int[2])
            as_float = self._float_eq(field, v)  # type: ignore[arg-type]
            if isinstance(as_float, list):
                floats.append(as_float[2])
        parts = []
        if ints:
            parts.append([self.has("i", field), "In", list(dict.fromkeys(ints))])
        if floats:
            parts.append([self.has("f", field), "In", list(dict.fromkeys(floats))])
        return disjunction(parts)

    def all_(self, field: str, values: tuple[Scalar, ...]) -> Compiled:
        if isinstance(values[0], str):
            in_list: Compiled = False
            if (lst := self.has("l", field)) is not None:
                in_list = conjunction([lst, "Contains", v] for v in values)
            in_scalar: Compiled = False
            if (s := self.has("s", field)) is not None:
                in_scalar = conjunction([s, "Eq", v] for v in values)
            return disjunction([in_list, in_scalar])
        return conjunction(self.eq(field, v) for v in values)

    def range(self, field: str, op: str, value: int | float | str) -> Compiled:
        parts: list[Compiled] = []
        if isinstance(value, str):
            if (s := self.has("s", field)) is not None:
                parts.append(_guarded(s, [s, op, value]))
            if (lst := self.has("l", field)) is not None:
                parts.append(_guarded(lst, [lst, "Any" + op, value]))
            return disjunction(parts)
        if (i := self.has("i", field)) is not None:
            if isinstance(value, int):
                parts.append(_guarded(i, [i, op, value]))
            else:
                bound = _int_bound(op, value)
                if isinstance(bound, bool):
                    parts.append([i, "NotEq", None] if bound else False)
                else:
                    parts.append(_guarded(i, [i, bound[0], bound[1]]))
        if (f := self.has("f", field)) is not None:
            if isinstance(value, float):
                parts.append(_guarded(f, [f, op, value]))
            else:
                f_op, f_value = _float_bound(op, value)
                parts.append(_guarded(f, [f, f_op, f_value]))
        return disjunction(parts)


def _guarded(name: str, clause: NativeFilter) -> NativeFilter:
    """Ranges never match a missing value, but turbopuffer's ``Lt`` / ``Lte`` (and their
    ``Any`` forms) do: those get a ``NotEq null`` partner."""
    if clause[1] in ("Gt", "Gte", "AnyGt", "AnyGte"):
        return clause
    return ["And", [[name, "NotEq", None], clause]]

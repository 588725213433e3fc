"""Compile the filter AST (CONTRACT §2) to a LanceDB SQL ``where`` expression.

The expression runs over the layout of :mod:`.codec`:

- string equality, ``$in`` and ``$all`` (on strings and on list fields alike) and
  ``$exists`` test the ``tokens`` list with ``array_has`` / ``array_has_any`` /
  ``array_has_all``: a scalar string ``v`` and a list containing ``v`` both hold the
  token ``k=v``, which is exactly the contract's "equals, or for a list contains";
- numbers read ``meta``'s ``i_k`` (ints, as Int64) and ``f_k`` (floats, as Float64)
  and bools ``b_k``; string ranges read ``s_k`` and, for lists, the smallest
  (``a_k``) or largest (``z_k``) element, since "some element > v" is "largest > v".

Kinds hold by construction: a number condition never reads a bool or string key.
Numbers compare exactly across int and float (``1 == 1.0``, ``2**53 + 1 != 2.0**53``):
an int is compared only with ints (a float operand becomes the exact integer bound,
``x > 2.5`` is ``x >= 3``), a float only with floats (an int operand that no float
equals becomes the neighbouring floats). Nothing is ever read through a lossy cast.

Every leaf is two-valued: a JSON read of a missing key is NULL, so each comparison is
wrapped in ``coalesce(…, FALSE)``, and ``array_has`` on the never-null ``tokens`` is
never NULL. ``NOT`` is then the exact complement, and ``$ne``/``$nin``/``$not``/
``$nor`` keep the records without the field, as the contract wants.

Every literal goes through :mod:`.escaping`. Every valid AST compiles: no operator is
refused.
"""

from __future__ import annotations

import math

from vectorport.adapterkit import FilterCompiler
from vectorport.adapters.lancedb import codec
from vectorport.adapters.lancedb.escaping import (
    INT64_MAX,
    INT64_MIN,
    identifier,
    quote_string,
    render_bool,
    render_float,
    render_int,
    render_strings,
)
from vectorport.core.filters.ast import And, Condition, Filter, Nor, Not, Or, Scalar

BACKEND = "lancedb"
FALSE = "FALSE"
_SYMBOLS = {"$eq": "=", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def _any(parts: list[str]) -> str:
    parts = [p for p in parts if p != FALSE] or [FALSE]
    return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"


def _all(parts: list[str]) -> str:
    if FALSE in parts:
        return FALSE
    return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"


def _not(expr: str) -> str:
    return f"(NOT {expr})"


def _json(function: str, kind: str, field: str) -> str:
    return f"{function}({identifier(codec.META)}, {quote_string(codec.tagged(kind, field))})"


def _guarded(read: str, symbol: str, literal: str) -> str:
    """``read <symbol> literal``, FALSE instead of NULL when the key is missing."""
    return f"coalesce({read} {symbol} {literal}, FALSE)"


def _tokens() -> str:
    return identifier(codec.TOKENS)


# -- numbers ------------------------------------------------------------------------


def _int_side(field: str, op: str, value: int | float) -> str:
    """The condition on the field's int value, with an exact integer operand."""
    read = _json("json_get_int", codec.INT, field)
    if op == "$eq":
        if isinstance(value, float) and not value.is_integer():
            return FALSE
        n = int(value)
        return _guarded(read, "=", render_int(n)) if INT64_MIN <= n <= INT64_MAX else FALSE
    if op in ("$gt", "$gte"):  # x > v ⇔ x >= floor(v) + 1;  x >= v ⇔ x >= ceil(v)
        low = math.floor(value) + 1 if op == "$gt" else math.ceil(value)
        if low > INT64_MAX:
            return FALSE
        return _guarded(read, ">=", render_int(max(low, INT64_MIN)))
    high = math.ceil(value) - 1 if op == "$lt" else math.floor(value)
    if high < INT64_MIN:
        return FALSE
    return _guarded(read, "<=", render_int(min(high, INT64_MAX)))


def _float_neighbours(value: int) -> tuple[float, float] | None:
    """The floats just below and above an int that no float equals; ``None`` when
    ``float(value)`` is exact."""
    try:
        nearest = float(value)
    except OverflowError:
        return (math.inf, math.inf) if value > 0 else (-math.inf, -math.inf)
    if int(nearest) == value:
        return None
    if nearest > value:
        return math.nextafter(nearest, -math.inf), nearest
    return nearest, math.nextafter(nearest, math.inf)


def _float_side(field: str, op: str, value: int | float) -> str:
    """The condition on the field's float value, exact for int operands too."""
    read = _json("json_get_float", codec.FLOAT, field)
    if isinstance(value, float):
        return _guarded(read, _SYMBOLS[op], render_float(value))
    neighbours = _float_neighbours(value)
    if neighbours is None:
        return _guarded(read, _SYMBOLS[op], render_float(float(value)))
    below, above = neighbours
    present = f"({read} IS NOT NULL)"
    if op == "$eq":
        return FALSE
    if op in ("$gt", "$gte"):  # x > v ⇔ x >= the float just above v
        if math.isinf(above):
            return FALSE if above > 0 else present
        return _guarded(read, ">=", render_float(above))
    if math.isinf(below):  # x < v ⇔ x <= the float just below v
        return FALSE if below < 0 else present
    return _guarded(read, "<=", render_float(below))


def _number(field: str, op: str, value: int | float) -> str:
    return _any([_int_side(field, op, value), _float_side(field, op, value)])


# -- leaves ---------------------------------------------------------------------------


def _equals(field: str, value: Scalar) -> str:
    if isinstance(value, bool):
        return _guarded(_json("json_get_bool", codec.BOOL, field), "=", render_bool(value))
    if isinstance(value, (int, float)):
        return _number(field, "$eq", value)
    return f"array_has({_tokens()}, {quote_string(codec.value_token(field, value))})"


def _equals_any(field: str, values: tuple[Scalar, ...]) -> str:
    if isinstance(values[0], str) and not isinstance(values[0], bool):
        tokens = [codec.value_token(field, str(v)) for v in values]
        return f"array_has_any({_tokens()}, {render_strings(tokens)})"
    return _any([_equals(field, v) for v in values])


def _contains_all(field: str, values: tuple[Scalar, ...]) -> str:
    """``$all``: a list holds every value; a scalar only ``$all: [itself]``. Tokens give
    both: a scalar has one value token, so it holds all of them only when they agree."""
    if isinstance(values[0], str) and not isinstance(values[0], bool):
        tokens = [codec.value_token(field, str(v)) for v in values]
        return f"array_has_all({_tokens()}, {render_strings(tokens)})"
    return _all([_equals(field, v) for v in values])


def _string_range(field: str, op: str, value: str) -> str:
    symbol, literal = _SYMBOLS[op], quote_string(value)
    bound = codec.LIST_MAX if op in ("$gt", "$gte") else codec.LIST_MIN
    return _any([
        _guarded(_json("json_get_string", codec.STRING, field), symbol, literal),
        _guarded(_json("json_get_string", bound, field), symbol, literal),
    ])


def _condition(node: Condition) -> str:
    field, op, value = node.field, node.op, node.value
    if op == "$exists":
        present = f"array_has({_tokens()}, {quote_string(field)})"
        return present if value else _not(present)
    if op in ("$eq", "$ne"):
        expr = _equals(field, value)  # type: ignore[arg-type]
        return expr if op == "$eq" else _not(expr)
    if op in ("$in", "$nin"):
        expr = _equals_any(field, value)  # type: ignore[arg-type]
        return expr if op == "$in" else _not(expr)
    if op == "$all":
        return _contains_all(field, value)  # type: ignore[arg-type]
    if isinstance(value, str):
        return _string_range(field, op, value)
    return _number(field, op, value)  # type: ignore[arg-type]


def _compile(node: Filter) -> str:
    if isinstance(node, Condition):
        return _condition(node)
    if isinstance(node, And):
        return _all([_compile(c) for c in node.children])
    if isinstance(node, Or):
        return _any([_compile(c) for c in node.children])
    if isinstance(node, Nor):
        return _not(_any([_compile(c) for c in node.children]))
    assert isinstance(node, Not)
    return _not(_compile(node.child))


class _Compiler(FilterCompiler[str]):
    """Memoised by the adapter kit (keyed by the node's ``repr``, so ``True``, ``1`` and
    ``1.0`` filters never share a ``where``)."""

    cache_size = 1024

    def build(self, node: Filter) -> str:
        return _compile(node)


_COMPILER = _Compiler()


def compile_filter(node: Filter) -> str:
    """The ``where`` text matching exactly the records the oracle matches (memoised)."""
    return _COMPILER.compile(node)


def namespace_expression(namespace: str) -> str:
    return f"{identifier(codec.NAMESPACE)} = {quote_string(namespace)}"


def scoped(namespace: str, node: Filter | None, *extra: str) -> str:
    """The namespace condition, the compiled filter and any extra conditions, and-ed."""
    parts = [namespace_expression(namespace), *extra]
    if node is not None:
        parts.append(compile_filter(node))
    return " AND ".join(f"({p})" if p != parts[0] else p for p in parts)


def pk_in(pks: list[str]) -> str:
    return f"{identifier(codec.PK)} IN (" + ", ".join(quote_string(p) for p in pks) + ")"


__all__ = ["compile_filter", "namespace_expression", "pk_in", "scoped"]

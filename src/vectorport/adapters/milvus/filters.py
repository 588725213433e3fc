"""Compile the filter AST (CONTRACT §2) to a Milvus boolean expression.

The expression runs over the kind-tagged layout of :mod:`.layout`: a condition on a
number reads only ``meta["n:field"]``, on a bool only ``meta["b:field"]``, on a string
``meta["s:field"]`` and the list ``meta["l:field"]``. So the contract's kind rules hold
by construction (``True`` never meets ``1``, ``"1"`` never meets ``1``), whatever the
engine does when it compares values of different JSON types.

Every leaf is written to be two-valued: a comparison with a JSON key is always guarded
by ``exists`` on that key, and the ``json_contains*`` functions are false, not null, on
a missing key. Milvus evaluates a comparison with a missing key as null and ``not null``
as null (three-valued logic), so without the guards ``not (x == 1)`` would drop the
records without ``x``, which the contract's ``$ne``/``$nin``/``$not`` must keep. With
them, ``not`` is the exact complement and ``$and``/``$or``/``$nor``/``$not`` map directly.

Ranges over strings must match when *some element* of a list compares; that is the
list's largest element for ``>``/``>=`` and its smallest for ``<``/``<=``, kept in
``aux`` at write time.

Every literal goes through :mod:`.escaping`. Nothing the adapter cannot express exactly
is left: the compiler raises no ``UnsupportedFeatureError`` for any valid AST.
"""

from __future__ import annotations

from vectorport.adapters.milvus import layout
from vectorport.adapters.milvus.escaping import (
    json_path,
    quote_string,
    render_list,
    render_scalar,
)
from vectorport.core.filters.ast import And, Condition, Filter, Nor, Or, Scalar
from vectorport.core.filters.parse import kind_of

_RANGE_SYMBOLS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def _meta(kind: str, field: str) -> str:
    return json_path(layout.META, layout.tagged(kind, field))


def _aux(kind: str, field: str) -> str:
    return json_path(layout.AUX, layout.tagged(kind, field))


def _exists(path: str) -> str:
    return f"(exists {path})"


def _any(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else "(" + " or ".join(parts) + ")"


def _all(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else "(" + " and ".join(parts) + ")"


def _scalar_kind(value: Scalar) -> str:
    kind = kind_of(value)
    return {"bool": layout.BOOL, "number": layout.NUMBER, "string": layout.STRING}[kind]


def _compare(path: str, symbol: str, value: Scalar) -> str:
    return f"{path} {symbol} {render_scalar(value)}"


def _guarded(path: str, tests: list[str], join: str) -> str:
    """``exists path and (t1 <join> t2 …)``: two-valued, false when the key is absent."""
    inner = tests[0] if len(tests) == 1 else "(" + f" {join} ".join(tests) + ")"
    return f"({_exists(path)} and {inner})"


def _equals_any(field: str, values: tuple[Scalar, ...]) -> str:
    """``$in`` (and ``$eq`` with one value): the field equals one of the values, or
    for a list field shares one of them."""
    kind = _scalar_kind(values[0])
    path = _meta(kind, field)
    scalar = _guarded(path, [_compare(path, "==", v) for v in values], "or")
    if kind != layout.STRING:
        return scalar
    lists = _meta(layout.LIST, field)
    if len(values) == 1:
        member = f"json_contains({lists}, {render_scalar(values[0])})"
    else:
        member = f"json_contains_any({lists}, {render_list(values)})"
    return f"({scalar} or {member})"


def _contains_all(field: str, values: tuple[Scalar, ...]) -> str:
    """``$all``: a list field holds every value; a scalar field only ``$all: [itself]``."""
    kind = _scalar_kind(values[0])
    path = _meta(kind, field)
    scalar = _guarded(path, [_compare(path, "==", v) for v in values], "and")
    if kind != layout.STRING:
        return scalar
    lists = _meta(layout.LIST, field)
    return f"({scalar} or json_contains_all({lists}, {render_list(values)}))"


def _range(field: str, op: str, value: Scalar) -> str:
    symbol = _RANGE_SYMBOLS[op]
    kind = _scalar_kind(value)
    path = _meta(kind, field)
    scalar = _guarded(path, [_compare(path, symbol, value)], "and")
    if kind != layout.STRING:
        return scalar
    # Some element of a list compares: its largest one for > and >=, smallest for < and <=.
    bound = layout.LIST_MAX if op in ("$gt", "$gte") else layout.LIST_MIN
    parts = [scalar]
    for key in (bound, layout.LIST_ONLY):
        aux = _aux(key, field)
        parts.append(_guarded(aux, [_compare(aux, symbol, value)], "and"))
    return _any(parts)


def _exists_field(field: str) -> str:
    return _any([_exists(_meta(kind, field)) for kind in layout.KINDS])


def _condition(node: Condition) -> str:
    field, op, value = node.field, node.op, node.value
    if op == "$exists":
        present = _exists_field(field)
        return present if value else f"(not {present})"
    if op in ("$eq", "$ne"):
        expr = _equals_any(field, (value,))  # type: ignore[arg-type]
        return expr if op == "$eq" else f"(not {expr})"
    if op in ("$in", "$nin"):
        expr = _equals_any(field, value)  # type: ignore[arg-type]
        return expr if op == "$in" else f"(not {expr})"
    if op == "$all":
        return _contains_all(field, value)  # type: ignore[arg-type]
    return _range(field, op, value)  # type: ignore[arg-type]


def _compile(node: Filter) -> str:
    if isinstance(node, Condition):
        return _condition(node)
    if isinstance(node, And):
        return _all([_compile(c) for c in node.children])
    if isinstance(node, Or):
        return _any([_compile(c) for c in node.children])
    if isinstance(node, Nor):
        return f"(not {_any([_compile(c) for c in node.children])})"
    return f"(not {_compile(node.child)})"


def compile_filter(node: Filter) -> str:
    """The Milvus expression matching exactly the records the oracle matches.

    Not cached by node: AST nodes compare ``True == 1`` and ``1 == 1.0`` equal (and
    hash alike), so a cache keyed on them would hand a bool filter's expression to a
    number filter.
    """
    return _compile(node)


def namespace_expression(namespace: str) -> str:
    """Records of one namespace (the partition key field)."""
    return f"{layout.NAMESPACE} == {quote_string(namespace)}"


def scoped(namespace: str, node: Filter | None, *extra: str) -> str:
    """The namespace condition, the compiled filter and any extra conditions, and-ed."""
    parts = [namespace_expression(namespace), *extra]
    if node is not None:
        parts.append(compile_filter(node))
    return " and ".join(parts)


def pk_in(pks: list[str]) -> str:
    """Records whose primary key is one of ``pks``."""
    return f"{layout.PK} in [" + ", ".join(quote_string(p) for p in pks) + "]"


__all__ = ["compile_filter", "namespace_expression", "pk_in", "scoped"]

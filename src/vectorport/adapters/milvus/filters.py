"""Compile the filter AST (CONTRACT §2) to a Milvus boolean expression.

The expression runs over the kind-tagged layout of :mod:`.layout`: a condition on a
number reads only ``meta["n:field"]``, on a bool only ``meta["b:field"]``, on a string
``meta["s:field"]`` and the list ``meta["l:field"]``. So the contract's kind rules hold
by construction (``True`` never meets ``1``, ``"1"`` never meets ``1``), whatever the
engine does when it compares values of different JSON types.

Every leaf under a negation is written to be two-valued: a comparison with a JSON key
there is guarded by ``exists`` on that key, and the ``json_contains*`` functions are
false, not null, on a missing key. Milvus evaluates a comparison with a missing key as
null and ``not null`` as null (three-valued logic), so without the guards ``not (x ==
1)`` would drop the records without ``x``, which the contract's ``$ne``/``$nin``/
``$not`` must keep. With them, ``not`` is the exact complement and
``$and``/``$or``/``$nor``/``$not`` map directly.

A leaf under no negation, or under an even number of them (``$ne``, ``$nin``, ``$not``,
``$nor`` each count one), needs no guard: the connectives of three-valued logic are
monotone, so where a leaf counts positively a null there selects exactly the records
a false would (the expression is true with the null only if it is true with false, and
true with false only if with every value). And each guard costs a read: milvus-lite
evaluates a path into a JSON field record by record, parsing the field at each read, so
``{"g": 3}`` over 10,000 sealed rows searched in 410 ms guarded and 268 ms without.

Ranges over strings must match when *some element* of a list compares; that is the
list's largest element for ``>``/``>=`` and its smallest for ``<``/``<=``, kept in
``aux`` at write time, or, in collections of the :data:`.layout.BOUNDS_IN_META` layout
(``bounds_in_meta=True``), the list's own first elements: it is stored bounds first, so
``meta["l:field"][0]`` is the smallest and ``[1]`` the largest.

Every literal goes through :mod:`.escaping`. Nothing the adapter cannot express exactly
is left: on the current engine line the compiler raises no ``UnsupportedFeatureError``
for any valid AST.

Monotone dialect (``negation=False``, milvus-lite 2, see :mod:`.engine_line`): that engine
refuses ``exists`` and ``not``. Without ``not`` every expression is monotone in its
leaves, so an unguarded comparison with a missing key (false or null) can never turn
the whole expression true: the guards are dropped. ``$exists: true`` becomes one
comparison per kind that holds for every value of that kind (``n >= 0 or n < 0``,
``s >= ""``, ``b in [true, false]``, and for lists the smallest element kept in
``aux``). Negations (``$ne``, ``$nin``, ``$not``, ``$nor``, ``$exists: false``) raise
``UnsupportedFeatureError`` before any I/O.

With ``encoded=True`` (milvus-lite 2) string values are compared in the stored
encoding of :func:`.layout.encode_text`, which keeps equality, order and prefixes.
"""

from __future__ import annotations

from vectorport import adapterkit as kit
from vectorport.adapters.milvus import layout
from vectorport.adapters.milvus.escaping import (
    json_path,
    quote_string,
    render_list,
    render_scalar,
)
from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters.ast import And, Condition, Filter, Nor, Not, Or, Scalar
from vectorport.core.filters.parse import kind_of

BACKEND = "milvus"
INEXACT_NUMBERS = ("the Milvus C++ engine compares JSON numbers as 64-bit floats, which "
                   "cannot hold such a value exactly")

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


def _guarded(path: str, tests: list[str], join: str, guard: bool = True) -> str:
    """``exists path and (t1 <join> t2 …)``: two-valued, false when the key is absent.
    Where no guard is needed (a leaf counting positively, or the monotone dialect) the
    tests alone (see the module docstring)."""
    inner = tests[0] if len(tests) == 1 else "(" + f" {join} ".join(tests) + ")"
    if not guard:
        return inner
    return f"({_exists(path)} and {inner})"


def _equals_any(field: str, values: tuple[Scalar, ...], guard: bool = True) -> str:
    """``$in`` (and ``$eq`` with one value): the field equals one of the values, or
    for a list field shares one of them."""
    kind = _scalar_kind(values[0])
    path = _meta(kind, field)
    scalar = _guarded(path, [_compare(path, "==", v) for v in values], "or", guard)
    if kind != layout.STRING:
        return scalar
    lists = _meta(layout.LIST, field)
    if len(values) == 1:
        member = f"json_contains({lists}, {render_scalar(values[0])})"
    else:
        member = f"json_contains_any({lists}, {render_list(values)})"
    return f"({scalar} or {member})"


def _contains_all(field: str, values: tuple[Scalar, ...], guard: bool = True) -> str:
    """``$all``: a list field holds every value; a scalar field only ``$all: [itself]``."""
    kind = _scalar_kind(values[0])
    path = _meta(kind, field)
    scalar = _guarded(path, [_compare(path, "==", v) for v in values], "and", guard)
    if kind != layout.STRING:
        return scalar
    lists = _meta(layout.LIST, field)
    return f"({scalar} or json_contains_all({lists}, {render_list(values)}))"


def _range(field: str, op: str, value: Scalar, guard: bool = True,
           bounds_in_meta: bool = False) -> str:
    symbol = _RANGE_SYMBOLS[op]
    kind = _scalar_kind(value)
    path = _meta(kind, field)
    scalar = _guarded(path, [_compare(path, symbol, value)], "and", guard)
    if kind != layout.STRING:
        return scalar
    # Some element of a list compares: its largest one for > and >=, smallest for < and <=.
    largest = op in ("$gt", "$gte")
    if bounds_in_meta:
        return _any([scalar, _bounds_first(field, symbol, value, largest, guard)])
    bound = layout.LIST_MAX if largest else layout.LIST_MIN
    parts = [scalar]
    for key in (bound, layout.LIST_ONLY):
        aux = _aux(key, field)
        parts.append(_guarded(aux, [_compare(aux, symbol, value)], "and", guard))
    return _any(parts)


def _bounds_first(field: str, symbol: str, value: Scalar, largest: bool,
                  guard: bool) -> str:
    """The range over a list stored bounds first (:func:`.layout.bounds_first`): the
    smallest element at position 0, the largest at 1, or at 0 in a one-element list (no
    position 1). ``[0] > v or [1] > v`` is ``largest > v`` either way, as the smallest
    exceeding ``v`` means the largest does; with ``guard`` each position is guarded, so
    the leaf is two-valued."""
    items = _meta(layout.LIST, field)
    first = _compare(f"{items}[0]", symbol, value)
    if not largest:
        return _guarded(items, [first], "and", guard)
    second = _compare(f"{items}[1]", symbol, value)
    if guard:
        second = f"({_exists(f'{items}[1]')} and {second})"
    return _guarded(items, [f"({first} or {second})"], "and", guard)


def _exists_field(field: str) -> str:
    return _any([_exists(_meta(kind, field)) for kind in layout.KINDS])


def _present_field(field: str) -> str:
    """``$exists: true`` without ``exists``: per kind, a test every value passes.
    Lists are never empty, so each has a smallest element in ``aux``."""
    number = _meta(layout.NUMBER, field)
    return _any([
        f"({number} >= 0 or {number} < 0)",
        f"{_meta(layout.STRING, field)} >= {quote_string('')}",
        f"{_meta(layout.BOOL, field)} in [true, false]",
        f"{_aux(layout.LIST_MIN, field)} >= {quote_string('')}",
        f"{_aux(layout.LIST_ONLY, field)} >= {quote_string('')}",
    ])


def _no_negation(feature: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(
        BACKEND, f"{feature} (milvus-lite 2 has no negation in expressions)"
    )


def _condition(node: Condition, negation: bool, bounds_in_meta: bool = False,
               negated: bool = False) -> str:
    """``node`` in the dialect (``negation``: it has ``not``), under an odd number of
    negations when ``negated`` (its leaves then guarded: see the module docstring)."""
    field, op, value = node.field, node.op, node.value
    if not negation and (op in ("$ne", "$nin") or (op == "$exists" and not value)):
        raise _no_negation(op if op != "$exists" else "$exists: false")
    if op == "$exists":
        if not negation:
            return _present_field(field)
        present = _exists_field(field)
        return present if value else f"(not {present})"
    # $ne and $nin test under their own not: guarded when that not counts negatively
    guard = negation and (negated != (op in ("$ne", "$nin")))
    if op in ("$eq", "$ne"):
        expr = _equals_any(field, (value,), guard)  # type: ignore[arg-type]
        return expr if op == "$eq" else f"(not {expr})"
    if op in ("$in", "$nin"):
        expr = _equals_any(field, value, guard)  # type: ignore[arg-type]
        return expr if op == "$in" else f"(not {expr})"
    if op == "$all":
        return _contains_all(field, value, guard)  # type: ignore[arg-type]
    return _range(field, op, value, guard, bounds_in_meta)  # type: ignore[arg-type]


def _compile(node: Filter, negation: bool, bounds_in_meta: bool = False,
             negated: bool = False) -> str:
    if isinstance(node, Condition):
        return _condition(node, negation, bounds_in_meta, negated)
    if isinstance(node, And):
        return _all([_compile(c, negation, bounds_in_meta, negated) for c in node.children])
    if isinstance(node, Or):
        return _any([_compile(c, negation, bounds_in_meta, negated) for c in node.children])
    if not negation:
        raise _no_negation("$nor" if isinstance(node, Nor) else "$not")
    if isinstance(node, Nor):
        return "(not " + _any([_compile(c, negation, bounds_in_meta, not negated)
                               for c in node.children]) + ")"
    assert isinstance(node, Not)
    return f"(not {_compile(node.child, negation, bounds_in_meta, not negated)})"


def _encoded(node: Filter) -> Filter:
    """The same filter with every string value in its stored (encoded) form."""
    if isinstance(node, Condition):
        value = node.value
        if isinstance(value, str):
            return Condition(node.field, node.op, layout.encode_text(value))
        if isinstance(value, tuple):
            return Condition(node.field, node.op, tuple(
                layout.encode_text(v) if isinstance(v, str) else v for v in value))
        return node
    if isinstance(node, And):
        return And(tuple(_encoded(c) for c in node.children))
    if isinstance(node, Or):
        return Or(tuple(_encoded(c) for c in node.children))
    if isinstance(node, Nor):
        return Nor(tuple(_encoded(c) for c in node.children))
    return Not(_encoded(node.child))


class _Compiler(kit.FilterCompiler[str]):
    """One engine dialect's compiler; memoised by the kit (keyed by the node's ``repr``,
    so ``True``, ``1`` and ``1.0`` filters never share an expression)."""

    def __init__(self, negation: bool, encoded: bool, bounds_in_meta: bool,
                 exact_numbers: bool) -> None:
        super().__init__()
        self.negation = negation
        self.encoded = encoded
        self.bounds_in_meta = bounds_in_meta
        self.exact_numbers = exact_numbers

    def build(self, node: Filter) -> str:
        if not self.exact_numbers:
            kit.refuse_inexact_numbers(node, BACKEND, INEXACT_NUMBERS)
        return _compile(_encoded(node) if self.encoded else node, self.negation,
                        self.bounds_in_meta)


_COMPILERS = {(n, e, b, x): _Compiler(n, e, b, x) for n in (True, False)
              for e in (True, False) for b in (True, False) for x in (True, False)}


class _AllDialects:
    """The memo of every dialect, as one cache to clear (benchmarks time cold compiles)."""

    def clear(self) -> None:
        for compiler in _COMPILERS.values():
            compiler.cache_clear()


_cache = _AllDialects()


def compile_filter(node: Filter, *, negation: bool = True, encoded: bool = False,
                   bounds_in_meta: bool = False, exact_numbers: bool = True) -> str:
    """The Milvus expression matching exactly the records the oracle matches.

    ``negation=False`` compiles to the monotone dialect, ``encoded=True`` compares
    encoded strings, ``bounds_in_meta=True`` reads list bounds where the
    :data:`.layout.BOUNDS_IN_META` layout keeps them (see the module docstring), and
    ``exact_numbers=False`` refuses number operands of magnitude 2^53 or more (an engine
    comparing JSON numbers as float64, :mod:`.engine_line`).
    """
    return _COMPILERS[(negation, encoded, bounds_in_meta, exact_numbers)].compile(node)


def namespace_expression(namespace: str) -> str:
    """Records of one namespace (the ``ns`` field)."""
    return f"{layout.NAMESPACE} == {quote_string(namespace)}"


def other_namespaces_expression(namespace: str) -> str:
    """Records of any namespace but ``namespace`` (engines with negation only)."""
    return f"{layout.NAMESPACE} != {quote_string(namespace)}"


def scoped(namespace: str, node: Filter | None, *extra: str, negation: bool = True,
           encoded: bool = False, bounds_in_meta: bool = False,
           exact_numbers: bool = True) -> str:
    """The namespace condition, the compiled filter and any extra conditions, and-ed."""
    parts = [namespace_expression(namespace), *extra]
    if node is not None:
        parts.append(compile_filter(node, negation=negation, encoded=encoded,
                                    bounds_in_meta=bounds_in_meta,
                                    exact_numbers=exact_numbers))
    return " and ".join(parts)


def pk_in(pks: list[str]) -> str:
    """Records whose primary key is one of ``pks``."""
    return f"{layout.PK} in [" + ", ".join(quote_string(p) for p in pks) + "]"


def pk_not_in(pks: list[str], *, negation: bool = True) -> str:
    """Records whose primary key is none of ``pks`` (``not in`` needs no ``not (…)``,
    which milvus-lite 2 refuses)."""
    if negation:
        return f"(not ({pk_in(pks)}))"
    return f"{layout.PK} not in [" + ", ".join(quote_string(p) for p in pks) + "]"


__all__ = ["compile_filter", "namespace_expression", "pk_in", "pk_not_in", "scoped"]

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

Filter-keys dialect (``filter_keys=True``, collections of the
:data:`.layout.FILTER_KEYS` layout on milvus-lite 3): every key is read from the dynamic
field (``$meta["n:year"]``), never through a path into a list and never with
``json_contains``, so that milvus-lite evaluates the expression on columns rather than
record by record. A list holds a value when the record has the key
``e:field:value`` (``exists $meta["e:tags:red"]``: never null, so it needs no guard);
a range over a list reads the kept bounds (``$meta[">:tags"]``, ``$meta["<:tags"]``);
``$exists`` reads a list's smallest element. Such a key holds a filter value, which
``explain`` masks (:func:`.explain.mask_literals`).

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

from dataclasses import dataclass

from vectorport import adapterkit as kit
from vectorport.adapters.milvus import layout
from vectorport.adapters.milvus.escaping import (
    dynamic_key,
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


@dataclass(frozen=True)
class _Dialect:
    """What an expression may say and where it reads each tagged key: ``negation`` (the
    engine has ``not`` and ``exists``), ``bounds_in_meta`` (lists stored bounds first,
    :data:`.layout.BOUNDS_IN_META`) and ``filter_keys`` (the keys of
    :func:`.layout.filter_keys` in the dynamic field, :data:`.layout.FILTER_KEYS`)."""

    negation: bool = True
    bounds_in_meta: bool = False
    filter_keys: bool = False

    def key(self, kind: str, field: str) -> str:
        """The path of a tagged key of a record's metadata."""
        if self.filter_keys:
            return dynamic_key(layout.tagged(kind, field))
        return json_path(layout.META, layout.tagged(kind, field))

    def member(self, field: str, value: Scalar) -> str:
        """A test, never null, that the list field ``field`` holds ``value``."""
        if self.filter_keys:
            assert isinstance(value, str)  # lists hold strings only
            return _exists(dynamic_key(layout.member(field, value)))
        return f"json_contains({self.key(layout.LIST, field)}, {render_scalar(value)})"


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


def _equals_any(field: str, values: tuple[Scalar, ...], guard: bool,
                dialect: _Dialect) -> str:
    """``$in`` (and ``$eq`` with one value): the field equals one of the values, or
    for a list field shares one of them."""
    kind = _scalar_kind(values[0])
    path = dialect.key(kind, field)
    scalar = _guarded(path, [_compare(path, "==", v) for v in values], "or", guard)
    if kind != layout.STRING:
        return scalar
    if dialect.filter_keys or len(values) == 1:
        return _any([scalar, *(dialect.member(field, v) for v in values)])
    lists = dialect.key(layout.LIST, field)
    return f"({scalar} or json_contains_any({lists}, {render_list(values)}))"


def _contains_all(field: str, values: tuple[Scalar, ...], guard: bool,
                  dialect: _Dialect) -> str:
    """``$all``: a list field holds every value; a scalar field only ``$all: [itself]``."""
    kind = _scalar_kind(values[0])
    path = dialect.key(kind, field)
    scalar = _guarded(path, [_compare(path, "==", v) for v in values], "and", guard)
    if kind != layout.STRING:
        return scalar
    if dialect.filter_keys:
        return _any([scalar, _all([dialect.member(field, v) for v in values])])
    lists = dialect.key(layout.LIST, field)
    return f"({scalar} or json_contains_all({lists}, {render_list(values)}))"


def _range(field: str, op: str, value: Scalar, guard: bool, dialect: _Dialect) -> str:
    symbol = _RANGE_SYMBOLS[op]
    kind = _scalar_kind(value)
    path = dialect.key(kind, field)
    scalar = _guarded(path, [_compare(path, symbol, value)], "and", guard)
    if kind != layout.STRING:
        return scalar
    # Some element of a list compares: its largest one for > and >=, smallest for < and <=.
    largest = op in ("$gt", "$gte")
    bound = layout.LIST_MAX if largest else layout.LIST_MIN
    if dialect.filter_keys:
        kept = dialect.key(bound, field)
        return _any([scalar, _guarded(kept, [_compare(kept, symbol, value)], "and", guard)])
    if dialect.bounds_in_meta:
        return _any([scalar, _bounds_first(field, symbol, value, largest, guard, dialect)])
    parts = [scalar]
    for key in (bound, layout.LIST_ONLY):
        aux = _aux(key, field)
        parts.append(_guarded(aux, [_compare(aux, symbol, value)], "and", guard))
    return _any(parts)


def _bounds_first(field: str, symbol: str, value: Scalar, largest: bool,
                  guard: bool, dialect: _Dialect) -> str:
    """The range over a list stored bounds first (:func:`.layout.bounds_first`): the
    smallest element at position 0, the largest at 1, or at 0 in a one-element list (no
    position 1). ``[0] > v or [1] > v`` is ``largest > v`` either way, as the smallest
    exceeding ``v`` means the largest does; with ``guard`` each position is guarded, so
    the leaf is two-valued."""
    items = dialect.key(layout.LIST, field)
    first = _compare(f"{items}[0]", symbol, value)
    if not largest:
        return _guarded(items, [first], "and", guard)
    second = _compare(f"{items}[1]", symbol, value)
    if guard:
        second = f"({_exists(f'{items}[1]')} and {second})"
    return _guarded(items, [f"({first} or {second})"], "and", guard)


def _exists_field(field: str, dialect: _Dialect) -> str:
    # a list's presence by its smallest element: the list itself mixes strings and the
    # order int (bounds first), which Arrow cannot make a column of
    kinds = ((layout.STRING, layout.LIST_MIN, layout.NUMBER, layout.BOOL)
             if dialect.filter_keys else layout.KINDS)
    return _any([_exists(dialect.key(kind, field)) for kind in kinds])


def _present_field(field: str, dialect: _Dialect) -> str:
    """``$exists: true`` without ``exists``: per kind, a test every value passes.
    Lists are never empty, so each has a smallest element in ``aux``."""
    number = dialect.key(layout.NUMBER, field)
    return _any([
        f"({number} >= 0 or {number} < 0)",
        f"{dialect.key(layout.STRING, field)} >= {quote_string('')}",
        f"{dialect.key(layout.BOOL, field)} in [true, false]",
        f"{_aux(layout.LIST_MIN, field)} >= {quote_string('')}",
        f"{_aux(layout.LIST_ONLY, field)} >= {quote_string('')}",
    ])


def _no_negation(feature: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(
        BACKEND, f"{feature} (milvus-lite 2 has no negation in expressions)"
    )


def _condition(node: Condition, dialect: _Dialect, negated: bool = False) -> str:
    """``node`` in the dialect, under an odd number of negations when ``negated`` (its
    leaves then guarded: see the module docstring)."""
    field, op, value = node.field, node.op, node.value
    negation = dialect.negation
    if not negation and (op in ("$ne", "$nin") or (op == "$exists" and not value)):
        raise _no_negation(op if op != "$exists" else "$exists: false")
    if op == "$exists":
        if not negation:
            return _present_field(field, dialect)
        present = _exists_field(field, dialect)
        return present if value else f"(not {present})"
    # $ne and $nin test under their own not: guarded when that not counts negatively
    guard = negation and (negated != (op in ("$ne", "$nin")))
    if op in ("$eq", "$ne"):
        expr = _equals_any(field, (value,), guard, dialect)  # type: ignore[arg-type]
        return expr if op == "$eq" else f"(not {expr})"
    if op in ("$in", "$nin"):
        expr = _equals_any(field, value, guard, dialect)  # type: ignore[arg-type]
        return expr if op == "$in" else f"(not {expr})"
    if op == "$all":
        return _contains_all(field, value, guard, dialect)  # type: ignore[arg-type]
    return _range(field, op, value, guard, dialect)  # type: ignore[arg-type]


def _compile(node: Filter, dialect: _Dialect, negated: bool = False) -> str:
    if isinstance(node, Condition):
        return _condition(node, dialect, negated)
    if isinstance(node, And):
        return _all([_compile(c, dialect, negated) for c in node.children])
    if isinstance(node, Or):
        return _any([_compile(c, dialect, negated) for c in node.children])
    if not dialect.negation:
        raise _no_negation("$nor" if isinstance(node, Nor) else "$not")
    if isinstance(node, Nor):
        return "(not " + _any([_compile(c, dialect, not negated)
                               for c in node.children]) + ")"
    assert isinstance(node, Not)
    return f"(not {_compile(node.child, dialect, not negated)})"


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

    def __init__(self, dialect: _Dialect, encoded: bool, exact_numbers: bool) -> None:
        super().__init__()
        self.dialect = dialect
        self.encoded = encoded
        self.exact_numbers = exact_numbers

    def build(self, node: Filter) -> str:
        if not self.exact_numbers:
            kit.refuse_inexact_numbers(node, BACKEND, INEXACT_NUMBERS)
        return _compile(_encoded(node) if self.encoded else node, self.dialect)


_COMPILERS: dict[tuple[bool, bool, bool, bool, bool], _Compiler] = {}


def _compiler(negation: bool, encoded: bool, bounds_in_meta: bool, exact_numbers: bool,
              filter_keys: bool) -> _Compiler:
    key = (negation, encoded, bounds_in_meta, exact_numbers, filter_keys)
    compiler = _COMPILERS.get(key)
    if compiler is None:  # a race makes two, of which one is kept: both compile alike
        compiler = _COMPILERS.setdefault(key, _Compiler(
            _Dialect(negation, bounds_in_meta or filter_keys, filter_keys), encoded,
            exact_numbers))
    return compiler


class _AllDialects:
    """The memo of every dialect, as one cache to clear (benchmarks time cold compiles)."""

    def clear(self) -> None:
        for compiler in list(_COMPILERS.values()):
            compiler.cache_clear()


_cache = _AllDialects()


def compile_filter(node: Filter, *, negation: bool = True, encoded: bool = False,
                   bounds_in_meta: bool = False, exact_numbers: bool = True,
                   filter_keys: bool = False) -> str:
    """The Milvus expression matching exactly the records the oracle matches.

    ``negation=False`` compiles to the monotone dialect, ``encoded=True`` compares
    encoded strings, ``bounds_in_meta=True`` reads list bounds where the
    :data:`.layout.BOUNDS_IN_META` layout keeps them, ``filter_keys=True`` reads only the
    dynamic field's keys of the :data:`.layout.FILTER_KEYS` layout (see the module
    docstring), and ``exact_numbers=False`` refuses number operands of magnitude 2^53
    or more (an engine comparing JSON numbers as float64, :mod:`.engine_line`).
    """
    return _compiler(negation, encoded, bounds_in_meta, exact_numbers,
                     filter_keys).compile(node)


def namespace_expression(namespace: str) -> str:
    """Records of one namespace (the ``ns`` field)."""
    return f"{layout.NAMESPACE} == {quote_string(namespace)}"


def other_namespaces_expression(namespace: str) -> str:
    """Records of any namespace but ``namespace`` (engines with negation only)."""
    return f"{layout.NAMESPACE} != {quote_string(namespace)}"


def scoped(namespace: str, node: Filter | None, *extra: str, negation: bool = True,
           encoded: bool = False, bounds_in_meta: bool = False,
           exact_numbers: bool = True, filter_keys: bool = False) -> str:
    """The namespace condition, the compiled filter and any extra conditions, and-ed."""
    parts = [namespace_expression(namespace), *extra]
    if node is not None:
        parts.append(compile_filter(node, negation=negation, encoded=encoded,
                                    bounds_in_meta=bounds_in_meta,
                                    exact_numbers=exact_numbers, filter_keys=filter_keys))
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

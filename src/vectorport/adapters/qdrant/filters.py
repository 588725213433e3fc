"""Compile the contract's filter AST (CONTRACT §2) to Qdrant's filter.

The output is Qdrant's own filter document, as its REST API spells it (``must`` /
``should`` / ``must_not`` lists of conditions, conditions ``{"key", "match"}``,
``{"key", "range"}``, ``{"is_empty"}`` or a nested filter); :mod:`.engines` turn it
into the objects of qdrant-client or of qdrant-edge-py. One compiler, two SDKs.

Why the mapping is exact:

- Qdrant's positive conditions already have the contract's meaning: a condition on a
  field the record lacks is false, ``match`` on an array field matches when some
  element matches, ``match`` keeps kinds apart (a string never equals a number, a bool
  never equals a number), and ``range`` compares numbers only (ints and floats alike,
  never bools or strings). ``must_not`` is plain negation, so ``$ne``, ``$nin``,
  ``$not``, ``$nor`` and ``$exists: false`` need no extra clause: a record without
  the field does not match the inner condition, so it matches the negation.
- Numbers compare by value (``1 == 1.0``): number equality is ``range`` ``[v, v]``,
  which matches a stored int and a stored float alike (``match`` on ``1`` would miss a
  stored ``1.0``).
- ``$exists`` is ``must_not is_empty`` (``is_empty`` is true for a missing field, null
  or ``[]``; vectorport never stores null or an empty list).
- ``$all [v…]`` is ``must`` of the equalities: the contract's rule for lists and for
  scalars (a scalar matches only ``$all: [itself]``).
- Booleans, on engines whose filters cannot match a JSON bool (``bools_native`` false),
  are matched on their string shadow under :data:`.naming.BOOLS`.
- Numbers, on engines that do not keep floats exactly (``numbers_exact`` false: Qdrant
  Edge), are compared on their order keys under :data:`.naming.NUMBERS` (see
  :mod:`.numbers`): equality is both parts equal, ``> v`` is ``high > hv`` or (``high
  == hv`` and ``low > lv``), and so on; a string or bool value has no key, so it meets
  no number condition, as the contract's kind rule says.

Refused with :class:`UnsupportedFeatureError` at compile time, before any I/O:

- ranges over strings: Qdrant's ``range`` is numeric (its datetime range parses
  strings as dates), it has no lexicographic order on keywords;
- numbers of magnitude 2^53 or more: Qdrant compares ranges as float64, which cannot
  hold such a number exactly. (An operand below 2^53 compares exactly even against
  larger stored ints: rounding to float64 is monotonic and never crosses an operand
  exactly representable below 2^53.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vectorport import adapterkit as kit
from vectorport.adapterkit import FilterCompiler, Memo
from vectorport.adapters.qdrant import naming, numbers
from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters.ast import And, Condition, Filter, Nor, Not, Or, Scalar

BACKEND = "qdrant"
_RANGE_KEYS = {"$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}

QdrantFilter = dict[str, Any]
"""A Qdrant filter or condition, as Qdrant's REST API spells it."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """How an engine's payload is matched: JSON bools natively or on their string
    shadows, numbers on their values or on their order keys."""

    bools_native: bool
    numbers_exact: bool


class _Compiler(FilterCompiler[QdrantFilter]):
    """The compiler of one engine kind (its :class:`Dialect`); memoised by the adapter
    kit. Compiled filters are shared: callers must not change them."""

    def __init__(self, dialect: Dialect) -> None:
        super().__init__()
        self.dialect = dialect

    def build(self, node: Filter) -> QdrantFilter:
        return _wrap(_compile(node, self.dialect))


_COMPILERS = {Dialect(b, n): _Compiler(Dialect(b, n)) for b in (True, False) for n in (True, False)}


class _AllEngines:
    """The memo of both compilers, as one cache to clear (benchmarks time cold compiles)."""

    def clear(self) -> None:
        for compiler in _COMPILERS.values():
            compiler.cache_clear()
        _SCOPED.clear()


_cache = _AllEngines()


def compile_filter(node: Filter | None, *, bools_native: bool,
                   numbers_exact: bool) -> QdrantFilter | None:
    """Qdrant's filter for ``node`` (``None``: everything). Results are memoised and
    shared: callers must not change them."""
    if node is None:
        return None
    return _COMPILERS[Dialect(bools_native, numbers_exact)].compile(node)


def _wrap(part: QdrantFilter) -> QdrantFilter:
    """A top-level filter (a condition alone is wrapped in ``must``)."""
    if set(part) <= {"must", "should", "must_not"}:
        return part
    return {"must": [part]}


_SCOPED: Memo[tuple[str, int], QdrantFilter] = Memo(1_024)
"""Scoped filters by namespace and compiled filter. Keyed by the compiled filter's
``id``, which is sound: the scoped filter holds the compiled one, so no other object
takes that ``id`` while the entry lives."""


def scoped(namespace: str, node: Filter | None, *, bools_native: bool,
           numbers_exact: bool) -> QdrantFilter:
    """The filter of an operation in ``namespace``: the tenant condition first (which
    Qdrant's tenant index answers), then the user's filter, ``{"must": [tenant,
    user]}``. Memoised and shared like :func:`compile_filter`'s results (callers must
    not change them): one object per (namespace, filter), whose engine objects the
    engines keep (:class:`SdkFilters`)."""
    compiled = compile_filter(node, bools_native=bools_native, numbers_exact=numbers_exact)
    return _SCOPED.get((namespace, id(compiled)), lambda: _scope(namespace, compiled))


def _scope(namespace: str, compiled: QdrantFilter | None) -> QdrantFilter:
    must: list[QdrantFilter] = [namespace_condition(namespace)]
    if compiled is not None:
        must.append(compiled)
    return {"must": must}


class SdkFilters:
    """An engine's SDK objects (qdrant-client models, qdrant-edge-py filters) of the
    filter documents it is handed, kept by the document's identity: the documents of
    searches, scrolls and counts are the memoised ones of :func:`scoped` (or their
    user part), and building the SDK objects of a three-condition filter took ≈ 14 µs,
    a tenth of an Edge query. Sound for the same reason as :data:`_SCOPED`: an entry
    holds its document."""

    def __init__(self, build: Callable[[QdrantFilter], Any], size: int = 512) -> None:
        self._build = build
        self._memo: Memo[int, tuple[QdrantFilter, Any]] = Memo(size)

    def __call__(self, flt: QdrantFilter) -> Any:
        return self._memo.get(id(flt), lambda: (flt, self._build(flt)))[1]


def namespace_condition(namespace: str) -> QdrantFilter:
    return {"key": naming.NAMESPACE, "match": {"value": namespace}}


def _compile(node: Filter, dialect: Dialect) -> QdrantFilter:
    if isinstance(node, Condition):
        return _condition(node, dialect)
    if isinstance(node, And):
        return _join("must", [_compile(c, dialect) for c in node.children])
    if isinstance(node, Or):
        return _join("should", [_compile(c, dialect) for c in node.children])
    if isinstance(node, Nor):
        return {"must_not": [_compile(c, dialect) for c in node.children]}
    if isinstance(node, Not):
        return {"must_not": [_compile(node.child, dialect)]}
    raise UnsupportedFeatureError(BACKEND, type(node).__name__)  # pragma: no cover


def _join(clause: str, parts: list[QdrantFilter]) -> QdrantFilter:
    if len(parts) == 1:
        return parts[0]
    return {clause: parts}


def _check_number(value: Scalar, op: str) -> None:
    kit.check_exact_number(BACKEND, op, value, "Qdrant compares numbers as 64-bit floats, "
                           "which cannot hold such a value exactly")


def _equals(field: str, value: Scalar, dialect: Dialect, op: str) -> QdrantFilter:
    if isinstance(value, bool):
        if dialect.bools_native:
            return {"key": naming.meta_key(field), "match": {"value": value}}
        return {"key": naming.bool_key(field), "match": {"value": naming.bool_text(value)}}
    if isinstance(value, str):
        return {"key": naming.meta_key(field), "match": {"value": value}}
    _check_number(value, op)
    if not dialect.numbers_exact:
        high, low = numbers.split(numbers.order_key(float(value)))
        return {"must": [_high_equals(naming.number_key(field, numbers.HIGH), high),
                         _match(naming.number_key(field, numbers.LOW), low)]}
    return {"key": naming.meta_key(field), "range": {"gte": value, "lte": value}}


def _match(key: str, value: int) -> QdrantFilter:
    return {"key": key, "match": {"value": value}}


def _high_equals(key: str, high: int) -> QdrantFilter:
    """The high part of an order key equals ``high``: a range ``[high, high]`` (exact:
    ``|high| < 2^38``), which the high part's integer index answers with its range
    structure alone; Edge then keeps no lookup structure beside it (≈ 10% of an
    upsert's own time in the engine, see :func:`..engines.edge._index_number_keys`)."""
    return {"key": key, "range": {"gte": high, "lte": high}}


def _keyed_range(field: str, op: str, value: float) -> QdrantFilter:
    """``field op value`` on the order keys: the high parts compare strictly, and where
    they are equal the low parts compare with ``op`` itself."""
    high, low = numbers.split(numbers.order_key(value))
    high_key = naming.number_key(field, numbers.HIGH)
    strict = "gt" if op in ("$gt", "$gte") else "lt"
    return {"should": [
        {"key": high_key, "range": {strict: high}},
        {"must": [_high_equals(high_key, high),
                  {"key": naming.number_key(field, numbers.LOW), "range": {_RANGE_KEYS[op]: low}}]},
    ]}


def _condition(node: Condition, dialect: Dialect) -> QdrantFilter:
    field, op, value = node.field, node.op, node.value
    if op == "$exists":
        empty = {"is_empty": {"key": naming.meta_key(field)}}
        return {"must_not": [empty]} if value else empty
    if op in _RANGE_KEYS:
        assert not isinstance(value, tuple)
        if isinstance(value, str):
            raise UnsupportedFeatureError(
                BACKEND, f"{op} on strings",
                "Qdrant's range condition compares numbers only",
            )
        _check_number(value, op)
        if not dialect.numbers_exact:
            return _keyed_range(field, op, float(value))
        return {"key": naming.meta_key(field), "range": {_RANGE_KEYS[op]: value}}
    if op in ("$eq", "$ne"):
        assert not isinstance(value, tuple)
        equal = _equals(field, value, dialect, op)
        return equal if op == "$eq" else {"must_not": [equal]}
    assert isinstance(value, tuple)
    values = list(dict.fromkeys((type(v), v) for v in value))
    items = [v for _, v in values]
    if op == "$all":
        return _join("must", [_equals(field, v, dialect, op) for v in items])
    if isinstance(items[0], str):
        member: QdrantFilter = {"key": naming.meta_key(field), "match": {"any": items}}
    else:
        member = _join("should", [_equals(field, v, dialect, op) for v in items])
    return member if op == "$in" else {"must_not": [member]}


__all__ = ["Dialect", "QdrantFilter", "SdkFilters", "compile_filter",
           "namespace_condition", "scoped"]

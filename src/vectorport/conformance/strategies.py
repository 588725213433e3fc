"""Hypothesis strategies for the contract's data and filters.

Used by the differential tests (every adapter against the oracle) and by the filter
unit tests. Values are drawn from small pools so that generated filters actually hit
generated records, and from the awkward corners of CONTRACT §2: numbers stored as int
and float, bools next to numbers, strings that look like numbers, list fields, unicode.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from vectorport.core.filters.ast import And, Condition, Filter, Nor, Not, Or

FIELDS = ("a", "b", "tags", "n")
STRINGS = ("x", "y", "", "é", "X", "1", "日本", "O'Brien", "a\"b")
LIST_STRINGS = ("x", "y", "é", "1", "O'Brien")
COMPONENTS = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)
ID_POOL = ("r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "id-10", "ID-10",
           "ü-id", "日本", "a'b", "with space", "x" * 40, "🙂", "0", "z")

scalars = st.one_of(
    st.integers(-3, 3), st.sampled_from([0.5, -1.5, 2.0, 1.0]), st.booleans(),
    st.sampled_from(STRINGS),
)
range_operands = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -1.5]),
                           st.sampled_from(STRINGS))
same_kind_lists = st.one_of(
    st.lists(st.integers(-3, 3), min_size=1, max_size=3),
    st.lists(st.sampled_from(STRINGS), min_size=1, max_size=3),
    st.lists(st.booleans(), min_size=1, max_size=2),
).map(tuple)
metadata_values = st.one_of(
    st.integers(-3, 3), st.sampled_from([0.5, -1.5, 2.0, 1.0]), st.booleans(),
    st.sampled_from(STRINGS),
    st.lists(st.sampled_from(LIST_STRINGS), min_size=1, max_size=3, unique=True).map(tuple),
)
metadatas = st.dictionaries(st.sampled_from(FIELDS), metadata_values, max_size=4)
vectors = st.lists(st.sampled_from(COMPONENTS), min_size=4, max_size=4).filter(
    lambda v: any(v))


def conditions(operators: frozenset[str]) -> st.SearchStrategy[Condition]:
    field = st.sampled_from(FIELDS)
    options: list[st.SearchStrategy[Condition]] = []
    for op in ("$eq", "$ne"):
        if op in operators:
            options.append(st.builds(Condition, field, st.just(op), scalars))
    ranges = [op for op in ("$gt", "$gte", "$lt", "$lte") if op in operators]
    if ranges:
        options.append(st.builds(Condition, field, st.sampled_from(ranges), range_operands))
    lists = [op for op in ("$in", "$nin", "$all") if op in operators]
    if lists:
        options.append(st.builds(Condition, field, st.sampled_from(lists), same_kind_lists))
    if "$exists" in operators:
        options.append(st.builds(Condition, field, st.just("$exists"), st.booleans()))
    if not options:
        raise ValueError("no field operator to generate filters from")
    return st.one_of(options)


def filters(operators: frozenset[str], max_leaves: int = 6) -> st.SearchStrategy[Filter]:
    """Filter ASTs using only ``operators`` (field and logical)."""

    def extend(inner: st.SearchStrategy[Filter]) -> st.SearchStrategy[Filter]:
        options: list[st.SearchStrategy[Filter]] = []
        children = st.lists(inner, min_size=1, max_size=3).map(tuple)
        if "$and" in operators:
            options.append(children.map(And))
        if "$or" in operators:
            options.append(children.map(Or))
        if "$nor" in operators:
            options.append(children.map(Nor))
        if "$not" in operators:
            options.append(inner.map(Not))
        return st.one_of(options) if options else inner

    return st.recursive(conditions(operators), extend, max_leaves=max_leaves)


@st.composite
def datasets(draw: st.DrawFn, sparse: bool = False, max_size: int = 10) -> list[dict[str, Any]]:
    """Records as dicts for ``upsert``: unique ids, non-zero 4-d vectors, metadata."""
    ids = draw(st.lists(st.sampled_from(ID_POOL), min_size=1, max_size=max_size, unique=True))
    rows: list[dict[str, Any]] = []
    for rid in ids:
        row: dict[str, Any] = {"id": rid, "vector": draw(vectors), "metadata": draw(metadatas)}
        if sparse and draw(st.booleans()):
            row["sparse"] = draw(sparse_vectors)
        rows.append(row)
    return rows


sparse_vectors = st.dictionaries(
    st.integers(0, 12), st.sampled_from([0.5, 1.0, 2.0, -1.0, 3.0]), min_size=1, max_size=4
).map(lambda d: {"indices": sorted(d), "values": [d[i] for i in sorted(d)]})

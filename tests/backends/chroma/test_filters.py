"""The Chroma filter compiler against the oracle, on the real engine.

Every expectation comes from :func:`vectorport.core.filters.oracle.matches`. The data
holds what Chroma's ``where`` gets wrong when handed the contract's filters naively:
ints and floats beyond 2**53, the int64 limits, doubles at 2**63, fractional operands
against ints, bools next to numbers, strings that look like numbers, list fields and
missing keys. Each rule is checked in process and through a ``chroma run`` server.
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("chromadb")

from tests.backends.chroma.test_layouts import write_lists_layout

import vectorport
from vectorport.adapters.chroma import floats
from vectorport.adapters.chroma.filters import (
    MATCH_ALL,
    MATCH_NONE,
    combine,
    compile_filter,
    refuses,
)
from vectorport.adapters.chroma.layout import FLOATS_FIELD, INTS_FIELD, KEYS_FIELD, KINDS_FIELD, LISTS
from vectorport.conformance import strategies
from vectorport.core.capabilities import ALL_FILTER_OPERATORS
from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters import matches, parse_filter, render_filter
from vectorport.core.filters.ast import Condition, Filter
from vectorport.core.store import Index
from vectorport.testing.chroma import running_chroma_server

I64_MAX, I64_MIN = 2**63 - 1, -(2**63)
NUMBERS: tuple[int | float, ...] = (
    -3, -2.5, -1, -0.5, 0, 0.0, -0.0, 0.5, 1, 1.0, 1.5, 2, 2.7, 3, 2020, 2020.0, 2020.5,
    2**53 - 1, 2**53, 2**53 + 1, 2**53 + 3, 2**53 + 4, 9007199254740994.0,
    9007199254740996.0, I64_MAX, I64_MAX - 1, I64_MIN, I64_MIN + 1,
    9.223372036854776e18, -9.223372036854776e18, 1e19, -1e19, 1e300, -1e300,
)
OTHER_VALUES: tuple[Any, ...] = (True, False, "1", "x", "", ("1", "x"), ("y",))
OPERANDS = (*NUMBERS, 2**53 + 2, 2.0**62 + 2**10, 0.1, -0.1, 1e-300)

COMPARE = {"$eq": operator.eq, "$ne": operator.ne, "$gt": operator.gt,
           "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}


def _rows() -> list[dict[str, Any]]:
    values = NUMBERS + OTHER_VALUES
    rows = [{"id": f"v{i:02d}", "vector": [1.0, 0.1 * (i % 7), 0.0, 0.5],
             "metadata": {"x": list(v) if isinstance(v, tuple) else v, "k": i % 3}}
            for i, v in enumerate(values)]
    rows.append({"id": "none", "vector": [0.0, 1.0, 0.0, 0.0], "metadata": {}})
    rows.append({"id": "other", "vector": [0.0, 1.0, 1.0, 0.0], "metadata": {"y": 1.5}})
    return rows


ROWS = _rows()
METADATA = {r["id"]: {k: tuple(v) if isinstance(v, list) else v
                      for k, v in r["metadata"].items()} for r in ROWS}


@pytest.fixture(scope="module", params=["process", "server", "process, lists layout"])
def index(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Index]:
    if request.param.startswith("process"):
        url_context: Any = nullcontext("chroma+memory://")
    else:
        url_context = running_chroma_server()
    with url_context as url, vectorport.connect(url) as store:
        index = store.create_index(f"filter_rules_{uuid.uuid4().hex[:8]}", 4, "cosine")
        if request.param.endswith("lists layout"):
            write_lists_layout(index, "", [r["id"] for r in ROWS],  # data from before
                               [r["vector"] for r in ROWS], [r["metadata"] for r in ROWS])
        else:
            index.upsert(ROWS)
        if request.param == "server":
            ON_A_SERVER.add(index.name)
        yield index
        store.delete_index(index.name)


def expected_ids(node: Filter | None) -> list[str]:
    return sorted(rid for rid, meta in METADATA.items() if matches(node, meta))


ON_A_SERVER: set[str] = set()
"""Indexes on a Chroma server, which refuses float operands it would misread."""


def check(index: Index, raw: dict[str, Any]) -> None:
    node = parse_filter(raw)
    if index.name in ON_A_SERVER and floats.inexact_operand(node) is not None:
        with pytest.raises(UnsupportedFeatureError, match="Chroma server"):
            index.query([1, 0, 0, 0], filter=raw)
        return
    want = expected_ids(node)
    got = sorted(m.id for m in index.query([1, 0, 0, 0], filter=raw, top_k=len(ROWS)))
    assert got == want, f"{raw}: query\n  got  {got}\n  want {want}"
    assert index.count(filter=raw) == len(want), f"{raw}: count"


# -- every comparison against every awkward number -------------------------------------


@pytest.mark.parametrize("op", sorted(COMPARE))
def test_number_comparisons(index: Index, op: str) -> None:
    for operand in OPERANDS:
        check(index, {"x": {op: operand}})


@pytest.mark.parametrize("op", ["$gt", "$gte", "$lt", "$lte"])
def test_negated_ranges_include_missing_and_other_kinds(index: Index, op: str) -> None:
    for operand in (0, 1.5, -0.5, 2**53 + 3, 1e19, I64_MAX):
        check(index, {"x": {"$not": {op: operand}}})


def test_membership_and_kinds(index: Index) -> None:
    for raw in (
        {"x": {"$in": [1, 2.5, 2**53 + 3, 9.223372036854776e18]}},
        {"x": {"$nin": [1, 2.5, 2**53 + 3, 9.223372036854776e18]}},
        {"x": {"$in": [0.5, -0.5]}}, {"x": {"$nin": [0.5, -0.5]}},
        {"x": {"$in": [True]}}, {"x": {"$nin": [False]}},
        {"x": {"$in": ["1", "y"]}}, {"x": {"$nin": ["1", "y"]}},
        {"x": "1"}, {"x": {"$ne": "1"}}, {"x": "x"}, {"x": {"$ne": "x"}},
        {"x": True}, {"x": {"$ne": True}}, {"x": 1}, {"x": {"$ne": 1}},
        {"x": {"$all": ["1", "x"]}}, {"x": {"$all": ["x"]}}, {"x": {"$all": [2020]}},
        {"x": {"$not": {"$all": ["1", "x"]}}}, {"x": {"$all": [2020.5, 2020.5]}},
        {"x": {"$exists": True}}, {"x": {"$exists": False}}, {"y": {"$exists": True}},
        {"$nor": [{"x": {"$gt": 0}}, {"x": {"$exists": False}}]},
        {"$not": {"$or": [{"x": {"$lte": 2020.5}}, {"k": 1}]}},
    ):
        check(index, raw)


# -- generated filters ------------------------------------------------------------------

_range_operands = st.one_of(st.sampled_from(OPERANDS))
_leaf = st.one_of(
    st.builds(Condition, st.just("x"), st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt",
                                                        "$lte"]), _range_operands),
    st.builds(Condition, st.just("x"), st.sampled_from(["$in", "$nin", "$all"]),
              st.lists(st.sampled_from(OPERANDS), min_size=1, max_size=3).map(tuple)),
    st.builds(Condition, st.sampled_from(["x", "k", "y"]), st.just("$exists"), st.booleans()),
    st.builds(Condition, st.sampled_from(["x", "k"]), st.just("$eq"),
              st.sampled_from([0, 1, 2, True, "1", "x"])),
)


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_generated_filters_match_the_oracle(index: Index, data: st.DataObject) -> None:
    node = data.draw(st.one_of(strategies.filters(ALL_FILTER_OPERATORS, max_leaves=5),
                               st.recursive(_leaf, _extend, max_leaves=5)))
    raw = render_filter(node)
    if refuses(node):
        with pytest.raises(UnsupportedFeatureError):
            index.count(filter=raw)
        return
    check(index, raw)


def _extend(inner: st.SearchStrategy[Filter]) -> st.SearchStrategy[Filter]:
    from vectorport.core.filters.ast import And, Nor, Not, Or

    children = st.lists(inner, min_size=1, max_size=3).map(tuple)
    return st.one_of(children.map(And), children.map(Or), children.map(Nor), inner.map(Not))


# -- the compiler itself (no I/O) -------------------------------------------------------


@pytest.mark.parametrize("raw", [
    {"genre": {"$gt": "d"}}, {"tags": {"$lte": "c"}},
    {"$or": [{"a": 1}, {"$not": {"b": {"$lt": "z"}}}]},
])
def test_string_ranges_are_refused_before_io(raw: dict[str, Any]) -> None:
    node = parse_filter(raw)
    assert refuses(node)
    with pytest.raises(UnsupportedFeatureError) as info:
        compile_filter(node)
    assert "chroma" in str(info.value) and "string" in str(info.value)


def test_compiled_shapes() -> None:
    assert compile_filter(None) is MATCH_ALL
    assert compile_filter(parse_filter({"a": 1})).where == {"a": {"$eq": 1}}
    # integral floats within 2**53 become ints (exact for both stored kinds)
    assert compile_filter(parse_filter({"a": {"$gte": 2.0}})).where == {"a": {"$gte": 2}}
    assert compile_filter(parse_filter({"a": "s"})).where == {
        "$or": [{"a": {"$eq": "s"}}, {"a": {"$contains": "s"}}]}
    # a key is listed unless it holds a bool, which $in / $nin find by value
    assert compile_filter(parse_filter({"a": {"$exists": False}})).where == {"$and": [
        {KINDS_FIELD: {"$not_contains": "a"}}, {KINDS_FIELD: {"$not_contains": "i:a"}},
        {KINDS_FIELD: {"$not_contains": "f:a"}}, {"a": {"$nin": [True, False]}}]}
    # a fractional operand is split by the stored kind
    assert compile_filter(parse_filter({"a": {"$gt": 1.5}})).where == {"$or": [
        {"$and": [{KINDS_FIELD: {"$contains": "i:a"}}, {"a": {"$gte": 2}}]},
        {"$and": [{KINDS_FIELD: {"$contains": "f:a"}}, {"a": {"$gt": 1.5}}]},
    ]}
    # no int equals 0.5: only the float side is left
    assert compile_filter(parse_filter({"a": 0.5})).where == {
        "$and": [{KINDS_FIELD: {"$contains": "f:a"}}, {"a": {"$eq": 0.5}}]}
    # one-member $and/$or are unwrapped (Chroma wants at least two)
    assert compile_filter(parse_filter({"$and": [{"a": 1}]})).where == {"a": {"$eq": 1}}


def test_constant_filters_fold() -> None:
    # no int is above 1e300 and no double is above it either: nothing can match
    assert compile_filter(parse_filter({"a": {"$gt": 1e300}})).where == {
        "$and": [{KINDS_FIELD: {"$contains": "f:a"}}, {"a": {"$gt": 1e300}}]}
    nothing = combine(compile_filter(parse_filter({"a": 1})), MATCH_NONE)
    assert nothing.matches_nothing
    assert combine(MATCH_ALL, MATCH_ALL).matches_everything


def test_compiled_shapes_in_the_lists_layout() -> None:
    """Collections written before the kinds layout are asked in their own terms."""
    assert compile_filter(parse_filter({"a": {"$exists": False}}), LISTS).where == {
        KEYS_FIELD: {"$not_contains": "a"}}
    assert compile_filter(parse_filter({"a": {"$gt": 1.5}}), LISTS).where == {"$or": [
        {"$and": [{INTS_FIELD: {"$contains": "a"}}, {"a": {"$gte": 2}}]},
        {"$and": [{FLOATS_FIELD: {"$contains": "a"}}, {"a": {"$gt": 1.5}}]},
    ]}
    assert compile_filter(parse_filter({"a": 1}), LISTS).where == {"a": {"$eq": 1}}

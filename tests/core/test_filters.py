"""The filter parser, oracle and NNF against CONTRACT §2, rule by rule."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vectorport import FilterError, matches, parse_filter, render_filter, to_nnf
from vectorport.conformance import strategies
from vectorport.core.capabilities import ALL_FILTER_OPERATORS
from vectorport.core.filters.ast import Condition, Nor, Not, operators_used
from vectorport.core.filters.parse import MAX_DEPTH, MAX_NODES


def ok(flt: dict[str, Any], meta: dict[str, Any]) -> bool:
    return matches(parse_filter(flt), meta)


# --- the table of §2, one rule at a time ---------------------------------------------


def test_empty_and_none_match_everything() -> None:
    assert parse_filter(None) is None and parse_filter({}) is None
    assert ok({}, {}) and ok({}, {"a": 1})


@pytest.mark.parametrize(("flt", "meta", "expected"), [
    ({"a": 1}, {"a": 1}, True),
    ({"a": 1}, {"a": 1.0}, True),                   # numbers compare by value
    ({"a": 1.0}, {"a": 1}, True),
    ({"a": 1}, {"a": True}, False),                 # bool never equals a number
    ({"a": True}, {"a": 1}, False),
    ({"a": 0}, {"a": False}, False),
    ({"a": "1"}, {"a": 1}, False),                  # str never equals a number
    ({"a": 1}, {"a": "1"}, False),
    ({"a": 1}, {}, False),                          # missing field
    ({"a": "x"}, {"a": ["x", "y"]}, True),          # list containing v
    ({"a": "z"}, {"a": ["x", "y"]}, False),
    ({"a": {"$eq": "x"}}, {"a": ("x",)}, True),
])
def test_eq(flt: dict[str, Any], meta: dict[str, Any], expected: bool) -> None:
    assert ok(flt, meta) is expected


@pytest.mark.parametrize(("meta", "expected"), [
    ({"a": 1}, False), ({"a": 2}, True), ({}, True), ({"a": True}, True), ({"a": "1"}, True),
])
def test_ne_matches_missing(meta: dict[str, Any], expected: bool) -> None:
    assert ok({"a": {"$ne": 1}}, meta) is expected


@pytest.mark.parametrize(("op", "value", "meta", "expected"), [
    ("$gt", 1, {"a": 2}, True), ("$gt", 2, {"a": 2}, False), ("$gte", 2, {"a": 2.0}, True),
    ("$lt", 2, {"a": 1.5}, True), ("$lte", 1.5, {"a": 1.5}, True), ("$lt", 1, {"a": 1}, False),
    ("$gt", 0, {"a": True}, False),        # a bool is not a number
    ("$gt", 0, {"a": "5"}, False),         # a string is not a number
    ("$gt", "a", {"a": 5}, False),
    ("$gt", "a", {"a": "b"}, True),
    ("$lt", "a", {"a": "B"}, True),        # code point order: "B" < "a"
    ("$gt", "é", {"a": "z"}, False),       # "z" (U+7A) < "é" (U+E9)
    ("$gt", "b", {"a": ["a", "c"]}, True),  # some element of a list
    ("$lt", "a", {"a": ["b", "c"]}, False),
    ("$gt", 0, {}, False),                 # missing never compares
])
def test_ranges(op: str, value: Any, meta: dict[str, Any], expected: bool) -> None:
    assert ok({"a": {op: value}}, meta) is expected


@pytest.mark.parametrize(("flt", "meta", "expected"), [
    ({"a": {"$in": [1, 2]}}, {"a": 2.0}, True),
    ({"a": {"$in": [1, 2]}}, {"a": True}, False),
    ({"a": {"$in": ["x"]}}, {"a": ["y", "x"]}, True),
    ({"a": {"$in": ["q"]}}, {"a": ["y", "x"]}, False),
    ({"a": {"$in": [1]}}, {}, False),
    ({"a": {"$nin": [1]}}, {}, True),
    ({"a": {"$nin": [1, 2]}}, {"a": 1}, False),
    ({"a": {"$nin": ["x"]}}, {"a": ["x", "y"]}, False),
    ({"a": {"$nin": ["z"]}}, {"a": ["x", "y"]}, True),
    ({"a": {"$exists": True}}, {"a": False}, True),
    ({"a": {"$exists": False}}, {"a": False}, False),
    ({"a": {"$exists": False}}, {}, True),
    ({"a": {"$all": ["x", "y"]}}, {"a": ["y", "x", "z"]}, True),
    ({"a": {"$all": ["x", "q"]}}, {"a": ["y", "x"]}, False),
    ({"a": {"$all": ["x"]}}, {"a": "x"}, True),          # a scalar matches $all: [itself]
    ({"a": {"$all": ["x", "y"]}}, {"a": "x"}, False),
    ({"a": {"$all": [2]}}, {"a": 2.0}, True),
    ({"a": {"$all": ["x"]}}, {}, False),
])
def test_membership_exists_all(flt: dict[str, Any], meta: dict[str, Any], expected: bool) -> None:
    assert ok(flt, meta) is expected


@pytest.mark.parametrize(("flt", "meta", "expected"), [
    ({"a": {"$not": {"$gt": 5}}}, {"a": 6}, False),
    ({"a": {"$not": {"$gt": 5}}}, {"a": 5}, True),
    ({"a": {"$not": {"$gt": 5}}}, {}, True),               # without f matches
    ({"a": {"$not": {"$gt": 1, "$lt": 5}}}, {"a": 3}, False),
    ({"a": {"$not": {"$gt": 1, "$lt": 5}}}, {"a": 7}, True),
    ({"$not": {"a": 1, "b": 2}}, {"a": 1, "b": 2}, False),
    ({"$not": {"a": 1, "b": 2}}, {"a": 1}, True),
    ({"$and": [{"a": 1}, {"b": 2}]}, {"a": 1, "b": 2}, True),
    ({"$or": [{"a": 1}, {"b": 2}]}, {"b": 2}, True),
    ({"$or": [{"a": 1}, {"b": 2}]}, {}, False),
    ({"$nor": [{"a": 1}, {"b": 2}]}, {}, True),
    ({"$nor": [{"a": 1}, {"b": 2}]}, {"b": 2}, False),
    ({"a": 1, "b": {"$gt": 1}}, {"a": 1, "b": 2}, True),     # implicit $and
    ({"a": 1, "b": {"$gt": 1}}, {"a": 1, "b": 1}, False),
])
def test_negation_and_logic(flt: dict[str, Any], meta: dict[str, Any], expected: bool) -> None:
    assert ok(flt, meta) is expected


# --- rejections, each with its JSON path -----------------------------------------------


@pytest.mark.parametrize(("flt", "path"), [
    ({"a": {"$regex": "x"}}, "a.$regex"),
    ({"$where": "1"}, "$where"),
    ({"a": None}, "a"),
    ({"a": float("nan")}, "a"),
    ({"a": float("inf")}, "a"),
    ({"a": b"x"}, "a"),
    ({"a": {"b": 1}}, "a"),
    ({"a": [1, 2]}, "a"),
    ({"a": {"$eq": [1]}}, "a.$eq"),
    ({"a": {"$gt": True}}, "a.$gt"),
    ({"a": {"$lte": None}}, "a.$lte"),
    ({"a": {"$in": []}}, "a.$in"),
    ({"a": {"$in": 3}}, "a.$in"),
    ({"a": {"$nin": [1, "1"]}}, "a.$nin"),
    ({"a": {"$all": [True, 1]}}, "a.$all"),
    ({"a": {"$in": [1, None]}}, "a.$in[1]"),
    ({"a": {"$exists": "yes"}}, "a.$exists"),
    ({"$and": []}, "$and"),
    ({"$or": {"a": 1}}, "$or"),
    ({"$nor": [{}]}, "$nor[0]"),
    ({"$and": [{"a": 1}, {"year": {"$gt": None}}]}, "$and[1].year.$gt"),
    ({"$not": {}}, "$not"),
    ({"a": {}}, "a"),
    ({"a": {"$not": {}}}, "a.$not"),
    ({"a": {"$not": 1}}, "a.$not"),
    ({"1a": 1}, ""),
    ({"a.b": 1}, ""),
    ({"a'--": 1}, ""),
    ({"a": 2**63}, "a"),
])
def test_rejections_name_the_path(flt: dict[str, Any], path: str) -> None:
    with pytest.raises(FilterError) as info:
        parse_filter(flt)
    assert info.value.path == path


def test_datetime_is_rejected() -> None:
    import datetime

    with pytest.raises(FilterError):
        parse_filter({"a": datetime.datetime(2024, 1, 1)})


def test_non_dict_filter() -> None:
    with pytest.raises(FilterError):
        parse_filter([{"a": 1}])  # type: ignore[arg-type]


def test_depth_and_size_limits() -> None:
    flt: dict[str, Any] = {"a": 1}
    for _ in range(MAX_DEPTH):
        flt = {"$not": flt}
    with pytest.raises(FilterError, match="levels"):
        parse_filter(flt)
    shallow: dict[str, Any] = {"a": 1}
    for _ in range(MAX_DEPTH // 2 - 1):
        shallow = {"$not": shallow}
    parse_filter(shallow)
    with pytest.raises(FilterError, match="nodes"):
        parse_filter({"$or": [{"a": i} for i in range(MAX_NODES + 1)]})


def test_ast_is_hashable_and_equal_for_equal_filters() -> None:
    a = parse_filter({"x": {"$in": [1, 2]}, "y": "z"})
    b = parse_filter({"x": {"$in": [1, 2]}, "y": "z"})
    assert a == b and hash(a) == hash(b)
    assert {a: 1}[b] == 1


@pytest.mark.parametrize(("left", "right"), [
    ({"m": True}, {"m": 1}), ({"m": False}, {"m": 0}), ({"m": {"$in": [True]}}, {"m": {"$in": [1]}}),
    ({"m": "1"}, {"m": 1}),
])
def test_ast_equality_respects_kinds(left: dict[str, Any], right: dict[str, Any]) -> None:
    # True == 1 in Python; a cache keyed on the AST must still tell the filters apart.
    a, b = parse_filter(left), parse_filter(right)
    assert a != b
    assert len({a, b}) == 2


def test_numbers_of_equal_value_are_one_filter() -> None:
    assert parse_filter({"m": 1}) == parse_filter({"m": 1.0})


def test_operators_used() -> None:
    node = parse_filter({"$or": [{"a": {"$not": {"$gt": 1}}}, {"b": {"$in": [1]}}]})
    assert operators_used(node) == {"$or", "$not", "$gt", "$in"}


# --- property tests ----------------------------------------------------------------------

filters = strategies.filters(ALL_FILTER_OPERATORS)
metadatas = strategies.metadatas


@settings(max_examples=400, deadline=None)
@given(filters)
def test_parse_render_parse_is_identity(node: Any) -> None:
    assert parse_filter(render_filter(node)) == node


@settings(max_examples=400, deadline=None)
@given(filters, st.lists(metadatas, min_size=1, max_size=6))
def test_nnf_is_equivalent_under_the_oracle(node: Any, metas: list[dict[str, Any]]) -> None:
    normal = to_nnf(node)
    for meta in metas:
        assert matches(normal, meta) == matches(node, meta)


@settings(max_examples=200, deadline=None)
@given(filters)
def test_nnf_has_not_only_over_leaves_without_complement(node: Any) -> None:
    from vectorport.core.filters.ast import walk

    for n in walk(to_nnf(node)):
        assert not isinstance(n, Nor)
        if isinstance(n, Not):
            assert isinstance(n.child, Condition)
            assert n.child.op in {"$gt", "$gte", "$lt", "$lte", "$all"}

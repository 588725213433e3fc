"""The shape of the Qdrant filters the adapter sends (what they match is checked against
the oracle by the conformance suite, on the real engines)."""

from __future__ import annotations

import pytest

from vectorport.adapters.qdrant.filters import compile_filter, scoped
from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters.parse import parse_filter


def _compiled(raw: dict, bools_native: bool = True, numbers_exact: bool = True) -> dict:
    compiled = compile_filter(parse_filter(raw), bools_native=bools_native,
                              numbers_exact=numbers_exact)
    assert compiled is not None
    return compiled


def test_the_namespace_condition_comes_first() -> None:
    flt = scoped("tenant", parse_filter({"a": "x"}), bools_native=True, numbers_exact=True)
    assert flt["must"][0] == {"key": "_ns", "match": {"value": "tenant"}}
    assert scoped("", None, bools_native=True, numbers_exact=True) == {
        "must": [{"key": "_ns", "match": {"value": ""}}]}


def test_numbers_compare_by_value_through_a_range() -> None:
    assert _compiled({"n": 1}) == {"must": [{"key": "m.n", "range": {"gte": 1, "lte": 1}}]}
    assert _compiled({"n": {"$in": [1, 2.5]}}) == {"should": [
        {"key": "m.n", "range": {"gte": 1, "lte": 1}},
        {"key": "m.n", "range": {"gte": 2.5, "lte": 2.5}},
    ]}


def test_negations_are_must_not_without_extra_clauses() -> None:
    assert _compiled({"s": {"$ne": "x"}}) == {
        "must_not": [{"key": "m.s", "match": {"value": "x"}}]}
    assert _compiled({"s": {"$nin": ["x", "y"]}}) == {
        "must_not": [{"key": "m.s", "match": {"any": ["x", "y"]}}]}
    assert _compiled({"s": {"$exists": False}}) == {"must": [{"is_empty": {"key": "m.s"}}]}
    assert _compiled({"s": {"$exists": True}}) == {
        "must_not": [{"is_empty": {"key": "m.s"}}]}


def test_booleans_use_the_shadow_where_the_engine_cannot_match_them() -> None:
    assert _compiled({"b": True}) == {"must": [{"key": "m.b", "match": {"value": True}}]}
    assert _compiled({"b": False}, bools_native=False) == {
        "must": [{"key": "_b.b", "match": {"value": "false"}}]}
    assert _compiled({"b": {"$in": [True, False]}}, bools_native=False) == {"should": [
        {"key": "_b.b", "match": {"value": "true"}},
        {"key": "_b.b", "match": {"value": "false"}},
    ]}


def test_logic_maps_onto_must_should_must_not() -> None:
    got = _compiled({"$or": [{"a": "x"}, {"$nor": [{"b": "y"}]}], "c": {"$all": ["p", "q"]}})
    assert got == {"must": [
        {"should": [{"key": "m.a", "match": {"value": "x"}},
                    {"must_not": [{"key": "m.b", "match": {"value": "y"}}]}]},
        {"must": [{"key": "m.c", "match": {"value": "p"}},
                  {"key": "m.c", "match": {"value": "q"}}]},
    ]}


def test_compiled_filters_are_cached_per_kind() -> None:
    node = parse_filter({"a": 1, "b": True})
    client = {"bools_native": True, "numbers_exact": True}
    edge = {"bools_native": False, "numbers_exact": False}
    assert compile_filter(node, **client) is compile_filter(node, **client)
    assert compile_filter(node, **client) != compile_filter(node, **edge)
    # True and 1 are different filters, even though True == 1 in Python
    assert _compiled({"a": True}) != _compiled({"a": 1})


@pytest.mark.parametrize(("raw", "feature"), [
    ({"s": {"$gte": "m"}}, "$gte on strings"),
    ({"n": {"$eq": 2**53}}, "$eq with a number of magnitude 2^53"),
    ({"n": {"$nin": [-(2**60)]}}, "$nin with a number of magnitude 2^53"),
])
def test_refusals_name_the_backend_and_the_feature(raw: dict, feature: str) -> None:
    with pytest.raises(UnsupportedFeatureError, match="qdrant") as caught:
        compile_filter(parse_filter(raw), bools_native=True, numbers_exact=True)
    assert feature in str(caught.value)

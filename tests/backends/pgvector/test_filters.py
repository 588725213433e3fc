"""The pgvector filter compiler: unit tests of the SQL it builds (no server), and
hypothesis tests on a real server of what ``jsonb`` does with our numbers.

The meaning of every filter is checked against the oracle on the real server by the
conformance suite (``FILTER_CASES`` and the differential tests); here we pin down the
shapes that make that exact: values only ever as parameters, the kind rules, NOT over
non-NULL expressions, and exact number handling near float and int64 limits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("psycopg")
pytest.importorskip("pgvector")

import vectorport
from vectorport.adapters.pgvector.filters import MAX_OR_TERMS, compile_filter
from vectorport.adapters.pgvector.jsonb import decode_metadata, encode_metadata
from vectorport.conformance.dataset import FILTER_CASES, HOSTILE_STRINGS
from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters import matches, parse_filter
from vectorport.core.store import Index
from vectorport.testing.pgvector import running_postgres


def sql_text(raw: dict[str, Any]) -> tuple[str, tuple[object, ...]]:
    compiled = compile_filter(parse_filter(raw))  # type: ignore[arg-type]
    return compiled.sql.as_string(None), compiled.params


# -- unit tests: the SQL text ----------------------------------------------------------


@pytest.mark.parametrize("case", sorted(FILTER_CASES))
def test_placeholders_match_parameters(case: str) -> None:
    text, params = sql_text(FILTER_CASES[case])
    assert text.count("%s") == len(params)
    assert "'" not in text.replace("'NaN'", ""), "no literal may reach the SQL text"


@pytest.mark.parametrize("value", HOSTILE_STRINGS)
def test_hostile_values_only_travel_as_parameters(value: str) -> None:
    for raw in ({"text": value}, {"text": {"$gt": value}}, {"text": {"$in": [value, "x"]}},
                {"text": {"$all": [value]}}, {"$not": {"text": {"$ne": value}}}):
        text, params = sql_text(raw)
        assert value not in text
        assert "text" not in text.replace('"metadata"', ""), "field names are parameters too"
        encoded = json.dumps(value, ensure_ascii=False)
        assert any(isinstance(p, str) and encoded in p for p in params)


def test_a_filtered_query_text_is_made_once_per_shape_and_filter() -> None:
    """The filtered query's text is kept per compiled filter (the same object for a
    filter seen before) and shape; the values still travel as parameters, each query its
    own, and a filter of another shape or value never gets another's text or values."""
    from vectorport.adapters.pgvector import statements
    from vectorport.adapters.pgvector.options import index_layout
    from vectorport.adapters.pgvector.schema import Names
    from vectorport.core.types import Include, IndexSpec, QueryRequest

    layout = index_layout(IndexSpec("filtered_text", 3, "cosine"))
    vector = np.ones(3, dtype=np.float32)

    def statement(raw: dict[str, Any], namespace: str = "") -> statements.Statement:
        request = QueryRequest(namespace, 5, vector, None, parse_filter(raw), Include())
        return statements.query(Names("public"), layout, request)

    first, again = statement({"n": 1}), statement({"n": 1}, "other")
    assert again.sql is first.sql  # kept, not composed again
    assert first.params[1:] == ("", '{"n":1}', 5) and again.params[1:] == ("other", '{"n":1}', 5)
    other_value, other_kind = statement({"n": 2}), statement({"n": True})
    assert other_value.params[1:] == ("", '{"n":2}', 5)
    assert other_kind.params[1:] == ("", '{"n":true}', 5)
    ranged = statement({"n": {"$gt": 1}})
    assert "jsonb_path_exists" in ranged.sql.as_string(None)
    assert "jsonb_path_exists" not in first.sql.as_string(None)
    for stmt in (first, again, other_value, other_kind, ranged):
        assert stmt.sql.as_string(None).count("%s") == len(stmt.params)


def test_equality_kinds() -> None:
    # a string may be a scalar or a list member: two containment documents
    text, params = sql_text({"genre": "drama"})
    assert params == ('{"genre":"drama"}', '{"genre":["drama"]}')
    assert text.count("@>") == 2
    # numbers and bools are never stored in lists: one document, kind-exact JSON
    assert sql_text({"year": 2020})[1] == ('{"year":2020}',)
    assert sql_text({"year": 2020.0})[1] == ('{"year":2020.0}',)
    assert sql_text({"flag": True})[1] == ('{"flag":true}',)
    assert sql_text({"big": 2**63 - 1})[1] == ('{"big":9223372036854775807}',)


def test_bool_and_int_filters_do_not_share_sql() -> None:
    # Condition("f", "$eq", True) == Condition("f", "$eq", 1) in Python: a cache keyed by
    # the AST would mix them up, so the compiler does not cache.
    assert sql_text({"f": True})[1] != sql_text({"f": 1})[1]


def test_negations_are_not_over_the_positive_form() -> None:
    assert sql_text({"a": {"$ne": 1}})[0] == '(NOT ("metadata" @> %s::jsonb))'
    assert sql_text({"a": {"$nin": [1, 2]}})[0].startswith("(NOT ")
    assert sql_text({"a": {"$exists": False}})[0] == '(NOT ("metadata" ? %s))'
    assert sql_text({"a": {"$not": {"$gt": 1}}})[0].startswith("(NOT jsonb_path_exists(")
    assert sql_text({"$nor": [{"a": 1}, {"b": 2}]})[0].startswith("(NOT (")


def test_ranges_use_jsonpath_variables() -> None:
    text, params = sql_text({"year": {"$gte": 2017}})
    assert text == 'jsonb_path_exists("metadata", %s::jsonpath, %s::jsonb)'
    assert params == ('$."year"[*] ? (@ >= $v)', '{"v":2017}')
    assert sql_text({"s": {"$lt": "O'Brien"}})[1][1] == '{"v":"O\'Brien"}'


def test_all_distinct_values_need_a_list() -> None:
    _, params = sql_text({"tags": {"$all": ["a", "b", "a"]}})
    assert params == ('{"tags":["a","b"]}',)
    _, params = sql_text({"tags": {"$all": ["a"]}})
    assert params == ('{"tags":["a"]}', '{"tags":"a"}')


def test_long_in_lists_use_one_array_parameter() -> None:
    values = [f"v{i}" for i in range(MAX_OR_TERMS)]
    text, params = sql_text({"g": {"$in": values}})
    assert text == '("metadata" @> ANY(%s::jsonb[]))'
    assert len(params) == 1 and len(params[0]) == 2 * MAX_OR_TERMS  # type: ignore[arg-type]
    short_text, short_params = sql_text({"g": {"$in": [1, 2, 3]}})
    assert short_text.count("@>") == 3 and len(short_params) == 3


def test_nul_characters_are_refused_before_io() -> None:
    with pytest.raises(UnsupportedFeatureError, match="pgvector"):
        compile_filter(parse_filter({"a": "x\x00y"}))  # type: ignore[arg-type]
    with pytest.raises(UnsupportedFeatureError):
        compile_filter(parse_filter({"a": {"$in": ["ok", "\x00"]}}))  # type: ignore[arg-type]


# -- the encoder keeps each kind -------------------------------------------------------


def test_encoder_writes_integral_floats_with_a_fraction() -> None:
    assert encode_metadata({"a": 1e16, "b": 3, "c": -0.5, "d": 1.5e-7, "e": ("x", "y")}) == (
        '{"a":10000000000000000.0,"b":3,"c":-0.5,"d":1.5e-07,"e":["x","y"]}'
    )
    assert decode_metadata({"e": ["x"], "n": 1}) == {"e": ("x",), "n": 1}


# -- on a real server ------------------------------------------------------------------


@pytest.fixture(scope="module")
def index() -> Iterator[Index]:
    with running_postgres(shared=True) as url, vectorport.connect(url) as store:
        yield store.create_index("numbers", 2, "cosine", index_type="flat")


finite = st.floats(allow_nan=False, allow_infinity=False)
int64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
near_2_53 = st.integers(min_value=2**53 - 3, max_value=2**53 + 3)
number = st.one_of(finite, int64, near_2_53, near_2_53.map(float))


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(number, min_size=1, max_size=8))
def test_numbers_round_trip_with_their_kind(index: Index, values: list[Any]) -> None:
    rows = [{"id": f"n{i}", "vector": [1, 0], "metadata": {"v": v}} for i, v in enumerate(values)]
    index.upsert(rows, namespace="rt")
    try:
        fetched = index.fetch([r["id"] for r in rows], namespace="rt")
        for row in rows:
            got = fetched[row["id"]].metadata["v"]
            want = row["metadata"]["v"]
            assert type(got) is type(want) and got == want, (got, want)
    finally:
        index.delete_namespace("rt")


number_filter = st.one_of(
    st.builds(lambda op, v: {"v": {op: v}},
              st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]), number),
    st.builds(lambda op, vs: {"v": {op: vs}}, st.sampled_from(["$in", "$nin", "$all"]),
              st.lists(number, min_size=1, max_size=3)),
)


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.one_of(number, st.booleans()), min_size=1, max_size=10),
       raw=number_filter)
def test_number_comparisons_are_exact(index: Index, values: list[Any],
                                      raw: dict[str, Any]) -> None:
    """jsonb numeric against the oracle's Python comparisons, near 2**53 and int64 ends,
    with bools that must never compare as numbers."""
    rows = [{"id": f"c{i}", "vector": [1, 0], "metadata": {"v": v}} for i, v in enumerate(values)]
    index.upsert(rows, namespace="cmp")
    try:
        node = parse_filter(raw)
        want = sorted(r["id"] for r in rows if matches(node, r["metadata"]))
        got = index.list_ids("cmp", filter=raw, limit=100).ids  # type: ignore[attr-defined]
        assert list(got) == want, raw
    finally:
        index.delete_namespace("cmp")


def test_string_ranges_compare_by_code_point(index: Index) -> None:
    words = ["a", "B", "b", "é", "z", "日本", "🙂", "\uffff", "", "a\u0301", "Z"]
    index.upsert([{"id": f"s{i}", "vector": [1, 0], "metadata": {"w": w}}
                  for i, w in enumerate(words)], namespace="str")
    for op in ("$gt", "$gte", "$lt", "$lte"):
        for pivot in words:
            raw = {"w": {op: pivot}}
            node = parse_filter(raw)
            want = sorted(f"s{i}" for i, w in enumerate(words) if matches(node, {"w": w}))
            got = index.list_ids("str", filter=raw, limit=100).ids  # type: ignore[attr-defined]
            assert list(got) == want, raw


def test_sql_text_never_holds_a_value() -> None:
    # a broad check over every conformance case: no quote characters in the SQL text
    for raw in FILTER_CASES.values():
        text, _ = sql_text(raw)
        assert not re.search(r"'[^N]", text), text

"""The LanceDB escaping functions: no value can change a filter's structure.

Three layers of proof:

1. unit tests of the exact text produced for the characters that matter;
2. hypothesis through LanceDB's own SQL parser: a literal written by the escaping
   functions, used as a projection (``select({"v": literal})``, parsed by the same
   planner as ``where``), evaluates to exactly the original value, and the SQL after it
   is still parsed as SQL; every compiled filter of the §2 grammar parses;
3. hypothesis on the engine: records holding arbitrary strings and numbers, and
   ``$eq``/``$ne``/``$in``/``$all``/ranges on them match exactly the records the oracle
   matches (extreme ints and floats included).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("lancedb")

import lancedb

import vectorport
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
from vectorport.adapters.lancedb.filters import compile_filter
from vectorport.conformance import strategies
from vectorport.conformance.dataset import HOSTILE_STRINGS
from vectorport.core.capabilities import ALL_FILTER_OPERATORS
from vectorport.core.errors import ValidationError
from vectorport.core.filters import matches, parse_filter

# Any Unicode text that can exist in UTF-8 (lone surrogates cannot reach LanceDB at all).
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
hostile_texts = texts | st.sampled_from(HOSTILE_STRINGS) | st.text(
    st.sampled_from(list("'\"\\\n\r\t ][)(,=!&|$%_{}`;:\x00\x0b\u2028\u00e9\U0001f642-/*")),
    max_size=20,
)
int64s = st.integers(INT64_MIN, INT64_MAX)
finite_floats = st.floats(allow_nan=False, allow_infinity=False)

# -- 1. exact output ----------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [
    ("plain", "'plain'"),
    ("", "''"),
    ("O'Brien", "'O''Brien'"),
    ("''", "''''''"),
    ('say "hi"', "'say \"hi\"'"),
    ("back\\slash", "'back\\slash'"),
    ("line\nbreak", "'line\nbreak'"),
    ("a'); DROP TABLE t; --", "'a''); DROP TABLE t; --'"),
])
def test_quote_string_exact(value: str, expected: str) -> None:
    assert quote_string(value) == expected


def test_lone_surrogates_and_non_strings_are_refused() -> None:
    with pytest.raises(ValidationError):
        quote_string("a\ud800b")
    with pytest.raises(TypeError):
        quote_string(5)  # type: ignore[arg-type]


@pytest.mark.parametrize(("render", "value", "expected"), [
    (render_int, 0, "0"), (render_int, -5, "-5"), (render_int, INT64_MAX, str(INT64_MAX)),
    (render_int, INT64_MIN, f"({INT64_MIN + 1} - 1)"),
    (render_float, 2020.0, "2020.0"), (render_float, -1.5, "(-1.5)"),
    (render_float, 1e-05, "1e-05"), (render_float, 1e300, "1e+300"),
    (render_bool, True, "TRUE"), (render_bool, False, "FALSE"),
])
def test_render_exact(render: Any, value: Any, expected: str) -> None:
    assert render(value) == expected


@pytest.mark.parametrize(("render", "bad"), [
    (render_float, float("inf")), (render_float, float("nan")), (render_int, 2**63),
    (render_int, True), (render_float, 1), (render_bool, 1),
])
def test_bad_literals_are_refused(render: Any, bad: Any) -> None:
    with pytest.raises((ValidationError, TypeError)):
        render(bad)


def test_identifiers_are_checked() -> None:
    assert identifier("meta") == "meta"
    with pytest.raises(ValueError):
        identifier("meta; --")


# -- 2. through LanceDB's parser ----------------------------------------------------


@pytest.fixture(scope="module")
def one_row_table() -> Iterator[Any]:
    with tempfile.TemporaryDirectory() as folder:
        db = lancedb.connect(folder)
        yield db.create_table("t", data=[{"id": "row", "vector": [1.0, 0.0]}])


def _evaluate(table: Any, **literals: str) -> dict[str, Any]:
    """LanceDB's parser evaluating each literal as a projection of one row."""
    rows = table.search().select({"id": "id", **literals}).limit(1).to_arrow().to_pylist()
    assert len(rows) == 1
    return {k: v for k, v in rows[0].items() if k != "id"}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=hostile_texts)
def test_a_quoted_string_is_one_literal_with_the_same_value(one_row_table: Any,
                                                          value: str) -> None:
    got = _evaluate(one_row_table, v=quote_string(value),
                    after=f"{quote_string(value)} || 'tail'")
    assert got == {"v": value, "after": value + "tail"}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=hostile_texts)
def test_a_quoted_string_cannot_change_a_where(one_row_table: Any, value: str) -> None:
    literal = quote_string(value)
    assert one_row_table.count_rows(f"{literal} = {literal} AND id = 'row'") == 1
    assert one_row_table.count_rows(f"{literal} <> {literal} OR id = 'nothing'") == 0


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(hostile_texts, min_size=1, max_size=5))
def test_an_array_literal_keeps_its_elements(one_row_table: Any, values: list[str]) -> None:
    assert _evaluate(one_row_table, v=render_strings(values))["v"] == values


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=int64s | finite_floats | st.booleans())
def test_numbers_and_bools_parse_back_to_themselves(one_row_table: Any,
                                                    value: int | float | bool) -> None:
    if isinstance(value, bool):
        literal = render_bool(value)
    elif isinstance(value, int):
        literal = render_int(value)
    else:
        literal = render_float(value)
    got = _evaluate(one_row_table, v=literal)["v"]
    assert type(got) is type(value) and got == value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(node=strategies.filters(ALL_FILTER_OPERATORS))
def test_every_compiled_filter_parses(node: Any) -> None:
    _filter_table().count_rows(compile_filter(node))


_TABLE: list[Any] = []


def _filter_table() -> Any:
    """A table with the adapter's layout, so compiled filters can be planned on it."""
    if not _TABLE:
        folder = tempfile.mkdtemp(prefix="vp-lancedb-parse-")
        store = vectorport.connect(f"lancedb://{folder}")
        store.create_index("vp_parse", 2, "dotproduct").upsert(
            [{"id": "a", "vector": [1, 0], "metadata": {"a": 1, "tags": ["x"]}}])
        _TABLE.append(lancedb.connect(folder).open_table("vp_parse"))
    return _TABLE[0]


# -- 3. on the engine ---------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_index() -> Iterator[vectorport.Index]:
    with tempfile.TemporaryDirectory() as folder, \
            vectorport.connect(f"lancedb://{folder}") as store:
        yield store.create_index("vp_escaping_fuzz", 2, "dotproduct")


_counter = iter(range(10**9))


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=True, database=None)
@given(values=st.lists(hostile_texts, min_size=1, max_size=6), probe=hostile_texts)
def test_engine_matches_exactly_the_records_with_the_value(
    fuzz_index: vectorport.Index, values: list[str], probe: str
) -> None:
    index = fuzz_index
    namespace = f"fuzz-{next(_counter)}"
    rows = [{"id": f"r{i}", "vector": [1.0, float(i)],
             "metadata": {"text": v, "tags": [v, "fixed"]}} for i, v in enumerate(values)]
    index.upsert(rows, namespace=namespace)
    try:
        for candidate in [*values, probe]:
            for raw in (
                {"text": candidate}, {"text": {"$ne": candidate}},
                {"text": {"$in": [candidate, probe]}}, {"tags": candidate},
                {"tags": {"$all": [candidate, "fixed"]}}, {"text": {"$gt": candidate}},
                {"tags": {"$lte": candidate}}, {"tags": {"$nin": [candidate]}},
            ):
                node = parse_filter(raw)
                want = sorted(r["id"] for r in rows if matches(node, r["metadata"]))
                got = sorted(m.id for m in index.query([1.0, 0.0], filter=raw, top_k=10,
                                                      namespace=namespace))
                assert got == want, raw
    finally:
        index.delete_namespace(namespace)


_EXTREMES = [0, 1, -1, 2**53, 2**53 + 1, -(2**53) - 1, INT64_MAX, INT64_MIN, INT64_MAX - 1,
             0.5, -0.5, 1.0, 2.0**53, 2.0**63, -(2.0**63), 1e300, -1e300, 5e-324]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=True, database=None)
@given(stored=st.lists(st.sampled_from(_EXTREMES) | int64s | finite_floats, min_size=1,
                       max_size=6),
       probe=st.sampled_from(_EXTREMES) | st.integers(-(2**70), 2**70) | finite_floats)
def test_numbers_compare_exactly_across_int_and_float(
    fuzz_index: vectorport.Index, stored: list[int | float], probe: int | float
) -> None:
    index = fuzz_index
    namespace = f"num-{next(_counter)}"
    rows = [{"id": f"n{i}", "vector": [1.0, 0.0], "metadata": {"x": v}}
            for i, v in enumerate(stored)]
    index.upsert(rows, namespace=namespace)
    try:
        for op in ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte"):
            raw = {"x": {op: probe}}
            node = parse_filter(raw)
            want = sorted(r["id"] for r in rows if matches(node, r["metadata"]))
            got = index.query([1.0, 0.0], filter=raw, top_k=10, namespace=namespace)
            assert sorted(m.id for m in got) == want, raw
            assert index.count(namespace, filter=raw) == len(want), raw
    finally:
        index.delete_namespace(namespace)

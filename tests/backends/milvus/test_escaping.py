"""The Milvus escaping function: no string can change an expression's structure.

Three layers of proof:

1. unit tests of the exact text produced for the characters that matter;
2. hypothesis, against milvus-lite's own expression parser: whatever the string, the
   quoted literal is one string token whose value is the string, and a whole compiled
   filter keeps the shape the compiler meant (the same AST as with a harmless value);
3. hypothesis on the engine: records holding arbitrary strings, and ``$eq``/``$ne``/
   ``$in``/ranges on them match exactly the records the oracle matches.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vectorport
from vectorport.adapters.milvus.escaping import (
    dynamic_key,
    json_path,
    quote_string,
    render_list,
    render_scalar,
)
from vectorport.adapters.milvus.filters import compile_filter
from vectorport.conformance import strategies
from vectorport.conformance.dataset import HOSTILE_STRINGS
from vectorport.core.capabilities import ALL_FILTER_OPERATORS
from vectorport.core.errors import ValidationError
from vectorport.core.filters import matches, parse_filter
from vectorport.testing.milvus import milvus_url

pytest.importorskip("pymilvus")
milvus_parser = pytest.importorskip("milvus_lite.search.filter.parser")
milvus_ast = pytest.importorskip("milvus_lite.search.filter.ast")

# Any Unicode text that can exist in UTF-8 (lone surrogates cannot reach Milvus at all).
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
hostile_texts = texts | st.sampled_from(HOSTILE_STRINGS) | st.text(
    st.sampled_from(list('"\'\\\n\r\t ][)(,=!&|$%_{}`;:\x00\x0b\u2028\u00e9\U0001f642')),
    max_size=20,
)


def _parse(expression: str) -> Any:
    return milvus_parser.parse_expr(expression)


# -- 1. exact output ----------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [
    ("plain", '"plain"'),
    ("", '""'),
    ('say "hi"', '"say \\"hi\\""'),
    ("O'Brien", '"O\'Brien"'),
    ("back\\slash", '"back\\\\slash"'),
    ("\\'", '"\\\\\'"'),
    ("line\nbreak\r\ttab", '"line\\nbreak\\r\\ttab"'),
    ("é 日本 🙂", '"é 日本 🙂"'),
    ('"); delete; ("', '"\\"); delete; (\\""'),
])
def test_quote_string_exact(value: str, expected: str) -> None:
    assert quote_string(value) == expected


def test_lone_surrogates_are_refused() -> None:
    with pytest.raises(ValidationError):
        quote_string("a\ud800b")


def test_non_strings_are_refused() -> None:
    with pytest.raises(TypeError):
        quote_string(5)  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "expected"), [
    (True, "true"), (False, "false"), (0, "0"), (-5, "-5"), (2**63 - 1, "9223372036854775807"),
    (2020.0, "2020.0"), (-1.5, "-1.5"), (1e-05, "1e-05"), (1e300, "1e+300"), ("x", '"x"'),
])
def test_render_scalar_exact(value: Any, expected: str) -> None:
    assert render_scalar(value) == expected


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_floats_are_refused(bad: float) -> None:
    with pytest.raises(ValidationError):
        render_scalar(bad)


def test_json_path_needs_an_identifier_field() -> None:
    assert json_path("meta", 's:a"b') == 'meta["s:a\\"b"]'
    with pytest.raises(ValueError):
        json_path('meta"]', "x")


# -- 2. structure, with milvus-lite's parser ----------------------------------------


@settings(max_examples=400, deadline=None)
@given(value=hostile_texts)
def test_a_quoted_string_is_one_literal_with_the_same_value(value: str) -> None:
    node = _parse(f'meta["s:f"] == {quote_string(value)}')
    assert isinstance(node, milvus_ast.CmpOp) and node.op == "=="
    assert isinstance(node.left, milvus_ast.PathAccess) and node.left.path == ("s:f",)
    assert isinstance(node.right, milvus_ast.StringLit)
    assert node.right.value == value


@settings(max_examples=200, deadline=None)
@given(key=hostile_texts)
def test_a_quoted_json_key_is_one_path_step(key: str) -> None:
    node = _parse(f"{json_path('meta', key)} == 1")
    assert isinstance(node.left, milvus_ast.PathAccess)
    assert node.left.path == (key,)


@settings(max_examples=200, deadline=None)
@given(key=hostile_texts)
def test_a_quoted_dynamic_key_is_one_key(key: str) -> None:
    node = _parse(f"{dynamic_key(key)} == 1 and exists {dynamic_key(key)}")
    for access in (node.operands[0].left, node.operands[1].field):
        assert isinstance(access, milvus_ast.MetaAccess)
        assert access.key == key


@settings(max_examples=200, deadline=None)
@given(values=st.lists(hostile_texts, min_size=1, max_size=5))
def test_a_list_literal_keeps_its_elements(values: list[str]) -> None:
    node = _parse(f'json_contains_any(meta["l:f"], {render_list(tuple(values))})')
    assert isinstance(node, milvus_ast.ArrayContainsOp)
    assert [e.value for e in node.values.elements] == values


@settings(max_examples=300, deadline=None)
@given(value=st.integers(-(2**63) + 1, 2**63 - 1)
       | st.floats(allow_nan=False, allow_infinity=False) | st.booleans())
def test_numbers_and_bools_parse_back_to_themselves(value: int | float | bool) -> None:
    node = _parse(f'meta["n:f"] == {render_scalar(value)}')
    literal = node.right
    assert type(literal.value) is type(value)
    assert literal.value == value


def _shape(node: Any) -> Any:
    """The AST without literal values: what an injection would have to change."""
    if isinstance(node, milvus_ast.StringLit):
        return "STR"
    if isinstance(node, milvus_ast.MetaAccess):  # a membership key holds the value
        return "KEY"
    if isinstance(node, tuple):
        return tuple(_shape(n) for n in node)
    if hasattr(node, "__dataclass_fields__"):
        return (type(node).__name__, tuple(
            (name, _shape(getattr(node, name))) for name in node.__dataclass_fields__
            if name != "pos"
        ))
    return node


@settings(max_examples=300, deadline=None)
@given(value=hostile_texts, template=st.sampled_from([
    {"f": "V"}, {"f": {"$ne": "V"}}, {"f": {"$in": ["V", "x"]}}, {"f": {"$nin": ["V"]}},
    {"f": {"$all": ["V", "x"]}}, {"f": {"$gt": "V"}}, {"f": {"$lte": "V"}},
    {"$or": [{"f": "V"}, {"$not": {"g": {"$gte": "V"}}}]},
]), filter_keys=st.booleans())
def test_compiled_filters_keep_their_shape_whatever_the_value(
    value: str, template: dict[str, Any], filter_keys: bool
) -> None:
    def fill(obj: Any, v: str) -> Any:
        if obj == "V":
            return v
        if isinstance(obj, dict):
            return {k: fill(x, v) for k, x in obj.items()}
        if isinstance(obj, list):
            return [fill(x, v) for x in obj]
        return obj

    hostile = _parse(compile_filter(parse_filter(fill(template, value)),
                                    filter_keys=filter_keys))
    harmless = _parse(compile_filter(parse_filter(fill(template, "harmless")),
                                     filter_keys=filter_keys))
    assert _shape(hostile) == _shape(harmless)


# -- 3. on the engine ---------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_index() -> Iterator[vectorport.Index]:
    with milvus_url() as url, vectorport.connect(url) as store:
        index = store.create_index("vp_escaping_fuzz", 2, "dotproduct", index_type="flat")
        yield index


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
                {"text": candidate},
                {"text": {"$ne": candidate}},
                {"text": {"$in": [candidate, probe]}},
                {"tags": candidate},
                {"tags": {"$all": [candidate, "fixed"]}},
                {"text": {"$gt": candidate}},
                {"tags": {"$lte": candidate}},
            ):
                node = parse_filter(raw)
                want = sorted(r["id"] for r in rows if matches(node, r["metadata"]))
                got = sorted(m.id for m in index.query([1.0, 0.0], filter=raw, top_k=10,
                                                      namespace=namespace))
                assert got == want, raw
        assert index.count(namespace) == len(rows)
    finally:
        index.delete_namespace(namespace)


@settings(max_examples=300, deadline=None)
@given(node=strategies.filters(ALL_FILTER_OPERATORS))
def test_every_compiled_filter_parses(node: Any) -> None:
    _parse(compile_filter(node))


@settings(max_examples=200, deadline=None)
@given(value=hostile_texts, filter_keys=st.booleans())
def test_explain_masks_every_filter_value_membership_keys_included(
        value: str, filter_keys: bool) -> None:
    """What ``explain`` shows of a filter is the same whatever its values: a membership
    key of the filter-keys layout (``$meta["e:tags:<value>"]``) holds a value too."""
    from vectorport.adapters.milvus.explain import mask_literals

    def masked(v: str) -> tuple[str, tuple[str, ...]]:
        raw = {"$or": [{"tags": {"$in": [v, "x"]}}, {"tags": {"$all": [v]}},
                       {"$not": {"tags": v}}]}
        return mask_literals(compile_filter(parse_filter(raw), filter_keys=filter_keys))

    assert masked(value) == masked("harmless")

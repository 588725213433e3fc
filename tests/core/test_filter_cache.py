"""Parsed filters are memoised by a frozen copy of the dict: a hit gives exactly what
parsing gives (same tree, same value types), refusals are never cached, a dict changed
after a call is parsed again, and each backend's own checks still run on every call."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vectorport
from vectorport import FilterError, parse_filter, render_filter
from vectorport.conformance import strategies
from vectorport.core import requests
from vectorport.core.capabilities import ALL_FILTER_OPERATORS
from vectorport.core.errors import UnsupportedFeatureError, VectorportError
from vectorport.core.filters import frozen
from vectorport.core.limits import filter_terms


def _target() -> requests.Target:
    with vectorport.connect("memory://") as store:
        return requests.Target(store.backend, store.capabilities,
                               store.build_spec("filter_cache", 4))


TARGET = _target()


def _uncached(raw: Any) -> tuple[str, str]:
    try:
        node = parse_filter(raw)
        if node is not None:
            filter_terms(node)
    except VectorportError as exc:
        return "error", f"{type(exc).__name__}: {exc}"
    return "ok", repr(node)


def _cached(raw: Any) -> tuple[str, str]:
    try:
        node = requests.check_filter(TARGET, raw)
    except VectorportError as exc:
        return "error", f"{type(exc).__name__}: {exc}"
    return "ok", repr(node)  # repr tells 1 from 1.0 from True, and 0.0 from -0.0


@settings(max_examples=300, deadline=None)
@given(strategies.filters(ALL_FILTER_OPERATORS))
def test_a_hit_is_the_parse(node: Any) -> None:
    raw = render_filter(node)
    first, second = _cached(raw), _cached(render_filter(node))
    assert first == second == _uncached(raw)


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**65), 2**65),
                         st.floats(allow_nan=True), st.text(max_size=3),
                         st.sampled_from(["\ud800", "$eq", "$in", "$gt", "$and", "$not"]))
junk = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner),
        st.dictionaries(st.one_of(st.sampled_from(["a", "b", "$and", "$or", "$not", "$in",
                                                   "$eq", "$gt", "$exists", "$x", "1a"]),
                                  st.integers(0, 2)), inner, max_size=3)),
    max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "$and", "$or", "$nor", "$not"]), junk,
                       max_size=3))
def test_any_input_gets_the_parsers_answer(raw: dict[str, Any]) -> None:
    assert _cached(raw) == _uncached(raw)
    assert _cached(raw) == _uncached(raw)  # and again, from the cache when it was valid


def test_a_changed_dict_is_parsed_again() -> None:
    flt: dict[str, Any] = {"$or": [{"a": 1}, {"b": {"$in": ["x", "y"]}}]}
    before = requests.check_filter(TARGET, flt)
    flt["$or"][0]["a"] = 2
    flt["$or"][1]["b"]["$in"].append("z")
    after = requests.check_filter(TARGET, flt)
    assert after == parse_filter(flt) and after != before
    flt["$or"][0]["a"] = None  # now invalid: refused, not served from the earlier parse
    with pytest.raises(FilterError):
        requests.check_filter(TARGET, flt)


@pytest.mark.parametrize("values", [(1, 1.0, True), (0.0, -0.0), ("1", 1)])
def test_equal_python_values_of_other_types_are_distinct_keys(values: tuple[Any, ...]) -> None:
    for value in values * 2:
        assert _cached({"a": value}) == _uncached({"a": value})
    assert len({frozen.freeze({"a": v}) for v in values}) == len(values)


def test_unusual_forms_are_parsed_uncached() -> None:
    import types

    import numpy as np

    assert frozen.freeze(types.MappingProxyType({"a": 1})) is None
    assert frozen.freeze({"a": np.float64(1.5)}) is None
    assert _cached({"a": np.float64(1.5)}) == _uncached({"a": np.float64(1.5)})
    assert frozen.thaw(frozen.freeze({"a": [1, (2, "x")]}) or ()) == {"a": [1, (2, "x")]}


def test_backend_checks_run_on_every_hit() -> None:
    caps = dataclasses.replace(TARGET.capabilities,
                               filter_operators=TARGET.capabilities.filter_operators - {"$in"})
    narrow = dataclasses.replace(TARGET, capabilities=caps)
    flt = {"a": {"$in": [1, 2]}}
    assert requests.check_filter(TARGET, flt) is not None
    for _ in range(2):
        with pytest.raises(UnsupportedFeatureError, match=r"\$in"):
            requests.check_filter(narrow, flt)

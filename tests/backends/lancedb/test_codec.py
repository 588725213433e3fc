"""The LanceDB row codec: metadata encoded to the ``meta`` JSON text and the ``tokens``
list, and decoded back with every kind kept (1 vs 1.0 vs True, tuples of strings)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from vectorport.adapters.lancedb import codec
from vectorport.core.validation import INT64_MAX, INT64_MIN

_text = st.text(st.characters(codec="utf-8"), max_size=12)  # no lone surrogates
_keys = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
_values = st.one_of(
    _text,
    st.booleans(),
    st.integers(INT64_MIN, INT64_MAX),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(_text, min_size=1, max_size=4).map(tuple),
)


def _kinds(metadata: dict[str, Any]) -> dict[str, tuple[type, Any]]:
    return {k: (type(v), v) for k, v in metadata.items()}


@given(st.dictionaries(_keys, _values, max_size=6))
def test_metadata_round_trips_with_its_kinds(metadata: dict[str, Any]) -> None:
    text, _tokens = codec.encode_metadata(metadata)
    assert _kinds(codec.decode_metadata(text)) == _kinds(metadata)


@given(st.dictionaries(_keys, _values, max_size=6))
def test_the_json_text_is_what_the_json_module_reads(metadata: dict[str, Any]) -> None:
    text, tokens = codec.encode_metadata(metadata)
    parsed = json.loads(text)
    for key, value in metadata.items():
        kind = type(value)
        if kind is tuple:
            assert parsed[codec.tagged(codec.LIST, key)] == list(value)
            assert parsed[codec.tagged(codec.LIST_MIN, key)] == min(value)
            assert parsed[codec.tagged(codec.LIST_MAX, key)] == max(value)
            assert {codec.value_token(key, item) for item in value} <= set(tokens)
        else:
            tag = {str: codec.STRING, bool: codec.BOOL, int: codec.INT, float: codec.FLOAT}[kind]
            stored = parsed[codec.tagged(tag, key)]
            assert type(stored) is kind and stored == value
        assert key in tokens


def test_subclasses_are_stored_as_their_plain_kind() -> None:
    class Text(str):
        pass

    class Number(int):
        pass

    text, tokens = codec.encode_metadata({"s": Text("x"), "n": Number(3)})
    assert json.loads(text) == {"s_s": "x", "i_n": 3}
    assert tokens == ["s", "s=x", "n"]

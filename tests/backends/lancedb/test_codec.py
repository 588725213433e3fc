"""The LanceDB row codec: metadata encoded to the ``meta`` JSON text and the ``tokens``
list, and decoded back with every kind kept (1 vs 1.0 vs True, tuples of strings)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
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


# -- the column-wise batch encoder against the per-record one -----------------------------

_shared_keys = st.lists(_keys, min_size=0, max_size=5, unique=True)


@st.composite
def _batches(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Records that mostly share keys and kinds (the fast path), with now and then a
    record of other keys, another key order or a value of another kind (the fallback)."""
    keys = draw(_shared_keys)
    kinds = {key: draw(st.sampled_from(["s", "i", "f", "b", "l"])) for key in keys}
    by_kind = {"s": _text, "i": st.integers(INT64_MIN, INT64_MAX),
               "f": st.floats(allow_nan=False, allow_infinity=False), "b": st.booleans(),
               "l": st.lists(_text, min_size=1, max_size=4).map(tuple)}
    shared = st.fixed_dictionaries({key: by_kind[kind] for key, kind in kinds.items()})
    odd = st.dictionaries(_keys, _values, max_size=4)
    return draw(st.lists(st.one_of(shared, shared, shared, odd), max_size=12))


def _by_record(metadatas: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    encoded = [codec.encode_metadata(m) for m in metadatas]
    return [text for text, _ in encoded], [tokens for _, tokens in encoded]


@settings(deadline=None)
@given(_batches())
def test_encode_batch_is_encode_metadata_record_by_record(metadatas: list[dict[str, Any]]
                                                           ) -> None:
    texts, tokens = codec.encode_batch(metadatas)
    expected_texts, expected_tokens = _by_record(metadatas)
    assert texts == expected_texts  # the same JSON text, byte for byte
    # the same tokens, each once (their order within a record means nothing to array_has)
    assert [sorted(t) for t in tokens] == [sorted(t) for t in expected_tokens]
    assert all(len(set(t)) == len(t) for t in tokens)


def test_encode_batch_takes_subclasses_record_by_record() -> None:
    class Text(str):
        pass

    metadatas: list[dict[str, Any]] = [{"s": "a", "n": 1}, {"s": Text("x"), "n": 3},
                                       {"s": "b", "n": 2.5}, {"s": "c", "n": True}]
    assert codec.encode_batch(metadatas) == _by_record(metadatas)


@settings(deadline=None)  # the first example imports numpy and pyarrow
@given(_batches(), st.sampled_from(["", "ns1"]), st.data())
def test_record_batch_holds_each_records_columns(metadatas: list[dict[str, Any]],
                                                 namespace: str, data: st.DataObject) -> None:
    import numpy as np

    from vectorport.core.types import IndexSpec, Record

    spec = IndexSpec(name="codec_batch", dimension=3, metric="cosine")
    records = [Record(id=f"r{i}", vector=np.array([i, 1, 2], dtype=np.float32), metadata=m,
                      document=data.draw(st.one_of(st.none(), _text)))
               for i, m in enumerate(metadatas)]
    table = codec.record_batch(codec.schema(spec), 3, namespace, records)
    assert table.schema == codec.schema(spec)
    rows = table.to_pylist()
    assert len(rows) == len(records)
    for row, record in zip(rows, records, strict=True):
        text, tokens = codec.encode_metadata(record.metadata)
        assert row[codec.PK] == codec.make_pk(namespace, record.id)
        assert (row[codec.NAMESPACE], row[codec.ID]) == (namespace, record.id)
        assert row[codec.VECTOR] == record.vector.tolist()
        assert row[codec.META] == text and sorted(row[codec.TOKENS]) == sorted(tokens)
        assert row[codec.DOCUMENT] == record.document

"""The collection layouts of :mod:`vectorport.adapters.milvus.layout`, on milvus-lite 3.

New collections store each list bounds first in ``meta`` and each record's filter keys
in the dynamic field (marker ``vectorport.layout = "3"``, no ``aux`` field for dense
indexes); collections of marker ``"2"`` have no dynamic field and filters read ``meta``;
collections made before the marker keep the bounds in ``aux``. Covered here: lists of
every shape, large ones included, filter and round-trip exactly; the stored ``meta``
stays within 4/3 of the metadata's JSON, so 40 KiB of metadata of the worst shape fits
one 64 KiB JSON value; a collection written in either earlier layout (by the adapter
with new collections switched to that layout, which is the earlier code path) is read,
filtered, counted and written to by a fresh connection of the new code exactly as the
oracle says; a marker this version does not know is refused; and the engine property
the writes rely on (an insert of an existing key replaces the record whole, its dynamic
keys included) holds on the installed milvus-lite.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vectorport
from vectorport.core.filters import matches, parse_filter

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

from vectorport.adapters.milvus import adapter as milvus_adapter
from vectorport.adapters.milvus import layout
from vectorport.testing.milvus import lite_major_version, milvus_url

pytestmark = pytest.mark.skipif(lite_major_version() < 3,
                                reason="milvus-lite 2 keeps no collection properties: "
                                "one layout only")

_names = (f"vp_layout_{i}" for i in itertools.count())
_DIM = 4

_WORDS = ["", "a", "ab", "b", "k", "kk", "m", "z", "é", "\n"]
BIG = "m" * 19_000
HUGE = "m" * 38_000 + "q"
HIGH, LOW = "q" + "m" * 17_000, "b" + "m" * 16_500


def _records() -> list[dict[str, Any]]:
    """Lists of every shape: short, repeated, one element, sorted or not, and large ones
    whose bounds could not also sit beside them in one 64 KiB JSON value."""
    metadata: list[dict[str, Any]] = [
        {"t": ["b", "a", "c"], "n": 1},
        {"t": ["z"]},
        {"t": ["k", "k"], "s": "k"},
        {"t": [BIG, "a" + BIG[:-2]]},  # two elements, largest first
        {"t": [HUGE]},  # one element
        {"t": ["k" * 3_000, HIGH, "c", LOW]},  # the bounds from inside the list
        {"s": "m", "n": 2.5},
        {},
    ]
    rng = np.random.default_rng(7)
    return [{"id": f"r{i}", "vector": rng.standard_normal(_DIM).astype(np.float32),
             "metadata": m} for i, m in enumerate(metadata)]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with milvus_url() as launched:
        yield str(launched)


def _same_metadata(got: dict[str, Any], want: dict[str, Any]) -> bool:
    canonical = {k: tuple(v) if isinstance(v, list) else v for k, v in want.items()}
    return got == canonical and all(type(got[k]) is type(canonical[k]) for k in got)


def _check(index: vectorport.Index, records: list[dict[str, Any]], raw: dict[str, Any]
           ) -> None:
    node = parse_filter(raw)
    want = sorted(r["id"] for r in records if matches(node, r["metadata"]))
    got = sorted(m.id for m in index.query(np.ones(_DIM, np.float32), top_k=100, filter=raw))
    assert got == want, raw
    assert index.count(filter=raw) == len(want), raw


def _reads_as_the_oracle(index: vectorport.Index, records: list[dict[str, Any]]) -> None:
    """Every record fetched back exactly, and ranges, membership, presence, negations
    and the count answered as the oracle answers them."""
    fetched = index.fetch([r["id"] for r in records])
    for record in records:
        assert _same_metadata(dict(fetched[record["id"]].metadata), record["metadata"])
    for op, value in itertools.product(["$gt", "$gte", "$lt", "$lte"], _WORDS):
        _check(index, records, {"t": {op: value}})
        _check(index, records, {"$not": {"t": {op: value}}})
    for raw in ({"t": "k"}, {"t": {"$in": ["z", "a"]}}, {"s": {"$exists": True}},
                {"n": {"$gte": 1}}, {"t": {"$all": ["a", "b"]}}, {"t": {"$ne": "z"}}):
        _check(index, records, raw)
    assert index.count() == len(records)


_BOUNDS = [*_WORDS, BIG, BIG[:-1], "a" + BIG[:-2], HUGE, "m" * 38_000, HIGH, HIGH + "a",
           HIGH[:-1], LOW, LOW[:-1], LOW + "a", "k" * 3_000, "k" * 3_001]
_VALUES = st.one_of(st.sampled_from(_BOUNDS), st.text(st.characters(codec="utf-8"), max_size=3))
_FILTERS = st.builds(lambda op, value, negate: {"$not": {"t": {op: value}}} if negate
                     else {"t": {op: value}},
                     st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), _VALUES, st.booleans())


def test_new_collections_keep_filter_keys_and_have_no_aux(url: str) -> None:
    with vectorport.connect(url) as store:
        index = store.create_index(next(_names), _DIM, "cosine")
        client = index._adapter._client  # type: ignore[attr-defined]
        description = client.describe_collection(index.name)
        assert description["properties"][layout.LAYOUT_PROPERTY] == layout.FILTER_KEYS
        assert description["enable_dynamic_field"]
        assert layout.AUX not in [f["name"] for f in description["fields"]]
        index.upsert([{"id": "a", "vector": np.ones(_DIM, np.float32),
                       "metadata": {"t": ["b", "a", "b"], "n": 1, "s": "x", "f": False}}])
        assert layout.META not in [f["name"] for f in description["fields"]]
        stored = client.query(index.name, filter='pk == "/a"', output_fields=["*"])[0]
        # the metadata is in the dynamic field, lists bounds first, with filter keys
        assert {k: v for k, v in stored.items() if ":" in k} == {
            "l:t": ["a", "b", "b", 1 * 3 + 0], "<:t": "a", ">:t": "b", "e:t:b": True,
            "e:t:a": True, "n:n": 1, "s:s": "x", "b:f": False}
        # the filters read the dynamic field only
        explained = index.explain(np.ones(_DIM, np.float32), top_k=1,
                                  filter={"t": "a", "n": {"$gt": 0}})
        request = str(explained.request)
        assert "$meta[" in request and not re.search(r'(?<!\$)meta\[', request)
        sparse = store.create_index(next(_names), _DIM, "dotproduct", sparse=True)
        fields = [f["name"] for f in client.describe_collection(sparse.name)["fields"]]
        assert layout.AUX in fields  # the zero weights of sparse vectors live there


@pytest.fixture(scope="module")
def large_lists(url: str) -> Iterator[tuple[vectorport.Index, list[dict[str, Any]]]]:
    records = _records()
    with vectorport.connect(url) as store:
        index = store.create_index(next(_names), _DIM, "cosine")
        index.upsert(records)
        yield index, records


def test_large_lists_round_trip_in_their_order(
        large_lists: tuple[vectorport.Index, list[dict[str, Any]]]) -> None:
    index, records = large_lists
    fetched = index.fetch([r["id"] for r in records])
    for record in records:
        assert _same_metadata(dict(fetched[record["id"]].metadata), record["metadata"])
    client = index._adapter._client  # type: ignore[attr-defined]
    stored = {row["pk"]: row["l:t"] for row in client.query(
        index.name, filter='pk in ["/r0", "/r2", "/r3", "/r4", "/r5"]',
        output_fields=["pk", layout.DYNAMIC])}
    assert stored["/r0"] == ["a", "c", "b", 1 * 3 + 2]  # smallest, largest, rest, i * n + j
    assert stored["/r2"] == ["k", "k"]  # all equal: the user's order
    assert stored["/r3"] == ["a" + BIG[:-2], BIG, 1 * 2 + 0]
    assert stored["/r4"] == [HUGE]
    assert stored["/r5"] == [LOW, HIGH, "k" * 3_000, "c", 3 * 4 + 1]


def test_the_worst_shape_of_40_kib_fits_one_json_value(url: str) -> None:
    """Many two-element lists in descending order (the most bytes of ``meta`` per byte
    of metadata: the tag, the reordering int) and number fields of one-letter keys."""
    lists = {f"k{i:04d}": ["x", ""] for i in range(2_300)}
    numbers = {f"n{i}": 0 for i in range(100)}
    metadata: dict[str, Any] = {**lists, **numbers}
    size = len(json.dumps(metadata, separators=(",", ":")).encode())
    assert 38_000 < size <= 40 * 1024
    stored = len(layout.encode_metadata_bounds_first(
        {k: tuple(v) if isinstance(v, list) else v for k, v in metadata.items()}))
    assert stored <= size * 4 / 3 < layout.JSON_MAX_BYTES
    with vectorport.connect(url) as store:
        index = store.create_index(next(_names), _DIM, "cosine")
        records = [{"id": "w", "vector": np.ones(_DIM, np.float32), "metadata": metadata}]
        index.upsert(records)
        assert _same_metadata(dict(index.fetch(["w"])["w"].metadata), metadata)
        _check(index, records, {"k0007": {"$gte": "x"}})
        _check(index, records, {"$not": {"k0007": {"$lt": "a"}}})


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_FILTERS)
def test_ranges_over_large_lists_match_the_oracle(
        large_lists: tuple[vectorport.Index, list[dict[str, Any]]], raw: dict[str, Any]) -> None:
    index, records = large_lists
    _check(index, records, raw)


def test_a_collection_of_the_old_layout_stays_readable(url: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    records = _records()[:3] + _records()[6:]  # the old layout has no room for large lists
    name = next(_names)
    with monkeypatch.context() as patched:
        # new collections in the old layout: the code path every collection made before
        # the marker was written by (bounds in aux, no marker property)
        patched.setattr(milvus_adapter, "new_layout", lambda engine: None)
        with vectorport.connect(url) as old:
            index = old.create_index(name, _DIM, "cosine")
            index.upsert(records[:3])
            client = index._adapter._client  # type: ignore[attr-defined]
            description = client.describe_collection(name)
            assert layout.LAYOUT_PROPERTY not in (description.get("properties") or {})
            assert layout.AUX in [f["name"] for f in description["fields"]]
    with vectorport.connect(url) as new:
        index = new.index(name)
        index.upsert(records[3:])  # the new code writes the old layout into it
        rows = index._adapter._client.query(  # type: ignore[attr-defined]
            name, filter='pk == "/r0"', output_fields=["meta", "aux"])
        assert rows[0]["aux"] == {"<:t": "a", ">:t": "c"} and "<:t" not in rows[0]["meta"]
        _reads_as_the_oracle(index, records)


# -- the stored form of a list, without the engine -----------------------------------

_items = st.lists(st.text(st.characters(codec="utf-8"), max_size=3), min_size=1, max_size=8)


@given(_items)
def test_bounds_first_puts_the_bounds_first_and_comes_back(items: list[str]) -> None:
    stored = layout.bounds_first(tuple(items))
    assert stored[0] == min(items)
    assert stored[1 if len(items) > 1 else 0] == max(items)
    assert layout.in_user_order(stored) == items
    assert sorted(v for v in stored if isinstance(v, str)) == sorted(items)


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,3}", fullmatch=True), st.one_of(
    _items.map(tuple), st.integers(-(2**63), 2**63 - 1), st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=4)), max_size=6))
def test_meta_is_at_most_four_thirds_of_the_metadata(metadata: dict[str, Any]) -> None:
    import orjson

    plain = {k: list(v) if isinstance(v, tuple) else v for k, v in metadata.items()}
    stored = layout.encode_metadata_bounds_first(metadata)
    assert len(stored) <= len(orjson.dumps(plain)) * 4 / 3
    assert layout.decode_metadata(orjson.loads(stored)) == metadata


def test_a_collection_of_the_bounds_in_meta_layout_stays_readable(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Marker "2": lists bounds first in ``meta``, no dynamic field; filters read
    ``meta``. Written by the adapter with new collections in that layout (the code path
    every such collection was made by), then by a fresh connection of the new code."""
    records = _records()
    name = next(_names)
    with monkeypatch.context() as patched:
        patched.setattr(milvus_adapter, "new_layout", lambda engine: layout.BOUNDS_IN_META)
        with vectorport.connect(url) as old:
            index = old.create_index(name, _DIM, "cosine")
            index.upsert(records[:4])
            client = index._adapter._client  # type: ignore[attr-defined]
            description = client.describe_collection(name)
            assert description["properties"][layout.LAYOUT_PROPERTY] == layout.BOUNDS_IN_META
            assert not description["enable_dynamic_field"]
    with vectorport.connect(url) as new:
        index = new.index(name)
        index.upsert(records[4:])
        index.upsert(records[2:3])  # a replace
        explained = index.explain(np.ones(_DIM, np.float32), top_k=1, filter={"t": "k"})
        assert "$meta" not in str(explained.request)
        _reads_as_the_oracle(index, records)


def test_a_layout_this_version_does_not_know_is_refused(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name = next(_names)
    with monkeypatch.context() as patched:
        patched.setattr(milvus_adapter, "new_layout", lambda engine: "9")
        with vectorport.connect(url) as future:
            future.create_index(name, _DIM, "cosine")
    with vectorport.connect(url) as store:
        with pytest.raises(vectorport.BackendError, match=r"layout '9'.*upgrade vectorport"):
            store.index(name).count()
        store.adapter._client.drop_collection(name)  # type: ignore[attr-defined]


def test_an_insert_of_a_stored_key_replaces_the_record_whole(url: str) -> None:
    """What the adapter's writes rely on (``Engine.inserts_replace``): an insert of a
    stored primary key leaves one record, the new one, with none of the old record's
    fields or dynamic keys; across a seal and a reopen. (milvus-lite's upsert merges.)"""
    from pymilvus import DataType, MilvusClient

    path = str(url).removeprefix("milvus://")
    client = MilvusClient(uri=path)
    name = next(_names)
    schema = client.create_schema(auto_id=False, enable_dynamic_field=True)
    schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=16)
    schema.add_field("v", DataType.FLOAT_VECTOR, dim=2)
    schema.add_field("j", DataType.JSON)
    index_params = client.prepare_index_params()
    index_params.add_index("v", index_type="FLAT", metric_type="L2")
    client.create_collection(name, schema=schema, index_params=index_params)
    try:
        client.insert(name, [{"pk": "a", "v": [1, 2], "j": {"x": 1}, "old": 1},
                             {"pk": "b", "v": [3, 4], "j": {}, "old": 2}])
        client.flush(name)
        client.insert(name, [{"pk": "a", "v": [5, 6], "j": {"y": 2}, "new": 3}])
        for reopened in (False, True):
            if reopened:
                client.flush(name)
                client.close()
                client = MilvusClient(uri=path)
            rows = client.query(name, filter='pk >= ""', output_fields=["*"])
            assert sorted((r["pk"], r["j"], r.get("old"), r.get("new")) for r in rows) == [
                ("a", {"y": 2}, None, 3), ("b", {}, 2, None)]
            assert [r["pk"] for r in client.query(
                name, filter='exists $meta["old"]', output_fields=["pk"])] == ["b"]
    finally:
        client.drop_collection(name)
        client.close()

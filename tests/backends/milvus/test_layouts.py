"""The two collection layouts of :mod:`vectorport.adapters.milvus.layout`, on milvus-lite.

New collections keep list bounds in ``meta`` (marker ``vectorport.layout = "2"``, no
``aux`` field for dense indexes); collections made before the marker keep them in
``aux``. Covered here: a collection written in the old layout (by the adapter with new
collections switched to the old layout, which is the old code path: bounds in ``aux``,
no marker) is read, filtered, counted and written to by a fresh connection of the new
code exactly as the oracle says; and records whose bounds do not fit beside their lists
in one JSON value (stored bounds first) filter and round-trip exactly.
"""

from __future__ import annotations

import itertools
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
    """Lists of every shape: short, repeated, one element, and large ones whose bounds
    cannot sit beside them in one 64 KiB JSON value."""
    metadata: list[dict[str, Any]] = [
        {"t": ["b", "a", "c"], "n": 1},
        {"t": ["z"]},
        {"t": ["k", "k"], "s": "k"},
        {"t": [BIG, "a" + BIG[:-2]]},  # two elements, bounds stored first
        {"t": [HUGE]},  # one element, bounds stored first
        {"t": ["k" * 3_000, HIGH, "c", LOW]},  # bounds first, from inside the list
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


_BOUNDS = [*_WORDS, BIG, BIG[:-1], "a" + BIG[:-2], HUGE, "m" * 38_000, HIGH, HIGH + "a",
           HIGH[:-1], LOW, LOW[:-1], LOW + "a", "k" * 3_000, "k" * 3_001]
_VALUES = st.one_of(st.sampled_from(_BOUNDS), st.text(st.characters(codec="utf-8"), max_size=3))
_FILTERS = st.builds(lambda op, value, negate: {"$not": {"t": {op: value}}} if negate
                     else {"t": {op: value}},
                     st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), _VALUES, st.booleans())


def test_new_collections_keep_bounds_in_meta_and_have_no_aux(url: str) -> None:
    with vectorport.connect(url) as store:
        index = store.create_index(next(_names), _DIM, "cosine")
        client = index._adapter._client  # type: ignore[attr-defined]
        description = client.describe_collection(index.name)
        assert description["properties"][layout.LAYOUT_PROPERTY] == layout.BOUNDS_IN_META
        assert layout.AUX not in [f["name"] for f in description["fields"]]
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
    stored = {row["pk"]: row["meta"] for row in client.query(
        index.name, filter='pk in ["/r3", "/r4", "/r5"]', output_fields=["pk", "meta"])}
    assert stored["/r3"]["o:t"] == [1, 0] and stored["/r4"]["u:t"] == 1  # bounds first
    assert stored["/r5"]["l:t"] == [LOW, HIGH, "k" * 3_000, "c"]
    assert stored["/r5"]["o:t"] == [3, 1] and "<:t" not in stored["/r5"]


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
        patched.setattr(milvus_adapter, "bounds_in_meta", lambda engine: False)
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
        fetched = index.fetch([r["id"] for r in records])
        for record in records:
            assert _same_metadata(dict(fetched[record["id"]].metadata), record["metadata"])
        for op, value in itertools.product(["$gt", "$gte", "$lt", "$lte"], _WORDS):
            _check(index, records, {"t": {op: value}})
            _check(index, records, {"$not": {"t": {op: value}}})
        for raw in ({"t": "k"}, {"t": {"$in": ["z", "a"]}}, {"s": {"$exists": True}},
                    {"n": {"$gte": 1}}, {"t": {"$all": ["a", "b"]}}):
            _check(index, records, raw)

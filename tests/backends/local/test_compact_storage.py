"""The local engine's compact columns: metadata shared between records keeps every
record's exact kinds, key order and isolation from callers; ids are the store's own
copies; cached subset copies stay within their memory share and are dropped when the
data changes. Expected answers come from the oracle and the adapter kit's exact scores."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import vectorport
from vectorport.adapterkit import exact_scores
from vectorport.adapters.local.engine import NamespaceData
from vectorport.core.filters.oracle import matches
from vectorport.core.filters.parse import parse_filter
from vectorport.core.types import Record

DIM = 4
# values equal in Python (1 == 1.0 == True, 0.0 == -0.0) but of distinct kinds
KINDS: list[dict[str, Any]] = [
    {"v": 1}, {"v": 1.0}, {"v": True}, {"v": 0.0}, {"v": -0.0}, {"v": 0}, {"v": False},
    {"v": "1"}, {"v": ("1",)}, {}, {"w": 1, "v": 1}, {"v": 1, "w": 1},
]


@pytest.fixture
def store() -> Iterator[vectorport.Store]:
    with vectorport.connect("memory://") as s:
        yield s


def _kinds(value: Any) -> Any:
    """A value with its type and float sign spelled out (``1 == True`` otherwise)."""
    if isinstance(value, float):
        return (float, value, np.signbit(value))
    return (type(value), value)


def _same(got: Any, want: dict[str, Any]) -> bool:
    return list(got.items()) == list(want.items()) and all(
        _kinds(got[k]) == _kinds(want[k]) for k in want)


def test_shared_metadata_keeps_each_records_kinds_and_key_order(
        store: vectorport.Store) -> None:
    index = store.create_index("compact_kinds", DIM, "cosine")
    rows = [(f"r{i:03d}", np.full(DIM, 1.0 + i, dtype=np.float32), KINDS[i % len(KINDS)])
            for i in range(6 * len(KINDS))]
    index.upsert(rows)
    fetched = {rid: rec.metadata for rid, rec in index.fetch([r[0] for r in rows]).items()}
    for rid, _, want in rows:
        assert _same(fetched[rid], want), (rid, fetched[rid], want)
    for raw in ({"v": 1}, {"v": True}, {"v": 0.0}, {"v": {"$in": ["1", "2"]}}, {"v": {"$in": [0, 1]}},
                {"v": {"$exists": False}}, {"w": 1}):
        node = parse_filter(raw)
        want_ids = sorted(rid for rid, _, meta in rows if matches(node, meta))
        assert sorted(index.list_ids(filter=raw).ids) == want_ids, raw
        assert index.count(filter=raw) == len(want_ids), raw


def test_callers_cannot_change_stored_metadata(store: vectorport.Store) -> None:
    index = store.create_index("compact_isolation", DIM, "cosine")
    index.upsert([(f"r{i}", np.ones(DIM, dtype=np.float32) + i, {"k": "same"})
                  for i in range(5)])
    got = index.query(np.ones(DIM, dtype=np.float32), top_k=5)
    for match in got:
        assert match.metadata is not None
        match.metadata["k"] = "changed"  # type: ignore[index]
    fetched = index.fetch(["r0"])["r0"]
    fetched.metadata["k"] = "changed"  # type: ignore[index]
    again = index.query(np.ones(DIM, dtype=np.float32), top_k=5)
    assert [m.metadata for m in again] == [{"k": "same"}] * 5
    assert index.fetch(["r1"])["r1"].metadata == {"k": "same"}


def test_ids_are_kept_equal_to_the_callers(store: vectorport.Store) -> None:
    index = store.create_index("compact_ids", DIM, "euclidean")
    ids = ["a", "ä-ü", "x" * 200, "emoji-\U0001f600", "a"]  # a repeat: the last one wins
    vectors = np.arange(len(ids) * DIM, dtype=np.float32).reshape(len(ids), DIM)
    index.upsert(list(zip(ids, vectors, [{"n": i} for i in range(len(ids))], strict=True)))
    assert sorted(index.list_ids().ids) == sorted(set(ids))
    assert index.fetch(["a"])["a"].metadata == {"n": 4}
    assert np.array_equal(index.fetch(["a"])["a"].vector, vectors[4])


def _records(n: int, rng: np.random.Generator) -> list[Record]:
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    return [Record(f"id{i:04d}", vectors[i], {"g": i % 5, "h": i % 3}) for i in range(n)]


def _expected(data: list[Record], raw: dict[str, Any], query: np.ndarray[Any, Any],
              top_k: int) -> list[tuple[str, float]]:
    node = parse_filter(raw)
    kept = [r for r in data if matches(node, r.metadata)]
    scores = exact_scores("cosine", query, np.stack([r.vector for r in kept]))
    pairs = sorted(((r.id, float(s)) for r, s in zip(kept, scores, strict=True)),
                   key=lambda p: (-p[1], p[0]))
    return pairs[:top_k]


def test_subset_copies_stay_within_their_share_and_follow_writes(
        store: vectorport.Store) -> None:
    rng = np.random.default_rng(7)
    data = _records(400, rng)
    space = NamespaceData(DIM)
    space.put(data)
    filters = [{"g": g} for g in range(5)] + [{"h": h} for h in range(3)]
    for raw in filters:  # 20% and 33% subsets: they cannot all keep copies
        subset = space.subset(parse_filter(raw), "cosine")
        assert subset is not None and subset.matrix is not None  # the newest always fits
        copied = sum(len(s.rows) for s in space._subsets.values() if s.matrix is not None)
        assert copied <= len(space) // 2
        want = [i for i, r in enumerate(data) if matches(parse_filter(raw), r.metadata)]
        assert subset.rows.tolist() == want
    space.put([Record("id0000", data[0].vector, {"g": 4, "h": 2})])  # a write: all stale
    data[0] = Record("id0000", data[0].vector, {"g": 4, "h": 2})
    subset = space.subset(parse_filter({"g": 4}), "cosine")
    assert subset is not None and len(space._subsets) == 1
    assert 0 in subset.rows.tolist()

    # through the facade: filtered answers equal the exact reference, batch and single
    index = store.create_index("compact_subsets", DIM, "cosine")
    index.upsert(data)
    queries = rng.standard_normal((6, DIM)).astype(np.float32)
    for _ in range(2):
        for raw in filters:
            batch = index.query_many(queries, top_k=7, filter=raw)
            for q, got in zip(queries, batch, strict=True):
                want = _expected(data, raw, q, 7)
                assert [m.id for m in got] == [rid for rid, _ in want]
                assert [m.score for m in got] == pytest.approx([s for _, s in want],
                                                               abs=1e-12)
                single = index.query(q, top_k=7, filter=raw)
                assert [(m.id, m.score) for m in single] == [(m.id, m.score) for m in got]

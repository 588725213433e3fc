"""A single dense query takes its own path through the local engine (scalar margin,
floor and scores: vectorport.adapters.local.dense.answer_one), and a filtered query
reuses the filter's subset (its rows and a contiguous copy of their vectors) cached
per data version. These tests put writes between queries — upserts that join or leave
the filter, replacements of vectors, patches of the filtered key, deletes — and check
every answer, single and batched, against an unpruned float64 ranking of the rows the
oracle says match the filter, with duplicates (exact ties) and copies nudged by a few
float32 ulps (near-ties); then the same across two stores and two processes sharing
one file, where the writes come from the other side."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.backends.local.peers import Peers

import vectorport
from vectorport.adapters.local import ranking
from vectorport.core.filters.oracle import matches
from vectorport.core.filters.parse import parse_filter

DIM = 8
FILTERS = ({"g": 1}, {"g": {"$in": [0, 2]}}, {"g": {"$ne": 1}, "h": True}, {"h": True})
"""A third, two thirds, about half and 70% of the rows: the last is past the share of
rows a subset's vector copy may hold, so it is scored by a gather of its rows."""


@pytest.fixture(scope="module")
def store() -> Iterator[vectorport.Store]:
    with vectorport.connect("memory://") as s:
        yield s


class Model:
    """What the store should hold: each id's vector and metadata, in no order."""

    def __init__(self) -> None:
        self.vectors: dict[str, np.ndarray[Any, Any]] = {}
        self.metadata: dict[str, dict[str, Any]] = {}
        self.documents: dict[str, str] = {}

    def ranking(self, metric: str, query: np.ndarray[Any, Any], flt: dict[str, Any] | None,
                top_k: int, min_score: float | None) -> list[tuple[str, float]]:
        """Every record the oracle keeps, scored by the engine's float64 scorer with no
        pruning (so equal vectors score exactly equal, as in the engine), in the
        contract's order."""
        node = None if flt is None else parse_filter(flt)
        ids = sorted(rid for rid in self.vectors
                     if node is None or matches(node, self.metadata[rid]))
        if not ids:
            return []
        vectors = np.stack([self.vectors[rid] for rid in ids])
        scores = ranking.pair_scores(metric, ranking.prepare(query.reshape(1, -1)),  # type: ignore[arg-type]
                                     np.zeros(len(ids), dtype=np.intp), vectors,
                                     np.arange(len(ids)), ranking.wide_norms(vectors))
        pairs = [(rid, float(s)) for rid, s in zip(ids, scores, strict=True)
                 if min_score is None or s >= min_score]
        return sorted(pairs, key=lambda p: (-p[1], p[0]))[:top_k]


def _nudged(rng: np.random.Generator, rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``rows`` with each coordinate moved by up to two float32 steps."""
    out = rows.copy()
    for _ in range(2):
        step = rng.integers(-1, 2, size=out.shape)
        out = np.where(step > 0, np.nextafter(out, np.float32(np.inf)),
                       np.where(step < 0, np.nextafter(out, np.float32(-np.inf)), out))
    return out.astype(np.float32)


def _check(index: vectorport.Index, model: Model, metric: str, queries: np.ndarray[Any, Any],
           flt: dict[str, Any] | None, top_k: int, min_score: float | None) -> None:
    batch = index.query_many(queries, top_k=top_k, filter=flt, min_score=min_score,
                             include_metadata=False)
    for q, got in zip(queries, batch, strict=True):
        want = model.ranking(metric, q, flt, top_k, min_score)
        single = index.query(q, top_k=top_k, filter=flt, min_score=min_score,
                             include_metadata=True, include_vectors=True)
        assert [(m.id, m.score) for m in single] == want
        assert [(m.id, m.score) for m in got] == want
        for m in single:  # the parts asked for are the record's own
            assert dict(m.metadata or {}) == model.metadata[m.id]
            assert m.vector is not None
            assert np.array_equal(m.vector, model.vectors[m.id])
            assert m.document == model.documents[m.id]
        lean = index.query(q, top_k=top_k, filter=flt, min_score=min_score,
                           include_metadata=False, include_documents=False)
        assert [(m.id, m.score, m.metadata, m.document, m.vector) for m in lean] == [
            (rid, score, None, None, None) for rid, score in want]
        plain = index.query(q, top_k=top_k, filter=flt, min_score=min_score)  # defaults
        assert [(m.id, m.score) for m in plain] == want
        assert [(dict(m.metadata or {}), m.document, m.vector) for m in plain] == [
            (model.metadata[m.id], model.documents[m.id], None) for m in plain]
    # a batch asking for metadata and documents builds them per match too
    full = index.query_many(queries, top_k=top_k, filter=flt, min_score=min_score)
    for got in full:
        assert [(dict(m.metadata or {}), m.document) for m in got] == [
            (model.metadata[m.id], model.documents[m.id]) for m in got]


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["cosine", "euclidean", "dotproduct"]),
    st.integers(20, 400),
    st.integers(1, 12),
    st.sampled_from(range(len(FILTERS))),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_answers_follow_the_writes_between_queries(
        store: vectorport.Store, metric: str, n: int, top_k: int, which: int,
        floor: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    flt = FILTERS[which]
    palette = rng.standard_normal((max(2, n // 6), DIM)).astype(np.float32)
    name = f"single_{metric}"
    if name in store.list_indexes():
        store.delete_index(name)
    index = store.create_index(name, DIM, metric)
    model = Model()

    def upsert(ids: list[str]) -> None:
        vectors = palette[rng.integers(0, len(palette), size=len(ids))]  # duplicates
        near = rng.random(len(ids)) < 0.5
        vectors[near] = _nudged(rng, vectors[near])  # near-ties
        records = []
        for rid, vec in zip(ids, vectors, strict=True):
            meta = {"g": int(rng.integers(0, 3)), "h": bool(rng.random() < 0.7)}
            text = f"text of {rid} ({int(rng.integers(0, 1000))})"
            records.append({"id": rid, "vector": vec, "metadata": meta, "document": text})
            model.vectors[rid], model.metadata[rid], model.documents[rid] = vec, meta, text
        index.upsert(records)

    def queries() -> np.ndarray[Any, Any]:
        at_data = _nudged(rng, palette[rng.integers(0, len(palette), size=2)])
        return np.concatenate([at_data, rng.standard_normal((2, DIM)).astype(np.float32)])

    upsert([f"r{i:04d}" for i in range(n)])
    min_score = None
    for step in range(5):
        qs = queries()
        if floor:  # a floor near the middle of the kept scores
            middle = model.ranking(metric, qs[0], flt, n, None)
            min_score = middle[len(middle) // 2][1] if middle else None
        _check(index, model, metric, qs, flt, top_k, min_score)
        _check(index, model, metric, qs, None, top_k, None)
        ids = sorted(model.vectors)
        if step == 0:  # new records, some of them in the filter
            upsert([f"n{i:04d}" for i in range(int(rng.integers(1, 40)))])
        elif step == 1:  # replaced vectors and metadata of existing records
            upsert([ids[int(i)] for i in rng.integers(0, len(ids), size=20)])
        elif step == 2:  # the filtered key changed in place
            for rid in [ids[int(i)] for i in rng.integers(0, len(ids), size=15)]:
                meta = {**model.metadata[rid], "g": int(rng.integers(0, 3))}
                index.patch(rid, metadata={"g": meta["g"]})
                model.metadata[rid] = meta
        elif step == 3:  # deletes (rows move into the holes)
            gone = [ids[int(i)] for i in rng.integers(0, len(ids), size=len(ids) // 3)]
            index.delete(gone)
            for rid in gone:
                model.vectors.pop(rid, None)
                model.metadata.pop(rid, None)
                model.documents.pop(rid, None)


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dotproduct"])
def test_wide_subsets_bound_the_kth_best_by_group_maxima(store: vectorport.Store,
                                                          metric: str) -> None:
    """Subsets and namespaces wide enough (thousands of rows) that a single query bounds
    its k-th best by the maxima of interleaved column groups, not by a partition of all
    its keys: every answer is still the unpruned float64 ranking, over many exact
    duplicates (ties decided by id, also at the cut) and copies a few ulps apart."""
    rng = np.random.default_rng(11)
    name = f"single_wide_{metric}"
    if name in store.list_indexes():
        store.delete_index(name)
    index = store.create_index(name, DIM, metric)
    model = Model()
    palette = rng.standard_normal((400, DIM)).astype(np.float32)
    vectors = palette[rng.integers(0, len(palette), size=6000)]
    near = rng.random(len(vectors)) < 0.5
    vectors[near] = _nudged(rng, vectors[near])
    records = []
    for i, vec in enumerate(vectors):
        rid = f"w{(i * 7919) % 6000:05d}"  # ids not in row order
        meta = {"g": int(rng.integers(0, 3)), "h": bool(rng.random() < 0.7)}
        records.append({"id": rid, "vector": vec, "metadata": meta, "document": rid})
        model.vectors[rid], model.metadata[rid], model.documents[rid] = vec, meta, rid
    index.upsert(records)
    at_data = _nudged(rng, palette[rng.integers(0, len(palette), size=4)])
    queries = np.concatenate([at_data, palette[:2], rng.standard_normal((2, DIM)).astype(
        np.float32)])
    for top_k in (1, 10, 25):
        for flt in (None, {"g": 1}, {"h": True}):
            _check(index, model, metric, queries, flt, top_k, None)
    store.delete_index(name)


def test_a_filter_that_matches_nothing_then_something(store: vectorport.Store) -> None:
    index = store.create_index("single_empty", DIM, "cosine")
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((50, DIM)).astype(np.float32)
    index.upsert([(f"e{i:02d}", v, {"g": 0}) for i, v in enumerate(vectors)])
    assert index.query(vectors[0], top_k=3, filter={"g": 1}) == []
    index.upsert([("late", vectors[7], {"g": 1})])
    got = index.query(vectors[7], top_k=3, filter={"g": 1})
    assert [m.id for m in got] == ["late"]
    store.delete_index("single_empty")


def _filtered_top(index: vectorport.Index, query: list[float]) -> list[str]:
    return [m.id for m in index.query(query, top_k=5, filter={"g": 1},
                                      include_metadata=False)]


def test_a_second_store_on_the_file_invalidates_the_cached_subset(tmp_path: Path) -> None:
    """Each store keeps its own subset cache; a write through the other store reaches
    the next filtered query (its data version moves when it catches up)."""
    url = f"local://{tmp_path / 'two.db'}"
    with vectorport.connect(url) as reader, vectorport.connect(url) as writer:
        reader.create_index("shared", 4, "cosine")
        mine, theirs = reader.index("shared"), writer.index("shared")
        theirs.upsert([{"id": f"a{i}", "vector": [1.0, i + 1.0, 0, 0], "metadata": {"g": i % 2}}
                       for i in range(8)])
        query = [1.0, 9.5, 0.0, 0.0]
        assert _filtered_top(mine, query) == ["a7", "a5", "a3", "a1"]
        theirs.upsert([{"id": "b0", "vector": query, "metadata": {"g": 1}}])  # joins
        assert _filtered_top(mine, query) == ["b0", "a7", "a5", "a3", "a1"]
        theirs.patch("a7", metadata={"g": 0})  # leaves
        assert _filtered_top(mine, query) == ["b0", "a5", "a3", "a1"]
        theirs.upsert([{"id": "a1", "vector": query, "metadata": {"g": 1}}])  # new vector
        assert _filtered_top(mine, query)[:2] == ["a1", "b0"]
        theirs.delete(["b0", "a3"])
        assert _filtered_top(mine, query) == ["a1", "a5"]


def test_another_process_writing_invalidates_the_cached_subset(tmp_path: Path) -> None:
    url = f"local://{tmp_path / 'peer.db'}"
    pool = Peers(url)
    try:
        peer = pool.add()
        with vectorport.connect(url) as store:
            index = store.create_index("shared", 4, "cosine")
            index.upsert([{"id": f"a{i}", "vector": [1.0, i + 1.0, 0, 0],
                           "metadata": {"g": i % 2}} for i in range(8)])
            query = [1.0, 9.5, 0.0, 0.0]
            assert _filtered_top(index, query) == ["a7", "a5", "a3", "a1"]
            peer.call("upsert", name="shared",
                      rows=[{"id": "p0", "vector": query, "metadata": {"g": 1}}])
            assert _filtered_top(index, query) == ["p0", "a7", "a5", "a3", "a1"]
            peer.call("patch", name="shared", id="a7", metadata={"g": 0})
            assert _filtered_top(index, query) == ["p0", "a5", "a3", "a1"]
            peer.call("delete", name="shared", ids=["p0"])
            assert _filtered_top(index, query) == ["a5", "a3", "a1"]
            # and the peer's own filtered queries see this process's writes
            index.upsert([{"id": "m0", "vector": query, "metadata": {"g": 1}}])
            assert peer.call("query", name="shared", vector=query, top_k=2,
                             filter={"g": 1}) == ["m0", "a5"]
    finally:
        for started in pool.started:
            started.close()


@pytest.mark.parametrize("include", [{}, {"include_metadata": False},
                                     {"include_documents": False}])
def test_a_large_batch_builds_every_part_of_every_match(store: vectorport.Store,
                                                         include: dict[str, bool]) -> None:
    """A batch's matches (here 30 × 10, past the count where they are built slot by
    slot) carry each record's own metadata and document, as a single query's do."""
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((300, DIM)).astype(np.float32)
    index = store.create_index("single_parts", DIM, "euclidean")
    index.upsert([{"id": f"b{i:03d}", "vector": v, "metadata": {"i": i, "g": i % 3},
                   "document": f"doc {i}"} for i, v in enumerate(vectors)])
    queries = rng.standard_normal((30, DIM)).astype(np.float32)
    batch = index.query_many(queries, top_k=10, filter={"g": {"$ne": 2}}, **include)
    assert sum(len(got) for got in batch) == 300
    for q, got in zip(queries, batch, strict=True):
        single = index.query(q, top_k=10, filter={"g": {"$ne": 2}}, **include)
        assert [(m.id, m.score, m.metadata, m.document) for m in got] == [
            (m.id, m.score, m.metadata, m.document) for m in single]
        for m in got:
            i = int(m.id[1:])
            want_meta = None if include.get("include_metadata") is False else {"i": i, "g": i % 3}
            want_doc = None if include.get("include_documents") is False else f"doc {i}"
            assert (None if m.metadata is None else dict(m.metadata)) == want_meta
            assert m.document == want_doc
            assert m.vector is None
    store.delete_index("single_parts")

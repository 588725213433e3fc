"""The local engine's batched ranking against a brute-force reference: every stored
vector scored in float64 by the adapter kit's ``exact_scores`` and sorted by score
descending, id ascending. Data with many repeated vectors (exact ties) and small
integer coordinates (many equal scores) exercises the tie order at the cut; a filter
and ``min_score`` exercise the subset and the floor. Single queries and batches must
agree with the reference and with each other, score for score."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vectorport
from vectorport.adapterkit import exact_scores

DIM = 3


@pytest.fixture(scope="module")
def store() -> Iterator[vectorport.Store]:
    with vectorport.connect("memory://") as s:
        yield s


def _reference(vectors: np.ndarray[Any, Any], ids: list[str], groups: list[int], query: Any,
               metric: str, top_k: int, group: int | None,
               min_score: float | None) -> list[tuple[str, float]]:
    scores = exact_scores(metric, query, vectors)  # type: ignore[arg-type]
    pairs = [(rid, float(s)) for rid, s, g in zip(ids, scores, groups, strict=True)
             if (group is None or g == group) and (min_score is None or s >= min_score)]
    return sorted(pairs, key=lambda p: (-p[1], p[0]))[:top_k]


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["cosine", "euclidean", "dotproduct"]),
    st.integers(1, 40),
    st.integers(1, 12),
    st.booleans(),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_batches_and_singles_rank_as_the_reference(
        store: vectorport.Store, metric: str, n: int, top_k: int, filtered: bool,
        floor: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    palette = rng.integers(-2, 3, size=(max(2, n // 3), DIM)).astype(np.float32)
    palette[np.all(palette == 0, axis=1)] = 1.0  # no zero vectors (cosine refuses them)
    vectors = palette[rng.integers(0, len(palette), size=n)]  # repeats: exact ties
    ids = [f"id{int(i):03d}" for i in rng.permutation(n)]
    groups = [int(g) for g in rng.integers(0, 3, size=n)]
    queries = rng.integers(-2, 3, size=(5, DIM)).astype(np.float32)
    queries[np.all(queries == 0, axis=1)] = 1.0
    name = f"rank_{metric}"
    if name in store.list_indexes():
        store.delete_index(name)
    index = store.create_index(name, DIM, metric)
    index.upsert([(rid, vec, {"g": g}) for rid, vec, g in zip(ids, vectors, groups,
                                                             strict=True)])
    group = 1 if filtered else None
    flt = {"g": group} if filtered else None
    min_score = 0.3 if floor else None
    for _ in range(2):  # the second time after replacing some vectors: no stale cache
        batch = index.query_many(queries, top_k=top_k, filter=flt, min_score=min_score)
        for q, got in zip(queries, batch, strict=True):
            want = _reference(vectors, ids, groups, q, metric, top_k, group, min_score)
            assert [m.id for m in got] == [rid for rid, _ in want]
            assert [m.score for m in got] == pytest.approx([s for _, s in want], abs=1e-12)
            single = index.query(q, top_k=top_k, filter=flt, min_score=min_score)
            assert [(m.id, m.score) for m in single] == [(m.id, m.score) for m in got]
        changed = rng.integers(0, n, size=max(1, n // 2))
        vectors = vectors.copy()
        vectors[changed] = palette[::-1][rng.integers(0, len(palette), size=len(changed))]
        index.upsert([(ids[i], vectors[i], {"g": groups[i]}) for i in changed.tolist()])


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dotproduct"])
def test_many_tied_candidates_rank_as_the_reference(store: vectorport.Store,
                                                    metric: str) -> None:
    """Hundreds of exact ties at the cut: the candidates are rescored in several chunks
    (more than 512 of them per query), and still agree with the reference and between a
    batch and single queries."""
    rng = np.random.default_rng(3)
    palette = np.array([[1, 2, 0], [2, 1, 1], [0, 1, 2]], dtype=np.float32)
    vectors = palette[rng.integers(0, len(palette), size=1500)]
    ids = [f"id{int(i):04d}" for i in rng.permutation(len(vectors))]
    groups = [i % 2 for i in range(len(vectors))]
    name = f"ties_{metric}"
    index = store.create_index(name, DIM, metric)
    index.upsert([(rid, vec, {"g": g}) for rid, vec, g in zip(ids, vectors, groups,
                                                             strict=True)])
    queries = palette + np.float32(0.25)
    for flt, group in ((None, None), ({"g": 1}, 1)):
        batch = index.query_many(queries, top_k=8, filter=flt)
        for q, got in zip(queries, batch, strict=True):
            want = _reference(vectors, ids, groups, q, metric, 8, group, None)
            assert [m.id for m in got] == [rid for rid, _ in want]
            assert [m.score for m in got] == pytest.approx([s for _, s in want], abs=1e-12)
            single = index.query(q, top_k=8, filter=flt)
            assert [(m.id, m.score) for m in single] == [(m.id, m.score) for m in got]
    store.delete_index(name)


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dotproduct"])
def test_wide_batches_rank_as_the_reference(store: vectorport.Store, metric: str) -> None:
    """Batches over thousands of rows: each query's k-th best is bounded from column
    group maxima rather than found by a full partition; the answers stay the reference's,
    for continuous data (no ties) and a filter."""
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((4000, 8)).astype(np.float32)
    ids = [f"w{int(i):05d}" for i in rng.permutation(len(vectors))]
    groups = [i % 3 for i in range(len(vectors))]
    name = f"wide_{metric}"
    index = store.create_index(name, 8, metric)
    index.upsert([(rid, vec, {"g": g}) for rid, vec, g in zip(ids, vectors, groups,
                                                             strict=True)])
    queries = rng.standard_normal((12, 8)).astype(np.float32)
    for flt, group, top_k in ((None, None, 10), ({"g": 2}, 2, 25)):
        batch = index.query_many(queries, top_k=top_k, filter=flt)
        for q, got in zip(queries, batch, strict=True):
            want = _reference(vectors, ids, groups, q, metric, top_k, group, None)
            assert [m.id for m in got] == [rid for rid, _ in want]
            assert [m.score for m in got] == pytest.approx([s for _, s in want], abs=1e-12)
        for q, got in zip(queries[:3], batch[:3], strict=True):
            single = index.query(q, top_k=top_k, filter=flt)
            assert [(m.id, m.score) for m in single] == [(m.id, m.score) for m in got]
    store.delete_index(name)

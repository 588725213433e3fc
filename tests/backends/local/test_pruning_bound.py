"""The local engine rescores in float64 only the rows whose float32 key is within a proven
rounding bound of the k-th best (vectorport.adapters.local.bounds). These tests put many
rows right at that bound — duplicated vectors (exact ties), copies nudged by a few float32
ulps (near-ties that float32 may order wrongly), large norms (a dot product's error grows
with them), dimensions up to 384 — and compare every answer with a brute-force ranking:
every row scored in float64 with no pruning, sorted by score descending, id ascending."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vectorport
from vectorport.adapterkit import exact_scores
from vectorport.adapters.local import bounds, ranking


@pytest.fixture(scope="module")
def store() -> Iterator[vectorport.Store]:
    with vectorport.connect("memory://") as s:
        yield s


def _brute_force(metric: str, vectors: np.ndarray[Any, Any], ids: list[str],
                 keep: np.ndarray[Any, Any], query: np.ndarray[Any, Any],
                 top_k: int) -> list[tuple[str, float]]:
    """Every kept row scored by the engine's own float64 scorer (so equal vectors score
    exactly equal, as in the engine), no candidate pruning, then the contract's order."""
    rows = np.flatnonzero(keep)
    scores = ranking.pair_scores(metric, ranking.prepare(query.reshape(1, -1)),  # type: ignore[arg-type]
                                 np.zeros(len(rows), dtype=np.intp), vectors, rows,
                                 ranking.wide_norms(vectors))
    pairs = [(ids[r], float(s)) for r, s in zip(rows.tolist(), scores, strict=True)]
    return sorted(pairs, key=lambda p: (-p[1], p[0]))[:top_k]


def _nudged(rng: np.random.Generator, base: np.ndarray[Any, Any], ulps: int
            ) -> np.ndarray[Any, Any]:
    """``base`` with each coordinate moved by up to ``ulps`` float32 steps."""
    steps = rng.integers(-ulps, ulps + 1, size=base.shape)
    out = base.copy()
    for _ in range(ulps):
        up, down = steps > 0, steps < 0
        out[up] = np.nextafter(out[up], np.float32(np.inf))
        out[down] = np.nextafter(out[down], np.float32(-np.inf))
        steps = steps - np.sign(steps)
    return out


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(["cosine", "euclidean", "dotproduct"]),
    st.sampled_from([3, 16, 96, 384]),
    st.integers(1, 300),
    st.integers(1, 12),
    st.sampled_from([1e-3, 1.0, 1e3, 1e6]),
    st.integers(0, 4),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_pruned_answers_are_the_brute_force_ranking(
        store: vectorport.Store, metric: str, dim: int, n: int, top_k: int, scale: float,
        ulps: int, filtered: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    palette = (rng.standard_normal((max(1, n // 8), dim)) * scale).astype(np.float32)
    vectors = palette[rng.integers(0, len(palette), size=n)]  # duplicates: exact ties
    near = rng.random(n) < 0.5
    vectors[near] = _nudged(rng, vectors[near], ulps)  # near-ties: float32 may misorder
    ids = [f"p{int(i):04d}" for i in rng.permutation(n)]
    groups = rng.integers(0, 2, size=n)
    queries = np.concatenate([
        _nudged(rng, palette[rng.integers(0, len(palette), size=2)], 1),  # at the data
        (rng.standard_normal((2, dim)) * scale).astype(np.float32),
    ])
    name = f"prune_{metric}"
    if name in store.list_indexes():
        store.delete_index(name)
    index = store.create_index(name, dim, metric)
    index.upsert([(rid, vec, {"g": int(g)}) for rid, vec, g in zip(ids, vectors, groups,
                                                                  strict=True)])
    flt = {"g": 1} if filtered else None
    keep = groups == 1 if filtered else np.ones(n, dtype=bool)
    batch = index.query_many(queries, top_k=top_k, filter=flt, include_metadata=False)
    for q, got in zip(queries, batch, strict=True):
        want = _brute_force(metric, vectors, ids, keep, q, top_k)
        assert [(m.id, m.score) for m in got] == want
        single = index.query(q, top_k=top_k, filter=flt, include_metadata=False)
        assert [(m.id, m.score) for m in single] == want
        # and the scorer is the contract's float64 score
        reference = exact_scores(metric, q, vectors[[ids.index(m.id) for m in got]])  # type: ignore[arg-type]
        assert [m.score for m in got] == pytest.approx(reference.tolist(), rel=1e-12,
                                                       abs=1e-12)


def test_the_bound_covers_float32_rounding() -> None:
    """The per-row error the margins assume (half of :func:`bounds.key_margins`) is at
    least the largest float32 key error measured on adversarial rows: long vectors of
    one sign, where rounding errors add up instead of cancelling."""
    rng = np.random.default_rng(5)
    dim = 384
    x = rng.random((2000, dim)).astype(np.float32) * 1e3
    q = rng.random((1, dim)).astype(np.float32) * 1e3
    exact = x.astype(np.float64) @ q[0].astype(np.float64)
    error = np.max(np.abs((q @ x.T)[0].astype(np.float64) - exact))
    qn = np.sqrt(np.einsum("ij,ij->i", q.astype(np.float64), q.astype(np.float64)))
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    margin = bounds.key_margins("dotproduct", dim, qn, float(norms.max()))[0]
    assert error <= margin / 2
    assert margin / 2 < 1e-3 * qn[0] * norms.max()  # and far tighter than a 1e-3 share


def test_float32_floor_never_rounds_above() -> None:
    rng = np.random.default_rng(9)
    for value in np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-40, 38, 2000),
                                 [0.0, 1e-45, -1e-45, 1.0, -1.0, -1e39]]):
        floor = bounds.float32_floor(float(value))
        assert float(np.float32(floor)) <= value or value < -3.4e38
        lowered = bounds.float32_floors(np.array([value]))
        assert float(lowered[0]) <= value or value < -3.4e38


def test_dot_products_of_large_norms_rank_exactly(store: vectorport.Store) -> None:
    """Copies of one vector of norm ~2e4, each coordinate moved by a few ulps: their dot
    products with a query differ by less than float32's error at that norm (~1e-2, where
    a fixed margin of 1e-3 once dropped rows that belonged in the top k)."""
    rng = np.random.default_rng(1)
    dim = 384
    for _ in range(10):
        base = (rng.standard_normal(dim) * 1e3).astype(np.float32)
        vectors = _nudged(rng, np.repeat(base[None, :], 200, axis=0), 3)
        ids = [f"d{i:04d}" for i in range(len(vectors))]
        query = (base + rng.standard_normal(dim)).astype(np.float32)
        if "big_dots" in store.list_indexes():
            store.delete_index("big_dots")
        index = store.create_index("big_dots", dim, "dotproduct")
        index.upsert(list(zip(ids, vectors, strict=True)))
        want = _brute_force("dotproduct", vectors, ids, np.ones(len(ids), dtype=bool),
                            query, 5)
        got = index.query(query, top_k=5, include_metadata=False)
        assert [(m.id, m.score) for m in got] == want


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dotproduct"])
def test_best_rows_past_the_last_column_group(store: vectorport.Store, metric: str) -> None:
    """A batch bounds each query's k-th best from 16 interleaved column groups and looks
    for candidates inside the groups that reach the floor; the last ``width % 16``
    columns belong to no group and are searched on their own. Here every query's best
    rows are exactly those last columns (the last records stored)."""
    rng = np.random.default_rng(17)
    n = 16 * 50 + 7
    vectors = rng.standard_normal((n, 8)).astype(np.float32)
    ids = [f"t{i:04d}" for i in range(n)]
    queries = vectors[-7:] * np.float32(1.5)
    name = f"tail_{metric}"
    index = store.create_index(name, 8, metric)
    index.upsert(list(zip(ids, vectors, strict=True)))
    batch = index.query_many(queries, top_k=3, include_metadata=False)
    for q, got in zip(queries, batch, strict=True):
        want = _brute_force(metric, vectors, ids, np.ones(n, dtype=bool), q, 3)
        assert [(m.id, m.score) for m in got] == want
    store.delete_index(name)


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dotproduct"])
def test_hybrid_queries_over_near_duplicates_rank_exactly(store: vectorport.Store,
                                                          metric: str) -> None:
    """Hybrid queries rank ``dense + sparse`` from the float32 dense scores, whose error
    is a score margin (:func:`bounds.score_margins`): for euclidean near zero distance
    it is the square root of the squared distance's error. Near-duplicates of norm ~24
    sit inside it (a fixed margin of 1e-3 once gave a wrong euclidean top 5 in 34 of 40
    such cases)."""
    rng = np.random.default_rng(2)
    dim = 64
    sparse = {"indices": [1, 2], "values": [0.5, 0.25]}
    for _ in range(8):
        base = (rng.standard_normal(dim) * 3).astype(np.float32)
        vectors = (base + rng.standard_normal((300, dim)) * 1e-3).astype(np.float32)
        ids = [f"h{i:04d}" for i in range(len(vectors))]
        name = f"hybrid_{metric}"
        if name in store.list_indexes():
            store.delete_index(name)
        index = store.create_index(name, dim, metric, sparse=True)
        index.upsert([{"id": rid, "vector": vec, "sparse": sparse}
                      for rid, vec in zip(ids, vectors, strict=True)])
        got = index.query(base, sparse=sparse, top_k=5, include_metadata=False)
        scores = exact_scores(metric, base, vectors) + (0.5 * 0.5 + 0.25 * 0.25)  # type: ignore[arg-type]
        want = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))[:5]
        assert [m.id for m in got] == [ids[i] for i in want]
        assert [m.score for m in got] == pytest.approx([scores[i] for i in want], rel=1e-12)

"""The exact ranking over native candidate lists (``adapters/milvus/ranking.py``).

The Milvus calls sit behind ``CandidateSource``; here an in-memory stand-in answers
them the way Milvus does (best first by a positive-weight inner product or by the dense
metric, only rows sharing a term for sparse searches, at most ``limit``), with ties
returned in the *worst* order (largest id first), and with a tiny search cap so that
widening, the bounds, the zero-score tail and the scan fallback are all exercised.
Every answer is compared with the reference query. The engine itself is covered by the
conformance suite and ``test_milvus_adapter.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vectorport.adapters.milvus import layout
from vectorport.adapters.milvus.ranking import Row, Scorer, exact_top_k
from vectorport.conformance.base import assert_same_matches, canonical_records
from vectorport.conformance.reference import dense_score, reference_query
from vectorport.core.scoring import sort_matches
from vectorport.core.types import Match, Metric, Record, SparseVector


def _entity(record: Record) -> dict[str, Any]:
    positive, negative, _ = layout.encode_sparse(record.sparse)
    return {layout.PK: record.id, layout.VECTOR: record.vector.tolist(),
            layout.SPARSE: positive, layout.SPARSE_NEGATIVE: negative}


class MemorySource:
    def __init__(self, records: list[Record], metric: Metric, query: list[float] | None) -> None:
        self.rows = [_entity(r) for r in records]
        self.metric = metric
        self.query = query
        self.calls = 0

    def _worst_ties(self, scored: Iterable[tuple[float, Row]], limit: int) -> list[Row]:
        ordered = sorted(scored, key=lambda p: (p[0], str(p[1][layout.PK])), reverse=True)
        return [row for _, row in ordered[:limit]]

    def dense(self, limit: int) -> Sequence[Row]:
        self.calls += 1
        assert self.query is not None
        return self._worst_ties(
            ((dense_score(self.metric, self.query, r[layout.VECTOR]), r) for r in self.rows), limit)

    def sparse(self, query: Mapping[int, float], field: str, limit: int) -> Sequence[Row]:
        self.calls += 1
        assert all(v > 0 for v in query.values())
        scored = []
        for row in self.rows:
            weights = layout.stored_weights(row[field])
            if set(weights) & set(query):
                scored.append((sum(v * weights.get(i, 0.0) for i, v in query.items()), row))
        return self._worst_ties(scored, limit)

    def in_id_order(self, exclude: Sequence[str], limit: int) -> Sequence[Row]:
        self.calls += 1
        rows = sorted((r for r in self.rows if r[layout.PK] not in set(exclude)),
                      key=lambda r: r[layout.PK])
        return rows[:limit]

    def scan(self) -> Iterable[Row]:
        self.calls += 1
        return list(self.rows)


components = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0])
sparse_dicts = st.dictionaries(st.integers(0, 6), st.sampled_from([-1.5, -0.5, 0.0, 0.5, 1.0, 2.0]),
                               min_size=1, max_size=4)


@st.composite
def datasets(draw: st.DrawFn) -> list[dict[str, Any]]:
    size = draw(st.integers(0, 40))
    rows = []
    for i in range(size):
        row: dict[str, Any] = {"id": f"r{i:02d}",
                               "vector": draw(st.lists(components, min_size=3, max_size=3))}
        sparse = draw(st.none() | sparse_dicts)
        if sparse:
            row["sparse"] = {"indices": list(sparse), "values": list(sparse.values())}
        rows.append(row)
    return rows


@settings(max_examples=250, deadline=None, derandomize=True, database=None)
@given(rows=datasets(), mode=st.sampled_from(["dense", "sparse", "hybrid"]),
       metric=st.sampled_from(["cosine", "dotproduct", "euclidean"]),
       query=st.lists(components, min_size=3, max_size=3), sparse_query=sparse_dicts,
       top_k=st.integers(1, 45), cap=st.sampled_from([1, 3, 17, 100]),
       min_score=st.none() | st.sampled_from([-1.0, 0.0, 0.25, 1.0]))
def test_exact_top_k_equals_the_reference(
    rows: list[dict[str, Any]], mode: str, metric: Metric, query: list[float],
    sparse_query: dict[int, float], top_k: int, cap: int, min_score: float | None,
) -> None:
    records = canonical_records(rows, 3)
    dense = None if mode == "sparse" else query
    sparse = None if mode == "dense" else SparseVector(
        tuple(sorted(sparse_query)), tuple(sparse_query[i] for i in sorted(sparse_query)))
    source = MemorySource(records, metric, dense)
    scorer = Scorer.for_query(metric, None if dense is None else
                              canonical_records([{"id": "q", "vector": dense}], 3)[0].vector,
                              sparse)
    got = exact_top_k(scorer, source, top_k, min_score, cap)
    want = reference_query(records, metric, vector=dense, sparse=sparse,
                           top_k=len(records) + 1, min_score=min_score)
    matches = [Match(str(row[layout.PK]), score) for row, score in got]
    assert_same_matches(matches, want, 1e-9, f"{mode} cap={cap}", top_k)
    assert [m.id for m in matches] == [m.id for m in sort_matches(matches)]


class DepthRecorder(MemorySource):
    """The stand-in, remembering how deep each dense search went."""

    def __init__(self, records: list[Record], metric: Metric, query: list[float] | None) -> None:
        super().__init__(records, metric, query)
        self.depths: list[int] = []

    def dense(self, limit: int) -> Sequence[Row]:
        self.depths.append(limit)
        return super().dense(limit)


def _scorer(metric: Metric, query: list[float]) -> Scorer:
    vector = canonical_records([{"id": "q", "vector": query}], 3)[0].vector
    return Scorer.for_query(metric, vector, None)


def test_a_dense_search_asks_two_rows_past_the_cut_and_widens_on_a_tie() -> None:
    distinct = canonical_records(
        [{"id": f"r{i:02d}", "vector": [1.0, float(i), 0.0]} for i in range(30)], 3)
    source = DepthRecorder(distinct, "euclidean", [1.0, 0.0, 0.0])
    exact_top_k(_scorer("euclidean", [1.0, 0.0, 0.0]), source, 5, None, 100)
    assert source.depths == [7]  # top_k + 2, and the untied cut is proven at once
    tied = canonical_records(
        [{"id": f"r{i:02d}", "vector": [1.0, 1.0, 0.0]} for i in range(30)], 3)
    source = DepthRecorder(tied, "euclidean", [1.0, 0.0, 0.0])
    got = exact_top_k(_scorer("euclidean", [1.0, 0.0, 0.0]), source, 5, None, 100)
    assert source.depths[0] == 7 and len(source.depths) > 1  # every row ties: wider
    assert [row[layout.PK] for row, _ in got] == [f"r{i:02d}" for i in range(5)]  # by id

"""In-memory columns of one namespace and exact search over them with numpy.

Vectors live in one contiguous float32 matrix (grown by doubling), so a query is one
matrix-vector product plus a partial sort. Filters are evaluated with the oracle, once
per (filter, data version), and the resulting mask is cached: repeated filtered queries
cost no Python loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from vectorport.core.filters.ast import Filter
from vectorport.core.filters.oracle import matches
from vectorport.core.scoring import sparse_dot
from vectorport.core.types import MetadataValue, Metric, Record, SparseVector

_MASK_CACHE_SIZE = 16


@dataclass
class NamespaceData:
    dimension: int
    ids: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    metadata: list[Mapping[str, MetadataValue]] = field(default_factory=list)
    sparse: list[SparseVector | None] = field(default_factory=list)
    documents: list[str | None] = field(default_factory=list)
    version: int = 0

    def __post_init__(self) -> None:
        self._matrix = np.zeros((16, self.dimension), dtype=np.float32)
        self._norms = np.zeros(16, dtype=np.float32)
        self._masks: dict[Filter, tuple[int, npt.NDArray[np.bool_]]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def vectors(self) -> npt.NDArray[np.float32]:
        return self._matrix[: len(self.ids)]

    def _grow(self, needed: int) -> None:
        capacity = len(self._matrix)
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        matrix = np.zeros((capacity, self.dimension), dtype=np.float32)
        matrix[: len(self.ids)] = self.vectors
        norms = np.zeros(capacity, dtype=np.float32)
        norms[: len(self.ids)] = self._norms[: len(self.ids)]
        self._matrix, self._norms = matrix, norms

    def put(self, records: list[Record]) -> None:
        self._grow(len(self.ids) + len(records))
        for rec in records:
            row = self.rows.get(rec.id)
            if row is None:
                row = len(self.ids)
                self.rows[rec.id] = row
                self.ids.append(rec.id)
                self.metadata.append(rec.metadata)
                self.sparse.append(rec.sparse)
                self.documents.append(rec.document)
            else:
                self.metadata[row] = rec.metadata
                self.sparse[row] = rec.sparse
                self.documents[row] = rec.document
            self._matrix[row] = rec.vector
            self._norms[row] = np.linalg.norm(rec.vector)
        self.version += 1

    def remove(self, ids: list[str]) -> int:
        removed = 0
        for rid in ids:
            row = self.rows.pop(rid, None)
            if row is None:
                continue
            last = len(self.ids) - 1
            if row != last:  # move the last row into the hole
                moved = self.ids[last]
                self.ids[row] = moved
                self.rows[moved] = row
                self.metadata[row] = self.metadata[last]
                self.sparse[row] = self.sparse[last]
                self.documents[row] = self.documents[last]
                self._matrix[row] = self._matrix[last]
                self._norms[row] = self._norms[last]
            self.ids.pop()
            self.metadata.pop()
            self.sparse.pop()
            self.documents.pop()
            removed += 1
        if removed:
            self.version += 1
        return removed

    def record(self, row: int) -> Record:
        vector = self._matrix[row].copy()
        vector.setflags(write=False)
        return Record(
            id=self.ids[row],
            vector=vector,
            metadata=dict(self.metadata[row]),
            sparse=self.sparse[row],
            document=self.documents[row],
        )

    def mask(self, node: Filter | None) -> npt.NDArray[np.bool_] | None:
        """Rows matching the filter (``None`` for all), cached per data version."""
        if node is None:
            return None
        cached = self._masks.get(node)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        mask = np.fromiter((matches(node, m) for m in self.metadata), dtype=bool,
                           count=len(self.metadata))
        if len(self._masks) >= _MASK_CACHE_SIZE:
            self._masks.pop(next(iter(self._masks)))
        self._masks[node] = (self.version, mask)
        return mask

    def rows_matching(self, node: Filter | None) -> npt.NDArray[np.intp]:
        mask = self.mask(node)
        if mask is None:
            return np.arange(len(self.ids))
        return np.flatnonzero(mask)

    def _norms_of(self, rows: npt.NDArray[np.intp] | None) -> npt.NDArray[np.float32]:
        norms = self._norms[: len(self.ids)]
        return norms if rows is None else norms[rows]

    def dense_scores(
        self, metric: Metric, queries: npt.NDArray[np.float32], rows: npt.NDArray[np.intp] | None
    ) -> npt.NDArray[np.float32]:
        """Scores of the given rows (all rows when ``rows`` is None) for each query, as a
        (queries × rows) matrix from one matrix product. Exact to float32 rounding for
        cosine and dot product; for euclidean it uses ``|x|² + |q|² − 2x·q``, whose
        cancellation near zero distance is repaired by :meth:`exact_scores` on the few
        rows that can make the top k."""
        matrix = self.vectors if rows is None else self.vectors[rows]
        dots: npt.NDArray[np.float32] = queries @ matrix.T
        if metric == "dotproduct":
            return dots
        norms = self._norms_of(rows)
        query_norms = np.linalg.norm(queries, axis=1).astype(np.float32)
        if metric == "cosine":
            denom = query_norms[:, None] * norms[None, :]
            out = np.zeros_like(dots)
            np.divide(dots, denom, out=out, where=denom > 0)
            return out
        squared = query_norms[:, None] ** 2 + norms[None, :] ** 2 - 2 * dots
        np.maximum(squared, 0, out=squared)
        result: npt.NDArray[np.float32] = 1.0 / (1.0 + np.sqrt(squared))
        return result

    def exact_scores(
        self, metric: Metric, query: npt.NDArray[np.float32], rows: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.float64]:
        """Float64 scores of a few rows, computed directly."""
        matrix = self.vectors[rows].astype(np.float64)
        q = query.astype(np.float64)
        if metric == "dotproduct":
            dots: npt.NDArray[np.float64] = matrix @ q
            return dots
        if metric == "cosine":
            denom = np.linalg.norm(matrix, axis=1) * np.linalg.norm(q)
            out = np.zeros(len(rows), dtype=np.float64)
            np.divide(matrix @ q, denom, out=out, where=denom > 0)
            return out
        diff = matrix - q
        distances: npt.NDArray[np.float64] = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        return 1.0 / (1.0 + distances)

    def sparse_scores(
        self, query: SparseVector, rows: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.float64]:
        return np.fromiter((sparse_dot(query, self.sparse[r]) for r in rows), dtype=np.float64,
                           count=len(rows))


def top_rows(
    ids: list[str], rows: npt.NDArray[np.intp], scores: npt.NDArray[np.float64], top_k: int,
    min_score: float | None,
) -> list[tuple[int, float]]:
    """The best ``top_k`` (row, score) pairs in contract order: score down, id up."""
    if min_score is not None:
        keep = scores >= min_score
        rows, scores = rows[keep], scores[keep]
    if len(rows) == 0:
        return []
    if len(rows) > top_k:
        threshold = np.partition(scores, len(scores) - top_k)[len(scores) - top_k]
        keep = scores >= threshold  # every tie at the boundary stays, so ids decide
        rows, scores = rows[keep], scores[keep]
    order = sorted(range(len(rows)), key=lambda i: (-scores[i], ids[rows[i]]))[:top_k]
    return [(int(rows[i]), float(scores[i])) for i in order]

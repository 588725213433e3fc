"""In-memory columns of one namespace and exact search over them with numpy.

Vectors live in one contiguous float32 matrix (grown by doubling), so a query is one
matrix-vector product plus a partial sort. Filters are evaluated with the oracle, once
per (filter, data version), and the resulting mask is cached: repeated filtered queries
cost no Python loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from vectorport.adapterkit import contract_order, exact_scores, read_only_float32
from vectorport.adapters.local import ranking
from vectorport.adapters.local.bounds import float32_floor
from vectorport.adapters.local.metadata import MetadataColumns
from vectorport.core.filters.ast import Filter
from vectorport.core.filters.oracle import matches
from vectorport.core.scoring import sparse_dot
from vectorport.core.types import MetadataValue, Metric, Record, SparseVector

_MASK_CACHE_SIZE = 16
_COPY_SHARE = 0.5
"""The share of a namespace's rows that cached subset copies may hold together."""


@dataclass(frozen=True)
class Subset:
    """The rows matching one filter at one data version, with a contiguous copy of
    their vectors when the subset is selective enough to be worth it."""

    version: int
    rows: npt.NDArray[np.intp]
    matrix: npt.NDArray[np.float32] | None
    """The subset's vectors transposed (dimension × rows, C-contiguous): OpenBLAS
    multiplies ``queries @ matrix`` in this layout 7% (batches) to 15% (one query) faster
    than a row-major copy's ``queries @ copy.T``, with the same float32 values."""
    norms: npt.NDArray[np.float32] | None
    unit: bool = False
    """``matrix`` columns are scaled to unit length (for cosine: the product is the
    score)."""
    max_norm: float = 0.0
    """The largest stored norm among ``rows``, for the error bounds of dot product and
    euclidean keys (:mod:`bounds`)."""


@dataclass
class NamespaceData:
    dimension: int
    ids: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    metadata: MetadataColumns = field(default_factory=MetadataColumns)
    sparse: list[SparseVector | None] = field(default_factory=list)
    documents: list[str | None] = field(default_factory=list)
    version: int = 0

    def __post_init__(self) -> None:
        self._matrix = np.zeros((16, self.dimension), dtype=np.float32)
        self._norms = np.zeros(16, dtype=np.float32)
        # the same norms in float64, from the float64 vector (what an exact cosine
        # divides by): kept, a rescored candidate costs one float64 product, not two
        self._wide_norms = np.zeros(16, dtype=np.float64)
        # the ids again, as an object array (8 B a row: the same strings): a batch's
        # ids are one gather in C, not 2,000 lookups in Python, each a cache miss
        self._id_array = np.empty(16, dtype=object)
        self._subsets: dict[Filter, Subset] = {}
        self._subsets_version = 0
        self._inverse: tuple[int, npt.NDArray[np.float32]] | None = None
        self._max_norm: tuple[int, float] | None = None
        self._sorted: tuple[int, list[str]] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def vectors(self) -> npt.NDArray[np.float32]:
        return self._matrix[: len(self.ids)]

    @property
    def id_array(self) -> npt.NDArray[np.object_]:
        """The ids in row order, as an object array."""
        return self._id_array[: len(self.ids)]

    def columns(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float64],
                               npt.NDArray[np.object_]]:
        """The vectors, float64 norms and ids as held, rows past the count included (never
        written): for gathers of given rows, with no slice made for each."""
        return self._matrix, self._wide_norms, self._id_array

    @property
    def wide_norms(self) -> npt.NDArray[np.float64]:
        """Each row's norm computed in float64 (:func:`ranking.wide_norms`)."""
        return self._wide_norms[: len(self.ids)]

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
        wide_norms = np.zeros(capacity, dtype=np.float64)
        wide_norms[: len(self.ids)] = self._wide_norms[: len(self.ids)]
        id_array = np.empty(capacity, dtype=object)
        id_array[: len(self.ids)] = self._id_array[: len(self.ids)]
        self._matrix, self._norms, self._wide_norms = matrix, norms, wide_norms
        self._id_array = id_array

    def put(self, records: list[Record]) -> None:
        if not records:
            return
        self._grow(len(self.ids) + len(records))
        # new ids first, each copied (see _own_copy) in one run of allocations of kept
        # objects alone, in first-seen order; then every record sets its row's columns
        # (a repeated id: the last one wins, as in a loop)
        ids, index = self.ids, self.rows
        added = [rid for rid in dict.fromkeys(rec.id for rec in records) if rid not in index]
        first = len(ids)
        for rid in added:
            copy = _own_copy(rid)
            index[copy] = len(ids)
            ids.append(copy)
        if added:
            self._id_array[first:len(ids)] = ids[first:]
            self.metadata.extend(len(added))
            self.sparse.extend([None] * len(added))
            self.documents.extend([None] * len(added))
        rows = np.empty(len(records), dtype=np.intp)
        for position, rec in enumerate(records):
            row = rows[position] = index[rec.id]
            self.metadata.set(row, rec.metadata)
            self.sparse[row] = rec.sparse
            self.documents[row] = rec.document
        # all vectors in one assignment (a repeated id: the last one wins, as in a loop)
        vectors = np.stack([rec.vector for rec in records]).astype(np.float32, copy=False)
        self._matrix[rows] = vectors
        self._norms[rows] = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
        self._wide_norms[rows] = ranking.wide_norms(vectors)
        self.version += 1

    def metadata_of(self, row: int) -> dict[str, MetadataValue]:
        """Row ``row``'s metadata, a new dict the caller may change."""
        return self.metadata.mapping(row)

    def inverse_norms(self) -> npt.NDArray[np.float32]:
        """``1 / norm`` of every row (0 for a zero vector), kept per data version: a
        cosine query over all rows scales by it without a division per row."""
        cached = self._inverse
        if cached is None or cached[0] != self.version:
            cached = self._inverse = (self.version, _inverse(self._norms[: len(self.ids)]))
        return cached[1]

    def max_norm(self, subset: Subset | None) -> float:
        """The largest stored norm of the rows a query scores (the subset's, or all),
        kept per data version and subset."""
        if subset is not None:
            if subset.matrix is not None:
                return subset.max_norm
            return float(self._norms[subset.rows].max(initial=0.0))
        cached = self._max_norm
        if cached is None or cached[0] != self.version:
            top = float(self._norms[: len(self.ids)].max(initial=0.0))
            cached = self._max_norm = (self.version, top)
        return cached[1]

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
                self._id_array[row] = moved
                self.rows[moved] = row
                self.metadata.move(last, row)
                self.sparse[row] = self.sparse[last]
                self.documents[row] = self.documents[last]
                self._matrix[row] = self._matrix[last]
                self._norms[row] = self._norms[last]
                self._wide_norms[row] = self._wide_norms[last]
            self.ids.pop()
            self._id_array[last] = None
            self.metadata.pop()
            self.sparse.pop()
            self.documents.pop()
            removed += 1
        if removed:
            self.version += 1
        return removed

    def sorted_ids(self) -> list[str]:
        """The ids in ascending order, kept per data version: a scan of a namespace nobody
        writes to sorts once, not once a page."""
        cached = self._sorted
        if cached is None or cached[0] != self.version:
            cached = self._sorted = (self.version, sorted(self.ids))
        return cached[1]

    def records(self, rows: Sequence[int]) -> list[Record]:
        """The records of ``rows``, their vectors read-only rows of one fresh copy (one
        gather for the page instead of a copy per record)."""
        if not rows:
            return []
        matrix = self._matrix[np.asarray(rows, dtype=np.intp)]
        matrix.setflags(write=False)
        ids, sparse, documents, mapping = self.ids, self.sparse, self.documents, self.metadata.mapping
        return [Record(id=ids[row], vector=vector, metadata=mapping(row), sparse=sparse[row],
                       document=documents[row]) for row, vector in zip(rows, matrix, strict=True)]

    def record(self, row: int) -> Record:
        return Record(
            id=self.ids[row],
            vector=read_only_float32(self._matrix[row]),
            metadata=self.metadata.mapping(row),
            sparse=self.sparse[row],
            document=self.documents[row],
        )

    def subset(self, node: Filter | None, metric: Metric | None = None) -> Subset | None:
        """The rows matching the filter (``None`` for all rows), cached per data version.

        For a query (``metric`` given) a selective subset also keeps a contiguous copy
        of its vectors, so that repeated filtered queries cost one matrix product over
        the subset and no gather (a gather of a 10% subset costs as much as the product
        over it); for cosine the copy is scaled to unit rows. The copies together hold
        at most :data:`_COPY_SHARE` of the rows (the oldest give theirs up first), so
        filters cost bounded memory: half the matrix at worst, 10% for one 10% filter."""
        if node is None:
            return None
        if self._subsets_version != self.version:  # stale entries: drop their copies now
            self._subsets.clear()
            self._subsets_version = self.version
        cached = self._subsets.get(node)
        if cached is not None and (metric is None or (
                cached.matrix is not None and cached.unit == (metric == "cosine"))):
            return cached
        if cached is None:
            mask = np.fromiter(self.metadata.evaluate(partial(matches, node)), dtype=bool,
                               count=len(self.metadata))
            rows = np.flatnonzero(mask)
        else:
            rows = cached.rows
        subset = Subset(self.version, rows, None, None)
        if metric is not None and self._room_for(len(rows)):
            unit = metric == "cosine"
            matrix = np.ascontiguousarray(self.vectors[rows].T)
            norms = self._norms[rows]
            if unit:
                matrix *= _inverse(norms)[None, :]
            subset = Subset(self.version, rows, matrix, norms, unit,
                            float(norms.max(initial=0.0)))
        self._subsets.pop(node, None)
        if len(self._subsets) >= _MASK_CACHE_SIZE:
            self._subsets.pop(next(iter(self._subsets)))
        self._subsets[node] = subset
        return subset

    def _room_for(self, count: int) -> bool:
        """Whether a copy of ``count`` rows may be cached, after the oldest copies give
        theirs up (keeping their rows) to make room for it."""
        budget = int(len(self.ids) * _COPY_SHARE)
        if count > budget:
            return False
        used = sum(len(s.rows) for s in self._subsets.values() if s.matrix is not None)
        for key, old in list(self._subsets.items()):
            if used + count <= budget:
                break
            if old.matrix is not None:
                self._subsets[key] = Subset(old.version, old.rows, None, None)
                used -= len(old.rows)
        return used + count <= budget

    def rows_matching(self, node: Filter | None) -> npt.NDArray[np.intp]:
        subset = self.subset(node)
        return np.arange(len(self.ids)) if subset is None else subset.rows

    def dense_scores(
        self, metric: Metric, queries: npt.NDArray[np.float32], subset: Subset | None
    ) -> npt.NDArray[np.float32]:
        """Scores of the subset's rows (all rows when ``subset`` is None) for each query,
        as a (queries × rows) matrix from one matrix product. Exact to float32 rounding
        for cosine and dot product; for euclidean it uses ``|x|² + |q|² − 2x·q``, whose
        cancellation near zero distance is repaired by :meth:`exact_scores` on the few
        rows that can make the top k."""
        right, norms, unit = self._columns(subset)
        if metric == "cosine":
            # scale the few query rows, not the (queries x rows) scores
            queries = queries * _inverse(np.linalg.norm(queries, axis=1))[:, None]
            cosines: npt.NDArray[np.float32] = queries @ right
            if not unit:
                cosines *= (self.inverse_norms() if subset is None else _inverse(norms))[None, :]
            return cosines
        dots: npt.NDArray[np.float32] = queries @ right
        if metric == "dotproduct":
            return dots
        query_norms = np.linalg.norm(queries, axis=1).astype(np.float32)
        # |q|² + |x|² − 2x·q with one (queries x rows) temporary, not three: the same
        # operations in the same order, so the same float32 values
        squared = np.add(query_norms[:, None] ** 2, norms[None, :] ** 2)
        dots *= 2
        squared -= dots
        np.maximum(squared, 0, out=squared)
        np.sqrt(squared, out=squared)
        squared += 1.0
        scores: npt.NDArray[np.float32] = np.reciprocal(squared, out=squared)
        return scores

    def keys(self, metric: Metric, queries: npt.NDArray[np.float32], subset: Subset | None,
             buffer: KeyBuffer | None = None) -> npt.NDArray[np.float32]:
        """Each query's ranking keys over the subset's rows (all rows when ``subset`` is
        None), in the scores' order per query, from one matrix product: for euclidean
        and cosine cheaper than the scores (below), for dot product the scores;
        :func:`bounds.key_margins` bounds their error.
        With ``buffer`` the product is written into it (the keys are valid until its
        next use)."""
        right, norms, unit = self._columns(subset)
        out = None if buffer is None else buffer.matrix(len(queries), right.shape[1])
        keys: npt.NDArray[np.float32] = (
            queries @ right if out is None else np.matmul(queries, right, out=out))
        if metric == "euclidean":
            # 2x·q − |x|²: |q|² − distance², the euclidean score's order per query, from
            # the product and two passes over it (the scores themselves take seven)
            keys *= 2
            keys -= (norms * norms)[None, :]
        elif metric == "cosine" and not unit:
            # |q|·cosine: the cosine's order per query, with no pass over the queries to
            # normalise them (:func:`bounds.key_margins` scales the bound by |q|)
            keys *= (self.inverse_norms() if subset is None else _inverse(norms))[None, :]
        return keys

    def _columns(self, subset: Subset | None
                 ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], bool]:
        """The right-hand side of a query's product (the vectors it scores, all rows or
        the subset's, as a dimension × rows matrix), their norms, and whether the
        vectors are scaled to unit length."""
        if subset is None:
            return self.vectors.T, self._norms[: len(self.ids)], False
        if subset.matrix is not None and subset.norms is not None:
            return subset.matrix, subset.norms, subset.unit
        return self.vectors[subset.rows].T, self._norms[subset.rows], False

    def exact_scores(
        self, metric: Metric, query: npt.NDArray[np.float32], rows: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.float64]:
        """Float64 scores of a few rows, computed directly."""
        return exact_scores(metric, query, self.vectors[rows])

    def sparse_scores(
        self, query: SparseVector, rows: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.float64]:
        return np.fromiter((sparse_dot(query, self.sparse[r]) for r in rows), dtype=np.float64,
                           count=len(rows))


class KeyBuffer:
    """One float32 buffer, reused for the keys of each single query's product (an
    adapter's, used under its lock, so one query at a time): a product over a
    10,000-row subset into it took 4% less than into a new array (p20 of 100
    alternating rounds). Batches allocate theirs (no gain measured for 200 × 10,000),
    and so do products of more than :data:`_KEY_BUFFER_LIMIT` floats, so the buffer
    never holds more than 4 MiB."""

    __slots__ = ("_data", "_view")

    def __init__(self) -> None:
        self._data = np.empty(0, dtype=np.float32)
        self._view = self._data.reshape(0, 0)

    def matrix(self, rows: int, columns: int) -> npt.NDArray[np.float32] | None:
        """A C-contiguous ``rows × columns`` view of the buffer (grown when needed), or
        ``None`` past the limit. The same view again for the same shape (repeated
        queries over one subset), not a new one."""
        view = self._view
        if view.shape == (rows, columns):
            return view
        size = rows * columns
        if size > _KEY_BUFFER_LIMIT:
            return None
        if len(self._data) < size:
            self._data = np.empty(size, dtype=np.float32)
        view = self._view = self._data[:size].reshape(rows, columns)
        return view


_KEY_BUFFER_LIMIT = 1 << 20
"""Floats (4 MiB: a single query over a million rows) a :class:`KeyBuffer` holds at
most."""


def _own_copy(text: str) -> str:
    """A new string equal to ``text``, for an id the store keeps.

    The caller's id string was made among the temporaries of its record (its tuple or
    dict, the validated metadata, the ``Record``), in the same pymalloc pools: kept,
    it pins those pools after they die. At 200k records the kept ids held 420 bytes a
    record of such pools for 60 bytes of text. A copy made here fills free slots among
    the other kept objects instead (and the caller's string is freed with its record)."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")


def _inverse(norms: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.float32]:
    """``1 / norm``, and 0 for a zero vector (it scores 0 under cosine)."""
    inverse = np.zeros(norms.shape, dtype=np.float32)
    np.divide(1.0, norms, out=inverse, where=norms > 0)
    return inverse


def candidates_many(scores: npt.NDArray[np.floating[Any]], top_k: int,
                    margins: npt.NDArray[np.float64]) -> list[npt.NDArray[np.intp]]:
    """:func:`candidates` for each row of a (queries x rows) score matrix, row ``b``
    keeping what is within ``margins[b]`` of its k-th best (found by one partition)."""
    width = scores.shape[1]
    if len(scores) == 1:  # one query: the 1-d form costs less
        return [candidates(scores[0], top_k, float(margins[0]))]
    if width <= top_k:
        return [np.arange(width)] * len(scores)
    kth = np.partition(scores, width - top_k, axis=1)[:, width - top_k]
    floors = kth - margins
    floors -= np.abs(floors) * 2.0 ** -22  # as bounds.float32_floor: never above
    hits, cols = np.divmod(np.flatnonzero(scores >= floors[:, None]), width)  # 1-d: faster
    bounds = np.searchsorted(hits, np.arange(len(scores) + 1))
    return [cols[bounds[b]:bounds[b + 1]] for b in range(len(scores))]


def candidates(scores: npt.NDArray[np.floating[Any]], top_k: int,
               margin: float) -> npt.NDArray[np.intp]:
    """Positions of every score that can still make the top k once rescored exactly:
    all within ``margin`` of the k-th best (so boundary ties all stay, and ids decide)."""
    if len(scores) <= top_k:
        return np.arange(len(scores))
    kth = np.partition(scores, len(scores) - top_k)[len(scores) - top_k]
    if margin == 0.0:  # exact scores: the k-th itself
        return np.flatnonzero(scores >= kth)
    return np.flatnonzero(scores >= float32_floor(float(kth) - margin))


def top_rows(
    ids: list[str], rows: npt.NDArray[np.intp], scores: npt.NDArray[np.float64], top_k: int,
    min_score: float | None,
) -> list[tuple[int, float]]:
    """The best ``top_k`` (row, score) pairs in contract order: score down, id up.
    ``rows``/``scores`` are a candidate set (typically from :func:`candidates`)."""
    if min_score is not None:
        keep = scores >= min_score
        rows, scores = rows[keep], scores[keep]
    if len(rows) > top_k:
        position = candidates(scores, top_k, 0.0)
        rows, scores = rows[position], scores[position]
    pairs = zip(rows.tolist(), scores.tolist(), strict=True)
    return contract_order(pairs, ids.__getitem__)[:top_k]

"""The emulator's data: indexes, namespaces, records, the write log and exact search.

Every write to a namespace gets the next log sequence number (LSN) and is applied at
once to the namespace's *latest* state; reads see the *visible* state, to which writes
are applied in LSN order once their ``visible_at`` time (``now + lag``) has passed. The
visible state therefore always equals the latest state as of the namespace's reconciled
LSN, which is what Pinecone reports in ``x-pinecone-max-indexed-lsn``.
"""

from __future__ import annotations

import time
import zlib
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from vectorport.testing.emulators.pinecone.filters import Predicate

DEFAULT_NAMESPACE = "__default__"

Metadata = dict[str, Any]
"""Stored metadata: str, float, bool or list[str] values (numbers are kept as floats)."""


@dataclass(frozen=True, slots=True)
class SparseValues:
    indices: tuple[int, ...]
    values: tuple[float, ...]

    def dot(self, other: SparseValues) -> float:
        mine = dict(zip(self.indices, self.values, strict=True))
        return float(sum(v * mine[i] for i, v in zip(other.indices, other.values, strict=True)
                         if i in mine))


@dataclass(frozen=True, slots=True)
class StoredVector:
    id: str
    values: npt.NDArray[np.float32]
    sparse: SparseValues | None
    metadata: Metadata


Operation = Callable[[dict[str, StoredVector]], None]


BLOCK_ROWS = 4_096
"""Rows squared at a time for norms and euclidean distances: squaring a whole namespace
at once allocated a new matrix of 8 bytes a value, whose first touch took more time
than the search (0.19 s over 20,000 records of 384 floats here)."""


@dataclass(frozen=True)
class Rows:
    """A namespace's visible records and their dense values as one matrix, kept until
    the next visible write, with the values in doubles (in which scores are computed)
    and their norms once asked for: converting, stacking and norming 20,000 records of
    384 floats in every query took 53 ms of its 55."""

    records: list[StoredVector]
    values: npt.NDArray[np.float32]

    @cached_property
    def doubles(self) -> npt.NDArray[np.float64]:
        """The values in doubles."""
        return self.values.astype(np.float64)

    @cached_property
    def norms(self) -> npt.NDArray[np.float64]:
        """Each record's euclidean norm (for cosine scores)."""
        return by_blocks(self.doubles, lambda block: np.linalg.norm(block, axis=1))


def by_blocks(matrix: npt.NDArray[np.float64],
              row_values: Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]],
              ) -> npt.NDArray[np.float64]:
    """``row_values`` of ``matrix``, :data:`BLOCK_ROWS` rows at a time: for a reduction
    along each row (a norm, a sum of squares), whose value for a row is the same in a
    block as in the whole matrix. (A matrix product is not: BLAS may take a small block's
    rows in another order of additions, which changes the last bit of some scores.)"""
    if len(matrix) <= BLOCK_ROWS:
        return row_values(matrix)
    return np.concatenate([row_values(matrix[start:start + BLOCK_ROWS])
                           for start in range(0, len(matrix), BLOCK_ROWS)])


@dataclass
class Namespace:
    """One namespace: the latest state, the visible state and the writes in between."""

    latest: dict[str, StoredVector] = field(default_factory=dict)
    visible: dict[str, StoredVector] = field(default_factory=dict)
    pending: deque[tuple[int, float, Operation]] = field(default_factory=deque)
    lsn: int = 0
    reconciled: int = 0
    version: int = 0
    _rows: tuple[int, Rows] | None = None

    def commit(self, operation: Operation, visible_at: float) -> int:
        """Apply a write to the latest state and schedule it for the visible one."""
        self.lsn += 1
        operation(self.latest)
        self.pending.append((self.lsn, visible_at, operation))
        self.advance(time.monotonic())
        return self.lsn

    def advance(self, now: float) -> None:
        """Make every write due by ``now`` visible, in LSN order (a prefix of the log)."""
        changed = False
        while self.pending and self.pending[0][1] <= now:
            lsn, _, operation = self.pending.popleft()
            operation(self.visible)
            self.reconciled = lsn
            changed = True
        if changed:
            self.version += 1

    def rows(self) -> Rows:
        """The visible records and their dense values (cached per version)."""
        if self._rows is None or self._rows[0] != self.version:
            records = list(self.visible.values())
            values = (np.stack([r.values for r in records]) if records
                      else np.zeros((0, 0), dtype=np.float32))
            self._rows = (self.version, Rows(records, values))
        return self._rows[1]


@dataclass
class IndexState:
    """One index: its control-plane description and its namespaces."""

    name: str
    dimension: int
    metric: str
    sparse: bool
    deployment: dict[str, Any]
    deletion_protection: str = "disabled"
    tags: dict[str, str] | None = None
    namespaces: dict[str, Namespace] = field(default_factory=dict)

    def namespace(self, name: str) -> Namespace:
        found = self.namespaces.get(name)
        if found is None:
            found = self.namespaces[name] = Namespace()
        return found

    def advance(self, now: float) -> None:
        for ns in self.namespaces.values():
            ns.advance(now)


def upsert_op(vectors: list[StoredVector]) -> Operation:
    def apply(state: dict[str, StoredVector]) -> None:
        for vector in vectors:
            state[vector.id] = vector

    return apply


def delete_ids_op(ids: list[str]) -> Operation:
    def apply(state: dict[str, StoredVector]) -> None:
        for rid in ids:
            state.pop(rid, None)

    return apply


def delete_filter_op(predicate: Predicate) -> Operation:
    def apply(state: dict[str, StoredVector]) -> None:
        for rid in [r.id for r in state.values() if predicate(r.metadata)]:
            del state[rid]

    return apply


def delete_all_op() -> Operation:
    def apply(state: dict[str, StoredVector]) -> None:
        state.clear()

    return apply


def update_op(
    rid: str | None,
    predicate: Predicate | None,
    values: npt.NDArray[np.float32] | None,
    sparse: SparseValues | None,
    set_metadata: Mapping[str, Any] | None,
) -> Operation:
    """Patch one record by id, or the metadata of every record a filter matches."""

    def patch(old: StoredVector) -> StoredVector:
        metadata = dict(old.metadata)
        if set_metadata:
            metadata.update(set_metadata)
        return StoredVector(
            id=old.id,
            values=values if values is not None else old.values,
            sparse=sparse if sparse is not None else old.sparse,
            metadata=metadata,
        )

    def apply(state: dict[str, StoredVector]) -> None:
        if rid is not None:
            old = state.get(rid)
            if old is not None:
                state[rid] = patch(old)
            return
        assert predicate is not None
        for record in [r for r in state.values() if predicate(r.metadata)]:
            state[record.id] = patch(record)

    return apply


def tie_break(rid: str) -> int:
    """An arbitrary but stable order among equal scores, as a real ANN index gives.

    Deliberately not the id order, so that clients needing id order at a tie must ask
    for it themselves.
    """
    return zlib.crc32(rid.encode("utf-8"))


def dense_scores(
    metric: str, rows: Rows, positions: list[int] | None, query: npt.NDArray[np.float32]
) -> npt.NDArray[np.float64]:
    """Pinecone's scores of the records at ``positions`` of ``rows`` (all when
    ``None``), computed in doubles: cosine similarity, dot product, or squared euclidean
    distance."""
    m = rows.doubles if positions is None else rows.doubles[positions]
    q = query.astype(np.float64)
    if metric == "dotproduct":
        return m @ q
    if metric == "cosine":
        stored = rows.norms if positions is None else rows.norms[positions]
        norms = stored * np.linalg.norm(q)
        return (m @ q) / np.where(norms == 0, 1.0, norms)

    def squared(block: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        diff = block - q
        distances: npt.NDArray[np.float64] = np.einsum("ij,ij->i", diff, diff)
        return distances

    return by_blocks(m, squared)


def best_positions(keys: npt.NDArray[np.float64], top_k: int,
                   tie: Callable[[int], int]) -> list[int]:
    """The positions of the ``top_k`` smallest ``keys``, equal keys in ``tie`` order:
    what sorting every position by ``(key, tie)`` and keeping ``top_k`` gives, with only
    the positions whose key is at most the ``top_k``-th smallest sorted (a query over
    10,000 records spent 21 ms sorting them all). Only the candidates' keys become
    Python floats, and they are sorted in position order, so full ties stay in it."""
    if len(keys) > top_k:
        kth = np.partition(keys, top_k - 1)[top_k - 1]
        candidates = np.flatnonzero(keys <= kth)
    else:
        candidates = np.arange(len(keys))
    positions: list[int] = candidates.tolist()
    values: list[float] = keys[candidates].tolist()
    order = sorted(range(len(positions)), key=lambda i: (values[i], tie(positions[i])))
    return [positions[i] for i in order[:top_k]]


__all__ = [
    "BLOCK_ROWS",
    "DEFAULT_NAMESPACE",
    "IndexState",
    "Namespace",
    "Rows",
    "SparseValues",
    "StoredVector",
    "best_positions",
    "by_blocks",
    "delete_all_op",
    "delete_filter_op",
    "delete_ids_op",
    "dense_scores",
    "tie_break",
    "update_op",
    "upsert_op",
]

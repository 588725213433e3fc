"""Records to Qdrant points and back, in the layout :mod:`.naming` describes.

The engines (:mod:`.engines`) speak in :class:`Point` and :class:`Hit`, plain values
independent of either SDK, so that the layout lives here once.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from vectorport.adapterkit import read_only_float32, spec_from_json, spec_to_json
from vectorport.adapters.qdrant import naming, numbers
from vectorport.core.types import (
    DenseVector,
    IndexSpec,
    Match,
    MetadataValue,
    Record,
    RecordPatch,
    SparseVector,
)

VectorValue = list[float] | SparseVector
"""A vector as written (the SDKs take lists)."""
QueryValue = DenseVector | SparseVector
"""A query vector as the adapter holds it: dense ones as the validated float32 array,
which each engine hands its SDK in the form that SDK copies cheapest."""
HitVector = list[float] | DenseVector | SparseVector
"""A vector as read back: dense ones as the engine gave them (lists of the float32
values), sparse ones canonical. A dense vector becomes an array only where it is used:
the hits of a search are scored together from their lists (one float64 matrix, see
:class:`~.ranking.Scorer`), and only a returned record or match holds a read-only
float32 array; converting each hit's list on arrival cost ≈ 4 µs a hit, for vectors
that a query without ``include_vectors`` never returns."""


@dataclass(frozen=True, slots=True)
class Point:
    """One point to write: its UUID, named vectors and payload."""

    uid: str
    vectors: Mapping[str, VectorValue]
    payload: Mapping[str, Any]


def estimated_bytes(point: Point) -> int:
    """A generous estimate of the JSON size of ``point`` in an upsert request (numbers
    as text, payload values quoted), to keep requests under the server's limit."""
    return 256 + sum(
        24 * (len(v.indices) * 2 if isinstance(v, SparseVector) else len(v))
        for v in point.vectors.values()
    ) + 2 * sum(len(str(v)) for v in point.payload.values())


@dataclass(frozen=True, slots=True)
class Hit:
    """One point read back: its payload and the named vectors asked for. The engine's
    own score is not kept (rescoring makes scores exact), and the point id is read
    from the engine's point only when asked for (:attr:`uid`): a search's ranking keys
    hits by record id (read once here: the ranking asks for it a dozen times a hit),
    and qdrant-edge-py builds a ``uuid.UUID`` for every id read."""

    point: Any
    """The engine's point (or anything with an ``id``), for :attr:`uid`."""
    payload: Mapping[str, Any]
    vectors: Mapping[str, HitVector] = field(default_factory=dict)
    record_id: str = ""

    @property
    def uid(self) -> str:
        return str(self.point.id)


def to_point(index: IndexSpec, namespace: str, record: Record, *, bools_native: bool,
             numbers_exact: bool) -> Point:
    meta = {k: list(v) if isinstance(v, tuple) else v for k, v in record.metadata.items()}
    payload: dict[str, Any] = {naming.NAMESPACE: namespace, naming.ID: record.id,
                               naming.META: meta, naming.REVISION: naming.revision()}
    if record.document is not None:
        payload[naming.DOCUMENT] = record.document
    if not bools_native:
        shadow = {k: naming.bool_text(v) for k, v in meta.items() if isinstance(v, bool)}
        if shadow:
            payload[naming.BOOLS] = shadow
    if not numbers_exact:
        payload.update(numbers.payload_keys(meta))
    dense = record.vector.tolist()
    vectors: dict[str, VectorValue] = {naming.DENSE: dense}
    if index.metric == "cosine":
        vectors[naming.RAW] = dense
    if index.sparse and record.sparse is not None:
        vectors[naming.SPARSE] = record.sparse
    return Point(naming.point_id(namespace, record.id), vectors, payload)


def stored_vector_name(index: IndexSpec) -> str:
    """The named vector holding the dense vector as written."""
    return naming.RAW if index.metric == "cosine" else naming.DENSE


def vector_names(index: IndexSpec) -> list[str]:
    """The named vectors exact scoring and returned records need."""
    names = [stored_vector_name(index)]
    if index.sparse:
        names.append(naming.SPARSE)
    return names


def metadata_of(payload: Mapping[str, Any]) -> dict[str, MetadataValue]:
    metadata = {key: tuple(value) if type(value) is list else value
                for key, value in (payload.get(naming.META) or {}).items()}
    for key, value in metadata.items():
        if type(value) is float:  # exact where the engine keeps order keys (Edge)
            metadata[key] = numbers.read_float(value, payload, key)
    return metadata


def document_of(payload: Mapping[str, Any]) -> str | None:
    document = payload.get(naming.DOCUMENT)
    return None if document is None else str(document)


def dense_of(index: IndexSpec, hit: Hit) -> DenseVector:
    stored = hit.vectors[stored_vector_name(index)]
    assert not isinstance(stored, SparseVector)  # the dense vector's name
    return read_only_float32(stored)


def sparse_of(index: IndexSpec, hit: Hit) -> SparseVector | None:
    if not index.sparse:
        return None
    value = hit.vectors.get(naming.SPARSE)
    return value if isinstance(value, SparseVector) else None


def to_record(index: IndexSpec, hit: Hit) -> Record:
    return Record(id=hit.record_id, vector=dense_of(index, hit),
                  metadata=metadata_of(hit.payload), sparse=sparse_of(index, hit),
                  document=document_of(hit.payload))


def patched(record: Record, patch: RecordPatch) -> Record:
    """``record`` with ``patch`` applied: metadata keys merged and removed, the vector,
    sparse vector or document replaced where given."""
    metadata = {k: v for k, v in record.metadata.items() if k not in patch.unset_metadata}
    metadata.update(patch.set_metadata)
    return Record(
        id=record.id,
        vector=record.vector if patch.vector is None else patch.vector,
        metadata=metadata,
        sparse=record.sparse if patch.sparse is None else patch.sparse,
        document=record.document if patch.document is None else patch.document,
    )


def to_match(index: IndexSpec, hit: Hit, score: float, *, metadata: bool, vectors: bool,
             documents: bool) -> Match:
    return Match(
        id=hit.record_id,
        score=score,
        metadata=metadata_of(hit.payload) if metadata else None,
        vector=dense_of(index, hit) if vectors else None,
        sparse=sparse_of(index, hit) if vectors else None,
        document=document_of(hit.payload) if documents else None,
    )



@functools.lru_cache(maxsize=16)
def _doubles(dimension: int) -> struct.Struct:
    return struct.Struct(f"={dimension}d")


def float64_rows(rows: Sequence[Sequence[float]]) -> npt.NDArray[np.float64]:
    """The dense vectors ``rows`` (lists of floats, as the engines return them, all of
    one dimension) as one float64 matrix. Packed row by row with :mod:`struct` and read
    in one buffer: the same values as ``np.array(rows, dtype=np.float64)`` at well under
    half its cost (≈ 1.6 against 4.3 µs a row of 384 here), which is most of what the
    exact rescoring of a search costs."""
    if not rows:
        return np.zeros((0, 0), dtype=np.float64)
    dimension = len(rows[0])
    pack = _doubles(dimension).pack
    buffer = b"".join([pack(*row) for row in rows])
    return np.frombuffer(buffer, dtype=np.float64).reshape(len(rows), dimension)


def hit_of(point: Any, sparse_type: type[Any]) -> Hit:
    """A point as either engine returns it (qdrant-client's models or qdrant-edge's),
    with ``sparse_type`` that engine's sparse vector class; sparse vectors come back in
    the canonical ascending order, dense ones as given (see :data:`HitVector`)."""
    raw = point.vector
    payload = point.payload or {}
    if not isinstance(raw, Mapping):
        return Hit(point, payload, {}, str(payload[naming.ID]))
    if not any(isinstance(value, sparse_type) for value in raw.values()):
        # the engine's own fresh dict of lists: kept as it is (most hits)
        return Hit(point, payload, raw, str(payload[naming.ID]))
    vectors: dict[str, HitVector] = {}
    for name, value in raw.items():
        if isinstance(value, sparse_type):
            pairs = sorted(zip(value.indices, value.values, strict=True))
            vectors[name] = SparseVector(tuple(int(i) for i, _ in pairs),
                                         tuple(float(v) for _, v in pairs))
        else:
            vectors[name] = value
    return Hit(point, payload, vectors, str(payload[naming.ID]))


__all__ = ["Hit", "HitVector", "Point", "QueryValue", "dense_of", "float64_rows", "metadata_of",
           "spec_from_json", "spec_to_json", "stored_vector_name", "to_match", "to_point",
           "to_record", "vector_names"]

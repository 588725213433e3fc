"""Records to Qdrant points and back, in the layout :mod:`.naming` describes.

The engines (:mod:`.engines`) speak in :class:`Point` and :class:`Hit`, plain values
independent of either SDK, so that the layout lives here once.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vectorport.adapterkit import read_only_float32, spec_from_json, spec_to_json
from vectorport.adapters.qdrant import naming
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
HitVector = DenseVector | SparseVector
"""A vector as read back: dense ones as read-only float32 arrays, made once per hit, so
that scoring and the returned match share them without copies."""


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
    """One point read back. ``score`` is the engine's own (unused for ranking, which
    rescoring makes exact); ``vectors`` holds the named vectors asked for."""

    uid: str
    payload: Mapping[str, Any]
    vectors: Mapping[str, HitVector] = field(default_factory=dict)
    score: float = 0.0

    @property
    def record_id(self) -> str:
        return str(self.payload[naming.ID])


def to_point(index: IndexSpec, namespace: str, record: Record, *, bools_native: bool) -> Point:
    meta = {k: list(v) if isinstance(v, tuple) else v for k, v in record.metadata.items()}
    payload: dict[str, Any] = {naming.NAMESPACE: namespace, naming.ID: record.id,
                               naming.META: meta, naming.REVISION: uuid.uuid4().hex}
    if record.document is not None:
        payload[naming.DOCUMENT] = record.document
    if not bools_native:
        shadow = {k: naming.bool_text(v) for k, v in meta.items() if isinstance(v, bool)}
        if shadow:
            payload[naming.BOOLS] = shadow
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
    out: dict[str, MetadataValue] = {}
    for key, value in (payload.get(naming.META) or {}).items():
        out[key] = tuple(value) if isinstance(value, list) else value
    return out


def document_of(payload: Mapping[str, Any]) -> str | None:
    document = payload.get(naming.DOCUMENT)
    return None if document is None else str(document)


def dense_of(index: IndexSpec, hit: Hit) -> DenseVector:
    stored = hit.vectors[stored_vector_name(index)]
    assert not isinstance(stored, SparseVector)  # the dense vector's name
    return stored


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



def hit_of(point: Any, sparse_type: type[Any]) -> Hit:
    """A point as either engine returns it (qdrant-client's models or qdrant-edge's),
    with ``sparse_type`` that engine's sparse vector class; sparse vectors come back in
    the canonical ascending order."""
    vectors: dict[str, HitVector] = {}
    raw = point.vector
    if isinstance(raw, Mapping):
        for name, value in raw.items():
            if isinstance(value, sparse_type):
                pairs = sorted(zip(value.indices, value.values, strict=True))
                vectors[name] = SparseVector(tuple(int(i) for i, _ in pairs),
                                             tuple(float(v) for _, v in pairs))
            else:
                vectors[name] = read_only_float32(value)
    return Hit(uid=str(point.id), payload=point.payload or {}, vectors=vectors,
               score=float(getattr(point, "score", 0.0)))

__all__ = ["Hit", "HitVector", "Point", "QueryValue", "dense_of", "metadata_of", "spec_from_json",
           "spec_to_json", "stored_vector_name", "to_match", "to_point", "to_record", "vector_names"]

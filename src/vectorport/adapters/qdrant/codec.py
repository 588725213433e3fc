"""Records to Qdrant points and back, in the layout :mod:`.naming` describes.

The engines (:mod:`.engines`) speak in :class:`Point` and :class:`Hit`, plain values
independent of either SDK, so that the layout lives here once.
"""

from __future__ import annotations

import binascii
import functools
import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from vectorport.adapterkit import match_of, read_only_float32, spec_from_json, spec_to_json
from vectorport.adapters.qdrant import naming, numbers
from vectorport.core.errors import BackendError
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


def settings_to_json(spec: IndexSpec) -> str:
    """What a collection keeps beside its points: the IndexSpec and the point layout
    this code writes (:data:`.naming.LAYOUT`)."""
    settings = json.loads(spec_to_json(spec))
    settings[naming.LAYOUT_KEY] = naming.LAYOUT
    return json.dumps(settings, sort_keys=True)


def settings_from_json(text: str) -> tuple[IndexSpec, int]:
    """The IndexSpec and point layout of :func:`settings_to_json` (a collection written
    before the layout was recorded holds the bare IndexSpec: layout 1)."""
    settings: dict[str, Any] = json.loads(text)
    version = settings.pop(naming.LAYOUT_KEY, 1)
    if not isinstance(version, int) or not 1 <= version <= naming.LAYOUT:
        raise BackendError(f"qdrant: the collection has point layout {version!r}, which "
                           f"this version of vectorport cannot read (it knows 1 to "
                           f"{naming.LAYOUT}); upgrade vectorport")
    return spec_from_json(json.dumps(settings)), version


def vector_in_payload(index: IndexSpec, version: int) -> bool:
    """Whether the vector as written is the payload's :data:`.naming.VECTOR` text."""
    return version >= 2 and index.metric == "cosine"


def vector_text(vector: DenseVector) -> str:
    """The payload text of a vector as written: the hex digits of its little-endian
    float32 bytes (exact, and one string for the engine to hand back). Hex over base64:
    it decodes three times as fast (≈ 1 against 3 µs for 384 dimensions, ≈ 20 µs of a
    top-10 query of 12 points), for 2 characters a byte against 4/3."""
    if vector.dtype.str != "<f4":  # the validated vectors are, and need no copy
        vector = np.asarray(vector, dtype="<f4")
    return vector.tobytes().hex()


def to_point(index: IndexSpec, namespace: str, record: Record, *, bools_native: bool,
             numbers_exact: bool, version: int = naming.LAYOUT,
             revision: str | None = None) -> Point:
    """``record`` as a point of a collection in point layout ``version``, with the
    revision token ``revision`` (default: a fresh one, :func:`.naming.revision`)."""
    meta = {k: list(v) if isinstance(v, tuple) else v for k, v in record.metadata.items()}
    token = naming.revision() if revision is None else revision
    payload: dict[str, Any] = (
        {naming.NAMESPACE: namespace, naming.REVISION_ID: token + record.id,
         naming.META: meta} if version >= 2 else
        {naming.NAMESPACE: namespace, naming.ID: record.id, naming.META: meta,
         naming.REVISION: token})
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
        if version >= 2:
            payload[naming.VECTOR] = vector_text(record.vector)
        else:
            vectors[naming.RAW] = dense
    if index.sparse and record.sparse is not None:
        vectors[naming.SPARSE] = record.sparse
    return Point(naming.point_id(namespace, record.id), vectors, payload)


def record_id_of(payload: Mapping[str, Any]) -> str:
    """The record id a point's payload holds (layout 2 after its revision token)."""
    text = payload.get(naming.REVISION_ID)
    if text is None:
        return str(payload[naming.ID])
    return str(text)[naming.REVISION_CHARS:]


def revision_condition(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The filter a patch's conditional write carries: the point still holds the
    revision read with ``payload`` (layout 2: the whole revision-and-id value; a point
    of layout 1 written before revisions existed: still none)."""
    if naming.REVISION_ID in payload:
        return {"must": [{"key": naming.REVISION_ID,
                          "match": {"value": payload[naming.REVISION_ID]}}]}
    revision = payload.get(naming.REVISION)
    if isinstance(revision, str):
        return {"must": [{"key": naming.REVISION, "match": {"value": revision}}]}
    return {"must": [{"is_empty": {"key": naming.REVISION}}]}


def revision_of(payload: Mapping[str, Any]) -> object:
    """What :func:`revision_condition` compares, to tell which write is stored."""
    return payload.get(naming.REVISION_ID, payload.get(naming.REVISION))


def stored_vector_name(index: IndexSpec) -> str:
    """The named vector holding the dense vector as written, where one does (every
    index in layout 1; non-cosine indexes in every layout)."""
    return naming.RAW if index.metric == "cosine" else naming.DENSE


def vector_names(index: IndexSpec, version: int = naming.LAYOUT) -> list[str]:
    """The named vectors exact scoring and returned records need, in layout
    ``version`` (none on a cosine index of layout 2 without sparse vectors: the vector
    as written comes with the payload)."""
    names = [] if vector_in_payload(index, version) else [stored_vector_name(index)]
    if index.sparse:
        names.append(naming.SPARSE)
    return names


def metadata_of(payload: Mapping[str, Any]) -> dict[str, MetadataValue]:
    """The metadata a point's payload holds: lists back to tuples, floats exact where
    the engine keeps order keys (Edge, :func:`.numbers.read_float`). One pass over the
    values (a copy either way: the engine's dict is the hit's)."""
    meta = payload.get(naming.META)
    if not meta:
        return {}
    metadata: dict[str, MetadataValue] = {}
    for key, value in meta.items():
        kind = type(value)
        if kind is list:  # stored for a tuple
            metadata[key] = tuple(value)
        elif kind is float:
            metadata[key] = numbers.read_float(value, payload, key)
        else:
            metadata[key] = value
    return metadata


def document_of(payload: Mapping[str, Any]) -> str | None:
    document = payload.get(naming.DOCUMENT)
    return None if document is None else str(document)


def _missing(hit: Hit) -> BackendError:
    return BackendError(f"qdrant: point {hit.record_id!r} came back without its stored "
                        "vector (the collection's layout changed under this connection?)")


def vector_of_text(text: str) -> DenseVector:
    """The vector as written from its payload text (:func:`vector_text`), read-only."""
    array = np.frombuffer(binascii.a2b_hex(text), dtype="<f4").astype(np.float32, copy=False)
    array.setflags(write=False)  # frombuffer over bytes is read-only already
    return array


def dense_of(index: IndexSpec, hit: Hit) -> DenseVector:
    """The vector as written: the payload's text (layout 2, cosine) or the named
    vector, whichever the point holds."""
    text = hit.payload.get(naming.VECTOR)
    if isinstance(text, str):
        return vector_of_text(text)
    stored = hit.vectors.get(stored_vector_name(index))
    if stored is None or isinstance(stored, SparseVector):
        raise _missing(hit)
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
    payload = hit.payload
    return match_of(
        hit.record_id,
        score,
        metadata_of(payload) if metadata else None,
        dense_of(index, hit) if vectors else None,
        sparse_of(index, hit) if vectors else None,
        document_of(payload) if documents else None,
    )


def payload_match(record_id: str, payload: Mapping[str, Any], score: float, *,
                  metadata: bool, vectors: bool, documents: bool) -> Match:
    """:func:`to_match` of a point whose payload holds all a match can return (a
    cosine index of layout 2 without sparse vectors: :func:`vector_names` is empty),
    without its :class:`Hit`."""
    return match_of(
        record_id,
        score,
        metadata_of(payload) if metadata else None,
        vector_of_text(payload[naming.VECTOR]) if vectors else None,
        None,
        document_of(payload) if documents else None,
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


def dense_matrix(hits: Sequence[Hit], name: str) -> npt.NDArray[np.float64]:
    """The vectors as written of ``hits`` (all of one collection, so all in one
    layout) as one float64 matrix: decoded from the payloads' hex texts in one
    buffer, or packed from the named vector ``name`` (:func:`float64_rows`)."""
    texts: list[Any] = [hit.payload.get(naming.VECTOR) for hit in hits]
    if texts and all(type(text) is str for text in texts):
        buffer = b"".join([binascii.a2b_hex(text) for text in texts])
        return np.frombuffer(buffer, dtype="<f4").reshape(len(hits), -1).astype(np.float64)
    rows: list[Any] = []
    for hit in hits:
        stored = hit.vectors.get(name)
        if stored is None or isinstance(stored, SparseVector):
            raise _missing(hit)
        rows.append(stored)
    return float64_rows(rows)


_NO_VECTORS: Mapping[str, HitVector] = MappingProxyType({})
_HIT_FIELDS = tuple(Hit.__dict__[name].__set__ for name in (
    "point", "payload", "vectors", "record_id"))
_new = object.__new__


def _hit(point: Any, payload: Mapping[str, Any], vectors: Mapping[str, HitVector]) -> Hit:
    """``Hit(point, payload, vectors, record_id_of(payload))``, the same frozen value
    in half the dataclass ``__init__``'s time (as :func:`~vectorport.core.types.match_of`
    does for matches): a search makes a dozen of them, ≈ 8 µs of a query."""
    hit: Hit = _new(Hit)
    set_point, set_payload, set_vectors, set_record_id = _HIT_FIELDS
    set_point(hit, point)
    set_payload(hit, payload)
    set_vectors(hit, vectors)
    set_record_id(hit, record_id_of(payload))
    return hit


def hit_of(point: Any, sparse_type: type[Any]) -> Hit:
    """A point as either engine returns it (qdrant-client's models or qdrant-edge's),
    with ``sparse_type`` that engine's sparse vector class; sparse vectors come back in
    the canonical ascending order, dense ones as given (see :data:`HitVector`)."""
    raw = point.vector
    payload = point.payload or {}
    if raw is None or not isinstance(raw, Mapping):
        return _hit(point, payload, _NO_VECTORS)  # no vectors asked (most searches)
    if not any(isinstance(value, sparse_type) for value in raw.values()):
        # the engine's own fresh dict of lists: kept as it is
        return _hit(point, payload, raw)
    vectors: dict[str, HitVector] = {}
    for name, value in raw.items():
        if isinstance(value, sparse_type):
            pairs = sorted(zip(value.indices, value.values, strict=True))
            vectors[name] = SparseVector(tuple(int(i) for i, _ in pairs),
                                         tuple(float(v) for _, v in pairs))
        else:
            vectors[name] = value
    return _hit(point, payload, vectors)


__all__ = ["Hit", "HitVector", "Point", "QueryValue", "dense_matrix", "dense_of", "float64_rows",
           "metadata_of", "payload_match", "record_id_of", "revision_condition", "revision_of",
           "settings_from_json", "settings_to_json", "spec_from_json",
           "spec_to_json", "stored_vector_name", "to_match", "to_point", "to_record",
           "vector_in_payload", "vector_names", "vector_of_text", "vector_text"]

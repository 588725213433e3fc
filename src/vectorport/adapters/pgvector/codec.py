"""Binary codecs between numpy / vectorport values and pgvector's types.

``pgvector.psycopg.register_vector`` teaches a connection the ``vector``, ``halfvec``
and ``sparsevec`` types; on top of it these dumpers and loaders take the shapes the
facade already hands over without any detour through Python lists: a float32 numpy array
becomes the wire bytes with one ``astype('>f4')``, and a loaded vector is one
``np.frombuffer``. The dumpers are registered by type OID, which is what binary COPY
(``Copy.set_types``) looks up, and numpy arrays default to ``vector`` in parameters.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
from pgvector.psycopg import register_vector, register_vector_async
from psycopg import AsyncConnection, Connection
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format

from vectorport.adapterkit import (
    Include,
    Match,
    QueryRequest,
    Record,
    SparseVector,
    UnsupportedFeatureError,
    ValidationError,
    match_of,
    read_only_float32,
)
from vectorport.adapters.pgvector.capabilities import HALFVEC_MAX
from vectorport.adapters.pgvector.jsonb import (
    load_metadata,
)
from vectorport.adapters.pgvector.options import BACKEND, IndexLayout

SPARSE_DIMENSIONS = 1_000_000_000
"""pgvector's largest ``sparsevec`` dimension: every stored and query sparse vector uses
it, so any two can be multiplied; an index must be below it."""
SPARSE_MAX_NONZERO = 16_000
_FLOAT32_MAX = float(np.finfo(np.float32).max)

_VECTOR_HEADER = struct.Struct(">HH")
_SPARSE_HEADER = struct.Struct(">iii")


class _VectorDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        array = np.asarray(obj)
        return _VECTOR_HEADER.pack(array.shape[0], 0) + array.astype(">f4").tobytes()


class _HalfvecDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        array = np.asarray(obj)
        return _VECTOR_HEADER.pack(array.shape[0], 0) + array.astype(">f2").tobytes()


class _SparseDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        indices = np.asarray(obj.indices, dtype=">i4")
        values = np.asarray(obj.values, dtype=">f4")
        if not values.all():  # pgvector stores no explicit zeros (they add nothing)
            keep = values != 0
            indices, values = indices[keep], values[keep]
        return (
            _SPARSE_HEADER.pack(SPARSE_DIMENSIONS, len(indices), 0)
            + indices.tobytes()
            + values.tobytes()
        )


class _VectorLoader(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> np.ndarray[Any, Any]:
        return read_only_float32(np.frombuffer(data, dtype=">f4", offset=4))


class _HalfvecLoader(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> np.ndarray[Any, Any]:
        return read_only_float32(np.frombuffer(data, dtype=">f2", offset=4))


class _SparseLoader(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> SparseVector:
        _, count, _ = _SPARSE_HEADER.unpack_from(data)
        indices = np.frombuffer(data, dtype=">i4", count=count, offset=12)
        values = np.frombuffer(data, dtype=">f4", count=count, offset=12 + 4 * count)
        return SparseVector(tuple(indices.tolist()), tuple(values.tolist()))


JSONB_VERSION = b"\x01"
"""The version byte before the JSON text of a binary ``jsonb`` value."""


def wire_dtype(vector_type: str) -> str:
    """The numpy dtype of a ``vector`` / ``halfvec`` value's elements on the wire."""
    return ">f2" if vector_type == "halfvec" else ">f4"


class _MetadataLoader(Loader):
    """``jsonb`` in binary (a version byte, then the JSON text) as canonical metadata.

    Binary results are read only for the data columns (queries, fetches, scans), whose
    one ``jsonb`` column is ``metadata``; the catalog is read in text and keeps psycopg's
    own loader."""

    format = Format.BINARY

    def load(self, data: Any) -> Any:
        if data[0] != JSONB_VERSION[0]:
            raise ValueError(f"unknown jsonb binary format version {data[0]}")
        return load_metadata(data[1:])  # bytes or memoryview, as psycopg hands it


class _RawVectorLoader(Loader):
    """A ``vector`` / ``halfvec`` as its wire bytes, for :func:`records_of_page` to
    convert a whole page at once."""

    format = Format.BINARY

    def load(self, data: Any) -> bytes:
        return bytes(data)


def raw_vectors(cursor: Any, vector_type: str) -> None:
    """Make ``cursor`` (only it: a cursor has its own copy of the adapters) load the
    column of ``vector_type`` as wire bytes."""
    cursor.adapters.register_loader(cursor.adapters.types[vector_type].oid, _RawVectorLoader)


def _register_codecs(conn: Connection[Any] | AsyncConnection[Any]) -> None:
    adapters = conn.adapters
    oids = {name: adapters.types[name].oid for name in ("vector", "halfvec", "sparsevec")}
    halfvec = type("HalfvecDumper", (_HalfvecDumper,), {"oid": oids["halfvec"]})
    vector = type("VectorDumper", (_VectorDumper,), {"oid": oids["vector"]})
    sparse = type("SparseDumper", (_SparseDumper,), {"oid": oids["sparsevec"]})
    adapters.register_dumper(None, halfvec)  # by OID only: for COPY into halfvec
    adapters.register_dumper(np.ndarray, vector)  # numpy parameters are vectors
    adapters.register_dumper(SparseVector, sparse)
    adapters.register_loader(oids["vector"], _VectorLoader)
    adapters.register_loader(oids["halfvec"], _HalfvecLoader)
    adapters.register_loader(oids["sparsevec"], _SparseLoader)
    adapters.register_loader("jsonb", _MetadataLoader)


def register_codecs(conn: Connection[Any]) -> None:
    """Make ``conn`` speak pgvector's types (the extension must exist)."""
    register_vector(conn)
    _register_codecs(conn)


async def register_codecs_async(conn: AsyncConnection[Any]) -> None:
    await register_vector_async(conn)
    _register_codecs(conn)


# -- rows in and out -------------------------------------------------------------------


def matches_of(rows: Sequence[tuple[Any, ...]], include: Include) -> list[Match]:
    """Matches from the tuple rows of :func:`.statements.query`, whose columns are ``id,
    score`` then ``metadata`` / ``document`` / ``embedding, sparse`` as ``include`` asks
    (by position: a dict per row cost more than the mapping itself)."""
    at = 2
    meta = doc = vec = -1
    if include.metadata:
        meta, at = at, at + 1
    if include.documents:
        doc, at = at, at + 1
    if include.vectors:
        vec = at
    if vec < 0 and meta == 2 and doc == 3:  # the default include: metadata and document
        return [match_of(row[0], float(row[1]), row[2], None, None, row[3]) for row in rows]
    return [
        match_of(
            row[0],
            float(row[1]),
            row[meta] if meta >= 0 else None,  # canonical already (_MetadataLoader)
            row[vec] if vec >= 0 else None,
            row[vec + 1] if vec >= 0 else None,
            row[doc] if doc >= 0 else None,
        )
        for row in rows
    ]


def records_of(rows: Sequence[tuple[Any, ...]]) -> list[Record]:
    """Records from tuple rows of ``id, embedding, sparse, metadata, document``
    (:data:`.statements.RECORD_COLUMNS`)."""
    return [
        Record(id=row[0], vector=row[1], sparse=row[2], metadata=row[3], document=row[4])
        for row in rows
    ]


def records_of_page(rows: Sequence[tuple[Any, ...]], vector_type: str) -> list[Record]:
    """:func:`records_of` for rows whose vectors are wire bytes (:func:`raw_vectors`):
    the page's vectors become one float32 matrix in one conversion, each record holding
    a read-only row of it (a loader per row cost ~2 µs a record, most of a scan's
    client time)."""
    if not rows:
        return []
    width = len(rows[0][1])
    raw = b"".join([row[1] for row in rows])
    if len(raw) != width * len(rows):  # rows of different sizes: never for one index
        raise ValueError("the vectors of one page differ in size")
    wire = np.frombuffer(raw, dtype=np.uint8).reshape(len(rows), width)[:, 4:]
    matrix = wire.view(wire_dtype(vector_type)).astype(np.float32)
    matrix.setflags(write=False)
    return [
        Record(id=row[0], vector=vector, sparse=row[2], metadata=row[3], document=row[4])
        for row, vector in zip(rows, matrix, strict=True)
    ]


# -- checks before any I/O -------------------------------------------------------------


def check_vector(layout: IndexLayout, vector: np.ndarray[Any, Any]) -> None:
    """A query vector the index's type cannot hold (stored ones: ``index_limits``)."""
    if layout.vector_type == "halfvec" and vector.size and float(np.abs(vector).max()) > HALFVEC_MAX:
        raise ValidationError(
            f"a value beyond ±{HALFVEC_MAX} does not fit the index's halfvec (float16) type"
        )


def check_sparse(sparse: SparseVector) -> None:
    if len(sparse.indices) > SPARSE_MAX_NONZERO:
        raise UnsupportedFeatureError(
            BACKEND, f"sparse vectors with more than {SPARSE_MAX_NONZERO} entries"
        )
    if sparse.indices and sparse.indices[-1] >= SPARSE_DIMENSIONS:
        raise UnsupportedFeatureError(BACKEND, f"sparse indices of {SPARSE_DIMENSIONS} or more")
    if any(abs(v) > _FLOAT32_MAX for v in sparse.values):
        raise ValidationError("a sparse value is beyond the float32 range")


def check_query(layout: IndexLayout, request: QueryRequest) -> None:
    if request.vector is not None:
        check_vector(layout, request.vector)
    if request.sparse is not None:
        check_sparse(request.sparse)

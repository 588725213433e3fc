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
from typing import Any

import numpy as np
from pgvector.psycopg import register_vector, register_vector_async
from psycopg import AsyncConnection, Connection
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format

from vectorport.core.types import SparseVector

SPARSE_DIMENSIONS = 1_000_000_000
"""pgvector's largest ``sparsevec`` dimension: every stored and query sparse vector uses
it, so any two can be multiplied; an index must be below it."""
SPARSE_MAX_NONZERO = 16_000
HALFVEC_MAX = 65504.0

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


def _readonly(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    out = array.astype(np.float32)
    out.setflags(write=False)
    return out


class _VectorLoader(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> np.ndarray[Any, Any]:
        return _readonly(np.frombuffer(data, dtype=">f4", offset=4))


class _HalfvecLoader(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> np.ndarray[Any, Any]:
        return _readonly(np.frombuffer(data, dtype=">f2", offset=4))


class _SparseLoader(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> SparseVector:
        _, count, _ = _SPARSE_HEADER.unpack_from(data)
        indices = np.frombuffer(data, dtype=">i4", count=count, offset=12)
        values = np.frombuffer(data, dtype=">f4", count=count, offset=12 + 4 * count)
        return SparseVector(tuple(indices.tolist()), tuple(values.tolist()))


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


def register_codecs(conn: Connection[Any]) -> None:
    """Make ``conn`` speak pgvector's types (the extension must exist)."""
    register_vector(conn)
    _register_codecs(conn)


async def register_codecs_async(conn: AsyncConnection[Any]) -> None:
    await register_vector_async(conn)
    _register_codecs(conn)

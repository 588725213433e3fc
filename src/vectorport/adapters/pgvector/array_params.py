"""A batch of records as five binary array parameters, for one ``INSERT … SELECT FROM
unnest(…)``: the ordinary upsert in a single statement.

The staged write (``BEGIN``, binary ``COPY`` into a session temp table, ``INSERT … ON
CONFLICT`` from it, ``COMMIT``) takes four round trips and writes every row twice; one
statement over arrays is as atomic, replaces whole rows the same way (``ON CONFLICT … DO
UPDATE`` of every column) and writes each row once (the adapter still wraps it in
``BEGIN`` … ``COMMIT``, so that a write cut off at its deadline rolls back).
Measured on 100 records × 384 dimensions: client time 1.2 → 0.5 ms a call.

Each array is PostgreSQL's binary array format (dimensions, flags, element type, then
every element as a length and its bytes, ``-1`` for NULL), whose elements are encoded
exactly as the fields of a binary COPY row (:mod:`.copy_stream`); the vectors of a batch
become one numpy block. The parameters go out with no type (``oid`` 0): the statement's
casts (``%s::vector[]``) type them, and the element type in each header must match, so
the encoder is given the connection's OIDs of pgvector's types.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from psycopg.adapt import Dumper
from psycopg.pq import Format

from vectorport.adapters.pgvector.codec import JSONB_VERSION
from vectorport.adapters.pgvector.copy_stream import (
    NULL_FIELD,
    metadata_bytes,
    sparse_field,
    text_field,
    vector_fields,
)
from vectorport.core.types import Record

T = TypeVar("T")
TEXT_OID = 25
JSONB_OID = 3802
_HEADER = struct.Struct(">iiIii")  # ndim 1, has-nulls flag, element OID, length, lower bound 1
_INT32 = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class ArrayParam:
    """One encoded array; typed by the cast at its placeholder."""

    payload: bytes


class ArrayParamDumper(Dumper):
    format = Format.BINARY
    oid = 0  # unknown: the statement's cast decides

    def dump(self, obj: ArrayParam) -> bytes:
        return obj.payload


def _array(element_oid: int, count: int, elements: Sequence[bytes], nulls: bool) -> bytes:
    return _HEADER.pack(1, int(nulls), element_oid, count, 1) + b"".join(elements)


def _vectors(records: Sequence[Record], vector_type: str, element_oid: int) -> bytes:
    flat, width, prefix = vector_fields(records, vector_type)
    count = len(records)
    block = np.empty((count, len(prefix) + width), dtype=np.uint8)
    block[:, :len(prefix)] = np.frombuffer(prefix, dtype=np.uint8)
    block[:, len(prefix):] = np.frombuffer(flat, dtype=np.uint8).reshape(count, width)
    return _HEADER.pack(1, 0, element_oid, count, 1) + block.tobytes()


def encode(records: Sequence[Record], vector_type: str, vector_oid: int,
           sparse_oid: int) -> tuple[ArrayParam, ...]:
    """``ids, embeddings, sparse vectors, metadata, documents`` of a non-empty batch."""
    count = len(records)
    pack = _INT32.pack
    ids: list[bytes] = []
    metas: list[bytes] = []
    for rec in records:
        key = rec.id.encode("utf-8")
        meta = metadata_bytes(rec.metadata)
        ids.append(pack(len(key)) + key)
        metas.append(pack(len(meta) + 1) + JSONB_VERSION + meta)
    return (
        ArrayParam(_array(TEXT_OID, count, ids, False)),
        ArrayParam(_vectors(records, vector_type, vector_oid)),
        ArrayParam(_optional(sparse_oid, count, [rec.sparse for rec in records], sparse_field)),
        ArrayParam(_array(JSONB_OID, count, metas, False)),
        ArrayParam(_optional(TEXT_OID, count, [rec.document for rec in records], text_field)),
    )


def _optional(element_oid: int, count: int, values: Sequence[T | None],
              field: Callable[[T], bytes]) -> bytes:
    """An array of optional values; all NULL (the common case) without a loop."""
    present = sum(value is not None for value in values)
    if not present:
        return _HEADER.pack(1, 1, element_oid, count, 1) + NULL_FIELD * count
    elements = [NULL_FIELD if value is None else field(value) for value in values]
    return _array(element_oid, count, elements, present < count)

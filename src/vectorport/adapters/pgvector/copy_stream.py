"""Records as a PostgreSQL binary COPY stream, encoded in one pass per batch.

``Copy.write_row`` calls a Python dumper per vector and a JSON encoder per metadata
mapping; for a batch of records that per-value dispatch was most of the client's time.
Here the batch's vectors become big-endian bytes in one numpy conversion, each row's
metadata one C ``json.dumps`` call, and the rows are joined into the stream
``COPY … FROM STDIN (FORMAT BINARY)`` reads (header, tuples, trailer), which is written
with a single ``Copy.write``.

Kinds survive: ``jsonb`` keeps a number's scale (``2020.0`` stays a float), and
``json.dumps`` writes floats with ``repr``, so the one value it would change is an
integral float written with an exponent (``1e+16``, read back as an integer); a row
whose text holds ``e+`` is re-encoded by :func:`.jsonb.encode_metadata`, which never
writes one. Inputs are records the facade validated against the index's limits.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence

import numpy as np

from vectorport.adapters.pgvector.codec import SPARSE_DIMENSIONS
from vectorport.adapters.pgvector.jsonb import encode_metadata
from vectorport.core.types import Record, SparseVector

HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # signature, flags 0, no header extension
TRAILER = b"\xff\xff"
_NULL = b"\xff\xff\xff\xff"
_INT32 = struct.Struct(">i")
_VECTOR_PREFIX = struct.Struct(">iHH")  # field length, dimension, unused
_SPARSE_HEADER = struct.Struct(">iiii")  # field length, dimensions, nonzero count, unused
_JSONB_VERSION = b"\x01"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False,
                          allow_nan=False).encode


def metadata_bytes(metadata: object) -> bytes:
    text = _dumps(metadata)
    if "e+" in text:  # maybe an integral float with an exponent: the careful encoder
        text = encode_metadata(metadata)  # type: ignore[arg-type]
    return text.encode("utf-8")


def _sparse_field(sparse: SparseVector) -> bytes:
    indices = np.asarray(sparse.indices, dtype=">i4")
    values = np.asarray(sparse.values, dtype=">f4")
    if not values.all():  # pgvector stores no explicit zeros (they add nothing)
        keep = values != 0
        indices, values = indices[keep], values[keep]
    body = indices.tobytes() + values.tobytes()
    return _SPARSE_HEADER.pack(12 + len(body), SPARSE_DIMENSIONS, len(indices), 0) + body


def encode(records: Sequence[Record], vector_type: str, namespace: str | None) -> bytes:
    """The binary COPY stream of ``records`` for the columns ``[namespace,] id,
    embedding, sparse, metadata, document`` (``namespace`` ``None``: no such column)."""
    if not records:
        return HEADER + TRAILER
    dtype = ">f2" if vector_type == "halfvec" else ">f4"
    matrix = np.stack([rec.vector for rec in records]).astype(dtype, copy=False)
    dimension = matrix.shape[1]
    width = dimension * matrix.itemsize
    flat = matrix.tobytes()
    vector_prefix = _VECTOR_PREFIX.pack(4 + width, dimension, 0)
    if namespace is None:
        lead = struct.pack(">h", 5)
    else:
        ns = namespace.encode("utf-8")
        lead = struct.pack(">h", 6) + _INT32.pack(len(ns)) + ns
    pack = _INT32.pack
    parts: list[bytes] = [HEADER]
    append = parts.append
    offset = 0
    for rec in records:
        key = rec.id.encode("utf-8")
        meta = metadata_bytes(rec.metadata)
        append(lead)
        append(pack(len(key)))
        append(key)
        append(vector_prefix)
        append(flat[offset:offset + width])
        offset += width
        append(_NULL if rec.sparse is None else _sparse_field(rec.sparse))
        append(pack(len(meta) + 1))
        append(_JSONB_VERSION)
        append(meta)
        if rec.document is None:
            append(_NULL)
        else:
            doc = rec.document.encode("utf-8")
            append(pack(len(doc)))
            append(doc)
    append(TRAILER)
    return b"".join(parts)

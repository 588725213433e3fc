"""The canonical form of a record, an order-independent checksum, and the comparison
of two copies of one record.

Two indexes hold the same data when, namespace by namespace, they hold the same ids
with the same metadata (with kinds: ``1``, ``1.0`` and ``True`` differ), documents,
sparse vectors and dense vectors. Dense and sparse values are compared within float32
rounding (:func:`same_record`): some engines give a float32 back one unit in the last
place away (Chroma does). So a :class:`Checksum` keeps two sums: ``exact`` covers
everything but float values, and must agree between two copies; ``full`` also covers
the float32 bytes of the vectors, and when it agrees too (every engine but one that
rounds) the copies are the same without a record-by-record comparison. Each sum is of
per-record digests modulo 2**128, so it does not depend on the order a backend
enumerates in, and a repeated record changes it (unlike an XOR).
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from json import encoder as _json_encoder
from typing import Any

import numpy as np

from vectorport.core.types import MetadataValue, Record

_MODULUS = 1 << 128
_FLOAT32 = np.dtype("<f4")

# One encoder for every call: json.dumps with options builds a new one each time, which
# costs more than encoding a small dict. Tuples (string lists) encode as JSON arrays.
_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                            allow_nan=False)
# JSONEncoder.encode still builds its C encoder on every call (a third of the cost of
# encoding a record's metadata); this one is built once, with the same settings. No
# circular-reference markers: metadata is flat.
_MAKE_C_ENCODER = getattr(_json_encoder, "c_make_encoder", None)  # None without _json
_C_ENCODE: Callable[[dict[str, MetadataValue], int], Sequence[str]] | None = (
    None if _MAKE_C_ENCODER is None else _MAKE_C_ENCODER(
        None, _ENCODER.default, _json_encoder.encode_basestring, None, ":", ",", True, False,
        False))


def metadata_json(metadata: Mapping[str, MetadataValue]) -> str:
    """Metadata as JSON with sorted keys. JSON itself keeps ``1``, ``1.0`` and ``true``
    apart, and Python's reader gives back the same kinds."""
    plain = metadata if isinstance(metadata, dict) else dict(metadata)
    if _C_ENCODE is None:
        return _ENCODER.encode(plain)
    return "".join(_C_ENCODE(plain, 0))


RTOL, ATOL = 2e-6, 1e-9
"""float32 rounding: a few units in the last place."""


_HEADER = struct.Struct("<4Q")


def _comparable_metadata_json(metadata: Mapping[str, MetadataValue]) -> str:
    """:func:`metadata_json` with any float ``-0.0`` written as ``0.0``: the contract lets
    a backend give ``-0.0`` back as ``0.0``, which it equals (PostgreSQL's ``numeric`` and
    Pinecone have no negative zero), so two copies that differ only there hold the same
    record. Only text holding ``-0.0`` somewhere (rare) is encoded again."""
    text = metadata_json(metadata)
    if "-0.0" not in text:
        return text
    return metadata_json({key: 0.0 if type(value) is float and value == 0.0 else value
                          for key, value in metadata.items()})


def canonical_bytes(record: Record) -> bytes:
    """The exactly kept parts of ``record`` (all but float values), as bytes."""
    rid = record.id.encode()
    meta = _comparable_metadata_json(record.metadata).encode()
    doc = b"" if record.document is None else b"d" + record.document.encode()
    sparse = (b"" if record.sparse is None
              else np.asarray(record.sparse.indices, "<i4").tobytes())
    # lengths first, so that no two different records give the same byte string
    return b"".join((_HEADER.pack(len(rid), len(meta), len(doc), len(sparse)),
                     rid, meta, doc, sparse))


def _float_bytes(record: Record) -> Any:
    """The float32 values of ``record`` (dense, then sparse), as one buffer."""
    dense = record.vector
    if (type(dense) is not np.ndarray or dense.dtype != _FLOAT32
            or not dense.flags.c_contiguous):
        dense = np.ascontiguousarray(dense, dtype="<f4")
    if record.sparse is None:
        return dense
    return np.concatenate([dense, np.asarray(record.sparse.values, dtype="<f4")])


@dataclass
class Checksum:
    """A running count and two order-independent digests of records: ``total`` of the
    exactly kept parts, ``full`` of those and the float32 values."""

    count: int = 0
    total: int = 0
    full: int = 0

    def add(self, record: Record) -> None:
        self.add_all((record,))

    def add_all(self, records: Iterable[Record]) -> None:
        total, full, count = self.total, self.full, self.count
        sha256, from_bytes = hashlib.sha256, int.from_bytes  # locals: a loop of ~2 µs
        for record in records:
            digest = sha256(canonical_bytes(record))
            total += from_bytes(digest.digest()[:16], "little")
            digest.update(_float_bytes(record))
            full += from_bytes(digest.digest()[:16], "little")
            count += 1
        self.total, self.full, self.count = total % _MODULUS, full % _MODULUS, count

    def merge(self, other: Checksum) -> None:
        self.count += other.count
        self.total = (self.total + other.total) % _MODULUS
        self.full = (self.full + other.full) % _MODULUS

    @property
    def hex(self) -> str:
        return f"{self.total:032x}"

    @property
    def full_hex(self) -> str:
        return f"{self.full:032x}"

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "total": self.hex, "full": self.full_hex}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Checksum:
        return cls(int(data["count"]), int(data["total"], 16), int(data["full"], 16))

    def same_as(self, other: Checksum) -> bool:
        """Every part equal, float32 values bit for bit."""
        return (self.count, self.total, self.full) == (other.count, other.total, other.full)


def _close(a: object, b: object) -> bool:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=RTOL, atol=ATOL))


def same_record(want: Record, got: Record) -> bool:
    """``got`` is ``want``: exact in everything but float values, which agree within
    float32 rounding."""
    if canonical_bytes(want) != canonical_bytes(got) or not _close(want.vector, got.vector):
        return False
    if want.sparse is None or got.sparse is None:
        return want.sparse is got.sparse
    return _close(want.sparse.values, got.sparse.values)

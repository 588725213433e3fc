"""The canonical form of a record, an order-independent checksum, and the comparison
of two copies of one record.

Two indexes hold the same data when, namespace by namespace, they hold the same ids
with the same metadata (with kinds: ``1``, ``1.0`` and ``True`` differ), documents,
sparse vectors and dense vectors. Dense and sparse values are compared within float32
rounding (:func:`same_record`): some engines give a float32 back one unit in the last
place away (Chroma does), so they are left out of the checksum, which covers everything
else exactly. The checksum is a sum of per-record digests modulo 2**128, so it does not
depend on the order a backend enumerates in, and a repeated record changes it (unlike
an XOR).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from vectorport.core.types import MetadataValue, Record

_MODULUS = 1 << 128


def metadata_json(metadata: Mapping[str, MetadataValue]) -> str:
    """Metadata as JSON with sorted keys. JSON itself keeps ``1``, ``1.0`` and ``true``
    apart, and Python's reader gives back the same kinds."""
    return json.dumps(
        {k: list(v) if isinstance(v, tuple) else v for k, v in metadata.items()},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False,
    )


RTOL, ATOL = 2e-6, 1e-9
"""float32 rounding: a few units in the last place."""


def canonical_bytes(record: Record) -> bytes:
    """The exactly kept parts of ``record`` (all but float values), as bytes."""
    parts = [
        record.id.encode(),
        metadata_json(record.metadata).encode(),
        b"" if record.document is None else b"d" + record.document.encode(),
        b"" if record.sparse is None else np.asarray(record.sparse.indices, "<i4").tobytes(),
    ]
    # lengths first, so that no two different records give the same byte string
    header = b"".join(len(p).to_bytes(8, "little") for p in parts)
    return header + b"".join(parts)


@dataclass
class Checksum:
    """A running count and order-independent digest of records."""

    count: int = 0
    total: int = 0

    def add(self, record: Record) -> None:
        digest = hashlib.sha256(canonical_bytes(record)).digest()[:16]
        self.total = (self.total + int.from_bytes(digest, "little")) % _MODULUS
        self.count += 1

    def add_all(self, records: Iterable[Record]) -> None:
        for record in records:
            self.add(record)

    @property
    def hex(self) -> str:
        return f"{self.total:032x}"


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

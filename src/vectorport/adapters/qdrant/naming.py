"""Where vectorport's data lives inside a Qdrant collection.

One collection (on the edge engine: one shard) per index, named as the index (canonical
index names, ``^[a-z][a-z0-9_]{2,44}$``, are valid Qdrant collection names as they are).

**Point ids.** Qdrant takes unsigned integers or UUIDs only. A record is the point
``uuid5(POINT_ID_NAMESPACE, namespace + "\\0" + id)``: neither a namespace nor a record
id can contain NUL, so distinct (namespace, id) pairs give distinct names, and UUIDv5
(SHA-1, 122 bits) makes a collision between them as likely as a SHA-1 collision. The
original id is kept in the payload (layout 2: after the revision token in
:data:`REVISION_ID`; layout 1: :data:`ID`) and returned from there, exactly.

**Payload.** Reserved keys start with ``_``; the user's metadata is the object under
:data:`META`, so a user key can never collide with a reserved one (metadata keys may
themselves start with ``_``) and filters address ``m.<key>`` (metadata keys have no
``.``, ``[`` or quotes: the key rule of CONTRACT §1 is the guard).

**Vectors** are named: :data:`DENSE` (the index's metric) and :data:`SPARSE` (dot
product over shared indices, which is the contract's sparse score). Qdrant normalises
vectors stored under cosine, and the contract returns them as they were written, so a
cosine index also keeps the vector as given: since layout 2 (:data:`LAYOUT`) as the
payload field :data:`VECTOR`, the hex text of its little-endian float32 bytes; in
layout 1 as the second named vector :data:`RAW`. The engines hand a named vector back
as a Python list of floats (≈ 4 µs a point of 384 dimensions), one string in the
payload a fraction of that (≈ 1 µs to decode), and the bytes are the float32 values
exactly; the price is 2 bytes of payload a byte of vector.
"""

from __future__ import annotations

import hashlib
import os
import uuid

POINT_ID_NAMESPACE = uuid.UUID("6f1d3c52-8b0e-5a4e-9d57-2f0c7a4b9e61")
"""Fixed forever: changing it would orphan every stored point."""

NAMESPACE = "_ns"
"""The namespace, a keyword field with Qdrant's tenant index (``is_tenant``)."""
ID = "_id"
"""Layout 1: the record id."""
DOCUMENT = "_doc"
REVISION = "_rev"
"""Layout 1: a fresh random token on every write: patches are compare-and-swap on it (an
upsert conditioned on the revision read), which makes them atomic without a lock."""
REVISION_ID = "_ri"
"""Layout 2: the revision token (:data:`REVISION_CHARS` hex digits) followed by the
record id, in one payload value: qdrant-edge-py converts a payload value by value
(≈ 2.5 µs each on write), and the compare-and-swap of a patch matches this whole value
as it matched the token (an id never changes under its point)."""
REVISION_CHARS = 32
META = "m"
BOOLS = "_b"
"""On engines whose filters cannot match a JSON bool (the edge bindings turn
``MatchValue(True)`` into ``1``), boolean metadata values are also kept here as the
strings ``"true"``/``"false"``, and boolean equality is matched on those."""
NUMBERS = "_n"
"""On engines that do not keep floats exactly (Qdrant Edge), every metadata number's
order key in two top-level fields, ``_nh_<key>`` and ``_nl_<key>`` (see :mod:`.numbers`):
number filters compare those, and floats are read back from them. Metadata keys live
under :data:`META`, so these names meet no user key; no other reserved name starts so."""

VECTOR = "_v"
"""Layout 2, cosine indexes: the vector as written, the hex digits of its ``<f4`` bytes."""

DENSE = "dense"
RAW = "raw"
"""Layout 1, cosine indexes: the vector as written, a named vector (``Dot``, no graph)."""
SPARSE = "sparse"

LAYOUT = 2
"""The point layout of the collections this code creates. Collections keep theirs in
their stored settings (:data:`LAYOUT_KEY` beside the IndexSpec; absent: layout 1, which
every collection written before the key existed has) and are read and written in it."""
LAYOUT_KEY = "qdrant_layout"

SPEC_KEY = "vectorport_spec"
"""Collection metadata key (client engines) holding the IndexSpec as JSON."""


_POINT_ID_PREFIX = POINT_ID_NAMESPACE.bytes


def point_id(namespace: str, record_id: str) -> str:
    """The Qdrant point id (a UUID string) of ``record_id`` in ``namespace``: exactly
    ``str(uuid.uuid5(POINT_ID_NAMESPACE, namespace + "\0" + record_id))``, computed
    without the two ``uuid.UUID`` objects that call builds (a third of a point's
    encoding on upsert)."""
    digest = bytearray(hashlib.sha1(_POINT_ID_PREFIX + f"{namespace}\0{record_id}".encode(),
                                    usedforsecurity=False).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def revision() -> str:
    """A fresh random revision token (:data:`REVISION`): 128 random bits, as a uuid4
    holds, without building the UUID."""
    return os.urandom(16).hex()


def revisions(count: int) -> list[str]:
    """``count`` fresh revision tokens (:func:`revision`) from one read of the system's
    random source: a system call per record was ≈ 0.4 µs of each point of an upsert."""
    text = os.urandom(16 * count).hex()
    return [text[at:at + 32] for at in range(0, 32 * count, 32)]


def meta_key(field: str) -> str:
    return f"{META}.{field}"


def bool_key(field: str) -> str:
    return f"{BOOLS}.{field}"


def number_key(field: str, part: str) -> str:
    return f"{NUMBERS}{part}_{field}"


_HIGH_PREFIX = f"{NUMBERS}h_"


def is_number_key(payload_field: str) -> bool:
    """Whether ``payload_field`` holds the high part of a number's order key (the part
    Edge indexes: a condition on the low part is only read where the high parts are
    equal, a handful of points)."""
    return payload_field.startswith(_HIGH_PREFIX)


def bool_text(value: bool) -> str:
    return "true" if value else "false"


__all__ = [
    "BOOLS", "DENSE", "DOCUMENT", "ID", "LAYOUT", "LAYOUT_KEY", "META", "NAMESPACE", "NUMBERS",
    "POINT_ID_NAMESPACE", "RAW", "REVISION", "REVISION_CHARS", "REVISION_ID", "SPARSE",
    "SPEC_KEY", "VECTOR", "bool_key", "bool_text", "is_number_key", "meta_key", "number_key",
    "point_id", "revision", "revisions",
]

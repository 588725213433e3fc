"""How vectorport's records are written into Pinecone and read back, exactly.

Three gaps between the contract and Pinecone are closed here:

- **Ids**: Pinecone takes ASCII ids only. Every character from ``~`` (0x7E) upwards is
  written as ``~`` plus six hex digits of its code point; everything else passes as is.
  The code is prefix-free and keeps code-point order, so prefixes (``list_ids``) and the
  ascending id order survive the mapping. An id longer than 512 characters once escaped
  cannot be stored (:class:`UnsupportedFeatureError`).
- **Numbers**: Pinecone keeps every number as a 64-bit float, so a number's kind (1
  vs 1.0) and an int beyond 2^53 need type information beside the value. How much is
  the index's *layout* (its tag ``vectorport_layout``, read with the index's
  description, so knowing it costs no request):

  - layout 2 (every index created since): an int within ±2^53 is written as is — it
    comes back as an integral number, which reads as an int. Only the rarer cases carry a
    marker: ``vp:int`` lists ``key=decimal`` for an int beyond ±2^53 (read back exactly)
    and ``vp:flt`` lists the keys of floats with an integral value (``1.0``, ``-0.0``,
    ``1e300``), which read back as floats. Every other number reads as a float.
  - layout 1 (indexes written by earlier versions, no tag): ``vp:int`` lists
    ``key=decimal`` for every int; a number without an entry reads as a float. Such an
    index keeps this layout for reads and writes alike, so all its records agree.

  In both, ``vp:num`` lists the keys holding numbers: Pinecone has neither a negation
  nor a type test in its filters, so "this field exists but is not a number" (needed
  for an exact ``$not`` over a range) can only be asked of a stored marker.
- **Documents** live under the reserved key ``vp:doc``.

Reserved keys contain ``:``, which user keys cannot (``^[A-Za-z_][A-Za-z0-9_]*$``), so
no user key or filter can ever name them; they are removed before metadata is returned.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any, cast

import numpy as np
import orjson
from pinecone import SparseValues, Vector

from vectorport.adapterkit import (
    DenseVector,
    Include,
    Match,
    MetadataValue,
    Metric,
    Record,
    SparseVector,
    UnsupportedFeatureError,
    read_only_float32,
    score_from_distance,
)

BACKEND = "pinecone"
RESERVED_PREFIX = "vp:"
DOCUMENT_KEY = "vp:doc"
NUMBER_KEYS = "vp:num"
INT_VALUES = "vp:int"
FLOAT_KEYS = "vp:flt"
LAYOUT_TAG = "vectorport_layout"
"""The index tag holding its records' layout (absent on indexes of layout 1)."""
LAYOUT_EVERY_INT = 1
"""Every int listed in ``vp:int`` (indexes created before layout 2)."""
LAYOUT_MARKED = 2
"""Only ints beyond ±2^53 (``vp:int``) and integral floats (``vp:flt``) marked."""
LAYOUT_BOUND = 0
"""Not a layout: both markings at once, whose size bounds every layout's (the declared
record-size limit is checked before the index, hence its layout, is known)."""
CURRENT_LAYOUT = LAYOUT_MARKED
EXACT_INT_LIMIT = 2**53
"""Ints within ±2^53 survive the float64 Pinecone stores exactly."""
ESCAPE = "~"
MAX_ID_LENGTH = 512
MAX_SPARSE_VALUES = 2048


def encode_id(rid: str) -> str:
    """The ASCII id Pinecone stores for ``rid`` (order- and prefix-preserving)."""
    if rid.isascii() and ESCAPE not in rid and "\x7f" not in rid:
        return rid
    return "".join(c if ord(c) < 0x7E else f"{ESCAPE}{ord(c):06x}" for c in rid)


def try_encode_id(rid: str) -> str | None:
    """The stored form of ``rid``, or ``None`` when it cannot exist in Pinecone."""
    wire = encode_id(rid)
    return wire if len(wire) <= MAX_ID_LENGTH else None


def encode_id_checked(rid: str) -> str:
    wire = encode_id(rid)
    if len(wire) > MAX_ID_LENGTH:
        raise UnsupportedFeatureError(
            BACKEND,
            "this record id",
            f"{rid[:40]!r}... is {len(wire)} ASCII characters once non-ASCII characters "
            f"and '~' are escaped; Pinecone ids hold at most {MAX_ID_LENGTH}",
        )
    return wire


def decode_id(wire: str) -> str:
    if ESCAPE not in wire:
        return wire
    out: list[str] = []
    i = 0
    while i < len(wire):
        c = wire[i]
        code = wire[i + 1:i + 7]
        if c == ESCAPE and len(code) == 6 and all(h in "0123456789abcdef" for h in code):
            out.append(chr(int(code, 16)))
            i += 7
        else:  # not written by vectorport: keep it literally
            out.append(c)
            i += 1
    return "".join(out)


def layout_of(tags: Mapping[str, str] | None) -> int:
    """The layout of an index with these tags (see the module docstring)."""
    return LAYOUT_MARKED if (tags or {}).get(LAYOUT_TAG) == str(LAYOUT_MARKED) else (
        LAYOUT_EVERY_INT)


_NOT_NUMBERS = (bool, str, tuple)
"""The kinds of canonical metadata values that are not numbers (a bool is an int too)."""


def encode_metadata(metadata: Mapping[str, MetadataValue], document: str | None,
                    layout: int = CURRENT_LAYOUT) -> dict[str, Any]:
    """Pinecone metadata for a record: user values plus the reserved keys of ``layout``.
    Lists stay the tuples of canonical metadata: the SDK takes them and orjson writes
    them as JSON lists, so the copy is one C-level ``dict``; only numbers are looked at
    one by one, in one pass that tells a value's kind by its exact type (canonical
    values are exactly ``bool``, ``int``, ``float``, ``str`` or ``tuple``; any other type
    is asked with ``isinstance``), as this runs for every record written."""
    out: dict[str, Any] = dict(metadata)
    if document is not None:
        out[DOCUMENT_KEY] = document
    numbers: list[str] = []
    ints: list[str] = []
    floats: list[str] = []
    every_int = layout != LAYOUT_MARKED
    integral_floats = layout != LAYOUT_EVERY_INT
    for key, value in metadata.items():
        kind = value.__class__
        if kind is str or kind is tuple or kind is bool:
            continue
        if kind is not int and kind is not float:
            if isinstance(value, _NOT_NUMBERS):
                continue
            kind = int if isinstance(value, int) else float
        numbers.append(key)
        if kind is int:
            if every_int or not -EXACT_INT_LIMIT <= cast(int, value) <= EXACT_INT_LIMIT:
                ints.append(f"{key}={value}")
        elif integral_floats and cast(float, value).is_integer():
            floats.append(key)
    if not numbers:
        return out
    out[NUMBER_KEYS] = numbers
    if ints:
        out[INT_VALUES] = ints
    if floats:
        out[FLOAT_KEYS] = floats
    return out


def metadata_bytes(encoded: Mapping[str, Any]) -> int:
    """The bytes of ``encoded`` in the request body. The SDK serialises bodies with orjson,
    so orjson measures exactly what is sent (and is some 15 times faster than ``json``,
    which counted for a few per cent of an upsert). Every value is JSON-able: metadata
    ints are within int64 (the contract's range)."""
    return len(orjson.dumps(encoded))


_LIST_KEY_BYTES = len(',"vp:num":[]')
"""A reserved list key's bytes besides its elements (every reserved key is 6 long)."""


def stored_bytes_bound(metadata: Mapping[str, MetadataValue], document: str | None) -> int:
    """At least the metadata bytes any layout stores for this record: the user metadata
    as orjson writes it, plus the reserved keys of every layout counted without building
    them (this runs once per record on every write, for the declared size limit). User
    keys are ASCII identifiers, so a key costs its length plus two quotes and a comma."""
    # orjson writes a tuple as a list, as sent; ``default`` takes a read-only mapping
    size = len(orjson.dumps(metadata, default=dict))
    numbers = ints = floats = 0
    for key, value in metadata.items():
        if isinstance(value, (bool, str, tuple)):
            continue
        numbers += len(key) + 3
        if isinstance(value, int):
            ints += len(key) + 4 + len(str(value))  # "key=decimal",
        elif value.is_integer():
            floats += len(key) + 3
    for elements in (numbers, ints, floats):
        size += elements and _LIST_KEY_BYTES + elements
    if document is not None:
        size += len(',"vp:doc":') + len(orjson.dumps(document))
    return size


def decode_metadata(raw: Mapping[str, Any] | None, layout: int = CURRENT_LAYOUT,
                    ) -> tuple[dict[str, MetadataValue], str | None]:
    """User metadata in canonical form, and the document. Every match of a query with
    metadata passes here, so values are told apart by exact type (what the SDK's JSON
    reader makes), a third faster than a chain of ``isinstance`` tests; any other type
    takes the general path (:func:`_decoded_value`)."""
    if not raw:
        return {}, None
    listed = raw.get(INT_VALUES)
    exact_ints = _exact_ints(listed) if listed else None
    # layout 1 has no float marker: there a number without an int entry is a float
    floats: frozenset[str] | None = None
    if layout == LAYOUT_MARKED:
        marked = raw.get(FLOAT_KEYS)
        floats = frozenset([str(k) for k in marked]) if marked else _NO_KEYS
    metadata: dict[str, MetadataValue] = {}
    for key, value in raw.items():
        if key.startswith(RESERVED_PREFIX):
            continue
        kind = type(value)
        if kind is str or kind is bool:
            metadata[key] = value
        elif kind is float or kind is int:
            metadata[key] = _number(key, value, exact_ints, floats)
        elif kind is list:
            metadata[key] = tuple([str(v) for v in value])
        else:
            decoded = _decoded_value(key, value, exact_ints, floats)
            if decoded is not None:
                metadata[key] = decoded
    document = raw.get(DOCUMENT_KEY)
    return metadata, document if isinstance(document, str) else None


_NO_KEYS: frozenset[str] = frozenset()


def _exact_ints(listed: Any) -> dict[str, int]:
    """``vp:int``'s ``key=decimal`` entries as ints by key (malformed ones left out)."""
    exact: dict[str, int] = {}
    for item in listed:
        key, _, decimal = str(item).partition("=")
        try:
            exact[key] = int(decimal)
        except ValueError:
            continue
    return exact


def _number(key: str, value: float, exact_ints: dict[str, int] | None,
            floats: frozenset[str] | None) -> int | float:
    """The int or float a stored number under ``key`` was written as."""
    number = float(value)
    exact = exact_ints.get(key) if exact_ints else None
    if exact is not None and math.isclose(number, float(exact), rel_tol=1e-15):
        return exact
    if floats is not None and key not in floats and number.is_integer():
        return int(number)
    return number


def _decoded_value(key: str, value: Any, exact_ints: dict[str, int] | None,
                   floats: frozenset[str] | None) -> MetadataValue | None:
    """A value of a subclass of the JSON types (another SDK's reader), or None for
    anything metadata cannot hold (left out, as Pinecone cannot store it either)."""
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return _number(key, value, exact_ints, floats)
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return None


def sparse_values(sparse: SparseVector) -> dict[str, list[Any]]:
    if len(sparse.indices) > MAX_SPARSE_VALUES:
        raise UnsupportedFeatureError(
            BACKEND,
            f"sparse vectors with more than {MAX_SPARSE_VALUES} values",
            f"this one has {len(sparse.indices)}",
        )
    return {"indices": list(sparse.indices), "values": list(sparse.values)}


def read_sparse(raw: Any) -> SparseVector | None:
    if raw is None:
        return None
    indices = [int(i) for i in raw.indices]
    values = [float(v) for v in raw.values]
    if not indices:
        return None
    order = sorted(range(len(indices)), key=indices.__getitem__)
    return SparseVector(tuple(indices[k] for k in order), tuple(values[k] for k in order))


def read_vector(values: list[float]) -> DenseVector:
    return read_only_float32(values)


@functools.cache
def values_as_json() -> bool:
    """Whether a vector's values go to the SDK as the JSON of their float64 digits, made
    by orjson from the float64 array: the very bytes orjson writes for ``tolist()``'s
    floats (the same formatter), without making 384 Python floats per vector, walking
    them into the body and freeing them after the request. Only when the installed SDK
    writes request bodies with orjson, which copies an ``orjson.Fragment`` (JSON made
    beforehand) into the body as it is: asked of the SDK's own body encoder on the first
    write, not at import; any doubt (another encoder, a renamed function) means no, and
    the values go as lists of floats."""
    try:
        from pinecone._internal.http_client import _encode_json

        return bool(_encode_json({"v": orjson.Fragment(b"[0.5]")}) == b'{"v":[0.5]}')
    except Exception:  # any failure of the probe: the plain lists
        return False


def wire_values(vector: DenseVector) -> Any:
    """The ``values`` of a vector for the SDK: JSON already made (see
    :func:`values_as_json`), else a list of floats."""
    if values_as_json():
        return orjson.Fragment(orjson.dumps(vector.astype(np.float64),
                                            option=orjson.OPT_SERIALIZE_NUMPY))
    values: list[float] = vector.tolist()
    return values


def wire_vector(record: Record, layout: int) -> Vector:
    """The SDK vector for a record in an index of ``layout``; every check happens here,
    before any I/O."""
    # id length, metadata size, zero vectors and sparse sizes are declared limits
    # (capabilities.PINECONE_LIMITS), checked by the facade for the whole call
    metadata = encode_metadata(record.metadata, record.document, layout)
    sparse = record.sparse
    return Vector(encode_id(record.id), wire_values(record.vector),
                  None if sparse is None else SparseValues(**sparse_values(sparse)),
                  metadata or None)


def estimated_bytes(vector: Vector, dimension: int) -> int:
    """An upper estimate of the vector's share of an upsert request body (``dimension``:
    the index's; the values may be JSON already made, whose length is not asked)."""
    sparse = len(vector.sparse_values.indices) if vector.sparse_values is not None else 0
    meta = metadata_bytes(vector.metadata) if vector.metadata else 0
    return 64 + len(vector.id) * 2 + 25 * dimension + 36 * sparse + meta


def estimated_bytes_bound(vectors: list[Vector], dimension: int) -> int:
    """At least the sum of :func:`estimated_bytes` over ``vectors``, in one orjson call
    for all their metadata (the list's brackets and commas, and ``null`` for a vector
    without metadata, only add to it) instead of one call and one Python frame per
    vector: the ordinary upsert asks this first, and cuts by the per-vector estimate
    only when the bound says a request would be too large."""
    ids = sum(len(vector.id) for vector in vectors)
    sparse = sum(len(vector.sparse_values.indices) for vector in vectors
                 if vector.sparse_values is not None)
    meta = len(orjson.dumps([vector.metadata for vector in vectors]))
    return (64 + 25 * dimension) * len(vectors) + 2 * ids + 36 * sparse + meta


def estimated_record_bytes(record: Record) -> int:
    """At least :func:`estimated_bytes` of the record's vector, without encoding it: every
    id character escapes to at most seven, and the metadata is bounded by
    :func:`stored_bytes_bound`."""
    sparse = len(record.sparse.indices) if record.sparse is not None else 0
    return (64 + len(record.id) * 14 + 25 * len(record.vector) + 36 * sparse
            + stored_bytes_bound(record.metadata, record.document))


def score(metric: Metric, raw: float) -> float:
    """The CONTRACT §3 score; Pinecone's euclidean score is the squared distance."""
    if metric == "euclidean":
        return score_from_distance("l2_squared", raw)
    return float(raw)


def match_of(scored: Any, metric: Metric, include: Include, layout: int) -> Match:
    metadata, document = decode_metadata(scored.metadata, layout)
    return Match(
        id=decode_id(scored.id),
        score=score(metric, scored.score),
        metadata=metadata if include.metadata else None,
        vector=read_vector(scored.values) if include.vectors else None,
        sparse=read_sparse(scored.sparse_values) if include.vectors else None,
        document=document if include.documents else None,
    )


def record_of(vector: Any, layout: int) -> Record:
    metadata, document = decode_metadata(vector.metadata, layout)
    return Record(
        id=decode_id(vector.id),
        vector=read_vector(vector.values),
        metadata=metadata,
        sparse=read_sparse(vector.sparse_values),
        document=document,
    )


__all__ = [
    "CURRENT_LAYOUT",
    "DOCUMENT_KEY",
    "FLOAT_KEYS",
    "INT_VALUES",
    "LAYOUT_BOUND",
    "LAYOUT_EVERY_INT",
    "LAYOUT_MARKED",
    "LAYOUT_TAG",
    "NUMBER_KEYS",
    "decode_id",
    "decode_metadata",
    "encode_id",
    "encode_id_checked",
    "encode_metadata",
    "estimated_bytes",
    "estimated_bytes_bound",
    "estimated_record_bytes",
    "layout_of",
    "match_of",
    "read_sparse",
    "read_vector",
    "record_of",
    "score",
    "sparse_values",
    "stored_bytes_bound",
    "try_encode_id",
    "values_as_json",
    "wire_values",
    "wire_vector",
]

"""How one record is laid out in a Milvus collection, and back.

One collection per index, with these fields:

``pk``      VARCHAR primary key: ``namespace + "/" + id``. Namespaces never contain
            ``/``, so the split is unambiguous, the same id may live in several
            namespaces, and primary-key order within a namespace is id order.
``ns``      VARCHAR partition key: the namespace (``""`` for the default one).
``vector``  FLOAT_VECTOR: the dense vector.
``sparse``  SPARSE_FLOAT_VECTOR (sparse indexes only): the positive weights.
``sparse_neg`` SPARSE_FLOAT_VECTOR: the negative weights, negated. Milvus stores and
            searches only weights >= 0, so a signed vector is kept as two; the
            adapter recombines them (see :mod:`.ranking`). Milvus refuses empty rows
            and drops zero weights, so an empty part stores a single weight at
            :data:`SPARSE_SENTINEL` (outside int32, so never in a query) and the
            indices of zero weights are kept in ``aux``.
``meta``    JSON: the metadata, each key tagged with its kind — ``s:name`` (string),
            ``l:name`` (list of strings), ``n:name`` (int or float), ``b:name`` (bool).
            Milvus (and milvus-lite, which evaluates JSON with Python semantics where
            ``True == 1``) would otherwise compare across kinds; with one key per kind a
            comparison only ever meets values of the contract's kind.
``aux``     JSON: derived values the filters need and bookkeeping: for each list field
            its smallest and largest element (``<:name``, ``>:name``; ``=:name`` when
            they are equal), so that "some element > v" is "largest > v"; and
            ``#z``, the indices of zero weights of the sparse vector; on milvus-lite 2,
            ``#d`` (true) when the record has a document. In collections of
            :data:`BOUNDS_IN_META` layout (below) only sparse indexes have it, for ``#z``.

**Layouts.** Collections are marked with the collection property
:data:`LAYOUT_PROPERTY`. Without it (every collection made before the marker, and
every collection on milvus-lite 2, which keeps no properties) the list bounds are in
``aux``, as above. With :data:`BOUNDS_IN_META` they are in ``meta``, beside the lists,
and a dense index has no ``aux`` field: pymilvus packing and milvus-lite storing a second
JSON field per row was about a tenth of an upsert's process CPU. One JSON value is at
most :data:`JSON_MAX_BYTES`, and a list's bounds can double its size, so a record whose
``meta`` with its bounds would pass that limit (only possible with list elements of tens
of KiB) stores each list as ``[smallest, largest, the rest in order]`` with the positions
of those two in the user's list under ``o:name`` (a one-element list: just ``u:name``),
so the bounds are the list's first two elements, read by filters as
``meta["l:name"][0]`` and ``[1]``, at the cost of a few bytes.
``doc``     VARCHAR, nullable: the document, out of reach of metadata and filters.
            milvus-lite 2 refuses nullable fields: there ``doc`` holds ``""`` when
            there is no document, and ``aux["#d"]`` tells ``""`` from no document.

On milvus-lite 2 every string that an expression compares (record ids in ``pk``,
string metadata, list elements and their bounds in ``aux``) is stored through
:func:`encode_text`: that engine's expression lexer refuses a raw newline or carriage
return in a string literal and does not decode ``\n``/``\r``/``\t`` escapes, and its
upsert fails on primary keys holding ``'`` or NUL. The encoding is order-preserving and
prefix-free, so ranges, prefixes and id order mean the same on encoded strings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from vectorport.core.types import MetadataValue, Record, SparseVector

PK = "pk"
NAMESPACE = "ns"
VECTOR = "vector"
SPARSE = "sparse"
SPARSE_NEGATIVE = "sparse_neg"
META = "meta"
AUX = "aux"
DOCUMENT = "doc"

PK_MAX_BYTES = 1024
NAMESPACE_MAX_BYTES = 128
DOCUMENT_MAX_BYTES = 65_535
JSON_MAX_BYTES = 65_536
"""Milvus' default limit of one JSON value."""
SPARSE_SENTINEL = 4_294_967_294
"""A sparse index no query can name (queries use int32 indices)."""

STRING, LIST, NUMBER, BOOL = "s", "l", "n", "b"
KINDS = (STRING, LIST, NUMBER, BOOL)
LIST_MIN, LIST_MAX, LIST_ONLY = "<", ">", "="
ZERO_WEIGHTS = "#z"
DOCUMENT_PRESENT = "#d"
ORDER, UNIT = "o", "u"
"""Tags of a list stored with its bounds first (see the module docstring)."""

LAYOUT_PROPERTY = "vectorport.layout"
BOUNDS_IN_META = "2"
"""The :data:`LAYOUT_PROPERTY` of collections that keep list bounds in ``meta``."""


_LOW_END = 0x0E
_LOW_PREFIX = "\x01"
_HIGH_PREFIX = "&"
_ENCODE = {c: _LOW_PREFIX + chr(0x40 + c) for c in range(_LOW_END)}
_ENCODE.update({ord("&"): "&0", ord("'"): "&1"})
_DECODE = {**{_LOW_PREFIX + chr(0x40 + c): chr(c) for c in range(_LOW_END)},
           "&0": "&", "&1": "'"}
_ENCODED = re.compile("\x01[\x40-\x4d]|&[01]")


def encode_text(text: str) -> str:
    """The milvus-lite 2 form of a string (see the module docstring).

    Characters below U+000E become U+0001 followed by ``chr(0x40 + c)``; ``&`` becomes
    ``&0`` and ``'`` becomes ``&1``; everything else is kept. Each replacement starts
    with a character that sorts right where the replaced ones do and that is never kept
    as itself, so the code is prefix-free and ``a < b`` exactly when
    ``encode_text(a) < encode_text(b)``; a prefix of ``a`` encodes to a prefix of its
    encoding. U+0001, tab and U+000B/U+000C are accepted raw in that engine's literals.
    """
    return text.translate(_ENCODE)


def decode_text(text: str) -> str:
    return _ENCODED.sub(lambda m: _DECODE[m.group(0)], text)


def _text(value: str, encoded: bool) -> str:
    return encode_text(value) if encoded else value


def tagged(kind: str, field: str) -> str:
    """The key under which a metadata field of one kind is stored."""
    return f"{kind}:{field}"


def make_pk(namespace: str, record_id: str, *, encoded: bool = False) -> str:
    """Namespaces are plain ASCII letters, digits, ``_.-``: never encoded."""
    return f"{namespace}/{_text(record_id, encoded)}"


def split_pk(pk: str, *, encoded: bool = False) -> tuple[str, str]:
    namespace, _, record_id = pk.partition("/")
    return namespace, decode_text(record_id) if encoded else record_id


def namespace_prefix(namespace: str) -> str:
    """Every primary key of the namespace starts with this, and no other does."""
    return f"{namespace}/"


def encode_metadata(
    metadata: Mapping[str, MetadataValue], *, encoded: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``meta`` and ``aux`` JSON values of a record's metadata (strings through
    :func:`encode_text` when ``encoded``)."""
    meta: dict[str, Any] = {}
    aux: dict[str, Any] = {}
    for name, value in metadata.items():
        if isinstance(value, bool):
            meta[tagged(BOOL, name)] = value
        elif isinstance(value, (int, float)):
            meta[tagged(NUMBER, name)] = value
        elif isinstance(value, str):
            meta[tagged(STRING, name)] = _text(value, encoded)
        else:
            items = [_text(v, encoded) for v in value]
            meta[tagged(LIST, name)] = items
            low, high = min(items), max(items)
            if low == high:
                aux[tagged(LIST_ONLY, name)] = low
            else:
                aux[tagged(LIST_MIN, name)] = low
                aux[tagged(LIST_MAX, name)] = high
    return meta, aux


def encode_metadata_with_bounds(metadata: Mapping[str, MetadataValue]) -> bytes:
    """The ``meta`` JSON (UTF-8 bytes, as Milvus stores and measures it) of a record in a
    :data:`BOUNDS_IN_META` collection: the tagged values and each list's bounds, or, when
    that would pass :data:`JSON_MAX_BYTES`, each list with its bounds first."""
    import orjson

    meta: dict[str, Any] = {}
    lists = False
    for name, value in metadata.items():
        kind = type(value)
        if kind is bool:
            meta[BOOL + ":" + name] = value
        elif kind is int or kind is float:
            meta[NUMBER + ":" + name] = value
        elif kind is str:
            meta[STRING + ":" + name] = value
        elif kind is tuple:
            items: tuple[str, ...] = value  # type: ignore[assignment]
            meta[LIST + ":" + name] = items
            low, high = min(items), max(items)
            lists = True
            if low == high:
                meta[LIST_ONLY + ":" + name] = low
            else:
                meta[LIST_MIN + ":" + name] = low
                meta[LIST_MAX + ":" + name] = high
        else:  # a subclass of a kind: the plain value, as encode_metadata stores it
            return _with_bounds_slowly(metadata)
    text = orjson.dumps(meta)
    if lists and len(text) > JSON_MAX_BYTES:
        return orjson.dumps(_bounds_first(metadata))
    return text


def _with_bounds_slowly(metadata: Mapping[str, MetadataValue]) -> bytes:
    import orjson

    meta, bounds = encode_metadata(metadata)
    text = orjson.dumps({**meta, **bounds})
    return orjson.dumps(_bounds_first(metadata)) if len(text) > JSON_MAX_BYTES else text


def _bounds_first(metadata: Mapping[str, MetadataValue]) -> dict[str, Any]:
    """``meta`` with every list stored as ``[smallest, largest, rest…]`` (see the module
    docstring): no value twice, so it is no larger than ``meta`` without bounds plus a few
    bytes per list."""
    meta, _ = encode_metadata(metadata)
    for name, value in metadata.items():
        if isinstance(value, (str, bool, int, float)):
            continue
        items = [str(v) for v in value]
        if len(items) == 1:
            meta[tagged(UNIT, name)] = 1
            continue
        low = min(range(len(items)), key=items.__getitem__)
        high = max(range(len(items)), key=items.__getitem__)
        if high == low:  # all equal: any other position holds the same value
            high = 1 if low == 0 else 0
        rest = [v for i, v in enumerate(items) if i not in (low, high)]
        meta[tagged(LIST, name)] = [items[low], items[high], *rest]
        meta[tagged(ORDER, name)] = [low, high]
    return meta


def _in_user_order(stored: list[Any], order: list[Any]) -> list[Any]:
    """A list stored bounds first, back in the user's order."""
    low, high = int(order[0]), int(order[1])
    items = list(stored[2:])
    for position, value in sorted(((low, stored[0]), (high, stored[1]))):
        items.insert(position, value)
    return items


def json_size(value: Mapping[str, Any]) -> int:
    """UTF-8 bytes of a JSON field's value, the measure of :data:`JSON_MAX_BYTES`."""
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def encoded_metadata_size(record: Record) -> int:
    """The size of a record's ``meta`` field on milvus-lite 2, its strings encoded
    (the engine line's ``record_size``: encoding makes text longer)."""
    return json_size(encode_metadata(record.metadata, encoded=True)[0])


def decode_metadata(
    meta: Mapping[str, Any] | None, *, encoded: bool = False
) -> dict[str, MetadataValue]:
    """The user's metadata from a stored ``meta`` value (lists become tuples)."""
    out: dict[str, MetadataValue] = {}
    meta = meta or {}
    for key, value in meta.items():
        kind, sep, name = key.partition(":")
        if not sep:
            continue
        if kind == LIST:
            order = meta.get(ORDER + ":" + name)
            if order is not None:  # stored bounds first (BOUNDS_IN_META, large lists)
                value = _in_user_order(value, order)
            out[name] = tuple(decode_text(str(v)) if encoded else str(v) for v in value)
        elif kind == BOOL:
            out[name] = bool(value)
        elif kind == STRING:
            out[name] = decode_text(value) if encoded else value
        elif kind == NUMBER:
            out[name] = value
    return out


def encode_sparse(
    sparse: SparseVector | None,
) -> tuple[dict[int, float], dict[int, float], list[int]]:
    """The stored rows of positive weights and of negated negative weights, and the
    indices of zero weights. Milvus keeps only positive weights and no empty rows."""
    positive: dict[int, float] = {}
    negative: dict[int, float] = {}
    zeros: list[int] = []
    if sparse is not None:
        for index, value in zip(sparse.indices, sparse.values, strict=True):
            if value > 0:
                positive[index] = value
            elif value < 0:
                negative[index] = -value
            else:
                zeros.append(index)
    return positive or {SPARSE_SENTINEL: 1.0}, negative or {SPARSE_SENTINEL: 1.0}, zeros


def stored_weights(row: Mapping[Any, Any] | None) -> dict[int, float]:
    """The weights of one stored sparse row, without the sentinel."""
    return {int(i): float(v) for i, v in (row or {}).items() if int(i) != SPARSE_SENTINEL}


def signed_weights(entity: Mapping[str, Any]) -> dict[int, float]:
    """A stored record's nonzero sparse weights, with their signs back."""
    weights = stored_weights(entity.get(SPARSE))
    for index, value in stored_weights(entity.get(SPARSE_NEGATIVE)).items():
        weights[index] = -value
    return weights


def decode_sparse(entity: Mapping[str, Any], zeros: list[int] | None) -> SparseVector | None:
    """The record's sparse vector from its stored rows and zero-weight indices."""
    entries = signed_weights(entity)
    for index in zeros or ():
        entries[int(index)] = 0.0
    if not entries:
        return None
    indices = tuple(sorted(entries))
    return SparseVector(indices, tuple(entries[i] for i in indices))


__all__ = [
    "AUX",
    "BOUNDS_IN_META",
    "DOCUMENT",
    "LAYOUT_PROPERTY",
    "META",
    "NAMESPACE",
    "PK",
    "SPARSE",
    "VECTOR",
    "decode_metadata",
    "decode_sparse",
    "decode_text",
    "encode_metadata",
    "encode_metadata_with_bounds",
    "encode_sparse",
    "encode_text",
    "make_pk",
    "signed_weights",
    "split_pk",
    "tagged",
]

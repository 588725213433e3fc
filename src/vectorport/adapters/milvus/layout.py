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
``aux``, as above. With :data:`BOUNDS_IN_META` a dense index has no ``aux`` field
(pymilvus packing and milvus-lite storing a second JSON field per row was about a tenth
of an upsert's process CPU), and each list is stored *bounds first*:
``[smallest, largest, the rest in the user's order]``, followed, when that is not the
user's order, by one int ``i * n + j`` (``n`` strings; ``i`` and ``j`` the positions of
the smallest and largest in the user's list). Filters read the bounds as
``meta["l:name"][0]`` and ``[1]`` (a one-element list has no ``[1]``); no value is
stored twice, so ``meta`` is at most 4/3 of the metadata's compact JSON (the tags'
two bytes a key are the most), and 40 KiB of metadata stays under Milvus' 64 KiB per
JSON value. Membership filters never meet the int: lists hold strings, and a condition
on a number only reads ``n:`` keys.

With :data:`FILTER_KEYS` (new collections on milvus-lite 3, ``Engine.filter_keys``) the
collection has no ``meta`` field: a record's metadata is in Milvus' dynamic field,
under the same tagged keys (lists bounds first), with keys for filters beside them
(:func:`filter_keys`): for each list its bounds (``<:name``, ``>:name``) and one key per
element (``e:name:element``). Filters read only plain keys of the dynamic field
(``$meta["n:year"] > 2000``, ``exists $meta["e:tags:red"]``), never a path into a list
and no ``json_contains``. The reason is milvus-lite 3's filter evaluation: a path into a
JSON field (``meta["n:g"]``), and any ``json_contains``, is evaluated record by record
in Python, parsing the field at each read, while an expression of ``$meta`` keys and
plain fields is evaluated on columns (each row's JSON parsed once per batch,
comparisons in Arrow with Kleene logic, and record by record where Arrow cannot compare
exactly, as for integers beyond 2^53 beside floats). milvus-lite returns the dynamic
field with every row it reads, whether asked for or not, so keeping the metadata there
once (not also in ``meta``) is also what keeps reads from growing.
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
LAYOUT_PROPERTY = "vectorport.layout"
BOUNDS_IN_META = "2"
"""The :data:`LAYOUT_PROPERTY` of collections that keep list bounds in ``meta``."""
FILTER_KEYS = "3"
"""The :data:`LAYOUT_PROPERTY` of collections laid out as :data:`BOUNDS_IN_META` ones
that also keep each record's :func:`filter_keys` in the dynamic field."""
MEMBER = "e"
"""The tag of a :func:`filter_keys` membership key: ``e:field:element``."""
DYNAMIC = "$meta"
"""Milvus' name of a collection's dynamic field (in output fields and expressions)."""


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


def filter_keys(metadata: Mapping[str, MetadataValue]) -> dict[str, Any]:
    """A record's metadata as a :data:`FILTER_KEYS` collection keeps it in its dynamic
    field (see the module docstring): each scalar under its tagged key, as in ``meta``;
    each list under ``l:name`` :func:`bounds_first`, and for filters its smallest and
    largest element (``<:name``, ``>:name``) and one key ``e:name:element`` (true) per
    distinct element. Field names hold no ``:``, so a key names one field and one
    element only."""
    keys: dict[str, Any] = {}
    for name, value in metadata.items():
        if isinstance(value, bool):
            keys[BOOL + ":" + name] = value
        elif isinstance(value, (int, float)):
            keys[NUMBER + ":" + name] = value
        elif isinstance(value, str):
            keys[STRING + ":" + name] = value
        else:
            items = list(value)
            keys[LIST + ":" + name] = bounds_first(items)
            keys[LIST_MIN + ":" + name] = min(items)
            keys[LIST_MAX + ":" + name] = max(items)
            prefix = MEMBER + ":" + name + ":"
            for item in items:
                keys[prefix + item] = True
    return keys


def member(field: str, element: str) -> str:
    """The :func:`filter_keys` key of ``element`` in the list field ``field``."""
    return MEMBER + ":" + field + ":" + element


def bounds_first(items: tuple[str, ...] | list[str]) -> list[Any]:
    """A list as a :data:`BOUNDS_IN_META` collection stores it (see the module
    docstring): its smallest and largest element first, then the rest in order, then,
    unless that is the user's order, ``i * n + j``."""
    low, high = min(items), max(items)
    if low == high:  # all equal: every order is the user's
        return list(items)
    i, j = items.index(low), items.index(high)
    if i == 0 and j == 1:
        return list(items)
    rest = [item for position, item in enumerate(items) if position != i and position != j]
    return [low, high, *rest, i * len(items) + j]


def in_user_order(stored: list[Any]) -> list[Any]:
    """A list stored :func:`bounds_first`, back in the user's order."""
    if not stored or type(stored[-1]) is not int:
        return stored
    items = stored[:-1]
    i, j = divmod(stored[-1], len(items))
    restored = items[2:]
    for position, item in sorted(((i, items[0]), (j, items[1]))):
        restored.insert(position, item)
    return restored


def encode_metadata_bounds_first(metadata: Mapping[str, MetadataValue]) -> bytes:
    """The ``meta`` JSON (UTF-8 bytes, as Milvus stores and measures it) of a record in a
    :data:`BOUNDS_IN_META` collection: the tagged values, lists :func:`bounds_first`."""
    import orjson

    meta: dict[str, Any] = {}
    for name, value in metadata.items():
        kind = type(value)
        if kind is bool:
            meta[BOOL + ":" + name] = value
        elif kind is int or kind is float:
            meta[NUMBER + ":" + name] = value
        elif kind is str:
            meta[STRING + ":" + name] = value
        elif kind is tuple:
            meta[LIST + ":" + name] = bounds_first(value)  # type: ignore[arg-type]
        else:  # a subclass of a kind: the plain value, as encode_metadata stores it
            meta = encode_metadata(metadata)[0]
            for key, stored in meta.items():
                if key.startswith(LIST + ":"):
                    meta[key] = bounds_first(stored)
            break
    return orjson.dumps(meta)


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
    for key, value in (meta or {}).items():
        kind, sep, name = key.partition(":")
        if not sep:
            continue
        if kind == LIST:
            value = in_user_order(value)  # (lists of the old layout hold no int)
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
    "DYNAMIC",
    "FILTER_KEYS",
    "LAYOUT_PROPERTY",
    "META",
    "NAMESPACE",
    "PK",
    "SPARSE",
    "VECTOR",
    "bounds_first",
    "decode_metadata",
    "decode_sparse",
    "decode_text",
    "encode_metadata",
    "encode_metadata_bounds_first",
    "encode_sparse",
    "encode_text",
    "filter_keys",
    "in_user_order",
    "make_pk",
    "member",
    "signed_weights",
    "split_pk",
    "tagged",
]

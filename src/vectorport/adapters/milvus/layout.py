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
            ``#z``, the indices of zero weights of the sparse vector.
``doc``     VARCHAR, nullable: the document, out of reach of metadata and filters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vectorport.core.types import MetadataValue, SparseVector

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
SPARSE_SENTINEL = 4_294_967_294
"""A sparse index no query can name (queries use int32 indices)."""

STRING, LIST, NUMBER, BOOL = "s", "l", "n", "b"
KINDS = (STRING, LIST, NUMBER, BOOL)
LIST_MIN, LIST_MAX, LIST_ONLY = "<", ">", "="
ZERO_WEIGHTS = "#z"


def tagged(kind: str, field: str) -> str:
    """The key under which a metadata field of one kind is stored."""
    return f"{kind}:{field}"


def make_pk(namespace: str, record_id: str) -> str:
    return f"{namespace}/{record_id}"


def split_pk(pk: str) -> tuple[str, str]:
    namespace, _, record_id = pk.partition("/")
    return namespace, record_id


def namespace_prefix(namespace: str) -> str:
    """Every primary key of the namespace starts with this, and no other does."""
    return f"{namespace}/"


def encode_metadata(metadata: Mapping[str, MetadataValue]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``meta`` and ``aux`` JSON values of a record's metadata."""
    meta: dict[str, Any] = {}
    aux: dict[str, Any] = {}
    for name, value in metadata.items():
        if isinstance(value, bool):
            meta[tagged(BOOL, name)] = value
        elif isinstance(value, (int, float)):
            meta[tagged(NUMBER, name)] = value
        elif isinstance(value, str):
            meta[tagged(STRING, name)] = value
        else:
            items = list(value)
            meta[tagged(LIST, name)] = items
            low, high = min(items), max(items)
            if low == high:
                aux[tagged(LIST_ONLY, name)] = low
            else:
                aux[tagged(LIST_MIN, name)] = low
                aux[tagged(LIST_MAX, name)] = high
    return meta, aux


def decode_metadata(meta: Mapping[str, Any] | None) -> dict[str, MetadataValue]:
    """The user's metadata from a stored ``meta`` value (lists become tuples)."""
    out: dict[str, MetadataValue] = {}
    for key, value in (meta or {}).items():
        kind, sep, name = key.partition(":")
        if not sep:
            continue
        if kind == LIST:
            out[name] = tuple(str(v) for v in value)
        elif kind == BOOL:
            out[name] = bool(value)
        elif kind in (STRING, NUMBER):
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
    "DOCUMENT",
    "META",
    "NAMESPACE",
    "PK",
    "SPARSE",
    "VECTOR",
    "decode_metadata",
    "decode_sparse",
    "encode_metadata",
    "encode_sparse",
    "make_pk",
    "signed_weights",
    "split_pk",
    "tagged",
]

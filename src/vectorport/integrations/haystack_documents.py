"""Haystack documents as vectorport records, and the parts of the Haystack store that
need no I/O: which documents a write policy keeps, and the metadata summaries of the
extended methods. The sync and async methods of
:class:`~vectorport.integrations.haystack.VectorportDocumentStore` differ only in how
they reach the index; everything they compute is here, once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from haystack import Document
from haystack.dataclasses import SparseEmbedding
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy

from vectorport.core.types import Match, Record
from vectorport.integrations.haystack_filters import meta_key

NO_EMBEDDING_KEY = "_haystack_no_embedding"
"""Reserved metadata key marking a document stored without an embedding."""


class DocumentCodec:
    """Documents to record dicts and back, for an index of ``dimension``."""

    def __init__(self, dimension: int) -> None:
        # a unit vector, so cosine indexes accept it; marked, so retrieval skips it
        self.placeholder = np.zeros(dimension, dtype=np.float32)
        self.placeholder[0] = 1.0

    def record(self, doc: Document) -> dict[str, Any]:
        if doc.blob is not None:
            raise ValueError(f"document {doc.id!r}: blobs are not stored by vectorport")
        metadata: dict[str, Any] = {}
        for key, value in doc.meta.items():
            if value is None:
                continue
            if key == NO_EMBEDDING_KEY:
                raise ValueError(f"document {doc.id!r}: meta key {key!r} is reserved")
            metadata[key] = value
        vector: Any = doc.embedding
        if vector is None:
            vector = self.placeholder
            metadata[NO_EMBEDDING_KEY] = True
        record: dict[str, Any] = {"id": doc.id, "vector": vector, "metadata": metadata,
                                  "document": doc.content}
        if doc.sparse_embedding is not None:
            record["sparse"] = {"indices": doc.sparse_embedding.indices,
                                "values": doc.sparse_embedding.values}
        return record

    @staticmethod
    def document(item: Record | Match, *, score: float | None = None,
                 with_embedding: bool = True) -> Document:
        metadata = item.metadata or {}
        embedding = None
        if with_embedding and item.vector is not None and not metadata.get(NO_EMBEDDING_KEY):
            embedding = [float(x) for x in item.vector]
        sparse = None
        if with_embedding and item.sparse is not None:
            sparse = SparseEmbedding(indices=list(item.sparse.indices),
                                     values=list(item.sparse.values))
        return Document(id=item.id, content=item.document, meta=plain_meta(metadata),
                        embedding=embedding, sparse_embedding=sparse, score=score)


def plain_meta(metadata: Any) -> dict[str, Any]:
    """Stored metadata as Haystack shows it: lists as lists, the marker key hidden."""
    return {k: list(v) if isinstance(v, tuple) else v
            for k, v in (metadata or {}).items() if k != NO_EMBEDDING_KEY}


# -- writes -------------------------------------------------------------------------------


def checked_documents(documents: Any) -> list[Document]:
    """``documents`` as a list, or the ``ValueError`` Haystack's suites expect."""
    if (not isinstance(documents, Iterable) or isinstance(documents, (str, bytes))
            or any(not isinstance(d, Document) for d in documents)):
        raise ValueError("Please provide a list of Documents.")
    return list(documents)


def effective_policy(policy: DuplicatePolicy) -> DuplicatePolicy:
    """``NONE`` means ``FAIL`` here (Haystack leaves the default to the store)."""
    return DuplicatePolicy.FAIL if policy == DuplicatePolicy.NONE else policy


def ids_to_check(docs: Sequence[Document], policy: DuplicatePolicy) -> list[str]:
    """The ids a write must look up first: none for ``OVERWRITE``."""
    return [] if policy == DuplicatePolicy.OVERWRITE else [d.id for d in docs]


def kept_documents(docs: Sequence[Document], existing: set[str],
                   policy: DuplicatePolicy) -> list[Document]:
    """What a write under ``policy`` stores, given the ids already ``existing`` (read only
    for ``FAIL`` and ``SKIP``): ``FAIL`` raises on any stored or repeated id, ``SKIP``
    keeps the first of each new id, ``OVERWRITE`` keeps all (the last of an id wins)."""
    if policy == DuplicatePolicy.OVERWRITE:
        return list(docs)
    if policy == DuplicatePolicy.FAIL:
        repeated = sorted(existing | _repeated_ids(docs))
        if repeated:
            raise DuplicateDocumentError(f"ID '{repeated[0]}' already exists.")
        return list(docs)
    seen = set(existing)
    kept = []
    for doc in docs:
        if doc.id not in seen:
            seen.add(doc.id)
            kept.append(doc)
    return kept


def _repeated_ids(docs: Sequence[Document]) -> set[str]:
    seen: set[str] = set()
    repeated: set[str] = set()
    for doc in docs:
        (repeated if doc.id in seen else seen).add(doc.id)
    return repeated


def updated_documents(records: Iterable[Record], meta: dict[str, Any]) -> list[Document]:
    """``update_by_filter``'s rewrite: each matching document with ``meta`` merged in."""
    updated = []
    for record in records:
        doc = DocumentCodec.document(record)
        doc.meta.update(meta)
        updated.append(doc)
    return updated


# -- metadata summaries -------------------------------------------------------------------


def unique_counts(records: Iterable[Record], metadata_fields: list[str]) -> dict[str, int]:
    keys = {name: meta_key(name) for name in metadata_fields}
    seen: dict[str, set[tuple[str, Any]]] = {name: set() for name in metadata_fields}
    for record in records:
        for name, key in keys.items():
            if key in record.metadata:
                seen[name].add(_distinct(record.metadata[key]))
    return {name: len(values) for name, values in seen.items()}


def fields_info(records: Iterable[Record]) -> dict[str, dict[str, str]]:
    kinds: dict[str, str] = {}
    for record in records:
        for key, value in plain_meta(record.metadata).items():
            kinds[key] = _haystack_type(value)
    return {key: {"type": kind} for key, kind in kinds.items()}


def min_max(records: Iterable[Record], metadata_field: str) -> dict[str, Any]:
    key = meta_key(metadata_field)
    values = [r.metadata[key] for r in records
              if isinstance(r.metadata.get(key), (int, float, str))]
    if not values:
        return {"min": None, "max": None}
    try:
        return {"min": min(values), "max": max(values)}
    except TypeError as exc:
        raise ValueError(f"metadata field {metadata_field!r} mixes kinds") from exc


def unique_values(records: Iterable[Record], metadata_field: str, search_term: str | None,
                  from_: int, size: int) -> tuple[list[Any], int]:
    """Distinct values of a field (``1``, ``1.0``, ``True`` and ``"1"`` are four),
    sorted by their text, with an optional case-insensitive ``search_term``."""
    key = meta_key(metadata_field)
    unique: dict[tuple[str, Any], Any] = {}
    for record in records:
        if key in record.metadata:
            value = plain_meta({key: record.metadata[key]})[key]
            unique.setdefault(_distinct(record.metadata[key]), value)
    if search_term:
        term = search_term.lower()
        unique = {k: v for k, v in unique.items() if term in str(v).lower()}
    ordered = sorted(unique, key=lambda k: (str(unique[k]), k[0]))
    return [unique[k] for k in ordered[from_:from_ + size]], len(ordered)


def _distinct(value: Any) -> tuple[str, Any]:
    """A key that keeps ``1``, ``1.0``, ``True`` and ``"1"`` apart."""
    return type(value).__name__, value


def _haystack_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "keyword"

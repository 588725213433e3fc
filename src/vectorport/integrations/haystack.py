"""vectorport as a Haystack 2 ``DocumentStore``, and an embedding retriever for it.

>>> from haystack import Document
>>> store = VectorportDocumentStore(url="memory://", index_name="docs", embedding_dim=3)
>>> store.write_documents([Document(id="a", content="hi", meta={"year": 2024}, embedding=[1, 0, 0])])
1
>>> [d.id for d in store.filter_documents({"field": "meta.year", "operator": ">=", "value": 2020})]
['a']

How Haystack's document model maps onto a vectorport record:

- ``content`` is the record's document text; ``meta`` its metadata (flat: ``str``,
  ``int``, ``float``, ``bool`` or a list of ``str``; a ``None`` value is not stored,
  which Haystack's filters cannot tell from a missing key anyway). Other values, and
  ``blob``, raise ``ValueError`` rather than being dropped.
- ``embedding`` is the dense vector. A document without one is stored with a unit
  placeholder vector and a reserved marker key, comes back with ``embedding=None``, and
  is never returned by embedding retrieval. Embeddings come back as float32 values.
- ``sparse_embedding`` needs an index created with ``sparse=True``.

Filters are Haystack's dialect with Haystack's meaning (see
:mod:`vectorport.integrations.haystack_filters`). Listing by filter uses
:meth:`Index.scan <vectorport.Index.scan>`, which every backend has.
``DuplicatePolicy.FAIL`` and ``SKIP`` read the ids before writing,
so two writers racing on one id are not serialised.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from haystack import Document, component, default_from_dict, default_to_dict
from haystack.dataclasses import SparseEmbedding
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy

from vectorport.core.config import parse_url
from vectorport.core.errors import ValidationError
from vectorport.core.filters.parse import render_filter
from vectorport.core.store import Index, Store
from vectorport.core.types import Match, Record, SparseVector
from vectorport.integrations._records import iter_records, open_index, write
from vectorport.integrations.haystack_filters import meta_key, to_vectorport

__all__ = ["VectorportDocumentStore", "VectorportEmbeddingRetriever"]

NO_EMBEDDING_KEY = "_haystack_no_embedding"
"""Reserved metadata key marking a document stored without an embedding."""


class VectorportDocumentStore:
    """A Haystack ``DocumentStore`` over one vectorport index and namespace."""

    def __init__(
        self,
        *,
        url: str | Store | None = None,
        index_name: str = "haystack_documents",
        index: Index | None = None,
        namespace: str = "",
        embedding_dim: int = 768,
        metric: str = "cosine",
        sparse: bool = False,
    ) -> None:
        self.url = url if isinstance(url, str) else None
        self.index_name = index_name
        self.namespace = namespace
        self.embedding_dim = embedding_dim
        self.metric = metric
        self.sparse = sparse
        self.index = open_index(index, store=url, name=index_name, dimension=embedding_dim,
                                metric=metric, sparse=sparse)
        self._placeholder = np.zeros(self.index.dimension, dtype=np.float32)
        self._placeholder[0] = 1.0

    def __repr__(self) -> str:
        return f"VectorportDocumentStore(index={self.index!r}, namespace={self.namespace!r})"

    # -- serialisation --------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        if self.url is None:
            raise ValueError("only a store built from a url= can be serialised")
        parsed = parse_url(self.url)
        if parsed.password is not None or parsed.secrets:
            # a pipeline file must never hold a credential: name the variable instead
            raise ValueError("the url holds a credential; pass it through the environment "
                             "(e.g. api_key_env=...) to serialise this store")
        return default_to_dict(self, url=self.url, index_name=self.index_name,
                               namespace=self.namespace, embedding_dim=self.embedding_dim,
                               metric=self.metric, sparse=self.sparse)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VectorportDocumentStore:
        return default_from_dict(cls, data)

    # -- conversion -----------------------------------------------------------------

    def _record(self, doc: Document) -> dict[str, Any]:
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
            vector = self._placeholder
            metadata[NO_EMBEDDING_KEY] = True
        record: dict[str, Any] = {"id": doc.id, "vector": vector, "metadata": metadata,
                                  "document": doc.content}
        if doc.sparse_embedding is not None:
            record["sparse"] = {"indices": doc.sparse_embedding.indices,
                                "values": doc.sparse_embedding.values}
        return record

    @staticmethod
    def _meta(metadata: Any) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v
                for k, v in (metadata or {}).items() if k != NO_EMBEDDING_KEY}

    def _document(self, item: Record | Match, *, score: float | None = None,
                  with_embedding: bool = True) -> Document:
        metadata = item.metadata or {}
        embedding = None
        if with_embedding and item.vector is not None and not metadata.get(NO_EMBEDDING_KEY):
            embedding = [float(x) for x in item.vector]
        sparse = None
        if with_embedding and item.sparse is not None:
            sparse = SparseEmbedding(indices=list(item.sparse.indices), values=list(item.sparse.values))
        return Document(id=item.id, content=item.document, meta=self._meta(metadata),
                        embedding=embedding, sparse_embedding=sparse, score=score)

    # -- the DocumentStore protocol -------------------------------------------------

    def count_documents(self) -> int:
        return self.index.count(self.namespace)

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """Every document matching Haystack ``filters`` (all when ``None``)."""
        return [self._document(r) for r in self._matching(filters)]

    def _matching(self, filters: dict[str, Any] | None) -> list[Record]:
        translated = to_vectorport(filters)
        if translated.nothing:
            return []
        return list(iter_records(self.index, self.namespace, translated.node))

    def write_documents(self, documents: list[Document],
                        policy: DuplicatePolicy = DuplicatePolicy.NONE) -> int:
        """Write documents; ``NONE`` means ``FAIL``. Returns how many were written."""
        if (not isinstance(documents, Iterable) or isinstance(documents, (str, bytes))
                or any(not isinstance(d, Document) for d in documents)):
            raise ValueError("Please provide a list of Documents.")
        docs = list(documents)
        if not docs:
            return 0
        if policy == DuplicatePolicy.NONE:
            policy = DuplicatePolicy.FAIL
        if policy != DuplicatePolicy.OVERWRITE:
            existing = set(self.index.fetch([d.id for d in docs], self.namespace))
            if policy == DuplicatePolicy.FAIL:
                repeated = sorted(existing | _repeated_ids(docs))
                if repeated:
                    raise DuplicateDocumentError(f"ID '{repeated[0]}' already exists.")
            else:
                seen: set[str] = set(existing)
                kept = []
                for doc in docs:
                    if doc.id not in seen:
                        seen.add(doc.id)
                        kept.append(doc)
                docs = kept
        if not docs:
            return 0
        try:
            return write(self.index, [self._record(d) for d in docs], self.namespace)
        except ValidationError as exc:  # Haystack callers expect ValueError for bad input
            raise ValueError(str(exc)) from exc

    def delete_documents(self, document_ids: list[str]) -> None:
        if document_ids:
            self.index.delete(list(document_ids), namespace=self.namespace)

    # -- the extended methods -------------------------------------------------------

    def delete_all_documents(self, recreate_index: bool = False) -> None:
        """Remove every document of this store's namespace. ``recreate_index`` drops and
        recreates the whole index (every namespace), keeping its settings."""
        if recreate_index:
            spec, store = self.index.spec, self.index.store
            store.delete_index(spec.name, missing_ok=True)
            self.index = store.create_index(spec.name, spec.dimension, spec.metric, sparse=spec.sparse)
            return
        self.index.delete_namespace(self.namespace)

    def delete_by_filter(self, filters: dict[str, Any]) -> int:
        ids = [r.id for r in self._matching(filters)]
        self.delete_documents(ids)
        return len(ids)

    def update_by_filter(self, filters: dict[str, Any], meta: dict[str, Any]) -> int:
        """Merge ``meta`` into every matching document (a rewrite of each record)."""
        matching = self._matching(filters)
        if not matching:
            return 0
        updated = []
        for record in matching:
            doc = self._document(record)
            doc.meta.update(meta)
            updated.append(doc)
        return self.write_documents(updated, DuplicatePolicy.OVERWRITE)

    def count_documents_by_filter(self, filters: dict[str, Any]) -> int:
        translated = to_vectorport(filters)
        if translated.nothing:
            return 0
        if translated.node is None:
            return self.count_documents()
        if self.index.store.capabilities.count_by_filter:
            return self.index.count(self.namespace, filter=translated.node)
        return sum(1 for _ in iter_records(self.index, self.namespace, translated.node))

    def count_unique_metadata_by_filter(self, filters: dict[str, Any],
                                        metadata_fields: list[str]) -> dict[str, int]:
        keys = {name: meta_key(name) for name in metadata_fields}
        seen: dict[str, set[tuple[str, Any]]] = {name: set() for name in metadata_fields}
        for record in self._matching(filters):
            for name, key in keys.items():
                if key in record.metadata:
                    seen[name].add(_distinct(record.metadata[key]))
        return {name: len(values) for name, values in seen.items()}

    def get_metadata_fields_info(self) -> dict[str, dict[str, str]]:
        kinds: dict[str, str] = {}
        for record in self._matching(None):
            for key, value in self._meta(record.metadata).items():
                kinds[key] = _haystack_type(value)
        return {key: {"type": kind} for key, kind in kinds.items()}

    def get_metadata_field_min_max(self, metadata_field: str) -> dict[str, Any]:
        key = meta_key(metadata_field)
        values = [r.metadata[key] for r in self._matching(None)
                  if isinstance(r.metadata.get(key), (int, float, str))]
        if not values:
            return {"min": None, "max": None}
        try:
            return {"min": min(values), "max": max(values)}
        except TypeError as exc:
            raise ValueError(f"metadata field {metadata_field!r} mixes kinds") from exc

    def get_metadata_field_unique_values(
        self, metadata_field: str, search_term: str | None = None, from_: int = 0, size: int = 10,
        filters: dict[str, Any] | None = None,
    ) -> tuple[list[Any], int]:
        """Distinct values of a field (``1``, ``1.0``, ``True`` and ``"1"`` are four),
        sorted by their text, with an optional case-insensitive ``search_term``."""
        key = meta_key(metadata_field)
        unique: dict[tuple[str, Any], Any] = {}
        for record in self._matching(filters):
            if key in record.metadata:
                value = self._meta({key: record.metadata[key]})[key]
                unique.setdefault(_distinct(record.metadata[key]), value)
        if search_term:
            term = search_term.lower()
            unique = {k: v for k, v in unique.items() if term in str(v).lower()}
        ordered = sorted(unique, key=lambda k: (str(unique[k]), k[0]))
        return [unique[k] for k in ordered[from_:from_ + size]], len(ordered)

    # -- retrieval ------------------------------------------------------------------

    def embedding_retrieval(
        self, query_embedding: Sequence[float], filters: dict[str, Any] | None = None,
        top_k: int = 10, scale_score: bool = False, return_embedding: bool = False,
        query_sparse_embedding: SparseEmbedding | None = None,
    ) -> list[Document]:
        """The ``top_k`` documents nearest to ``query_embedding`` with vectorport's exact
        score; ``scale_score`` maps it into [0, 1] (cosine and dot product as Haystack's
        in-memory store does, euclidean is already there)."""
        if top_k == 0:
            return []
        translated = to_vectorport(filters)
        if translated.nothing:
            return []
        real = {NO_EMBEDDING_KEY: {"$exists": False}}
        node = real if translated.node is None else {"$and": [real, render_filter(translated.node)]}
        sparse = None
        if query_sparse_embedding is not None:
            sparse = SparseVector(tuple(query_sparse_embedding.indices),
                                  tuple(query_sparse_embedding.values))
        matches = self.index.query(
            list(query_embedding), sparse=sparse, top_k=top_k, filter=node,
            namespace=self.namespace, include_vectors=return_embedding)
        return [self._document(m, score=self._scaled(m.score) if scale_score else m.score,
                               with_embedding=return_embedding) for m in matches]

    def _scaled(self, score: float) -> float:
        if self.index.metric == "cosine":
            return (score + 1.0) / 2.0
        if self.index.metric == "dotproduct":
            return float(1.0 / (1.0 + np.exp(-score / 100.0)))  # Haystack's in-memory scaling
        return score


def _repeated_ids(docs: Sequence[Document]) -> set[str]:
    seen: set[str] = set()
    repeated: set[str] = set()
    for doc in docs:
        (repeated if doc.id in seen else seen).add(doc.id)
    return repeated


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


@component
class VectorportEmbeddingRetriever:
    """Retrieves documents from a :class:`VectorportDocumentStore` by embedding."""

    def __init__(self, document_store: VectorportDocumentStore, *, filters: dict[str, Any] | None = None,
                 top_k: int = 10, scale_score: bool = False, return_embedding: bool = False) -> None:
        if not isinstance(document_store, VectorportDocumentStore):
            raise ValueError("document_store must be a VectorportDocumentStore")
        self.document_store = document_store
        self.filters = filters
        self.top_k = top_k
        self.scale_score = scale_score
        self.return_embedding = return_embedding

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, document_store=self.document_store.to_dict(), filters=self.filters,
                               top_k=self.top_k, scale_score=self.scale_score,
                               return_embedding=self.return_embedding)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VectorportEmbeddingRetriever:
        params = data.get("init_parameters", {})
        params["document_store"] = VectorportDocumentStore.from_dict(params["document_store"])
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(self, query_embedding: list[float], filters: dict[str, Any] | None = None,
            top_k: int | None = None) -> dict[str, list[Document]]:
        """Runtime ``filters`` replace the ones given at construction."""
        docs = self.document_store.embedding_retrieval(
            query_embedding, filters=filters if filters is not None else self.filters,
            top_k=self.top_k if top_k is None else top_k, scale_score=self.scale_score,
            return_embedding=self.return_embedding)
        return {"documents": docs}

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

Every method has its async form (``count_documents_async``, ``write_documents_async``,
…, ``embedding_retrieval_async``) over :class:`~vectorport.AsyncIndex`: the backend's
own async I/O where the adapter has it, a worker thread otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from haystack import Document, component, default_from_dict, default_to_dict
from haystack.dataclasses import SparseEmbedding
from haystack.document_stores.types import DuplicatePolicy

from vectorport.core.async_store import AsyncIndex, AsyncStore
from vectorport.core.config import parse_url
from vectorport.core.errors import ValidationError
from vectorport.core.filters.parse import render_filter
from vectorport.core.store import Index, Store
from vectorport.core.types import Match, Record, SparseVector
from vectorport.integrations import haystack_documents as hd
from vectorport.integrations._records import (
    DEFAULT_PAGE_SIZE,
    awrite,
    iter_records,
    open_index,
    write,
)
from vectorport.integrations.haystack_documents import NO_EMBEDDING_KEY
from vectorport.integrations.haystack_filters import to_vectorport

__all__ = ["NO_EMBEDDING_KEY", "VectorportDocumentStore", "VectorportEmbeddingRetriever"]


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
        self._codec = hd.DocumentCodec(self.index.dimension)
        self._aindex: AsyncIndex | None = None

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

    @property
    def aindex(self) -> AsyncIndex:
        """The async handle of :attr:`index` (renewed when a recreate replaced it)."""
        if self._aindex is None or self._aindex.sync is not self.index:
            self._aindex = AsyncIndex(self.index)
        return self._aindex

    def _records(self, docs: Sequence[Document]) -> list[dict[str, Any]]:
        return [self._codec.record(d) for d in docs]

    def _filter_node(self, filters: dict[str, Any] | None) -> tuple[bool, Any]:
        """(whether anything can match, the vectorport filter) for Haystack ``filters``."""
        translated = to_vectorport(filters)
        return not translated.nothing, translated.node

    # -- the DocumentStore protocol -------------------------------------------------

    def count_documents(self) -> int:
        return self.index.count(self.namespace)

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """Every document matching Haystack ``filters`` (all when ``None``)."""
        return [self._codec.document(r) for r in self._matching(filters)]

    def _matching(self, filters: dict[str, Any] | None) -> list[Record]:
        possible, node = self._filter_node(filters)
        return list(iter_records(self.index, self.namespace, node)) if possible else []

    def write_documents(self, documents: list[Document],
                        policy: DuplicatePolicy = DuplicatePolicy.NONE) -> int:
        """Write documents; ``NONE`` means ``FAIL``. Returns how many were written."""
        docs, policy = hd.checked_documents(documents), hd.effective_policy(policy)
        existing = self.index.fetch(hd.ids_to_check(docs, policy), self.namespace)
        records = self._records(hd.kept_documents(docs, set(existing), policy))
        with _as_value_error():
            return write(self.index, records, self.namespace) if records else 0

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
        updated = hd.updated_documents(self._matching(filters), meta)
        return self.write_documents(updated, DuplicatePolicy.OVERWRITE) if updated else 0

    def count_documents_by_filter(self, filters: dict[str, Any]) -> int:
        possible, node = self._filter_node(filters)
        if not possible:
            return 0
        if node is None:
            return self.count_documents()
        if self.index.store.capabilities.count_by_filter:
            return self.index.count(self.namespace, filter=node)
        return sum(1 for _ in iter_records(self.index, self.namespace, node))

    def count_unique_metadata_by_filter(self, filters: dict[str, Any],
                                        metadata_fields: list[str]) -> dict[str, int]:
        return hd.unique_counts(self._matching(filters), metadata_fields)

    def get_metadata_fields_info(self) -> dict[str, dict[str, str]]:
        return hd.fields_info(self._matching(None))

    def get_metadata_field_min_max(self, metadata_field: str) -> dict[str, Any]:
        return hd.min_max(self._matching(None), metadata_field)

    def get_metadata_field_unique_values(
        self, metadata_field: str, search_term: str | None = None, from_: int = 0, size: int = 10,
        filters: dict[str, Any] | None = None,
    ) -> tuple[list[Any], int]:
        """Distinct values of a field (``1``, ``1.0``, ``True`` and ``"1"`` are four),
        sorted by their text, with an optional case-insensitive ``search_term``."""
        return hd.unique_values(self._matching(filters), metadata_field, search_term, from_, size)

    # -- the async forms --------------------------------------------------------------
    # The same computations over AsyncIndex: the backend's own async I/O where the
    # adapter has it, a worker thread otherwise.

    async def count_documents_async(self) -> int:
        return await self.aindex.count(self.namespace)

    async def filter_documents_async(self, filters: dict[str, Any] | None = None) -> list[Document]:
        return [self._codec.document(r) for r in await self._amatching(filters)]

    async def _amatching(self, filters: dict[str, Any] | None) -> list[Record]:
        possible, node = self._filter_node(filters)
        if not possible:
            return []
        return [r async for r in self.aindex.iter_records(
            self.namespace, filter=node, page_size=DEFAULT_PAGE_SIZE)]

    async def write_documents_async(self, documents: list[Document],
                                    policy: DuplicatePolicy = DuplicatePolicy.NONE) -> int:
        docs, policy = hd.checked_documents(documents), hd.effective_policy(policy)
        existing = await self.aindex.fetch(hd.ids_to_check(docs, policy), self.namespace)
        records = self._records(hd.kept_documents(docs, set(existing), policy))
        with _as_value_error():
            return await awrite(self.aindex, records, self.namespace) if records else 0

    async def delete_documents_async(self, document_ids: list[str]) -> None:
        if document_ids:
            await self.aindex.delete(list(document_ids), namespace=self.namespace)

    async def delete_all_documents_async(self, recreate_index: bool = False) -> None:
        if recreate_index:
            spec, store = self.index.spec, AsyncStore(self.index.store)
            await store.delete_index(spec.name, missing_ok=True)
            created = await store.create_index(spec.name, spec.dimension, spec.metric,
                                               sparse=spec.sparse)
            self.index = created.sync
            return
        await self.aindex.delete_namespace(self.namespace)

    async def delete_by_filter_async(self, filters: dict[str, Any]) -> int:
        ids = [r.id for r in await self._amatching(filters)]
        await self.delete_documents_async(ids)
        return len(ids)

    async def update_by_filter_async(self, filters: dict[str, Any], meta: dict[str, Any]) -> int:
        updated = hd.updated_documents(await self._amatching(filters), meta)
        if not updated:
            return 0
        return await self.write_documents_async(updated, DuplicatePolicy.OVERWRITE)

    async def count_documents_by_filter_async(self, filters: dict[str, Any]) -> int:
        possible, node = self._filter_node(filters)
        if not possible:
            return 0
        if node is None:
            return await self.count_documents_async()
        if self.index.store.capabilities.count_by_filter:
            return await self.aindex.count(self.namespace, filter=node)
        return len(await self._amatching(filters))

    async def count_unique_metadata_by_filter_async(self, filters: dict[str, Any],
                                                    metadata_fields: list[str]) -> dict[str, int]:
        return hd.unique_counts(await self._amatching(filters), metadata_fields)

    async def get_metadata_fields_info_async(self) -> dict[str, dict[str, str]]:
        return hd.fields_info(await self._amatching(None))

    async def get_metadata_field_min_max_async(self, metadata_field: str) -> dict[str, Any]:
        return hd.min_max(await self._amatching(None), metadata_field)

    async def get_metadata_field_unique_values_async(
        self, metadata_field: str, search_term: str | None = None, from_: int = 0, size: int = 10,
        filters: dict[str, Any] | None = None,
    ) -> tuple[list[Any], int]:
        return hd.unique_values(await self._amatching(filters), metadata_field, search_term,
                                from_, size)

    # -- retrieval ------------------------------------------------------------------

    def _retrieval(self, query_embedding: Sequence[float], filters: dict[str, Any] | None,
                   top_k: int, return_embedding: bool,
                   query_sparse_embedding: SparseEmbedding | None) -> dict[str, Any] | None:
        """The query's arguments, or ``None`` when nothing can be retrieved."""
        possible, node = self._filter_node(filters)
        if top_k == 0 or not possible:
            return None
        real = {NO_EMBEDDING_KEY: {"$exists": False}}  # placeholders are never retrieved
        combined = real if node is None else {"$and": [real, render_filter(node)]}
        sparse = None
        if query_sparse_embedding is not None:
            sparse = SparseVector(tuple(query_sparse_embedding.indices),
                                  tuple(query_sparse_embedding.values))
        return {"vector": list(query_embedding), "sparse": sparse, "top_k": top_k,
                "filter": combined, "namespace": self.namespace,
                "include_vectors": return_embedding}

    def _retrieved(self, matches: list[Match], scale_score: bool,
                   return_embedding: bool) -> list[Document]:
        return [self._codec.document(m, score=self._scaled(m.score) if scale_score else m.score,
                                     with_embedding=return_embedding) for m in matches]

    def embedding_retrieval(
        self, query_embedding: Sequence[float], filters: dict[str, Any] | None = None,
        top_k: int = 10, scale_score: bool = False, return_embedding: bool = False,
        query_sparse_embedding: SparseEmbedding | None = None,
    ) -> list[Document]:
        """The ``top_k`` documents nearest to ``query_embedding`` with vectorport's exact
        score; ``scale_score`` maps it into [0, 1] (cosine and dot product as Haystack's
        in-memory store does, euclidean is already there)."""
        query = self._retrieval(query_embedding, filters, top_k, return_embedding,
                                query_sparse_embedding)
        if query is None:
            return []
        return self._retrieved(self.index.query(**query), scale_score, return_embedding)

    async def embedding_retrieval_async(
        self, query_embedding: Sequence[float], filters: dict[str, Any] | None = None,
        top_k: int = 10, scale_score: bool = False, return_embedding: bool = False,
        query_sparse_embedding: SparseEmbedding | None = None,
    ) -> list[Document]:
        query = self._retrieval(query_embedding, filters, top_k, return_embedding,
                                query_sparse_embedding)
        if query is None:
            return []
        matches = await self.aindex.query(**query)
        return self._retrieved(matches, scale_score, return_embedding)

    def _scaled(self, score: float) -> float:
        if self.index.metric == "cosine":
            return (score + 1.0) / 2.0
        if self.index.metric == "dotproduct":
            return float(1.0 / (1.0 + np.exp(-score / 100.0)))  # Haystack's in-memory scaling
        return score


@contextmanager
def _as_value_error() -> Iterator[None]:
    """Haystack callers expect ``ValueError`` for bad input, not vectorport's own error."""
    try:
        yield
    except ValidationError as exc:
        raise ValueError(str(exc)) from exc


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

    def _options(self, filters: dict[str, Any] | None, top_k: int | None) -> dict[str, Any]:
        return {"filters": filters if filters is not None else self.filters,
                "top_k": self.top_k if top_k is None else top_k,
                "scale_score": self.scale_score, "return_embedding": self.return_embedding}

    @component.output_types(documents=list[Document])
    def run(self, query_embedding: list[float], filters: dict[str, Any] | None = None,
            top_k: int | None = None) -> dict[str, list[Document]]:
        """Runtime ``filters`` replace the ones given at construction."""
        docs = self.document_store.embedding_retrieval(query_embedding, **self._options(filters, top_k))
        return {"documents": docs}

    @component.output_types(documents=list[Document])
    async def run_async(self, query_embedding: list[float], filters: dict[str, Any] | None = None,
                        top_k: int | None = None) -> dict[str, list[Document]]:
        """:meth:`run`, over the store's async methods (``AsyncPipeline``)."""
        docs = await self.document_store.embedding_retrieval_async(
            query_embedding, **self._options(filters, top_k))
        return {"documents": docs}

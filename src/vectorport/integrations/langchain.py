"""vectorport as a LangChain ``VectorStore``: one class for every vectorport URL.

>>> from langchain_core.embeddings import DeterministicFakeEmbedding
>>> store = VectorportVectorStore.from_texts(
...     ["red apple", "green pear"], DeterministicFakeEmbedding(size=8),
...     metadatas=[{"kind": "apple"}, {"kind": "pear"}], url="memory://", index_name="fruit")
>>> [d.page_content for d in store.similarity_search("apple", k=1, filter={"kind": "pear"})]
['green pear']

What LangChain users get that differs from store to store elsewhere:

- ``filter`` is vectorport's Mongo-style dict (CONTRACT §2) with the same meaning on
  every backend; an operator a backend cannot express raises
  :class:`~vectorport.UnsupportedFeatureError` instead of being dropped.
- ``similarity_search_with_score`` returns vectorport's exact, higher-is-better score
  for the index's metric (cosine similarity, dot product, or ``1/(1+distance)``), never
  a backend's raw distance.
- Relevance scores (``as_retriever(search_type="similarity_score_threshold")``) map
  those scores into [0, 1] per metric (see :meth:`_select_relevance_score_fn`), and the
  threshold is pushed into the query as ``min_score`` so the best documents are never
  cut by a post-filter on a too-small ``k``.
- Async methods use the backend's own async I/O where the adapter has it
  (:class:`~vectorport.AsyncStore`), and a worker thread otherwise.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from vectorport.core.async_store import AsyncIndex
from vectorport.core.errors import ValidationError
from vectorport.core.store import Index, Store
from vectorport.core.types import Match, Record
from vectorport.integrations._records import awrite, open_index, write

__all__ = ["VectorportVectorStore"]


def _cosine_relevance(score: float) -> float:
    # cosine similarity lives in [-1, 1]; LangChain wants 0 (dissimilar) .. 1 (same)
    return (score + 1.0) / 2.0


def _identity(score: float) -> float:
    # the euclidean score 1 / (1 + distance) is already in (0, 1]
    return score


def _plain_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """Stored metadata as LangChain shows it: lists come back as lists, not tuples."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in (metadata or {}).items()}


class VectorportVectorStore(VectorStore):
    """A LangChain vector store over one vectorport index and namespace.

    Give it an :class:`~vectorport.Index`, or a ``url`` (or :class:`~vectorport.Store`)
    and an ``index_name``; the index is created on first use with the embedding's
    dimension when it does not exist. ``relevance_score_fn`` overrides the per-metric
    mapping of scores into [0, 1] (useful for un-normalised dot-product embeddings).
    """

    def __init__(
        self,
        embedding: Embeddings,
        *,
        index: Index | None = None,
        url: str | Store | None = None,
        index_name: str | None = None,
        namespace: str = "",
        metric: str = "cosine",
        dimension: int | None = None,
        relevance_score_fn: Callable[[float], float] | None = None,
    ) -> None:
        self.embedding = embedding
        self.namespace = namespace
        self._metric = metric
        self._relevance = relevance_score_fn
        self._index: Index | None = index
        self._async_index: AsyncIndex | None = None
        self._opener: Callable[[int | None], Index] = lambda dim: open_index(
            None, store=url, name=index_name, dimension=dim, metric=metric)
        if index is None and dimension is not None:
            self._index = self._opener(dimension)

    # -- plumbing -------------------------------------------------------------------

    @property
    def embeddings(self) -> Embeddings:
        return self.embedding

    def _index_for(self, dimension: int | None) -> Index:
        """The index, opened (and created with ``dimension``) on first use."""
        if self._index is None:
            self._index = self._opener(dimension)
        return self._index

    @property
    def index(self) -> Index:
        return self._index_for(len(self.embedding.embed_query("dimension probe"))
                               if self._index is None else None)

    @property
    def aindex(self) -> AsyncIndex:
        if self._async_index is None:
            self._async_index = AsyncIndex(self.index)
        return self._async_index

    def _records(self, texts: Sequence[str], vectors: Sequence[Sequence[float]],
                 metadatas: Sequence[Mapping[str, Any] | None] | None,
                 ids: Sequence[str | None] | None) -> tuple[list[dict[str, Any]], list[str]]:
        """The records of one add, and the ids returned for it (in input order: a
        missing id is a fresh UUID). Metadata is passed as given: the upsert's
        validation copies it."""
        count = len(texts)
        if len(vectors) != count:
            raise ValueError(f"got {len(vectors)} embeddings for {count} texts")
        if metadatas is not None and len(metadatas) != count:
            raise ValueError(f"got {len(metadatas)} metadatas for {count} texts")
        if ids is not None and len(ids) != count:
            raise ValueError(f"got {len(ids)} ids for {count} texts")
        chosen = [i or str(uuid.uuid4()) for i in ids] if ids is not None else [
            str(uuid.uuid4()) for _ in range(count)]
        metas = metadatas if metadatas is not None else [None] * count
        records = [{"id": i, "vector": v, "document": t, "metadata": m}
                   for i, v, t, m in zip(chosen, vectors, texts, metas, strict=True)]
        return records, chosen

    @staticmethod
    def _document(record_id: str, document: str | None,
                  metadata: Mapping[str, Any] | None) -> Document:
        return Document(id=record_id, page_content=document or "", metadata=_plain_metadata(metadata))

    def _from_match(self, match: Match) -> Document:
        return self._document(match.id, match.document, match.metadata)

    def _from_record(self, record: Record) -> Document:
        return self._document(record.id, record.document, record.metadata)

    def _query_options(self, k: int, filter: Mapping[str, Any] | None,
                       kwargs: Mapping[str, Any]) -> dict[str, Any]:
        unknown = set(kwargs) - {"min_score", "namespace", "ef", "probes", "consistency",
                                 "backend_options"}
        if unknown:
            raise ValidationError(f"unknown search options: {', '.join(sorted(unknown))}")
        options = {"top_k": k, "filter": filter, "namespace": self.namespace, **kwargs}
        return options

    # -- writes ---------------------------------------------------------------------

    def add_embeddings(
        self,
        texts: Iterable[str],
        embeddings: Sequence[Sequence[float]],
        metadatas: list[dict[str, Any]] | None = None,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Add texts with their precomputed embeddings (``PGVector.add_embeddings``'s
        signature); returns the ids in input order."""
        items = list(texts)
        if not items:
            return []
        records, chosen = self._records(items, embeddings, metadatas, ids)
        write(self._index_for(len(embeddings[0])), records, self.namespace)
        return chosen

    async def aadd_embeddings(
        self,
        texts: Iterable[str],
        embeddings: Sequence[Sequence[float]],
        metadatas: list[dict[str, Any]] | None = None,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        items = list(texts)
        if not items:
            return []
        records, chosen = self._records(items, embeddings, metadatas, ids)
        self._index_for(len(embeddings[0]))
        await awrite(self.aindex, records, self.namespace)
        return chosen

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        items = list(texts)
        if not items:
            return []
        return self.add_embeddings(items, self.embedding.embed_documents(items), metadatas, ids)

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Add or replace documents; a document's own ``id`` is kept (``ids=`` wins)."""
        ids = kwargs.pop("ids", None) or [d.id for d in documents]
        return self.add_texts([d.page_content for d in documents],
                              [d.metadata for d in documents], ids=ids, **kwargs)

    async def aadd_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        items = list(texts)
        if not items:
            return []
        vectors = await self.embedding.aembed_documents(items)
        return await self.aadd_embeddings(items, vectors, metadatas, ids)

    async def aadd_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        ids = kwargs.pop("ids", None) or [d.id for d in documents]
        return await self.aadd_texts([d.page_content for d in documents],
                                     [d.metadata for d in documents], ids=ids, **kwargs)

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete by ids, or by ``filter=`` (a vectorport filter dict). Missing ids are
        not an error."""
        filter = kwargs.pop("filter", None)
        if ids is None and filter is None:
            raise ValueError("delete takes ids or filter=...")
        if ids is not None and not ids:
            return True
        self.index.delete(ids, filter=filter, namespace=self.namespace)
        return True

    async def adelete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        filter = kwargs.pop("filter", None)
        if ids is None and filter is None:
            raise ValueError("delete takes ids or filter=...")
        if ids is not None and not ids:
            return True
        await self.aindex.delete(ids, filter=filter, namespace=self.namespace)
        return True

    # -- reads ----------------------------------------------------------------------

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        if not ids:
            return []
        found = self.index.fetch(list(ids), self.namespace)
        return [self._from_record(record) for record in found.values()]

    async def aget_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        if not ids:
            return []
        found = await self.aindex.fetch(list(ids), self.namespace)
        return [self._from_record(record) for record in found.values()]

    def similarity_search_with_score_by_vector(
        self, embedding: list[float], k: int = 4, filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        matches = self.index.query(embedding, **self._query_options(k, filter, kwargs))
        return [(self._from_match(m), m.score) for m in matches]

    async def asimilarity_search_with_score_by_vector(
        self, embedding: list[float], k: int = 4, filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        self._index_for(len(embedding))
        matches = await self.aindex.query(embedding, **self._query_options(k, filter, kwargs))
        return [(self._from_match(m), m.score) for m in matches]

    def similarity_search_with_score(
        self, query: str, k: int = 4, filter: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """Documents with vectorport's exact score (higher is better) for the metric."""
        vector = self.embedding.embed_query(query)
        self._index_for(len(vector))
        return self.similarity_search_with_score_by_vector(vector, k, filter, **kwargs)

    async def asimilarity_search_with_score(
        self, query: str, k: int = 4, filter: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        vector = await self.embedding.aembed_query(query)
        return await self.asimilarity_search_with_score_by_vector(vector, k, filter, **kwargs)

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    async def asimilarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in await self.asimilarity_search_with_score(query, k, **kwargs)]

    def similarity_search_by_vector(self, embedding: list[float], k: int = 4,
                                    **kwargs: Any) -> list[Document]:
        self._index_for(len(embedding))
        return [doc for doc, _ in self.similarity_search_with_score_by_vector(embedding, k, **kwargs)]

    async def asimilarity_search_by_vector(self, embedding: list[float], k: int = 4,
                                           **kwargs: Any) -> list[Document]:
        pairs = await self.asimilarity_search_with_score_by_vector(embedding, k, **kwargs)
        return [doc for doc, _ in pairs]

    # -- relevance scores -----------------------------------------------------------

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        """Scores into [0, 1], per metric: cosine maps [-1, 1] linearly onto [0, 1];
        euclidean scores ``1/(1+d)`` are already in (0, 1]; dot product is unbounded, and
        is mapped like cosine, which is exact for unit-length embeddings (most embedding
        models); pass ``relevance_score_fn`` for anything else."""
        if self._relevance is not None:
            return self._relevance
        metric = self._index.metric if self._index is not None else self._metric
        return _identity if metric == "euclidean" else _cosine_relevance

    def _min_score(self, kwargs: dict[str, Any]) -> None:
        """Turn a relevance ``score_threshold`` into the query's inclusive ``min_score``
        (the inverse of the relevance map), so the threshold is applied to all records,
        not to the ``k`` already returned."""
        threshold = kwargs.get("score_threshold")
        if threshold is None or self._relevance is not None:
            return
        metric = self._index.metric if self._index is not None else self._metric
        kwargs["min_score"] = float(threshold) if metric == "euclidean" else 2.0 * threshold - 1.0

    def similarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        self._min_score(kwargs)
        return super().similarity_search_with_relevance_scores(query, k, **kwargs)

    async def asimilarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        self._min_score(kwargs)
        return await super().asimilarity_search_with_relevance_scores(query, k, **kwargs)

    # -- maximal marginal relevance -------------------------------------------------

    def _mmr(self, query: list[float], matches: list[Match], k: int,
             lambda_mult: float) -> list[Document]:
        if not matches:
            return []
        chosen = maximal_marginal_relevance(
            np.asarray(query, dtype=np.float32),
            [np.asarray(m.vector).tolist() for m in matches], lambda_mult=lambda_mult, k=k)
        return [self._from_match(matches[i]) for i in chosen]

    def max_marginal_relevance_search_by_vector(
        self, embedding: list[float], k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5,
        filter: Mapping[str, Any] | None = None, **kwargs: Any,
    ) -> list[Document]:
        options = self._query_options(max(fetch_k, k), filter, kwargs)
        matches = self._index_for(len(embedding)).query(embedding, include_vectors=True, **options)
        return self._mmr(embedding, matches, k, lambda_mult)

    async def amax_marginal_relevance_search_by_vector(
        self, embedding: list[float], k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5,
        filter: Mapping[str, Any] | None = None, **kwargs: Any,
    ) -> list[Document]:
        options = self._query_options(max(fetch_k, k), filter, kwargs)
        self._index_for(len(embedding))
        matches = await self.aindex.query(embedding, include_vectors=True, **options)
        return self._mmr(embedding, matches, k, lambda_mult)

    def max_marginal_relevance_search(
        self, query: str, k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5,
        filter: Mapping[str, Any] | None = None, **kwargs: Any,
    ) -> list[Document]:
        vector = self.embedding.embed_query(query)
        return self.max_marginal_relevance_search_by_vector(
            vector, k, fetch_k, lambda_mult, filter, **kwargs)

    async def amax_marginal_relevance_search(
        self, query: str, k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5,
        filter: Mapping[str, Any] | None = None, **kwargs: Any,
    ) -> list[Document]:
        vector = await self.embedding.aembed_query(query)
        return await self.amax_marginal_relevance_search_by_vector(
            vector, k, fetch_k, lambda_mult, filter, **kwargs)

    # -- construction ---------------------------------------------------------------

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> VectorportVectorStore:
        """A store over ``url=``/``index_name=`` (or ``index=``) holding ``texts``."""
        store = cls(embedding, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store

"""vectorport as a LlamaIndex vector store (``BasePydanticVectorStore``).

>>> from llama_index.core.schema import TextNode
>>> store = VectorportVectorStore.from_url("memory://", "nodes", dimension=2)
>>> store.add([TextNode(id_="n1", text="hello", embedding=[1.0, 0.0], metadata={"lang": "en"})])
['n1']
>>> from llama_index.core.vector_stores.types import VectorStoreQuery
>>> store.query(VectorStoreQuery(query_embedding=[1.0, 0.0], similarity_top_k=1)).ids
['n1']

Nodes are stored the way LlamaIndex's own stores do (``node_to_metadata_dict``): the
node's metadata as filterable keys, the rest of the node as JSON under
``_node_content``, and ``doc_id``/``ref_doc_id``/``document_id`` for deletion by
document. The text is the record's document. Metadata must be flat (``str``, ``int``,
``float``, ``bool``, ``list[str]``); ``None`` values are not stored (LlamaIndex's filters
treat a ``None`` like a missing key). Filters translate as
:mod:`vectorport.integrations.llama_index_filters` describes; similarities are
vectorport's exact scores for the index's metric.

Query modes: ``default`` (dense); ``sparse`` and ``hybrid`` where the backend declares
sparse vectors (and a hybrid mode), with a ``sparse_encoder`` such as
:class:`~vectorport.embedders.BM25Encoder` turning texts into sparse vectors; any other
mode raises :class:`~vectorport.UnsupportedFeatureError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode, MetadataMode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict

from vectorport.core.async_store import AsyncIndex
from vectorport.core.errors import UnsupportedFeatureError, ValidationError
from vectorport.core.filters.ast import And, Condition, Filter
from vectorport.core.filters.oracle import matches
from vectorport.core.scoring import hybrid_scale
from vectorport.core.store import Index, Store
from vectorport.core.types import Match, Record
from vectorport.integrations._records import awrite, iter_records, open_index, write
from vectorport.integrations.llama_index_filters import Translated, to_vectorport

__all__ = ["VectorportVectorStore"]


class VectorportVectorStore(BasePydanticVectorStore):
    """A LlamaIndex vector store over one vectorport index and namespace."""

    stores_text: bool = True
    flat_metadata: bool = True
    namespace: str = ""

    _index: Index = PrivateAttr()
    _aindex: AsyncIndex = PrivateAttr()
    _sparse_encoder: Any = PrivateAttr(default=None)

    def __init__(self, index: Index, *, namespace: str = "", sparse_encoder: Any = None) -> None:
        super().__init__(namespace=namespace)  # type: ignore[call-arg]  # a pydantic field
        self._index = index
        self._aindex = AsyncIndex(index)
        self._sparse_encoder = sparse_encoder

    @classmethod
    def from_url(cls, url: str | Store, index_name: str, *, dimension: int | None = None,
                 metric: str = "cosine", sparse: bool = False, namespace: str = "",
                 sparse_encoder: Any = None) -> VectorportVectorStore:
        """Open ``index_name`` at ``url`` (created with ``dimension`` when missing)."""
        index = open_index(None, store=url, name=index_name, dimension=dimension, metric=metric,
                           sparse=sparse)
        return cls(index, namespace=namespace, sparse_encoder=sparse_encoder)

    @classmethod
    def class_name(cls) -> str:
        return "VectorportVectorStore"

    @property
    def client(self) -> Index:
        return self._index

    @property
    def _backend(self) -> str:
        return self._index.store.backend

    # -- conversion -----------------------------------------------------------------

    def _record(self, node: BaseNode) -> dict[str, Any]:
        embedding = node.get_embedding()  # raises when the node was never embedded
        stored = node_to_metadata_dict(node, remove_text=True, flat_metadata=False)
        metadata = {k: v for k, v in stored.items() if v is not None}
        record: dict[str, Any] = {
            "id": node.node_id, "vector": embedding, "metadata": metadata,
            "document": node.get_content(metadata_mode=MetadataMode.NONE),
        }
        if self._index.spec.sparse and self._sparse_encoder is not None:
            sparse = self._sparse_encoder.encode_document(record["document"])
            if sparse is not None:
                record["sparse"] = sparse
        return record

    @staticmethod
    def _node(item: Record | Match) -> BaseNode:
        metadata = {k: list(v) if isinstance(v, tuple) else v for k, v in (item.metadata or {}).items()}
        node = metadata_dict_to_node(metadata, text=item.document)
        return node

    # -- writes ---------------------------------------------------------------------

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        if not nodes:
            return []
        write(self._index, [self._record(n) for n in nodes], self.namespace)
        return [n.node_id for n in nodes]

    async def async_add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        if not nodes:
            return []
        await awrite(self._aindex, [self._record(n) for n in nodes], self.namespace)
        return [n.node_id for n in nodes]

    def _delete_matching(self, node: Filter) -> None:
        if self._index.store.capabilities.delete_by_filter:
            self._index.delete(filter=node, namespace=self.namespace)
            return
        ids = [r.id for r in iter_records(self._index, self.namespace, node)]
        if ids:
            self._index.delete(ids, namespace=self.namespace)

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Delete every node of the source document ``ref_doc_id``."""
        self._delete_matching(Condition("ref_doc_id", "$eq", ref_doc_id))

    async def adelete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        await asyncio.to_thread(self.delete, ref_doc_id)

    def delete_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None,
                     **delete_kwargs: Any) -> None:
        """Delete the nodes among ``node_ids`` that match ``filters`` (either may be
        omitted; with neither, nothing is deleted: use :meth:`clear`)."""
        translated = to_vectorport(filters)
        if translated.nothing or (node_ids is None and filters is None):
            return
        if node_ids is not None:
            ids = [r.id for r in self._by_ids(node_ids, translated)]
            if ids:
                self._index.delete(ids, namespace=self.namespace)
        elif translated.node is None:
            self.clear()
        else:
            self._delete_matching(translated.node)

    async def adelete_nodes(self, node_ids: list[str] | None = None,
                            filters: MetadataFilters | None = None, **delete_kwargs: Any) -> None:
        await asyncio.to_thread(self.delete_nodes, node_ids, filters)

    def clear(self) -> None:
        self._index.delete_namespace(self.namespace)

    async def aclear(self) -> None:
        await self._aindex.delete_namespace(self.namespace)

    # -- reads ----------------------------------------------------------------------

    def _by_ids(self, node_ids: list[str], translated: Translated) -> list[Record]:
        if not node_ids or translated.nothing:
            return []
        found = self._index.fetch(node_ids, self.namespace).values()
        # an id lookup with a filter: the filter oracle is the contract's own meaning
        return [r for r in found if matches(translated.node, r.metadata)]

    def get_nodes(self, node_ids: list[str] | None = None,
                  filters: MetadataFilters | None = None) -> list[BaseNode]:
        """Nodes by id and/or filter; with neither, every node of the namespace."""
        translated = to_vectorport(filters)
        if node_ids is not None:
            return [self._node(r) for r in self._by_ids(node_ids, translated)]
        if translated.nothing:
            return []
        return [self._node(r) for r in iter_records(self._index, self.namespace, translated.node)]

    async def aget_nodes(self, node_ids: list[str] | None = None,
                         filters: MetadataFilters | None = None) -> list[BaseNode]:
        return await asyncio.to_thread(self.get_nodes, node_ids, filters)

    def _request(self, query: VectorStoreQuery) -> dict[str, Any] | None:
        """The keyword arguments of ``Index.query`` for a LlamaIndex query, or ``None``
        when its filter matches nothing."""
        if query.node_ids:
            raise UnsupportedFeatureError(self._backend, "LlamaIndex queries restricted to node_ids",
                                          "use get_nodes(node_ids=...)")
        translated = to_vectorport(query.filters)
        if translated.nothing:
            return None
        node = translated.node
        if query.doc_ids:
            by_doc = Condition("ref_doc_id", "$in", tuple(query.doc_ids))
            node = by_doc if node is None else And((by_doc, node))
        mode = VectorStoreQueryMode(query.mode)
        caps = self._index.store.capabilities
        dense, sparse = query.query_embedding, None
        if mode in (VectorStoreQueryMode.SPARSE, VectorStoreQueryMode.HYBRID):
            if not caps.sparse or not self._index.spec.sparse:
                raise UnsupportedFeatureError(self._backend, f"LlamaIndex {mode.value} queries",
                                              "needs an index with sparse vectors")
            if mode == VectorStoreQueryMode.HYBRID and caps.hybrid == "none":
                raise UnsupportedFeatureError(self._backend, "LlamaIndex hybrid queries")
            if self._sparse_encoder is None or query.query_str is None:
                raise ValidationError(f"{mode.value} queries need a sparse_encoder and a query_str")
            sparse = self._sparse_encoder.encode_query(query.query_str)
            if sparse is None:
                return None  # no query term is known to the encoder: nothing can score
            if mode == VectorStoreQueryMode.SPARSE:
                dense = None
            elif query.alpha is not None and dense is not None:
                dense, sparse = hybrid_scale(dense, sparse, query.alpha)
        elif mode != VectorStoreQueryMode.DEFAULT:
            raise UnsupportedFeatureError(self._backend, f"LlamaIndex query mode {mode.value!r}")
        if dense is None and sparse is None:
            raise ValidationError("a default query needs query_embedding")
        top_k = query.hybrid_top_k if mode == VectorStoreQueryMode.HYBRID and query.hybrid_top_k \
            else query.similarity_top_k
        return {"vector": dense, "sparse": sparse, "top_k": top_k, "filter": node,
                "namespace": self.namespace}

    def _result(self, found: list[Match]) -> VectorStoreQueryResult:
        return VectorStoreQueryResult(nodes=[self._node(m) for m in found],
                                      similarities=[m.score for m in found],
                                      ids=[m.id for m in found])

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        request = self._request(query)
        if request is None:
            return self._result([])
        return self._result(self._index.query(request.pop("vector"), **request))

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        request = self._request(query)
        if request is None:
            return self._result([])
        return self._result(await self._aindex.query(request.pop("vector"), **request))

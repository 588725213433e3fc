"""The contract between the facade and a backend adapter.

An adapter is a class implementing :class:`Adapter`; adapter authors import it, and
everything else they need, from :mod:`vectorport.adapterkit`. The split of work:

- **The facade guarantees validated inputs and checked capabilities.** Names, records
  (unique ids, within ``max_batch_size`` and the metadata limit), vectors, the parsed
  filter, ``top_k``, ``min_score``, hints and consistency are valid, and whatever the
  adapter did not declare (a metric, sparse vectors, hybrid queries, a hint, delete or
  count by filter, patch, id listing) never reaches it. An adapter never re-validates
  these and never parses raw filter dicts. Data operations receive the index's
  :class:`IndexSpec`, so an adapter needs no lookups to learn the dimension or metric.
- **The adapter checks only what is its own**, before any I/O: its URL options and its
  ``backend_options`` sections (:class:`vectorport.adapterkit.OptionSpec`), and what its
  engine cannot do exactly (``UnsupportedFeatureError`` naming backend and feature).
- **Queries return candidates with exact CONTRACT §3 scores, complete under ties at the
  ``top_k`` cut**: every record scoring at least the ``top_k``-th best is among them.
  The facade alone orders them (score descending, then id), cuts at ``top_k`` and
  applies ``min_score``; an adapter may push ``min_score`` down to its engine only to
  transfer less.
- **Errors** are vectorport errors, SDK exceptions translated once
  (:class:`vectorport.adapterkit.ErrorTranslator`) with the native one as ``__cause__``.

Optional abilities are separate runtime-checkable protocols; the facade and callers test
them with ``isinstance``, never by catching ``NotImplementedError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Protocol, runtime_checkable

from vectorport.core.capabilities import Capabilities
from vectorport.core.config import ConnectionURL
from vectorport.core.filters.ast import Filter
from vectorport.core.types import (
    DenseMatrix,
    Explanation,
    IdPage,
    IndexInfo,
    IndexSpec,
    Match,
    QueryRequest,
    Record,
    RecordPage,
    RecordPatch,
)


@runtime_checkable
class Adapter(Protocol):
    """What every backend implements (synchronously)."""

    backend: ClassVar[str]
    """The backend's name, as in ``backend_options`` sections and error messages."""

    @classmethod
    def from_url(cls, url: ConnectionURL) -> Adapter:
        """Open a connection described by ``url``; raise ``ConfigError`` when it is bad."""
        ...

    @property
    def capabilities(self) -> Capabilities: ...

    def create_index(self, spec: IndexSpec) -> None:
        """Create the index; ``IndexExistsError`` if it exists."""
        ...

    def describe_index(self, name: str) -> IndexInfo:
        """The index's spec and counts; ``IndexNotFoundError`` if absent."""
        ...

    def list_indexes(self) -> list[str]: ...

    def delete_index(self, name: str) -> None:
        """Drop the index and all its data; ``IndexNotFoundError`` if absent."""
        ...

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        """Insert or wholly replace records. ``records`` has unique ids and fits the
        declared batch limit."""
        ...

    def query(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        """Candidate matches with exact CONTRACT §3 scores, in any order, holding every
        match that scores at least the ``top_k``-th best (complete under ties at the
        cut; more than ``top_k`` is fine). The facade orders, cuts and applies
        ``min_score``."""
        ...

    def fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        """The stored records among ``ids``, in any order; missing ids are omitted."""
        ...

    def delete(
        self,
        index: IndexSpec,
        namespace: str,
        ids: Sequence[str] | None,
        filter: Filter | None,
    ) -> None:
        """Delete by ids or by filter: exactly one is given, and a filter is never
        ``None`` when ``ids`` is (the facade refuses an empty filter). Ids may repeat;
        missing ids are no error."""
        ...

    def count(self, index: IndexSpec, namespace: str, filter: Filter | None) -> int: ...

    def list_namespaces(self, index: IndexSpec) -> list[str]:
        """Namespaces holding at least one record."""
        ...

    def delete_namespace(self, index: IndexSpec, namespace: str) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class PatchableAdapter(Protocol):
    """Changes parts of one record in place, without re-sending the rest."""

    def patch(self, index: IndexSpec, namespace: str, patch: RecordPatch) -> bool:
        """Apply the patch; ``False`` when the record does not exist."""
        ...


@runtime_checkable
class IdListingAdapter(Protocol):
    """Lists record ids in ascending order, a page at a time."""

    def list_ids(
        self,
        index: IndexSpec,
        namespace: str,
        *,
        prefix: str | None,
        filter: Filter | None,
        limit: int,
        cursor: str | None,
    ) -> IdPage: ...


@runtime_checkable
class BulkLoadingAdapter(Protocol):
    """Loads many records faster than batch-by-batch upserts (:meth:`Index.upsert_bulk`).

    The same meaning as :meth:`Adapter.upsert` (insert or wholly replace, validated
    records with unique ids) but with no batch limit: the adapter splits, parallelises
    over up to ``workers`` connections and may defer index maintenance to the end. Not
    atomic: on failure some records may be written, and loading again is always safe.
    An adapter without it is loaded through its ordinary upsert.
    """

    def upsert_bulk(
        self, index: IndexSpec, namespace: str, records: Sequence[Record], *, workers: int
    ) -> None: ...


@runtime_checkable
class BatchQueryAdapter(Protocol):
    """Answers many dense queries at once (one matrix product instead of a loop)."""

    def query_many(
        self, index: IndexSpec, request: QueryRequest, vectors: DenseMatrix
    ) -> list[list[Match]]:
        """One list of candidates per row of ``vectors``, each as :meth:`Adapter.query`
        returns them; ``request.vector`` is unset and every other field applies to each
        row."""
        ...


@runtime_checkable
class NativeAsyncAdapter(Protocol):
    """Native async versions of the data operations; the rest run in a worker thread."""

    async def aupsert(
        self, index: IndexSpec, namespace: str, records: Sequence[Record]
    ) -> None: ...

    async def aquery(self, index: IndexSpec, request: QueryRequest) -> list[Match]: ...

    async def afetch(
        self, index: IndexSpec, namespace: str, ids: Sequence[str]
    ) -> list[Record]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class ScanningAdapter(Protocol):
    """Enumerates every record of a namespace, a page at a time (CONTRACT §8).

    ``cursor`` is what the previous page returned as ``next_cursor`` (the facade wraps it
    into an opaque token and checks it belongs to this scan), ``None`` for the first page.
    Every record is returned exactly once over a whole scan of an unchanging namespace,
    in any order, with its vector, sparse vector, metadata and document. An adapter
    without it is scanned by the facade through :class:`IdListingAdapter` and ``fetch``.
    """

    def scan(
        self,
        index: IndexSpec,
        namespace: str,
        *,
        filter: Filter | None,
        page_size: int,
        cursor: str | None,
    ) -> RecordPage: ...


@runtime_checkable
class OptimizingAdapter(Protocol):
    """Brings an index to its best state for searching after a load, when the engine
    does that only when asked (``store.adapter.optimize(name)``): milvus-lite seals the
    rows written since the last seal, which its searches otherwise read one by one;
    LanceDB folds the rows written since its ANN index was trained into it; Qdrant Edge
    runs its optimizers (the HNSW graph of the points written since they last ran).
    ``copy_index`` and ``import_index`` call it once the records are in, before
    verifying. Answers are the same before and after (up to an ANN search's recall);
    where the engine does this by itself (a server) it may do nothing.
    """

    def optimize(self, name: str) -> None: ...


@runtime_checkable
class UpkeepDeferringAdapter(OptimizingAdapter, Protocol):
    """Puts off the upkeep of an index's search structures while a load fills it, so
    that they are built once at the end rather than record by record: pgvector drops
    its ANN and metadata indexes, which every row of a COPY would otherwise be inserted
    into (a 100,000 × 384 copy into a fresh HNSW index took 95 s row by row, against
    3.5 s for the rows and 22 s for one build). ``copy_index`` and ``import_index``
    call ``defer_upkeep(name)`` on an index they have just created, before its first
    record, and :meth:`OptimizingAdapter.optimize` once the records are in, which
    builds what was put off. The protocol includes ``optimize``, so an adapter without
    it is never asked to put anything off. Meanwhile every answer stays exact (searches
    scan); a load that dies half-way leaves an index that its resumed job, or the next
    ``optimize``, completes.
    """

    def defer_upkeep(self, name: str) -> None: ...


@runtime_checkable
class ExplainingAdapter(Protocol):
    """Says what a query would send, without sending it (:meth:`Index.explain`).

    The one hook an adapter author implements for ``explain``: build the request with
    the same pure function :meth:`Adapter.query` uses, and describe it (SQL with
    placeholders and parameter kinds, the compiled filter, the settings). No query I/O;
    reading schema the compiler needs is allowed. Without it, ``explain`` raises
    ``UnsupportedFeatureError``.
    """

    def explain_query(self, index: IndexSpec, request: QueryRequest) -> Explanation: ...

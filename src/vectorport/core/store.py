"""The facade: :func:`connect`, :class:`Store` and :class:`Index`.

This is the only layer users call. It validates every argument, checks it against the
adapter's declared capabilities, batches writes and retries transient failures of
idempotent operations, all before or around the adapter call, so that a bad call never
reaches the database and a good one means the same thing on every backend.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import cache
from typing import Any, TypeVar

from vectorport.core import scanning, validation
from vectorport.core.adapter import (
    Adapter,
    BatchQueryAdapter,
    IdListingAdapter,
    PatchableAdapter,
)
from vectorport.core.capabilities import Capabilities
from vectorport.core.config import ConnectionURL, default_url, parse_url
from vectorport.core.errors import (
    BackendError,
    IndexExistsError,
    IndexNotFoundError,
    UnsupportedFeatureError,
    ValidationError,
)
from vectorport.core.filters.ast import Filter, operators_used
from vectorport.core.filters.parse import parse_filter
from vectorport.core.hooks import OperationEvent
from vectorport.core.registry import AdapterEntry, Registry, default_registry
from vectorport.core.retry import RetryPolicy
from vectorport.core.scoring import sort_matches
from vectorport.core.types import (
    Consistency,
    IdPage,
    Include,
    IndexInfo,
    IndexSpec,
    IndexType,
    Match,
    MetadataValue,
    QueryRequest,
    Record,
    RecordPage,
    RecordPatch,
)

T = TypeVar("T")
_INDEX_TYPES = ("auto", "flat", "hnsw", "ivf")


def connect(
    url: str | None = None,
    *,
    registry: Registry | None = None,
    retry: RetryPolicy | None = None,
) -> Store:
    """Open a store. With no URL: ``$VECTORPORT_URL``, else the embedded default
    (``local://``, durable under the user's data folder)."""
    registry = registry or default_registry()
    parsed = parse_url(url if url is not None else default_url())
    entry = registry.by_scheme(parsed.scheme)
    adapter = entry.load().from_url(parsed)
    return Store(adapter, registry=registry, entry=entry, retry=retry, url=parsed)


class Store:
    """A connection to one backend. Create, open, list and delete indexes here."""

    def __init__(
        self,
        adapter: Adapter,
        *,
        registry: Registry | None = None,
        entry: AdapterEntry | None = None,
        retry: RetryPolicy | None = None,
        url: ConnectionURL | None = None,
    ) -> None:
        self.adapter = adapter
        self.url = url
        """The URL this store was opened from (its ``str`` has credentials masked)."""
        self.registry = registry or default_registry()
        self.entry = entry
        self.retry = retry or RetryPolicy()

    @property
    def backend(self) -> str:
        return self.adapter.backend

    @property
    def capabilities(self) -> Capabilities:
        return self.adapter.capabilities

    def __repr__(self) -> str:
        return f"Store(backend={self.backend!r})"

    # -- plumbing shared with Index ------------------------------------------------

    def _call(
        self,
        operation: str,
        fn: Callable[[], T],
        *,
        index: str | None = None,
        namespace: str | None = None,
        size: int | None = None,
        idempotent: bool = True,
    ) -> T:
        run: Callable[[], T] = (lambda: self.retry.call(operation, fn)) if idempotent else fn
        if not self.registry.has_operation_hooks():
            return run()
        event = OperationEvent(self.backend, operation, index, namespace, size)
        self.registry.before(event=event)
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            return run()
        except BaseException as exc:
            error = exc
            raise
        finally:
            self.registry.after(event=event, error=error, seconds=time.perf_counter() - started)

    def unsupported(self, feature: str, detail: str = "") -> UnsupportedFeatureError:
        return UnsupportedFeatureError(self.backend, feature, detail)

    # -- index lifecycle -----------------------------------------------------------

    def build_spec(
        self,
        name: str,
        dimension: int,
        metric: str = "cosine",
        *,
        sparse: bool = False,
        index_type: str = "auto",
        index_params: Mapping[str, int] | None = None,
        backend_options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> IndexSpec:
        """Validate creation arguments against the contract and the capabilities."""
        caps = self.capabilities
        spec = IndexSpec(
            name=validation.index_name(name),
            dimension=validation.dimension(dimension),
            metric=validation.metric(metric),
            sparse=bool(sparse),
            index_type=_index_type(index_type),
            index_params=dict(index_params or {}),
            backend_options=dict(backend_options or {}),
        )
        if spec.metric not in caps.metrics:
            raise self.unsupported(f"metric {spec.metric!r}")
        if spec.sparse and not caps.sparse:
            raise self.unsupported("sparse vectors")
        if spec.index_type != "auto" and spec.index_type not in caps.index_types:
            raise self.unsupported(f"index type {spec.index_type!r}")
        if spec.dimension > caps.max_dimension:
            raise ValidationError(
                f"dimension {spec.dimension} exceeds this backend's limit of {caps.max_dimension}"
            )
        for key, value in spec.index_params.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValidationError(f"index parameter {key!r} must be a positive int")
        return spec

    def create_index(
        self,
        name: str,
        dimension: int,
        metric: str = "cosine",
        *,
        sparse: bool = False,
        index_type: str = "auto",
        index_params: Mapping[str, int] | None = None,
        backend_options: Mapping[str, Mapping[str, Any]] | None = None,
        exist_ok: bool = False,
    ) -> Index:
        """Create an index and return it. With ``exist_ok``, an existing index of the
        same dimension, metric and sparse setting is returned instead."""
        spec = self.build_spec(
            name, dimension, metric, sparse=sparse, index_type=index_type,
            index_params=index_params, backend_options=backend_options,
        )
        try:
            self._call("create_index", lambda: self.adapter.create_index(spec),
                       index=name, idempotent=False)
        except IndexExistsError:
            if not exist_ok:
                raise
            existing = self.index(name)
            mine, theirs = spec, existing.spec
            if (mine.dimension, mine.metric, mine.sparse) != (
                theirs.dimension, theirs.metric, theirs.sparse
            ):
                raise IndexExistsError(name) from None
            return existing
        return _make_index(self, spec)

    def index(self, name: str) -> Index:
        """Open an existing index (one describe call; the handle keeps its spec)."""
        return _make_index(self, self.describe_index(name).spec)

    def describe_index(self, name: str) -> IndexInfo:
        validation.index_name(name)
        return self._call("describe_index", lambda: self.adapter.describe_index(name), index=name)

    def list_indexes(self) -> list[str]:
        return sorted(self._call("list_indexes", self.adapter.list_indexes))

    def has_index(self, name: str) -> bool:
        return validation.index_name(name) in self.list_indexes()

    def delete_index(self, name: str, *, missing_ok: bool = False) -> None:
        validation.index_name(name)
        try:
            self._call("delete_index", lambda: self.adapter.delete_index(name),
                       index=name, idempotent=False)
        except IndexNotFoundError:
            if not missing_ok:
                raise

    def close(self) -> None:
        self.adapter.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _index_type(value: str) -> IndexType:
    if value not in _INDEX_TYPES:
        raise ValidationError(f"unknown index type {value!r}; use one of {', '.join(_INDEX_TYPES)}")
    return value  # type: ignore[return-value]


class Index:
    """One index of a store. Every data operation takes ``namespace`` (default ``""``)."""

    def __init__(self, store: Store, spec: IndexSpec) -> None:
        self.store = store
        self.spec = spec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def dimension(self) -> int:
        return self.spec.dimension

    @property
    def metric(self) -> str:
        return self.spec.metric

    def __repr__(self) -> str:
        return (f"Index(name={self.name!r}, backend={self.store.backend!r}, "
                f"dimension={self.dimension}, metric={self.metric!r})")

    @property
    def _adapter(self) -> Adapter:
        return self.store.adapter

    def _call(self, operation: str, fn: Callable[[], T], namespace: str | None = None,
              size: int | None = None, idempotent: bool = True) -> T:
        return self.store._call(operation, fn, index=self.name, namespace=namespace,
                                size=size, idempotent=idempotent)

    # -- validation helpers shared with the async facade -------------------------------

    def prepare_records(self, records: Iterable[Any]) -> list[Record]:
        """Validate every record (all before any write) and keep the last of repeated ids."""
        caps = self.store.capabilities
        if isinstance(records, (Record, Mapping)):
            raise ValidationError("upsert takes a sequence of records, not a single record")
        by_id: dict[str, Record] = {}
        for position, raw in enumerate(records):
            rec = validation.record(raw, self.dimension, self.spec.sparse, position)
            if self.spec.metric == "cosine" and not rec.vector.any():
                raise ValidationError(
                    f"record {position} (id {rec.id!r}): a zero vector has no cosine similarity"
                )
            if rec.document is not None and not caps.documents:
                raise self.store.unsupported("documents")
            # validation.record already enforced the contract's limit; measure again only
            # for a backend whose own limit is tighter.
            if (caps.max_metadata_bytes < validation.MAX_METADATA_BYTES and rec.metadata
                    and validation.metadata_size(rec.metadata) > caps.max_metadata_bytes):
                raise ValidationError(
                    f"record {position} (id {rec.id!r}): metadata exceeds this backend's "
                    f"limit of {caps.max_metadata_bytes} bytes"
                )
            by_id.pop(rec.id, None)  # keep the position of the last occurrence
            by_id[rec.id] = rec
        return list(by_id.values())

    def batches(self, records: Sequence[Record], batch_size: int | None) -> list[Sequence[Record]]:
        limit = self.store.capabilities.max_batch_size
        size = limit if batch_size is None else min(batch_size, limit)
        if size < 1:
            raise ValidationError("batch_size must be positive")
        return [records[i:i + size] for i in range(0, len(records), size)]

    def check_filter(self, raw: Mapping[str, Any] | Filter | None) -> Filter | None:
        node = parse_filter(raw)
        unsupported = operators_used(node) - self.store.capabilities.filter_operators
        if unsupported:
            raise self.store.unsupported(f"filter operator {', '.join(sorted(unsupported))}")
        return node

    def prepare_query(
        self,
        vector: Any = None,
        *,
        sparse: Any = None,
        top_k: int = 10,
        filter: Mapping[str, Any] | Filter | None = None,
        namespace: str = "",
        include_metadata: bool = True,
        include_vectors: bool = False,
        include_documents: bool = True,
        min_score: float | None = None,
        ef: int | None = None,
        probes: int | None = None,
        consistency: Consistency = "strong",
        backend_options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> QueryRequest:
        caps = self.store.capabilities
        if vector is None and sparse is None:
            raise ValidationError("a query needs a dense vector, a sparse vector, or both")
        dense = None
        if vector is not None:
            dense = validation.dense_vector(vector, self.dimension, "query vector")
            if self.spec.metric == "cosine" and not dense.any():
                raise ValidationError("a zero query vector has no cosine similarity")
        sparse_q = None
        if sparse is not None:
            if not caps.sparse:
                raise self.store.unsupported("sparse vectors")
            if not self.spec.sparse:
                raise ValidationError(f"index {self.name!r} was created without sparse vectors")
            sparse_q = validation.sparse_vector(sparse, "sparse query")
        if dense is not None and sparse_q is not None and caps.hybrid == "none":
            raise self.store.unsupported("hybrid (dense + sparse) queries")
        if min_score is not None and (
            isinstance(min_score, bool) or not isinstance(min_score, (int, float))
            or min_score != min_score
        ):
            raise ValidationError(f"min_score must be a number, got {min_score!r}")
        for hint, value in (("ef", ef), ("probes", probes)):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValidationError(f"{hint} must be a positive int, got {value!r}")
            if hint not in caps.hints:
                raise self.store.unsupported(f"the {hint!r} search hint")
        if consistency not in ("strong", "eventual"):
            raise ValidationError(f"consistency must be 'strong' or 'eventual', got {consistency!r}")
        if consistency not in caps.consistency:
            raise self.store.unsupported(f"{consistency} consistency")
        options = dict(backend_options or {})
        for section, section_options in options.items():
            if not isinstance(section, str) or not isinstance(section_options, Mapping):
                raise ValidationError("backend_options maps a backend name to a dict of options")
        return QueryRequest(
            namespace=validation.namespace(namespace),
            top_k=validation.top_k(top_k, caps.max_top_k),
            vector=dense,
            sparse=sparse_q,
            filter=self.check_filter(filter),
            include=Include(metadata=include_metadata, vectors=include_vectors,
                            documents=include_documents),
            min_score=float(min_score) if min_score is not None else None,
            ef=ef,
            probes=probes,
            consistency=consistency,
            backend_options=options,
        )

    def query_many(
        self,
        vectors: Any,
        *,
        top_k: int = 10,
        filter: Mapping[str, Any] | Filter | None = None,
        namespace: str = "",
        include_metadata: bool = True,
        include_vectors: bool = False,
        include_documents: bool = True,
        min_score: float | None = None,
        ef: int | None = None,
        probes: int | None = None,
        consistency: Consistency = "strong",
        backend_options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> list[list[Match]]:
        """Many dense queries with the same options: one result list per row of
        ``vectors`` (a 2-d array or a list of vectors). Adapters that can answer them in
        one pass (:class:`BatchQueryAdapter`) do; others answer one by one."""
        matrix = validation.dense_matrix(vectors, self.dimension)
        if len(matrix) == 0:
            return []
        if self.spec.metric == "cosine" and not matrix.any(axis=1).all():
            raise ValidationError("a zero query vector has no cosine similarity")
        request = self.prepare_query(
            matrix[0], top_k=top_k, filter=filter, namespace=namespace,
            include_metadata=include_metadata, include_vectors=include_vectors,
            include_documents=include_documents, min_score=min_score, ef=ef, probes=probes,
            consistency=consistency, backend_options=backend_options,
        )
        adapter = self._adapter
        if isinstance(adapter, BatchQueryAdapter):
            template = replace(request, vector=None)
            results = self._call("query_many", lambda: adapter.query_many(
                self.spec, template, matrix), request.namespace, len(matrix))
        else:
            results = [
                self._call("query", lambda row=row: adapter.query(  # type: ignore[misc]
                    self.spec, replace(request, vector=row)), request.namespace, top_k)
                for row in matrix
            ]
        return [self.finish_query(request, matches) for matches in results]

    @staticmethod
    def finish_query(request: QueryRequest, matches: list[Match]) -> list[Match]:
        """Enforce the contract's order, bound and inclusive min_score on any adapter."""
        if request.min_score is not None:
            matches = [m for m in matches if m.score >= request.min_score]
        return sort_matches(matches)[: request.top_k]

    def prepare_delete(
        self, ids: Iterable[str] | None, filter: Mapping[str, Any] | Filter | None
    ) -> tuple[tuple[str, ...] | None, Filter | None]:
        if (ids is None) == (filter is None):
            raise ValidationError("delete takes ids or a filter: exactly one of them")
        if ids is not None:
            return validation.record_ids(ids), None
        node = self.check_filter(filter)
        if node is None:
            raise ValidationError(
                "an empty filter would delete everything; use delete_namespace() for that"
            )
        if not self.store.capabilities.delete_by_filter:
            raise self.store.unsupported("delete by filter")
        return None, node

    # -- data operations --------------------------------------------------------------

    def upsert(
        self, records: Iterable[Any], namespace: str = "", *, batch_size: int | None = None
    ) -> int:
        """Insert or replace records; returns how many were written.

        Records are ``Record`` values, dicts (``id``, ``vector``, ``metadata``,
        ``sparse``, ``document``) or ``(id, vector[, metadata])`` tuples. All are
        validated before the first write; repeated ids keep the last. On failure the
        :class:`BackendError` lists ``written_ids``; upserting again is always safe.
        """
        ns = validation.namespace(namespace)
        prepared = self.prepare_records(records)
        batches = self.batches(prepared, batch_size)
        written: list[str] = []

        def send(batch: Sequence[Record]) -> None:
            self._call("upsert", lambda: self._adapter.upsert(self.spec, ns, batch), ns, len(batch))

        workers = self.store.capabilities.write_concurrency
        try:
            if workers > 1 and len(batches) > 1:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    futures = [(b, pool.submit(send, b)) for b in batches]
                    failure: BaseException | None = None
                    for batch, future in futures:
                        try:
                            future.result()
                            written.extend(r.id for r in batch)
                        except BaseException as exc:  # collect the first; others still land
                            failure = failure or exc
                    if failure is not None:
                        raise failure
            else:
                for batch in batches:
                    send(batch)
                    written.extend(r.id for r in batch)
        except BackendError as exc:
            exc.written_ids = tuple(written)
            raise
        return len(prepared)

    def query(
        self,
        vector: Any = None,
        *,
        sparse: Any = None,
        top_k: int = 10,
        filter: Mapping[str, Any] | Filter | None = None,
        namespace: str = "",
        include_metadata: bool = True,
        include_vectors: bool = False,
        include_documents: bool = True,
        min_score: float | None = None,
        ef: int | None = None,
        probes: int | None = None,
        consistency: Consistency = "strong",
        backend_options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> list[Match]:
        """The ``top_k`` nearest records to a dense vector, a sparse vector, or both.

        ``filter`` is a Mongo-style dict (CONTRACT §2). ``min_score`` keeps scores
        ``>=`` it. ``ef`` and ``probes`` are ANN hints; ``consistency`` is ``"strong"``
        (read your writes) or ``"eventual"``; ``backend_options`` holds per-backend
        sections such as ``{"pgvector": {...}}``, each adapter reading only its own.
        """
        request = self.prepare_query(
            vector, sparse=sparse, top_k=top_k, filter=filter, namespace=namespace,
            include_metadata=include_metadata, include_vectors=include_vectors,
            include_documents=include_documents, min_score=min_score, ef=ef, probes=probes,
            consistency=consistency, backend_options=backend_options,
        )
        matches = self._call("query", lambda: self._adapter.query(self.spec, request),
                             request.namespace, request.top_k)
        return self.finish_query(request, matches)

    def fetch(self, ids: Iterable[str], namespace: str = "") -> dict[str, Record]:
        """The stored records among ``ids``, keyed and ordered by the ids asked for."""
        ns = validation.namespace(namespace)
        wanted = validation.record_ids(ids)
        if not wanted:
            return {}
        found = self._call("fetch", lambda: self._adapter.fetch(self.spec, ns, wanted), ns, len(wanted))
        by_id = {r.id: r for r in found}
        return {i: by_id[i] for i in dict.fromkeys(wanted) if i in by_id}

    def delete(
        self,
        ids: Iterable[str] | None = None,
        *,
        filter: Mapping[str, Any] | Filter | None = None,
        namespace: str = "",
    ) -> None:
        """Delete by ids or by filter (exactly one). Missing ids are not an error."""
        ns = validation.namespace(namespace)
        id_tuple, node = self.prepare_delete(ids, filter)
        if id_tuple == ():
            return
        self._call("delete", lambda: self._adapter.delete(self.spec, ns, id_tuple, node), ns,
                   len(id_tuple) if id_tuple else None)

    def count(self, namespace: str = "", *, filter: Mapping[str, Any] | Filter | None = None) -> int:
        ns = validation.namespace(namespace)
        node = self.check_filter(filter)
        if node is not None and not self.store.capabilities.count_by_filter:
            raise self.store.unsupported("count with a filter")
        return self._call("count", lambda: self._adapter.count(self.spec, ns, node), ns)

    def list_namespaces(self) -> list[str]:
        return sorted(self._call("list_namespaces", lambda: self._adapter.list_namespaces(self.spec)))

    def delete_namespace(self, namespace: str) -> None:
        ns = validation.namespace(namespace)
        self._call("delete_namespace", lambda: self._adapter.delete_namespace(self.spec, ns), ns)

    def describe(self) -> IndexInfo:
        return self.store.describe_index(self.name)

    def scan(
        self,
        namespace: str = "",
        *,
        filter: Mapping[str, Any] | Filter | None = None,
        page_size: int = 500,
        cursor: str | None = None,
    ) -> Iterator[RecordPage]:
        """Every record of ``namespace`` (matching ``filter``) exactly once, in any order,
        with vector, sparse vector, metadata and document, a page at a time.

        Each page's ``next_cursor`` is an opaque token: pass it as ``cursor`` (to this
        index, namespace and filter) to resume after that page, in this process or
        another. What a scan sees of writes made during it depends on the backend (see
        its page in the docs); over an unchanging namespace it is exact.
        """
        ns = validation.namespace(namespace)
        node = self.check_filter(filter)
        if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
            raise ValidationError(f"page_size must be a positive int, got {page_size!r}")
        page_size = min(page_size, self.store.capabilities.max_batch_size)
        key = scanning.scan_key(self.store.backend, self.name, ns, node)
        inner = scanning.decode_cursor(key, cursor) if cursor is not None else None
        while True:
            page = self._call("scan", lambda c=inner: scanning.scan_page(  # type: ignore[misc]
                self._adapter, self.spec, ns, filter=node, page_size=page_size, cursor=c),
                ns, page_size)
            inner = page.next_cursor
            token = scanning.encode_cursor(key, inner) if inner is not None else None
            if page.records:  # an empty page (filtered away, or the end) is not shown
                yield RecordPage(page.records, token)
            if token is None:
                return

    def iter_records(
        self,
        namespace: str = "",
        *,
        filter: Mapping[str, Any] | Filter | None = None,
        page_size: int = 500,
    ) -> Iterator[Record]:
        """:meth:`scan`, one record at a time."""
        for page in self.scan(namespace, filter=filter, page_size=page_size):
            yield from page.records


class PatchableIndex(Index):
    """An index whose backend can change parts of a record in place."""

    def prepare_patch(
        self,
        id: str,
        *,
        vector: Any = None,
        sparse: Any = None,
        metadata: Mapping[str, MetadataValue | None] | None = None,
        document: str | None = None,
    ) -> RecordPatch:
        set_meta: dict[str, MetadataValue] = {}
        unset: set[str] = set()
        for key, value in (metadata or {}).items():
            validation.metadata_key(key)
            if value is None:
                unset.add(key)
            else:
                set_meta[key] = validation.metadata_value(key, value)
        if sparse is not None and not self.spec.sparse:
            raise ValidationError(f"index {self.name!r} was created without sparse vectors")
        if document is not None and not self.store.capabilities.documents:
            raise self.store.unsupported("documents")
        return RecordPatch(
            id=validation.record_id(id),
            vector=validation.dense_vector(vector, self.dimension) if vector is not None else None,
            sparse=validation.sparse_vector(sparse) if sparse is not None else None,
            set_metadata=set_meta,
            unset_metadata=frozenset(unset),
            document=validation.document(document),
        )

    def patch(
        self,
        id: str,
        *,
        vector: Any = None,
        sparse: Any = None,
        metadata: Mapping[str, MetadataValue | None] | None = None,
        document: str | None = None,
        namespace: str = "",
    ) -> bool:
        """Replace the vector, merge metadata keys (``None`` deletes a key), set the
        document. Returns ``False`` when no record has that id."""
        ns = validation.namespace(namespace)
        patch = self.prepare_patch(id, vector=vector, sparse=sparse, metadata=metadata,
                                   document=document)
        adapter = self._adapter
        assert isinstance(adapter, PatchableAdapter)
        return self._call("patch", lambda: adapter.patch(self.spec, ns, patch), ns, 1)


class ListableIndex(Index):
    """An index whose backend can list ids in order, a page at a time."""

    def list_ids(
        self,
        namespace: str = "",
        *,
        prefix: str | None = None,
        filter: Mapping[str, Any] | Filter | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> IdPage:
        ns = validation.namespace(namespace)
        node = self.check_filter(filter)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValidationError(f"limit must be a positive int, got {limit!r}")
        if prefix is not None and not isinstance(prefix, str):
            raise ValidationError("prefix must be a str")
        adapter = self._adapter
        assert isinstance(adapter, IdListingAdapter)
        return self._call("list_ids", lambda: adapter.list_ids(
            self.spec, ns, prefix=prefix, filter=node, limit=limit, cursor=cursor), ns, limit)

    def iter_ids(
        self,
        namespace: str = "",
        *,
        prefix: str | None = None,
        filter: Mapping[str, Any] | Filter | None = None,
        page_size: int = 500,
    ) -> Iterator[str]:
        cursor: str | None = None
        while True:
            page = self.list_ids(namespace, prefix=prefix, filter=filter, limit=page_size,
                                 cursor=cursor)
            yield from page.ids
            if page.next_cursor is None:
                return
            cursor = page.next_cursor


@cache
def _index_class(patch: bool, listing: bool) -> type[Index]:
    """The handle class for an adapter's optional abilities, so ``isinstance`` tells."""
    if patch and listing:
        return type("PatchableListableIndex", (PatchableIndex, ListableIndex), {})
    if patch:
        return PatchableIndex
    if listing:
        return ListableIndex
    return Index


def _make_index(store: Store, spec: IndexSpec) -> Index:
    adapter, caps = store.adapter, store.capabilities
    cls = _index_class(
        caps.patch and isinstance(adapter, PatchableAdapter),
        caps.list_ids and isinstance(adapter, IdListingAdapter),
    )
    return cls(store, spec)

"""The facade: :func:`connect`, :class:`Store` and :class:`Index`.

This is the only layer users call. Every operation takes one path: a pure request
builder of :mod:`vectorport.core.requests` validates the arguments and checks them
against the adapter's declared capabilities (no I/O); then the one operation wrapper of
:mod:`vectorport.core.operations` calls the adapter between the operation hooks, with
retries for idempotent operations; then the facade alone orders, cuts and applies
``min_score`` to query results. So a bad call never reaches the database, and a good
one means the same thing on every backend. The async facade
(:mod:`vectorport.core.async_store`) shares both halves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import Any, TypeVar, Unpack

from vectorport.core import requests, scanning, validation
from vectorport.core.adapter import (
    Adapter,
    BatchQueryAdapter,
    BulkLoadingAdapter,
    ExplainingAdapter,
    IdListingAdapter,
    PatchableAdapter,
)
from vectorport.core.capabilities import Capabilities
from vectorport.core.config import ConnectionURL, default_url, parse_url
from vectorport.core.errors import (
    IndexExistsError,
    IndexNotFoundError,
    UnsupportedFeatureError,
    ValidationError,
    VectorportError,
    drop_hidden_context,
)
from vectorport.core.filters.ast import Filter
from vectorport.core.limits import index_capabilities
from vectorport.core.operations import Runner, settle_writes
from vectorport.core.plugin import AdapterEntry, Registry, default_registry
from vectorport.core.requests import QueryKwargs, RawFilter, Target
from vectorport.core.retry import DEFAULT_TIMEOUT, RetryPolicy
from vectorport.core.types import (
    Explanation,
    IdPage,
    IndexInfo,
    IndexSpec,
    Match,
    MetadataValue,
    QueryRequest,
    Record,
    RecordPage,
)

T = TypeVar("T")


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
    try:
        adapter = entry.load().from_url(parsed)
    except VectorportError as exc:  # a failed connection's chain must hold no secret
        raise drop_hidden_context(exc)  # noqa: B904 - the same exception, re-raised
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
        self.timeout: float | None = url.timeout() if url is not None else DEFAULT_TIMEOUT
        """Seconds each call may take, all retries included (``?timeout=``, CONTRACT §6)."""
        self._runner: Runner | None = None

    @property
    def backend(self) -> str:
        return self.adapter.backend

    @property
    def capabilities(self) -> Capabilities:
        return self.adapter.capabilities

    @property
    def runner(self) -> Runner:
        """The operation wrapper (hooks, then retry) with this store's plugins and policy.
        Kept while the registry, the policy and the timeout stay those it was built from
        (each may be set on the store at any time), not rebuilt for every operation."""
        kept = self._runner
        if (kept is None or kept.registry is not self.registry or kept.retry is not self.retry
                or kept.timeout != self.timeout):
            kept = self._runner = Runner(self.registry, self.retry, self.backend, self.timeout)
        return kept

    def __repr__(self) -> str:
        return f"Store(backend={self.backend!r})"

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
        return self.runner.run(operation, fn, index=index, namespace=namespace, size=size,
                               idempotent=idempotent)

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
        return requests.build_spec(
            self.backend, self.capabilities, name, dimension, metric, sparse=sparse,
            index_type=index_type, index_params=index_params, backend_options=backend_options)

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



class Index:
    """One index of a store. Every data operation takes ``namespace`` (default ``""``)."""

    def __init__(self, store: Store, spec: IndexSpec) -> None:
        self.store = store
        self.spec = spec
        self._target: tuple[Adapter, Capabilities, IndexSpec, Target] | None = None

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

    @property
    def target(self) -> Target:
        """What the request builders check against (backend, capabilities with this
        index's own limits, spec)."""
        store = self.store
        adapter, caps, spec = store.adapter, store.capabilities, self.spec
        kept = self._target  # made once per adapter, capabilities and spec, not per call
        if kept is not None and kept[0] is adapter and kept[1] is caps and kept[2] is spec:
            return kept[3]
        target = Target(adapter.backend, index_capabilities(adapter, caps, spec), spec)
        self._target = (adapter, caps, spec, target)
        return target

    def _call(self, operation: str, fn: Callable[[], T], namespace: str | None = None,
              size: int | None = None, idempotent: bool = True,
              top_k: int | None = None) -> T:
        return self.store.runner.run(operation, fn, index=self.name, namespace=namespace,
                                     size=size, idempotent=idempotent, top_k=top_k)

    def prepare_query(self, vector: Any = None, *, sparse: Any = None,
                      **options: Unpack[QueryKwargs]) -> QueryRequest:
        """The validated request :meth:`query` would send (no I/O)."""
        return requests.build_query(self.target, vector, sparse=sparse, **options)

    finish_query = staticmethod(requests.finish_query)

    def explain(self, vector: Any = None, *, sparse: Any = None,
                **options: Unpack[QueryKwargs]) -> Explanation:
        """What :meth:`query` with these arguments would send to the backend, without
        sending it: the same validation, then the adapter's own request builder (SQL
        with placeholders and parameter kinds, the compiled filter, ``ef``/``probes``,
        over-fetch and consistency settings). ``UnsupportedFeatureError`` when the
        adapter has no explain hook."""
        request = requests.build_query(self.target, vector, sparse=sparse, **options)
        adapter = self._adapter
        if not isinstance(adapter, ExplainingAdapter):
            raise self.store.unsupported(
                "explain", f"explain is not available for backend {self.store.backend!r}")
        return adapter.explain_query(self.spec, request)

    # -- data operations --------------------------------------------------------------

    def upsert(
        self, records: Iterable[Any], namespace: str = "", *, batch_size: int | None = None
    ) -> int:
        """Insert or replace records; returns how many were written.

        Records are ``Record`` values, dicts (``id``, ``vector``, ``metadata``,
        ``sparse``, ``document``) or ``(id, vector[, metadata])`` tuples. All are
        validated before the first write; repeated ids keep the last. Batches follow the
        backend's ``max_batch_size``, up to ``write_concurrency`` of them at once. On
        failure the :class:`BackendError` lists ``written_ids``; upserting again is
        always safe.
        """
        ns = validation.namespace(namespace)
        prepared = requests.build_records(self.target, records)
        self._write_batches(prepared, ns, batch_size, None)
        return len(prepared)

    def upsert_bulk(self, records: Iterable[Any], namespace: str = "", *,
                    workers: int | None = None) -> int:
        """Load many records at once; returns how many were written.

        The same records and meaning as :meth:`upsert` (insert or wholly replace, all
        validated first, repeated ids keep the last), through the backend's fastest
        path: on pgvector, parallel binary COPY over ``workers`` connections with the
        indexes built once afterwards when the namespace starts empty. A page of
        :func:`vectorport.core.checked.checked_scan` of another index (what a copy writes)
        is checked only by the rules that can refuse it here, not the whole contract
        again (docs/copy.md). Backends without
        a bulk path (:class:`BulkLoadingAdapter`) take :meth:`upsert`'s batches, up to
        ``workers`` (at most the backend's ``write_concurrency``) at once. Not atomic;
        loading the same records again is always safe.
        """
        ns = validation.namespace(namespace)
        if workers is not None and workers < 1:
            raise ValidationError("workers must be positive")
        prepared = requests.build_records(self.target, records)
        if not prepared:
            return 0
        adapter = self._adapter
        if isinstance(adapter, BulkLoadingAdapter):
            count = workers or bulk_workers()
            self._call("upsert_bulk", lambda: adapter.upsert_bulk(
                self.spec, ns, prepared, workers=count), ns, len(prepared))
        else:
            self._write_batches(prepared, ns, None, workers)
        return len(prepared)

    def _write_batches(self, prepared: Sequence[Record], ns: str, batch_size: int | None,
                       workers: int | None) -> None:
        target = self.target
        batches = requests.split_batches(target.capabilities, prepared, batch_size)

        def send(batch: Sequence[Record]) -> None:
            self._call("upsert", lambda: self._adapter.upsert(self.spec, ns, batch), ns, len(batch))

        limit = target.capabilities.write_concurrency
        workers = limit if workers is None else min(workers, limit)
        outcomes = self.store.runner.send_batches(
            batches, send, workers)
        settle_writes(batches, outcomes)

    def query(self, vector: Any = None, *, sparse: Any = None,
              **options: Unpack[QueryKwargs]) -> list[Match]:
        """The ``top_k`` nearest records to a dense vector, a sparse vector, or both.

        ``filter`` is a Mongo-style dict (CONTRACT §2). ``min_score`` keeps scores
        ``>=`` it. ``ef`` and ``probes`` are ANN hints; ``consistency`` is ``"strong"``
        (read your writes) or ``"eventual"``; ``backend_options`` holds per-backend
        sections such as ``{"pgvector": {...}}``, each adapter reading only its own.
        Defaults: ``top_k=10``, ``namespace=""``, metadata and documents included,
        vectors not.
        """
        request = requests.build_query(self.target, vector, sparse=sparse, **options)
        adapter, spec = self.store.adapter, self.spec
        # the runner itself, not through _call: a frame and two properties less a query
        matches = self.store.runner.run("query", lambda: adapter.query(spec, request),
                                        index=spec.name, namespace=request.namespace,
                                        size=request.top_k, top_k=request.top_k)
        return requests.finish_query(request, matches)

    def query_many(self, vectors: Any, **options: Unpack[QueryKwargs]) -> list[list[Match]]:
        """Many dense queries with the same options: one result list per row of
        ``vectors`` (a 2-d array or a list of vectors). Adapters that can answer them in
        one pass (:class:`BatchQueryAdapter`) do; others answer one by one."""
        request, matrix = requests.build_query_many(self.target, vectors, **options)
        if len(matrix) == 0:
            return []
        adapter = self._adapter
        if isinstance(adapter, BatchQueryAdapter):
            template = replace(request, vector=None)
            results = self._call("query_many", lambda: adapter.query_many(
                self.spec, template, matrix), request.namespace, len(matrix),
                top_k=request.top_k)
        else:
            results = [
                self._call("query", lambda row=row: adapter.query(  # type: ignore[misc]
                    self.spec, replace(request, vector=row)), request.namespace, request.top_k)
                for row in matrix
            ]
        return [requests.finish_query(request, matches) for matches in results]

    def fetch(self, ids: Iterable[str], namespace: str = "") -> dict[str, Record]:
        """The stored records among ``ids``, keyed and ordered by the ids asked for."""
        ns = validation.namespace(namespace)
        wanted = requests.build_fetch(ids)
        if not wanted:
            return {}
        found = self._call("fetch", lambda: self._adapter.fetch(self.spec, ns, wanted), ns, len(wanted))
        return requests.order_fetched(wanted, found)

    def delete(self, ids: Iterable[str] | None = None, *, filter: RawFilter = None,
               namespace: str = "") -> None:
        """Delete by ids or by filter (exactly one). Missing ids are not an error."""
        ns = validation.namespace(namespace)
        id_tuple, node = requests.build_delete(self.target, ids, filter)
        if id_tuple == ():
            return
        self._call("delete", lambda: self._adapter.delete(self.spec, ns, id_tuple, node), ns,
                   len(id_tuple) if id_tuple else None)

    def count(self, namespace: str = "", *, filter: RawFilter = None) -> int:
        ns = validation.namespace(namespace)
        node = requests.build_count(self.target, filter)
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
        filter: RawFilter = None,
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
        node, page_size = requests.build_scan(self.target, filter=filter, page_size=page_size)
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
        filter: RawFilter = None,
        page_size: int = 500,
    ) -> Iterator[Record]:
        """:meth:`scan`, one record at a time."""
        for page in self.scan(namespace, filter=filter, page_size=page_size):
            yield from page.records


class PatchableIndex(Index):
    """An index whose backend can change parts of a record in place."""

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
        patch = requests.build_patch(self.target, id, vector=vector, sparse=sparse,
                                     metadata=metadata, document=document)
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
        filter: RawFilter = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> IdPage:
        ns, node, key, inner = self.prepare_listing(namespace, prefix, filter, limit, cursor)
        adapter = self._adapter
        assert isinstance(adapter, IdListingAdapter)
        page: IdPage = self._call("list_ids", lambda: adapter.list_ids(
            self.spec, ns, prefix=prefix, filter=node, limit=limit, cursor=inner), ns, limit)
        return wrap_id_page(key, page)

    def prepare_listing(self, namespace: str, prefix: str | None, filter: RawFilter,
                        limit: int, cursor: str | None
                        ) -> tuple[str, Filter | None, str, str | None]:
        """What a listing sends, for the sync and async handles alike: the namespace, the
        parsed filter, the key its cursors are bound to, and the adapter's own cursor.

        Cursors are opaque tokens bound to this listing (as scan's are), so a cursor
        from another listing, or a made-up one, is refused instead of silently
        restarting or skipping ids; the adapter only ever sees its own cursors."""
        ns = validation.namespace(namespace)
        node = requests.build_list_ids(self.target, prefix=prefix, filter=filter, limit=limit)
        key = scanning.listing_key(self.store.backend, self.name, ns, prefix, node)
        inner = (scanning.decode_cursor(key, cursor, kind="list_ids")
                 if cursor is not None else None)
        return ns, node, key, inner

    def iter_ids(
        self,
        namespace: str = "",
        *,
        prefix: str | None = None,
        filter: RawFilter = None,
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


def wrap_id_page(key: str, page: IdPage) -> IdPage:
    """``page`` with its adapter cursor wrapped in a token bound to ``key``."""
    if page.next_cursor is None:
        return page
    return IdPage(page.ids, scanning.encode_cursor(key, page.next_cursor))


@cache
def bulk_workers() -> int:
    """Default parallelism of :meth:`Index.upsert_bulk`: one connection per core, at
    least two (the server encodes and indexes while the client encodes the next rows),
    at most four."""
    return max(2, min(4, os.cpu_count() or 2))


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

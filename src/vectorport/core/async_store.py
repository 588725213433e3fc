"""The async facade: :func:`connect_async`, :class:`AsyncStore` and :class:`AsyncIndex`.

It takes the same path as the sync facade: the same request builders
(:mod:`vectorport.core.requests`), so both accept and refuse exactly the same calls,
and the async form of the same operation wrapper (:mod:`vectorport.core.operations`),
so operation hooks fire and retries happen on every call. Data operations use the
adapter's native async methods where it has them (:class:`NativeAsyncAdapter`);
everything else runs the sync adapter call in a worker thread, so the event loop never
blocks on I/O. Upserts send up to ``write_concurrency`` batches at once, as in the sync
facade.

An :class:`AsyncIndex` has the abilities of the sync handle it wraps: wrapping a
:class:`PatchableIndex` gives an :class:`AsyncPatchableIndex`, and so on, so
``isinstance`` tells on both sides.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import Any, TypeVar, Unpack

from vectorport.core import requests, validation
from vectorport.core.adapter import (
    BatchQueryAdapter,
    BulkLoadingAdapter,
    IdListingAdapter,
    NativeAsyncAdapter,
    PatchableAdapter,
)
from vectorport.core.errors import ValidationError
from vectorport.core.operations import settle_writes
from vectorport.core.plugin import Registry
from vectorport.core.requests import QueryKwargs, RawFilter
from vectorport.core.retry import RetryPolicy
from vectorport.core.store import (
    Index,
    ListableIndex,
    PatchableIndex,
    Store,
    bulk_workers,
    connect,
    wrap_id_page,
)
from vectorport.core.types import (
    Explanation,
    IdPage,
    IndexInfo,
    IndexSpec,
    Match,
    MetadataValue,
    Record,
    RecordPage,
)

T = TypeVar("T")


async def connect_async(
    url: str | None = None, *, registry: Registry | None = None, retry: RetryPolicy | None = None
) -> AsyncStore:
    """:func:`connect`, awaited: opens the store in a worker thread (an SDK may do
    blocking I/O on connect) and returns its :class:`AsyncStore`."""
    store = await asyncio.to_thread(connect, url, registry=registry, retry=retry)
    return AsyncStore(store)


class AsyncStore:
    """Async access to a :class:`Store` (open one with :func:`connect_async`)."""

    def __init__(self, store: Store) -> None:
        if not isinstance(store, Store):
            # The value is not shown: a URL may hold a password.
            raise TypeError(
                f"AsyncStore wraps a Store, not a {type(store).__name__}; to open a store "
                f"from a URL, use `await vectorport.connect_async(url)`"
            )
        self.store = store

    @property
    def backend(self) -> str:
        return self.store.backend

    @property
    def native(self) -> bool:
        """Whether data operations use the adapter's own async I/O."""
        return isinstance(self.store.adapter, NativeAsyncAdapter)

    def __repr__(self) -> str:
        return f"AsyncStore(backend={self.backend!r}, native={self.native})"

    async def create_index(self, name: str, dimension: int, metric: str = "cosine",
                           **kwargs: Any) -> AsyncIndex:
        index = await asyncio.to_thread(self.store.create_index, name, dimension, metric, **kwargs)
        return AsyncIndex(index)

    async def index(self, name: str) -> AsyncIndex:
        return AsyncIndex(await asyncio.to_thread(self.store.index, name))

    async def describe_index(self, name: str) -> IndexInfo:
        return await asyncio.to_thread(self.store.describe_index, name)

    async def list_indexes(self) -> list[str]:
        return await asyncio.to_thread(self.store.list_indexes)

    async def has_index(self, name: str) -> bool:
        return await asyncio.to_thread(self.store.has_index, name)

    async def delete_index(self, name: str, *, missing_ok: bool = False) -> None:
        await asyncio.to_thread(self.store.delete_index, name, missing_ok=missing_ok)

    async def close(self) -> None:
        adapter = self.store.adapter
        if isinstance(adapter, NativeAsyncAdapter):
            await adapter.aclose()
        await asyncio.to_thread(self.store.close)

    async def __aenter__(self) -> AsyncStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class AsyncIndex:
    """Async access to an :class:`Index`, with the same validation and hooks."""

    sync: Index

    def __new__(cls, index: Index) -> AsyncIndex:
        if cls is AsyncIndex:  # pick the class with the wrapped handle's abilities
            cls = _async_class(isinstance(index, PatchableIndex), isinstance(index, ListableIndex))
        return super().__new__(cls)

    def __init__(self, index: Index) -> None:
        self.sync = index

    @property
    def name(self) -> str:
        return self.sync.name

    @property
    def spec(self) -> IndexSpec:
        return self.sync.spec

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sync!r})"

    def _native(self) -> NativeAsyncAdapter | None:
        adapter = self.sync.store.adapter
        return adapter if isinstance(adapter, NativeAsyncAdapter) else None

    async def _run(self, operation: str, fn: Callable[[], Awaitable[T]],
                   namespace: str | None = None, size: int | None = None,
                   idempotent: bool = True, top_k: int | None = None) -> T:
        return await self.sync.store.runner.arun(operation, fn, index=self.name,
                                                 namespace=namespace, size=size,
                                                 idempotent=idempotent, top_k=top_k)

    async def _run_thread(self, operation: str, fn: Callable[..., T], *args: Any,
                          namespace: str | None = None, size: int | None = None,
                          top_k: int | None = None, **kwargs: Any) -> T:
        """A sync adapter call in a worker thread, through the async operation wrapper."""
        return await self._run(operation, lambda: asyncio.to_thread(fn, *args, **kwargs),
                               namespace, size, top_k=top_k)

    # -- data operations --------------------------------------------------------------

    async def upsert(self, records: Iterable[Any], namespace: str = "", *,
                     batch_size: int | None = None) -> int:
        ns = validation.namespace(namespace)
        prepared = requests.build_records(self.sync.target, records)
        await self._write_batches(prepared, ns, batch_size, None)
        return len(prepared)

    async def upsert_bulk(self, records: Iterable[Any], namespace: str = "", *,
                          workers: int | None = None) -> int:
        """:meth:`Index.upsert_bulk`, awaited (a bulk path runs in a worker thread: it
        drives its own parallel connections)."""
        ns = validation.namespace(namespace)
        if workers is not None and workers < 1:
            raise ValidationError("workers must be positive")
        prepared = requests.build_records(self.sync.target, records)
        if not prepared:
            return 0
        adapter = self.sync.store.adapter
        if isinstance(adapter, BulkLoadingAdapter):
            await self._run_thread("upsert_bulk", adapter.upsert_bulk, self.sync.spec, ns,
                                   prepared, workers=workers or bulk_workers(),
                                   namespace=ns, size=len(prepared))
        else:
            await self._write_batches(prepared, ns, None, workers)
        return len(prepared)

    async def _write_batches(self, prepared: Sequence[Record], ns: str,
                             batch_size: int | None, workers: int | None) -> None:
        target = self.sync.target
        batches = requests.split_batches(target.capabilities, prepared, batch_size)
        spec, native, adapter = self.sync.spec, self._native(), self.sync.store.adapter

        async def send(batch: Sequence[Record]) -> None:
            if native is not None:
                await self._run("upsert", lambda: native.aupsert(spec, ns, batch), ns, len(batch))
            else:
                await self._run_thread("upsert", adapter.upsert, spec, ns, batch,
                                       namespace=ns, size=len(batch))

        limit = target.capabilities.write_concurrency
        workers = limit if workers is None else min(workers, limit)
        outcomes = await self.sync.store.runner.asend_batches(
            batches, send, workers)
        settle_writes(batches, outcomes)

    async def query(self, vector: Any = None, *, sparse: Any = None,
                    **options: Unpack[QueryKwargs]) -> list[Match]:
        """:meth:`Index.query`, awaited."""
        request = requests.build_query(self.sync.target, vector, sparse=sparse, **options)
        spec, native = self.sync.spec, self._native()
        if native is not None:
            matches = await self._run("query", lambda: native.aquery(spec, request),
                                      request.namespace, request.top_k)
        else:
            matches = await self._run_thread("query", self.sync.store.adapter.query, spec,
                                             request, namespace=request.namespace,
                                             size=request.top_k)
        return requests.finish_query(request, matches)

    async def explain(self, vector: Any = None, *, sparse: Any = None,
                      **options: Unpack[QueryKwargs]) -> Explanation:
        """:meth:`Index.explain`, awaited (in a worker thread: an adapter may read the
        schema its filter compiler needs)."""
        return await asyncio.to_thread(
            lambda: self.sync.explain(vector, sparse=sparse, **options))

    async def query_many(self, vectors: Any, **options: Unpack[QueryKwargs]) -> list[list[Match]]:
        """:meth:`Index.query_many`, awaited; native adapters answer the rows concurrently."""
        request, matrix = requests.build_query_many(self.sync.target, vectors, **options)
        if len(matrix) == 0:
            return []
        spec, native, adapter = self.sync.spec, self._native(), self.sync.store.adapter
        ns, k = request.namespace, request.top_k
        results: list[list[Match]]
        if isinstance(adapter, BatchQueryAdapter):
            results = await self._run_thread("query_many", adapter.query_many, spec,
                                             replace(request, vector=None), matrix,
                                             namespace=ns, size=len(matrix), top_k=k)
        elif native is not None:
            rows = [replace(request, vector=row) for row in matrix]
            results = list(await asyncio.gather(*(
                self._run("query", lambda r=r: native.aquery(spec, r), ns, k)  # type: ignore[misc]
                for r in rows)))
        else:
            results = [await self._run_thread("query", adapter.query, spec,
                                              replace(request, vector=row), namespace=ns, size=k)
                       for row in matrix]
        return [requests.finish_query(request, matches) for matches in results]

    async def fetch(self, ids: Iterable[str], namespace: str = "") -> dict[str, Record]:
        ns = validation.namespace(namespace)
        wanted = requests.build_fetch(ids)
        if not wanted:
            return {}
        spec, native = self.sync.spec, self._native()
        if native is not None:
            found = await self._run("fetch", lambda: native.afetch(spec, ns, wanted), ns,
                                    len(wanted))
        else:
            found = await self._run_thread("fetch", self.sync.store.adapter.fetch, spec, ns,
                                           wanted, namespace=ns, size=len(wanted))
        return requests.order_fetched(wanted, found)

    async def delete(self, ids: Iterable[str] | None = None, *, filter: RawFilter = None,
                     namespace: str = "") -> None:
        ns = validation.namespace(namespace)
        id_tuple, node = requests.build_delete(self.sync.target, ids, filter)
        if id_tuple == ():
            return
        await self._run_thread("delete", self.sync.store.adapter.delete, self.sync.spec, ns,
                               id_tuple, node, namespace=ns,
                               size=len(id_tuple) if id_tuple else None)

    async def count(self, namespace: str = "", *, filter: RawFilter = None) -> int:
        ns = validation.namespace(namespace)
        node = requests.build_count(self.sync.target, filter)
        return await self._run_thread("count", self.sync.store.adapter.count, self.sync.spec,
                                      ns, node, namespace=ns)

    async def list_namespaces(self) -> list[str]:
        names = await self._run_thread("list_namespaces", self.sync.store.adapter.list_namespaces,
                                       self.sync.spec)
        return sorted(names)

    async def delete_namespace(self, namespace: str) -> None:
        ns = validation.namespace(namespace)
        await self._run_thread("delete_namespace", self.sync.store.adapter.delete_namespace,
                               self.sync.spec, ns, namespace=ns)

    async def describe(self) -> IndexInfo:
        return await asyncio.to_thread(self.sync.describe)

    async def scan(
        self,
        namespace: str = "",
        *,
        filter: RawFilter = None,
        page_size: int = 500,
        cursor: str | None = None,
    ) -> AsyncIterator[RecordPage]:
        """:meth:`Index.scan` (``async for page in index.scan(...)``): the same pages and
        cursors, each page read in a worker thread."""
        pages = self.sync.scan(namespace, filter=filter, page_size=page_size, cursor=cursor)
        while (page := await asyncio.to_thread(next, pages, None)) is not None:
            yield page

    async def iter_records(self, namespace: str = "", *, filter: RawFilter = None,
                           page_size: int = 500) -> AsyncIterator[Record]:
        """:meth:`scan`, one record at a time."""
        async for page in self.scan(namespace, filter=filter, page_size=page_size):
            for record in page.records:
                yield record


class AsyncPatchableIndex(AsyncIndex):
    """The async handle of a :class:`PatchableIndex`."""

    sync: PatchableIndex

    async def patch(
        self,
        id: str,
        *,
        vector: Any = None,
        sparse: Any = None,
        metadata: Mapping[str, MetadataValue | None] | None = None,
        document: str | None = None,
        namespace: str = "",
    ) -> bool:
        """:meth:`PatchableIndex.patch`, awaited."""
        ns = validation.namespace(namespace)
        patch = requests.build_patch(self.sync.target, id, vector=vector, sparse=sparse,
                                     metadata=metadata, document=document)
        adapter = self.sync.store.adapter
        assert isinstance(adapter, PatchableAdapter)
        return await self._run_thread("patch", adapter.patch, self.sync.spec, ns, patch,
                                      namespace=ns, size=1)


class AsyncListableIndex(AsyncIndex):
    """The async handle of a :class:`ListableIndex`."""

    sync: ListableIndex

    async def list_ids(
        self,
        namespace: str = "",
        *,
        prefix: str | None = None,
        filter: RawFilter = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> IdPage:
        """:meth:`ListableIndex.list_ids`, awaited."""
        ns, node, key, inner = self.sync.prepare_listing(namespace, prefix, filter, limit,
                                                         cursor)
        adapter = self.sync.store.adapter
        assert isinstance(adapter, IdListingAdapter)
        page: IdPage = await self._run_thread(
            "list_ids", adapter.list_ids, self.sync.spec, ns, prefix=prefix, filter=node,
            limit=limit, cursor=inner, namespace=ns, size=limit)
        return wrap_id_page(key, page)

    async def iter_ids(
        self,
        namespace: str = "",
        *,
        prefix: str | None = None,
        filter: RawFilter = None,
        page_size: int = 500,
    ) -> AsyncIterator[str]:
        """Every id in order, a page at a time (``async for id in index.iter_ids()``)."""
        cursor: str | None = None
        while True:
            page = await self.list_ids(namespace, prefix=prefix, filter=filter,
                                       limit=page_size, cursor=cursor)
            for id_ in page.ids:
                yield id_
            if page.next_cursor is None:
                return
            cursor = page.next_cursor


class AsyncPatchableListableIndex(AsyncPatchableIndex, AsyncListableIndex):
    """The async handle of an index that can both patch and list ids."""

    sync: Any


@cache
def _async_class(patch: bool, listing: bool) -> type[AsyncIndex]:
    if patch and listing:
        return AsyncPatchableListableIndex
    if patch:
        return AsyncPatchableIndex
    if listing:
        return AsyncListableIndex
    return AsyncIndex

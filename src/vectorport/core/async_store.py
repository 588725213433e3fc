"""The async facade: :class:`AsyncStore` and :class:`AsyncIndex`.

Validation is shared with the sync facade (the same ``prepare_*`` methods), so both
accept and refuse exactly the same calls. Data operations use the adapter's native
async methods where it has them (:class:`NativeAsyncAdapter`); everything else runs the
sync call in a worker thread, so the event loop never blocks on I/O.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from vectorport.core.adapter import NativeAsyncAdapter
from vectorport.core.errors import BackendError
from vectorport.core.filters.ast import Filter
from vectorport.core.registry import Registry
from vectorport.core.retry import RetryPolicy
from vectorport.core.store import Index, Store, connect
from vectorport.core.types import IndexInfo, Match, Record

T = TypeVar("T")


async def connect_async(
    url: str | None = None, *, registry: Registry | None = None, retry: RetryPolicy | None = None
) -> AsyncStore:
    store = await asyncio.to_thread(connect, url, registry=registry, retry=retry)
    return AsyncStore(store)


class AsyncStore:
    """Async access to a :class:`Store`."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @property
    def backend(self) -> str:
        return self.store.backend

    @property
    def native(self) -> bool:
        """Whether data operations use the adapter's own async I/O."""
        return isinstance(self.store.adapter, NativeAsyncAdapter)

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
    """Async access to an :class:`Index`, with the same validation."""

    def __init__(self, index: Index) -> None:
        self.sync = index

    @property
    def name(self) -> str:
        return self.sync.name

    def _native(self) -> NativeAsyncAdapter | None:
        adapter = self.sync.store.adapter
        return adapter if isinstance(adapter, NativeAsyncAdapter) else None

    async def _thread(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def upsert(self, records: Iterable[Any], namespace: str = "", *,
                     batch_size: int | None = None) -> int:
        native = self._native()
        if native is None:
            return await self._thread(self.sync.upsert, records, namespace, batch_size=batch_size)
        from vectorport.core import validation

        ns = validation.namespace(namespace)
        prepared = self.sync.prepare_records(records)
        written: list[str] = []
        retry = self.sync.store.retry
        try:
            for batch in self.sync.batches(prepared, batch_size):
                await retry.acall("upsert", lambda b=batch: native.aupsert(self.sync.spec, ns, b))  # type: ignore[misc]
                written.extend(r.id for r in batch)
        except BackendError as exc:
            exc.written_ids = tuple(written)
            raise
        return len(prepared)

    async def query(self, vector: Any = None, **kwargs: Any) -> list[Match]:
        native = self._native()
        if native is None:
            return await self._thread(self.sync.query, vector, **kwargs)
        request = self.sync.prepare_query(vector, **kwargs)
        matches = await self.sync.store.retry.acall(
            "query", lambda: native.aquery(self.sync.spec, request))
        return Index.finish_query(request, matches)

    async def fetch(self, ids: Iterable[str], namespace: str = "") -> dict[str, Record]:
        native = self._native()
        if native is None:
            return await self._thread(self.sync.fetch, ids, namespace)
        from vectorport.core import validation

        ns = validation.namespace(namespace)
        wanted = validation.record_ids(ids)
        found = await self.sync.store.retry.acall(
            "fetch", lambda: native.afetch(self.sync.spec, ns, wanted))
        by_id = {r.id: r for r in found}
        return {i: by_id[i] for i in dict.fromkeys(wanted) if i in by_id}

    async def delete(self, ids: Iterable[str] | None = None, *,
                     filter: Mapping[str, Any] | Filter | None = None, namespace: str = "") -> None:
        await self._thread(self.sync.delete, ids, filter=filter, namespace=namespace)

    async def count(self, namespace: str = "", *,
                    filter: Mapping[str, Any] | Filter | None = None) -> int:
        return await self._thread(self.sync.count, namespace, filter=filter)

    async def list_namespaces(self) -> list[str]:
        return await self._thread(self.sync.list_namespaces)

    async def delete_namespace(self, namespace: str) -> None:
        await self._thread(self.sync.delete_namespace, namespace)

    async def describe(self) -> IndexInfo:
        return await self._thread(self.sync.describe)

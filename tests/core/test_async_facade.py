"""The async facade takes the sync facade's path: the same request builders and the same
operation wrapper (hooks, then retry), on a native-async adapter (pgvector, a real
PostgreSQL) and on the worker-thread fallback (the reference adapter)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest

import vectorport
from vectorport import (
    AsyncListableIndex,
    AsyncPatchableIndex,
    OperationEvent,
    Registry,
    UnsupportedFeatureError,
    ValidationError,
    hookimpl,
)
from vectorport.adapters.local.adapter import LocalAdapter
from vectorport.adapters.local.capabilities import LOCAL_CAPABILITIES
from vectorport.conformance.base import unique_name
from vectorport.core.capabilities import Capabilities
from vectorport.core.types import IndexSpec, Record


class Policy:
    """A tenant policy plugin: refuses the namespace ``forbidden``; records every event
    and how many operations were in flight at once."""

    def __init__(self) -> None:
        self.before: list[str] = []
        self.after: list[tuple[str, BaseException | None]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()

    @hookimpl
    def vectorport_before_operation(self, event: OperationEvent) -> None:
        if event.namespace == "forbidden":
            raise PermissionError(f"tenant policy refuses {event.operation}")
        with self._lock:
            self.before.append(event.operation)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)

    @hookimpl
    def vectorport_after_operation(self, event: OperationEvent, error: BaseException | None,
                                   seconds: float) -> None:
        with self._lock:
            self.after.append((event.operation, error))
            if not isinstance(error, PermissionError):
                self.in_flight -= 1

    def errors(self, operation: str) -> list[BaseException | None]:
        return [e for op, e in self.after if op == operation]


def policed() -> tuple[Policy, Registry]:
    policy = Policy()
    registry = Registry()
    registry.register_plugin(policy, "policy")
    return policy, registry


# -- construction ------------------------------------------------------------------------


def test_async_store_refuses_a_url_and_points_to_connect_async() -> None:
    with pytest.raises(TypeError, match="connect_async") as info:
        vectorport.AsyncStore("pgvector://alice:s3cret@db/app")  # type: ignore[arg-type]
    assert "s3cret" not in str(info.value)


# -- the thread fallback ------------------------------------------------------------------


async def test_async_handles_have_the_sync_abilities() -> None:
    astore = await vectorport.connect_async("memory://")
    index = await astore.create_index("parity", 2)
    assert isinstance(index, AsyncPatchableIndex) and isinstance(index, AsyncListableIndex)
    assert isinstance(index, vectorport.AsyncIndex)
    await astore.close()


async def test_async_parity_with_the_sync_index() -> None:
    store = vectorport.connect("memory://")
    sync = store.create_index("parity", 2)
    rows = [(f"id{i:02d}", [1, i], {"k": i}) for i in range(12)]
    sync.upsert(rows)
    index = vectorport.AsyncIndex(sync)
    assert isinstance(index, AsyncPatchableIndex) and isinstance(index, AsyncListableIndex)
    queries = [[1, 0], [0, 1], [1, 5]]
    got = await index.query_many(queries, top_k=3, filter={"k": {"$gte": 2}})
    want = sync.query_many(queries, top_k=3, filter={"k": {"$gte": 2}})
    assert [[(m.id, pytest.approx(m.score)) for m in ms] for ms in got] == \
        [[(m.id, m.score) for m in ms] for ms in want]
    assert await index.query_many(np.zeros((0, 2))) == sync.query_many(np.zeros((0, 2))) == []
    assert await index.patch("id03", metadata={"k": 99})
    assert not await index.patch("missing", metadata={"k": 1})
    assert sync.fetch(["id03"])["id03"].metadata["k"] == 99
    page = await index.list_ids(limit=5)
    assert page == sync.list_ids(limit=5)
    assert [i async for i in index.iter_ids(page_size=5)] == list(sync.iter_ids())
    assert (await index.describe()).spec == sync.spec
    with pytest.raises(ValidationError):
        await index.query_many([[0, 0]])
    with pytest.raises(UnsupportedFeatureError):
        await index.query([1, 0], ef=10)  # the reference adapter declares no hints
    await vectorport.AsyncStore(store).close()


async def test_hooks_and_policy_on_the_thread_path() -> None:
    policy, registry = policed()
    astore = await vectorport.connect_async("memory://", registry=registry)
    assert not astore.native
    index = await astore.create_index("hooked", 2)
    await index.upsert([("a", [1, 0])])
    await index.query([1, 0])
    await index.fetch(["a"])
    assert {"upsert", "query", "fetch"} <= set(policy.before)
    with pytest.raises(PermissionError):
        await index.count("forbidden")
    assert isinstance(policy.errors("count")[-1], PermissionError)
    await astore.close()


class _Slow(LocalAdapter):
    """The reference adapter declaring ``write_concurrency=3``; each upsert waits a bit so
    that concurrent batches overlap."""

    def __init__(self) -> None:
        super().__init__(None)
        self._caps = Capabilities(**{**{f: getattr(LOCAL_CAPABILITIES, f) for f in
                                        LOCAL_CAPABILITIES.__dataclass_fields__},
                                     "max_batch_size": 2, "write_concurrency": 3})
        self._barrier = threading.Barrier(3, timeout=5)

    @property
    def capabilities(self) -> Capabilities:
        return self._caps

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        self._barrier.wait()  # three batches at once, or this times out
        super().upsert(index, namespace, records)


async def test_async_upsert_follows_write_concurrency() -> None:
    policy, registry = policed()
    store = vectorport.Store(_Slow(), registry=registry)
    index = vectorport.AsyncIndex(store.create_index("wide", 2))
    assert await index.upsert([(f"r{i:02d}", [1, i]) for i in range(6)]) == 6
    assert policy.most_in_flight == 3 and policy.errors("upsert") == [None, None, None]
    assert await index.count() == 6


# -- native async: pgvector on a real PostgreSQL -------------------------------------------


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    pytest.importorskip("psycopg")
    pytest.importorskip("pgvector")
    from vectorport.testing.pgvector import running_postgres

    with running_postgres(shared=True) as url:
        yield url


async def test_policy_stops_native_async_pgvector_operations(pg_url: str) -> None:
    policy, registry = policed()
    astore = await vectorport.connect_async(pg_url, registry=registry)
    assert astore.native
    name = unique_name("policy")
    index = await astore.create_index(name, 2)
    try:
        await index.upsert([("a", [1, 0]), ("b", [0, 1])], namespace="open")
        got = await index.query([1, 0], namespace="open", top_k=1)
        assert [m.id for m in got] == ["a"]
        assert list(await index.fetch(["b"], namespace="open")) == ["b"]
        assert {"upsert", "query", "fetch"} <= set(policy.before)
        assert policy.errors("query") == [None]

        with pytest.raises(PermissionError):
            await index.upsert([("c", [1, 1])], namespace="forbidden")
        with pytest.raises(PermissionError):
            await index.query([1, 0], namespace="forbidden")
        with pytest.raises(PermissionError):
            await index.fetch(["a"], namespace="forbidden")
        for operation in ("upsert", "query", "fetch"):
            assert isinstance(policy.errors(operation)[-1], PermissionError), operation
        # the refused upsert wrote nothing (asked past the policy, of the adapter itself)
        assert astore.store.adapter.count(index.sync.spec, "forbidden", None) == 0
    finally:
        await astore.delete_index(name, missing_ok=True)
        await astore.close()


async def test_native_async_upsert_sends_batches_concurrently(pg_url: str) -> None:
    policy, registry = policed()
    astore = await vectorport.connect_async(pg_url, registry=registry)
    workers = astore.store.capabilities.write_concurrency
    assert workers > 1
    name = unique_name("wide")
    index = await astore.create_index(name, 2)
    try:
        rows: list[Any] = [(f"r{i:03d}", [1, i]) for i in range(40)]
        assert await index.upsert(rows, batch_size=5) == 40
        assert policy.most_in_flight == workers
        assert policy.errors("upsert") == [None] * 8
        assert await index.count() == 40
    finally:
        await astore.delete_index(name, missing_ok=True)
        await astore.close()

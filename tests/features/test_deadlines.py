"""Bounded time: with a server that accepts connections and never answers, every call on
every backend fails with a typed error within its deadline (CONTRACT §6).

Real stalled servers only: the emulators' ``stall`` switch (the request is read, no
answer ever comes) for Pinecone and turbopuffer, and a raw socket that accepts and never
answers for PostgreSQL, chroma+http, a Milvus server and LanceDB Cloud. Deadlines are
small (1–2 s) so the file is fast; each bound is the deadline plus a margin for a
loaded machine, a behaviour bound, not a benchmark.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.support.outage import DownAfterBatches, postgres_of_its_own

import vectorport
from vectorport import (
    BackendError,
    ConfigError,
    DeadlineExceededError,
    TransientBackendError,
    hookimpl,
)
from vectorport.core.hooks import OperationEvent
from vectorport.core.registry import Registry
from vectorport.testing.emulators import pinecone as pinecone_emulator
from vectorport.testing.emulators import turbopuffer as turbopuffer_emulator
from vectorport.testing.emulators.http import Faults
from vectorport.testing.stalled import stalled_server

MARGIN = 3.0
"""Seconds allowed past a deadline: thread scheduling on a shared 2-core machine, and
libpq's whole-second connect timeout."""

PINECONE_KEY = "pc-test-key-0b6d"
TPUF_KEY = turbopuffer_emulator.DEFAULT_API_KEY


_SDKS = {"milvus": "pymilvus", "chroma+http": "chromadb", "db": "lancedb",
         "pgvector": "psycopg_pool", "pinecone": "pinecone", "turbopuffer": "turbopuffer"}


def _warm(scheme: str) -> None:
    """Import the adapter and its SDK first (some adapters import it lazily), so that
    imports are not timed."""
    import importlib

    vectorport.default_registry().by_scheme(scheme).load()
    importlib.import_module(_SDKS[scheme])


def _bounded(seconds: float, fn: Callable[[], Any]) -> BaseException:
    """Run ``fn``, which must fail with a typed transient error within ``seconds`` plus
    :data:`MARGIN`; the error."""
    started = time.monotonic()
    with pytest.raises(TransientBackendError) as info:
        fn()
    elapsed = time.monotonic() - started
    assert elapsed < seconds + MARGIN, f"took {elapsed:.1f} s, deadline {seconds} s"
    return info.value


# -- raw sockets: accepted, never answered ------------------------------------------------


@pytest.fixture
def stalled_port() -> Iterator[int]:
    with stalled_server() as port:
        yield port


@pytest.mark.parametrize(("scheme", "template", "seconds"), [
    ("pgvector", "pgvector://someone@127.0.0.1:{port}/db?timeout={t}", 2.0),
    ("chroma+http", "chroma+http://127.0.0.1:{port}?timeout={t}", 1.5),
    ("milvus", "milvus://127.0.0.1:{port}?timeout={t}", 1.5),
])
def test_connecting_to_a_stalled_server_is_bounded(stalled_port: int, scheme: str,
                                                   template: str, seconds: float) -> None:
    _warm(scheme)
    url = template.format(port=stalled_port, t=seconds)
    _bounded(seconds, lambda: vectorport.connect(url))


def test_lancedb_cloud_calls_on_a_stalled_server_are_bounded(stalled_port: int) -> None:
    _warm("db")
    store = vectorport.connect(f"db://mydb?api_key=lance-key-1&timeout=1.5"
                               f"&host_override=http://127.0.0.1:{stalled_port}")
    error = _bounded(1.5, store.list_indexes)
    assert isinstance(error, DeadlineExceededError)
    _bounded(1.5, lambda: store.create_index("docs", 4))


@pytest.mark.parametrize("backend", ["pinecone", "turbopuffer"])
def test_a_per_call_deadline_cuts_a_longer_store_timeout(
        backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each request's socket timeout is cut to what is left of the call's deadline: a
    request begun just before the deadline does not wait out the store's timeout."""
    _warm(backend)
    monkeypatch.setenv("VP_TEST_PINECONE_KEY", PINECONE_KEY)
    faults = Faults()
    with _emulated(backend, faults) as url, vectorport.connect(url + "&timeout=20") as store:
        index = store.create_index("percall", 4, "cosine")
        index.upsert([("a", [1.0, 0, 0, 0])])
        faults.stall = True
        try:
            for call in (lambda: index.query([1.0, 0, 0, 0], top_k=1), store.list_indexes,
                         index.describe):
                with vectorport.deadline(1.0):
                    error = _bounded(1.0, call)
                assert isinstance(error, DeadlineExceededError)
        finally:
            faults.stall = False


def test_qdrant_server_requests_are_cut_to_the_call_deadline(stalled_port: int) -> None:
    """A Qdrant server that accepts and never answers is given up on when the call's
    time is up: qdrant-client's own timeout (whole seconds, set once) was the bound
    before, so ``vectorport.deadline(1)`` on a store with ``timeout=20`` waited 20 s."""
    pytest.importorskip("qdrant_client")
    vectorport.default_registry().by_scheme("qdrant").load()
    store = vectorport.connect(f"qdrant://127.0.0.1:{stalled_port}?timeout=20")
    for call in (store.list_indexes, lambda: store.describe_index("docs")):
        with vectorport.deadline(1.0):
            error = _bounded(1.0, call)
        assert isinstance(error, DeadlineExceededError)


# -- the emulators' stall switch: every call ------------------------------------------------


def _calls(index: vectorport.Index) -> dict[str, Callable[[], Any]]:
    vector = [1.0, 0.5, 0.25, 0.0]
    return {
        "upsert": lambda: index.upsert([("b1", vector, {"k": 1})]),
        "query": lambda: index.query(vector, top_k=3),
        "filtered query": lambda: index.query(vector, top_k=3, filter={"k": 1}),
        "fetch": lambda: index.fetch(["a0", "a1"]),
        "count": lambda: index.count(),
        "delete": lambda: index.delete(ids=["a0"]),
        "list_namespaces": lambda: index.list_namespaces(),
        "list_ids": lambda: index.list_ids(limit=10),  # type: ignore[attr-defined]
        "describe": lambda: index.describe(),
    }


def _check_every_call(store: vectorport.Store, faults: Faults, seconds: float) -> None:
    index = store.create_index("stall", 4, "cosine")
    index.upsert([(f"a{i}", [1.0, i / 10, 0.5, 0.25], {"k": i}) for i in range(5)])
    faults.stall = True
    try:
        for name, call in _calls(index).items():
            try:
                _bounded(seconds, call)
            except AssertionError as exc:
                raise AssertionError(f"{name}: {exc}") from None
        _bounded(seconds, store.list_indexes)
        _bounded(seconds, lambda: store.describe_index("stall"))
        _bounded(seconds, lambda: store.create_index("other", 4))
        _bounded(seconds, lambda: store.delete_index("other", missing_ok=True))
    finally:
        faults.stall = False


def test_every_pinecone_call_on_a_stalled_server_is_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _warm("pinecone")
    monkeypatch.setenv("VP_TEST_PINECONE_KEY", PINECONE_KEY)
    faults = Faults()
    with pinecone_emulator.emulate(faults=faults, api_key=PINECONE_KEY) as emu:
        url = (f"pinecone://?api_key_env=VP_TEST_PINECONE_KEY&host={emu.server.url}"
               "&timeout=1.5&consistency_timeout=1&ready_timeout=5")
        with vectorport.connect(url) as store:
            _check_every_call(store, faults, 1.5)


def test_every_turbopuffer_call_on_a_stalled_server_is_bounded() -> None:
    _warm("turbopuffer")
    faults = Faults()
    with turbopuffer_emulator.running(faults=faults) as server:
        url = f"turbopuffer://?base_url={server.url}&api_key={TPUF_KEY}&timeout=1.5"
        with vectorport.connect(url) as store:
            _check_every_call(store, faults, 1.5)


def test_every_milvus_call_on_a_stopped_server_is_bounded() -> None:
    """A Milvus server (``milvus-lite server``) stopped with SIGSTOP once connected: its
    connections stay open and nothing answers. Collection calls (has, describe, create,
    drop, list) are bounded as data calls are."""
    import os
    import signal

    from vectorport.testing.milvus import lite_server_process

    _warm("milvus")
    with lite_server_process() as (url, process), \
            vectorport.connect(url + "?timeout=1.5") as store:
        index = store.create_index("stall", 4, "cosine")
        index.upsert([(f"a{i}", [1.0, i / 10, 0.5, 0.25], {"k": i}) for i in range(5)])
        os.kill(process.pid, signal.SIGSTOP)
        calls: dict[str, Callable[[], Any]] = {
            **_calls(index),
            "list_indexes": store.list_indexes,
            "describe_index": lambda: store.describe_index("stall"),
            "create_index": lambda: store.create_index("other", 4),
            "delete_index": lambda: store.delete_index("stall"),
        }
        for name, call in calls.items():
            try:
                _bounded(1.5, call)
            except AssertionError as exc:
                raise AssertionError(f"{name}: {exc}") from None


def test_chroma_http_calls_on_a_frozen_server_are_cut_to_the_call_deadline() -> None:
    """A ``chroma run`` server frozen (SIGSTOP) once connected, a store timeout of 20 s
    and a per-call deadline of 1.5 s: each request is cut to what is left of the call,
    so every call ends within the call's deadline, not the store's timeout."""
    from urllib.parse import urlsplit

    from vectorport.testing.chroma import running_chroma_server
    from vectorport.testing.stalled import listening_pid, stopped

    _warm("chroma+http")
    with running_chroma_server(docker=False) as url:
        if url.launch.via != "embedded":
            pytest.skip("needs a chroma server of its own to freeze")
        pid = listening_pid(urlsplit(url).port or 0)
        with vectorport.connect(url + "?timeout=20") as store:
            index = store.create_index("frozen", 4, "cosine")
            index.upsert([(f"a{i}", [1.0, i / 10, 0.5, 0.25], {"k": i}) for i in range(5)])
            calls = {**_calls(index), "list_indexes": store.list_indexes,
                     "describe_index": lambda: store.describe_index("frozen")}
            with stopped(pid):
                for name, call in calls.items():
                    if name == "list_ids":
                        continue  # not declared by chroma
                    with vectorport.deadline(1.5):
                        try:
                            _bounded_or_hung(1.5, call)
                        except AssertionError as exc:
                            raise AssertionError(f"{name}: {exc}") from None


# -- one deadline over every retry, Retry-After, batches -------------------------------------


def test_one_deadline_covers_nested_retries_and_honours_retry_after(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Every request answered 503 with ``Retry-After: 0.4``: the adapter's per-request
    retries sit inside the facade's, yet the call ends within its deadline, and no
    retry comes sooner than the server asked."""
    _warm("pinecone")
    monkeypatch.setenv("VP_TEST_PINECONE_KEY", PINECONE_KEY)
    faults = Faults(seed=7)
    with pinecone_emulator.emulate(faults=faults, api_key=PINECONE_KEY,
                                   retry_after_seconds=0.4) as emu:
        url = (f"pinecone://?api_key_env=VP_TEST_PINECONE_KEY&host={emu.server.url}"
               "&timeout=2")
        with vectorport.connect(url) as store:
            index = store.create_index("retry_after", 4, "cosine")
            faults.error_statuses = (503,)
            faults.error_rate = 1.0
            caplog.set_level(logging.INFO, logger="vectorport.retry")
            error = _bounded(2.0, lambda: index.query([1.0, 0, 0, 0], top_k=1))
            assert isinstance(error, DeadlineExceededError)
            waits = [float(m) for m in re.findall(r"retry \d+ in ([0-9.]+)s", caplog.text)]
            assert waits, "the call was retried"
            assert min(waits) >= 0.4
            faults.error_rate = 0.0


class _StallAfter:
    """An operation hook that stalls the emulator after the n-th upsert batch."""

    def __init__(self, batches: int, faults: Faults) -> None:
        self.remaining, self.faults = batches, faults

    @hookimpl
    def vectorport_after_operation(self, event: OperationEvent, error: Any,
                                   seconds: float) -> None:
        if event.operation == "upsert" and error is None:
            self.remaining -= 1
            if self.remaining == 0:
                self.faults.stall = True


@pytest.mark.parametrize("backend", ["pinecone", "turbopuffer"])
def test_a_batched_upsert_has_one_deadline_for_all_its_batches(
        backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten batches, the server stalls once two have been answered: the upsert fails
    within one deadline (not one per remaining batch) and ``written_ids`` is exactly
    what is stored (the emulator never applies a stalled request).

    Both backends write up to four batches at once, so the two answered first are any
    two of those in flight, not necessarily the first two in batch order: what is
    checked is whole batches, at least two, not all, and the same set a fetch finds."""
    _warm(backend)
    monkeypatch.setenv("VP_TEST_PINECONE_KEY", PINECONE_KEY)
    faults = Faults()
    registry = Registry()
    registry.register_plugin(_StallAfter(2, faults), "staller")
    rows = [(f"r{i:03d}", [1.0, i / 100, 0.5, 0.25]) for i in range(100)]
    batches = [{r[0] for r in rows[i:i + 10]} for i in range(0, 100, 10)]
    with _emulated(backend, faults) as url, \
            vectorport.connect(url + "&timeout=2", registry=registry) as store:
        index = store.create_index("batches", 4, "cosine")
        error = _bounded(2.0, lambda: index.upsert(rows, batch_size=10))
        assert isinstance(error, BackendError)
        faults.stall = False
        written = set(error.written_ids)
        assert len(error.written_ids) == len(written)
        whole = [batch for batch in batches if batch <= written]
        assert set().union(*whole) == written, "written_ids holds only whole batches"
        assert 2 <= len(whole) < len(batches)
        assert set(index.fetch([r[0] for r in rows])) == written


def _emulated(backend: str, faults: Faults) -> Any:
    from contextlib import contextmanager

    @contextmanager
    def opened() -> Iterator[str]:
        if backend == "pinecone":
            with pinecone_emulator.running(faults=faults, api_key=PINECONE_KEY) as server:
                yield f"pinecone://?api_key_env=VP_TEST_PINECONE_KEY&host={server.url}"
        else:
            with turbopuffer_emulator.running(faults=faults) as server:
                yield f"turbopuffer://?base_url={server.url}&api_key={TPUF_KEY}"

    return opened()


# -- Pinecone list_ids under transient faults -----------------------------------------------


def test_pinecone_list_ids_survives_transient_faults(monkeypatch: pytest.MonkeyPatch) -> None:
    """20% of requests answered 429/503 (no Retry-After) or dropped after being handled:
    listing many pages still returns every id, each page retried on its own."""
    _warm("pinecone")
    monkeypatch.setenv("VP_TEST_PINECONE_KEY", PINECONE_KEY)
    faults = Faults(seed=11)
    with pinecone_emulator.emulate(faults=faults, api_key=PINECONE_KEY,
                                   retry_after_seconds=None) as emu:
        url = f"pinecone://?api_key_env=VP_TEST_PINECONE_KEY&host={emu.server.url}"
        with vectorport.connect(url, retry=vectorport.RetryPolicy(attempts=2)) as store:
            index = store.create_index("listing", 4, "cosine")
            ids = [f"id{i:04d}" for i in range(1200)]
            index.upsert([(i, [1.0, n / 1200, 0.5, 0.25]) for n, i in enumerate(ids)])
            faults.error_rate, faults.drop_rate = 0.1, 0.1
            try:
                for _ in range(3):
                    page = index.list_ids(limit=1200)  # type: ignore[attr-defined]
                    assert sorted(page.ids) == ids
            finally:
                faults.error_rate, faults.drop_rate = 0.0, 0.0


# -- configuration ------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf"])
def test_a_bad_timeout_is_a_config_error(value: str, tmp_path: Any) -> None:
    with pytest.raises(ConfigError) as info:
        vectorport.connect(f"local://{tmp_path}/db?timeout={value}")
    assert "timeout" in str(info.value)


def test_every_backend_accepts_the_timeout_option(tmp_path: Any) -> None:
    with vectorport.connect(f"local://{tmp_path}/db?timeout=7.5") as store:
        assert store.timeout == 7.5
        assert store.runner.timeout == 7.5
    with vectorport.connect(f"local://{tmp_path}/db") as store:
        assert store.timeout == vectorport.core.retry.DEFAULT_TIMEOUT == 30.0
    with vectorport.connect(f"lancedb://{tmp_path}/lance?timeout=3") as store:
        assert store.timeout == 3.0


def test_nested_deadlines_keep_the_earlier() -> None:
    from vectorport.core.retry import remaining

    assert remaining() is None
    with vectorport.deadline(10):
        with vectorport.deadline(60):
            left = remaining()
            assert left is not None and left <= 10
        with vectorport.deadline(0.5):
            left = remaining()
            assert left is not None and left <= 0.5
    with pytest.raises(ValueError), vectorport.deadline(0):
        pass


# -- a PostgreSQL that dies in the middle of a batched upsert --------------------------------


@pytest.fixture
def own_postgres() -> Iterator[Any]:
    with postgres_of_its_own("vectorport-deadline-") as server:
        yield server


def _pg_url(server: Any, seconds: float) -> str:
    from vectorport.testing.pgvector import as_pgvector_url, ensure_vector_extension

    url = as_pgvector_url(server.get_uri()) + f"&timeout={seconds:g}"
    ensure_vector_extension(url)
    return url


def test_a_dead_postgres_surfaces_within_one_deadline(own_postgres: Any) -> None:
    """Twenty batches, the server stopped after the second: the upsert fails within the
    call's deadline (with the default retry policy and pool wait), not after retrying
    every remaining batch in full."""
    url = _pg_url(own_postgres, 3.0)
    registry = Registry()
    registry.register_plugin(DownAfterBatches(2, own_postgres.stop), "stopper")
    rows = [(f"r{i:03d}", [1.0, i / 200, 0.5, 0.25]) for i in range(200)]
    with vectorport.connect(url, registry=registry) as store:
        index = store.create_index("dying", 4, "cosine")
        error = _bounded(3.0, lambda: index.upsert(rows, batch_size=10))
        written = set(error.written_ids)  # type: ignore[attr-defined]
        assert {r[0] for r in rows[:20]} <= written < {r[0] for r in rows}


def _bounded_or_hung(seconds: float, fn: Callable[[], Any]) -> BaseException:
    """:func:`_bounded` in a thread, so that a call that hangs fails the test instead of
    hanging it (the thread finishes once the server is thawed)."""
    import contextvars
    import threading

    outcome: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(_bounded(seconds, fn))
        except BaseException as exc:  # reported below, in the test's thread
            outcome.append(exc)

    # in a copy of this context: an enclosing vectorport.deadline goes along
    thread = threading.Thread(target=contextvars.copy_context().run, args=(run,), daemon=True)
    thread.start()
    thread.join(seconds + MARGIN + 1.0)
    assert not thread.is_alive(), f"still waiting {seconds + MARGIN + 1.0:.1f} s later"
    if not isinstance(outcome[0], TransientBackendError):
        raise outcome[0]
    return outcome[0]


def _five_records(store: vectorport.Store, name: str) -> vectorport.Index:
    """A 4-d cosine index holding a0 … a4 (metadata ``{"k": i}``), for the frozen-server
    tests."""
    index = store.create_index(name, 4, "cosine")
    index.upsert([(f"a{i}", [1.0, i / 10, 0.5, 0.25], {"k": i}) for i in range(5)])
    return index


def test_a_frozen_postgres_mid_session_is_bounded(own_postgres: Any) -> None:
    """The server is frozen (SIGSTOP) while the pool holds open connections: nothing
    the server would enforce can act, and TCP keeps being acknowledged by its kernel.
    Every call still fails within its deadline with DeadlineExceededError (a watchdog
    severs the connection), sync and async, and the store works again once the server
    is thawed."""
    import asyncio

    from vectorport.core.async_store import connect_async
    from vectorport.testing.stalled import stopped

    url = _pg_url(own_postgres, 1.5)
    vector = [1.0, 0.5, 0.25, 0.0]
    with vectorport.connect(url) as store:
        index = _five_records(store, "frozen")
        calls: dict[str, Callable[[], Any]] = {
            "query": lambda: index.query(vector, top_k=3),
            "upsert": lambda: index.upsert([("b1", vector, {"k": 1})]),
            "count": index.count,
            "fetch": lambda: index.fetch(["a0"]),
            "list_indexes": store.list_indexes,
        }

        async def async_query() -> None:
            async with await connect_async(url) as astore:
                aindex = await astore.index("frozen")
                await aindex.query(vector, top_k=3)
                with stopped(own_postgres.get_pid()):
                    await aindex.query(vector, top_k=3)

        with stopped(own_postgres.get_pid()):
            for name, call in calls.items():
                try:
                    error = _bounded_or_hung(1.5, call)
                except AssertionError as exc:
                    raise AssertionError(f"{name}: {exc}") from None
                assert isinstance(error, DeadlineExceededError), name
        error = _bounded_or_hung(1.5, lambda: asyncio.run(async_query()))
        assert isinstance(error, DeadlineExceededError)
        assert index.count() == 5  # thawed: the pool replaced what was severed


def test_the_pgvector_watchdog_severs_only_what_has_expired() -> None:
    """A real socket pair: an expired arming shuts the socket down (the peer reads
    EOF), a far one (past the platform's time_t, as vectorport.deadline(1e12) would
    give) neither fires nor stops the watchdog."""
    import socket

    from vectorport.adapters.pgvector.watchdog import Watchdog

    dog = Watchdog()
    far_a, far_b = socket.socketpair()
    near_a, near_b = socket.socketpair()
    with far_a, far_b, near_a, near_b:
        far = dog.arm(far_a, time.monotonic() + 1e12)
        near = dog.arm(near_a, time.monotonic() + 0.2)
        near_b.settimeout(2 + MARGIN)
        assert near_b.recv(1) == b""  # severed: EOF
        assert dog.disarm(near)
        assert not dog.disarm(far)
        again = dog.arm(far_a, time.monotonic() + 0.1)  # the thread is still watching
        far_b.settimeout(2 + MARGIN)
        assert far_b.recv(1) == b""
        assert dog.disarm(again)


def test_the_pgvector_watchdog_keeps_time_for_deadlines_armed_while_it_sleeps() -> None:
    """Arming a later deadline than the thread's next wake does not wake it; arming an
    earlier one does. Either way each connection is severed at its own deadline (real
    socket pairs, the peer reads EOF), and nothing not yet due is severed."""
    import socket

    from vectorport.adapters.pgvector.watchdog import Watchdog

    dog = Watchdog()
    pairs = [socket.socketpair() for _ in range(3)]
    try:
        (first, _first_peer), (later, later_peer), (earlier, earlier_peer) = pairs
        start = time.monotonic()
        token = dog.arm(first, start + 0.6)  # the thread now sleeps until +0.6
        assert not dog.disarm(token)  # nothing armed; the thread still sleeps until +0.6
        late = dog.arm(later, start + 0.9)  # later than its wake: no wake-up needed
        soon = dog.arm(earlier, start + 0.2)  # earlier: it must be woken
        earlier_peer.settimeout(2 + MARGIN)
        assert earlier_peer.recv(1) == b""
        assert dog.disarm(soon)
        assert time.monotonic() - start < 0.6  # severed at its own deadline, not at +0.6
        later_peer.settimeout(0.2)
        with pytest.raises(TimeoutError):
            later_peer.recv(1)  # not due yet
        later_peer.settimeout(2 + MARGIN)
        assert later_peer.recv(1) == b""
        assert time.monotonic() - start >= 0.9
        assert dog.disarm(late)
    finally:
        for a, b in pairs:
            a.close()
            b.close()


def test_a_write_failed_at_its_deadline_never_lands_later(own_postgres: Any) -> None:
    """Each write (and an async upsert) is sent on a live pooled connection to a server
    frozen just before: the call fails at its deadline, and once the server runs again
    the write must not be executed from the severed connection's buffer (as a lone
    autocommit statement would be): nothing changed, whatever the call."""
    import asyncio

    from vectorport.core.async_store import connect_async
    from vectorport.testing.stalled import stopped

    url = _pg_url(own_postgres, 1.5)
    vector = [1.0, 0.5, 0.25, 0.0]
    with vectorport.connect(url) as store:
        index = _five_records(store, "ghosts")
        writes: dict[str, Callable[[], Any]] = {
            "upsert": lambda: index.upsert([("b1", vector, {"k": 1})]),
            "delete": lambda: index.delete(["a1"]),
            "patch": lambda: index.patch("a2", metadata={"k": 99}),
        }
        for name, write in writes.items():
            assert index.count() == 5  # a live connection in the pool for the write
            with stopped(own_postgres.get_pid()):
                error = _bounded_or_hung(1.5, write)
                assert isinstance(error, DeadlineExceededError), name
            time.sleep(0.3)  # the thawed server reads what the severed socket held
            stored = index.fetch([f"a{i}" for i in range(5)] + ["b1"])
            assert sorted(stored) == [f"a{i}" for i in range(5)], name
            assert stored["a2"].metadata == {"k": 2}, name

        async def async_upsert() -> None:
            async with await connect_async(url) as astore:
                aindex = await astore.index("ghosts")
                await aindex.query(vector, top_k=1)  # a live connection in its pool
                with stopped(own_postgres.get_pid()):
                    await aindex.upsert([("b2", vector, {"k": 2})])

        error = _bounded_or_hung(1.5, lambda: asyncio.run(async_upsert()))
        assert isinstance(error, DeadlineExceededError)
        time.sleep(0.3)
        assert index.fetch(["b2"]) == {}


def test_a_statement_cut_by_its_deadline_ends_on_the_server_too(own_postgres: Any) -> None:
    """The watchdog shuts the socket of a call whose deadline passed; the server, told
    to check for its client while a statement runs, ends the statement too, instead of
    running it to its end for nobody (and holding its locks meanwhile). A trigger makes
    each inserted row take 50 ms: 400 rows would run 20 s on the server."""
    import asyncio

    import psycopg

    from vectorport.core.async_store import connect_async
    from vectorport.testing.pgvector import libpq_uri

    url = _pg_url(own_postgres, 30)
    rows = [(f"s{i:03d}", [1.0, i / 400, 0.5, 0.25]) for i in range(400)]
    with vectorport.connect(url) as store, psycopg.connect(libpq_uri(url),
                                                           autocommit=True) as admin:
        store.create_index("slowrows", 4, "cosine", index_type="flat")
        table = f'"{store.adapter.schema}"."vp_slowrows"'  # type: ignore[attr-defined]
        admin.execute("CREATE FUNCTION slow_row() RETURNS trigger LANGUAGE plpgsql AS "
                      "$$ BEGIN PERFORM pg_sleep(0.05); RETURN NEW; END $$")
        admin.execute(f"CREATE TRIGGER slow BEFORE INSERT ON {table} "
                      "FOR EACH ROW EXECUTE FUNCTION slow_row()")

        def running() -> int:
            row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE state = "
                                "'active' AND strpos(query, 'vp_slowrows') > 0"
                                " AND pid <> pg_backend_pid()").fetchone()
            return 0 if row is None else int(row[0])

        def ends_soon() -> None:
            for _ in range(50):  # 5 s, against the statement's 20
                if running() == 0:
                    return
                time.sleep(0.1)
            raise AssertionError("the server still runs the statement the deadline cut")

        with pytest.raises(DeadlineExceededError), vectorport.deadline(1.0):
            store.index("slowrows").upsert(rows)
        ends_soon()

        async def async_upsert() -> None:
            async with await connect_async(url) as astore:
                aindex = await astore.index("slowrows")
                with vectorport.deadline(1.0):
                    await aindex.upsert(rows)

        with pytest.raises(DeadlineExceededError):
            asyncio.run(async_upsert())
        ends_soon()
        assert store.index("slowrows").count() == 0

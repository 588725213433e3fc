"""A backend that dies in the middle of a batched upsert.

The typed error says which records were written; after the backend is back, running the
same upsert again completes with nothing lost and nothing duplicated (upsert is
idempotent). The emulators' fault switches (429/503 rates, lag) are exercised by their
own conformance bindings, which run the whole suite with 20% transient faults.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.support.outage import DownAfterBatches, postgres_of_its_own

import vectorport
from vectorport import BackendError
from vectorport.core.registry import Registry
from vectorport.core.retry import RetryPolicy
from vectorport.testing import url_from_env

QUICK_RETRY = RetryPolicy(attempts=3, base_seconds=0.01, cap_seconds=0.05)
BATCH, BATCHES = 50, 8


def _rows() -> list[dict[str, Any]]:
    return [{"id": f"r{i:04d}", "vector": [1.0, i / 100, 0.5, 0.25], "metadata": {"i": i}}
            for i in range(BATCH * BATCHES)]


def _check_death_and_recovery(url: str, kill: Callable[[], None],
                              revive: Callable[[], None]) -> None:
    registry = Registry()
    registry.register_plugin(DownAfterBatches(3, kill), "killer")
    store = vectorport.connect(url, registry=registry, retry=QUICK_RETRY)
    index = store.create_index("faulty", 4, "cosine", exist_ok=True)
    rows = _rows()
    with pytest.raises(BackendError) as info:
        index.upsert(rows, batch_size=BATCH)
    written = info.value.written_ids
    # The kill starts after the third batch; a stop can take a moment to bite and an
    # adapter may send batches concurrently, so which later batches landed varies. What
    # the error reports must be whole batches, and every one of them must be stored.
    batches = [tuple(r["id"] for r in rows[i:i + BATCH]) for i in range(0, len(rows), BATCH)]
    reported = [b for b in batches if set(b) <= set(written)]
    assert sum(len(b) for b in reported) == len(written), "only whole batches are reported"
    assert 3 <= len(reported) < len(batches)
    revive()
    _wait_until_reachable(store)
    stored = index.fetch([r["id"] for r in rows])
    assert set(written) <= set(stored), "every reported record is stored"
    assert index.upsert(rows, batch_size=BATCH) == len(rows)
    assert index.count() == len(rows)
    fetched = index.fetch([r["id"] for r in rows])
    assert {rid: dict(rec.metadata) for rid, rec in fetched.items()} == {
        r["id"]: r["metadata"] for r in rows}
    store.close()


def _wait_until_reachable(store: vectorport.Store, seconds: float = 60.0) -> None:
    """A client's pool reconnects with its own backoff once the server is back."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        try:
            store.list_indexes()
            return
        except BackendError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.fixture
def own_postgres() -> Iterator[Any]:
    with postgres_of_its_own("vectorport-fault-") as server:
        yield server


def test_postgres_stopped_mid_batch(own_postgres: Any) -> None:
    from vectorport.testing.pgvector import as_pgvector_url, ensure_vector_extension

    url = as_pgvector_url(own_postgres.get_uri()) + "&pool_timeout=1"
    ensure_vector_extension(url)
    _check_death_and_recovery(url, own_postgres.stop, own_postgres.start)


class _ChromaServer:
    """A ``chroma run`` process that a test can kill (SIGKILL) and start again on the
    same data and port."""

    def __init__(self) -> None:
        from vectorport.testing.chroma import free_port

        self.data = tempfile.mkdtemp(prefix="vectorport-chroma-fault-")
        self.port = free_port()
        self.process: Any = None

    def start(self) -> None:
        import os
        import subprocess

        from vectorport.testing.chroma import chroma_command, wait_for_heartbeat

        self.process = subprocess.Popen(
            [*chroma_command(), "run", "--path", f"{self.data}/db", "--host", "127.0.0.1",
             "--port", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
        wait_for_heartbeat(f"http://127.0.0.1:{self.port}", self.process, 60)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)


@pytest.fixture
def own_chroma() -> Iterator[_ChromaServer]:
    import shutil

    if url_from_env("chroma"):
        pytest.skip("needs a server of its own to kill; VECTORPORT_TEST_CHROMA_URL is set")
    server = _ChromaServer()
    server.start()
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.kill()
        shutil.rmtree(server.data, ignore_errors=True)


def test_chroma_server_killed_mid_batch(own_chroma: _ChromaServer) -> None:
    _check_death_and_recovery(f"chroma+http://127.0.0.1:{own_chroma.port}", own_chroma.kill,
                              own_chroma.start)

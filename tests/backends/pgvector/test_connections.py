"""The sync connections: the connection given back last is handed out first, so calls
one after another stay on one server process; what is not idle goes back to the pool."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import numpy as np
import psycopg
import pytest

pytest.importorskip("pgvector")

from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool

import vectorport
from vectorport.adapters.pgvector.connections import (
    CLOSE_WAIT,
    CONNECTION_KWARGS,
    Connections,
    PooledConnection,
)
from vectorport.testing.pgvector import libpq_uri


def _backends(pg_url: str, application: str) -> dict[int, object]:
    """Each server process of ``application``: when its state last changed."""
    with psycopg.connect(libpq_uri(pg_url), autocommit=True) as conn:
        rows = conn.execute("SELECT pid, state_change FROM pg_stat_activity "
                            "WHERE application_name = %s", (application,)).fetchall()
    return dict(rows)


def test_calls_one_after_another_use_one_server_process(pg_url: str) -> None:
    application = f"vp-keep-{uuid.uuid4().hex[:8]}"
    url = f"{pg_url}&pool_min_size=2&application_name={application}"
    rng = np.random.default_rng(3)
    with vectorport.connect(url) as store:
        index = store.create_index(f"keep_{uuid.uuid4().hex[:8]}", 8, "cosine")
        index.upsert([(f"r{i}", rng.normal(size=8)) for i in range(50)], batch_size=10)
        deadline = time.monotonic() + 10
        # the pool opens its second connection in the background
        while len(before := _backends(pg_url, application)) < 2:
            assert time.monotonic() < deadline, "the pool never opened its second"
            time.sleep(0.05)
        time.sleep(0.01)  # state_change has microseconds; make each change visible
        for q in rng.normal(size=(20, 8)):
            index.query(q, top_k=3)
        after = _backends(pg_url, application)
        used = [pid for pid, changed in after.items() if before.get(pid) != changed]
        assert len(used) == 1, f"{len(used)} server processes answered 20 calls in a row"
        store.delete_index(index.name)


@pytest.fixture
def pool(pg_url: str) -> Iterator[ConnectionPool[PooledConnection]]:
    opened: ConnectionPool[PooledConnection] = ConnectionPool(
        libpq_uri(pg_url), connection_class=PooledConnection, min_size=1, max_size=2,
        kwargs=CONNECTION_KWARGS, open=True)
    yield opened
    opened.close()


def test_overlapping_calls_get_connections_of_their_own(
        pool: ConnectionPool[PooledConnection]) -> None:
    connections = Connections(pool, 5.0)
    first, kept = connections.take()
    second, other_kept = connections.take()
    assert (kept, other_kept) == (True, False) and first is not second
    connections.give_back(second, other_kept)
    connections.give_back(first, kept)
    again, kept_again = connections.take()
    assert again is first and kept_again
    connections.give_back(again, kept_again)
    connections.close()
    assert pool.closed and first.closed


def test_a_connection_left_in_a_transaction_goes_back_through_the_pool(
        pool: ConnectionPool[PooledConnection]) -> None:
    connections = Connections(pool, 5.0)
    conn, kept = connections.take()
    conn.execute("BEGIN")
    conn.execute("CREATE TEMP TABLE left_open (x int)")
    connections.give_back(conn, kept)  # the pool rolls it back
    again, kept = connections.take()
    assert again.pgconn.transaction_status == TransactionStatus.IDLE
    assert again.execute("SELECT to_regclass('pg_temp.left_open')").fetchone() == (None,)
    connections.give_back(again, kept)
    connections.close()


def test_closing_does_not_wait_for_a_call_holding_the_kept_connection(
        pool: ConnectionPool[PooledConnection]) -> None:
    """A call stalled on a hung server holds the kept connection: closing goes on
    without it, and the connection is closed when that call gives it back."""
    connections = Connections(pool, 5.0)
    conn, kept = connections.take()
    started = time.monotonic()
    connections.close()
    assert time.monotonic() - started < CLOSE_WAIT + 1.0
    assert pool.closed and not conn.closed
    connections.give_back(conn, kept)
    assert conn.closed


def test_one_connection_pools_keep_nothing_back(pg_url: str) -> None:
    """With ``pool_max_size=1`` a caller waiting on the pool must be given the
    connection when the other call ends."""
    single: ConnectionPool[PooledConnection] = ConnectionPool(
        libpq_uri(pg_url), connection_class=PooledConnection, min_size=1, max_size=1,
        kwargs=CONNECTION_KWARGS, open=True)
    connections = Connections(single, 5.0)
    conn, kept = connections.take()
    got: list[object] = []

    def waiter() -> None:
        other, other_kept = connections.take()
        got.append(other)
        connections.give_back(other, other_kept)

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.1)
    connections.give_back(conn, kept)
    thread.join(5)
    assert got == [conn]
    connections.close()

"""An Index kept across a delete of its index never reaches the table created again
under its name: every call answers as the reference adapter's handles do
(``IndexNotFoundError``), through the same store and through another connection to
the database (told by the table's OID, see adapters/pgvector/tables.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import suppress

import pytest

pytest.importorskip("psycopg")

import vectorport
from vectorport.conformance import handles as stale
from vectorport.core.async_store import connect_async


@pytest.fixture
def url(pg_url: str) -> Iterator[str]:
    """The run's PostgreSQL (conftest.py), left without this module's indexes."""
    yield pg_url
    with vectorport.connect(pg_url) as store:
        for name in ("gen_idx", "first_idx", "again_idx"):
            with suppress(vectorport.IndexNotFoundError):
                store.delete_index(name)


@pytest.mark.parametrize("where", ["same store", "another connection"])
def test_a_handle_of_a_dropped_index_reaches_no_new_one(where: str, url: str) -> None:
    want = stale.oracle_outcomes()
    with vectorport.connect(url) as store, vectorport.connect(url) as other:
        again = store if where == "same store" else other
        stale.assert_like_oracle(stale.stale_handle_outcomes(store, again), want)


@pytest.mark.parametrize("call", [*stale.CALLS, *sorted(stale.OPTIONAL_CALLS)])
def test_each_call_notices_a_re_creation_by_another_connection(call: str, url: str) -> None:
    """Whichever call comes first after another connection replaced the index (not
    only the first of the shared sequence), it answers as the oracle's does, the new
    index is untouched, and the handle stays refused (reads notice when they return a
    row: the new index holds one here)."""
    with vectorport.connect(url) as store, vectorport.connect(url) as other:
        got = stale.first_call_outcome(store, other, call)
    assert got == stale.on_oracle(lambda s, a: stale.first_call_outcome(s, a, call))


def test_a_handle_opened_again_reaches_the_new_index(url: str) -> None:
    with vectorport.connect(url) as store, vectorport.connect(url) as other:
        got = stale.reopened_outcome(store, other)
    assert got == stale.on_oracle(stale.reopened_outcome)


@pytest.mark.parametrize("call", ["upsert", "query", "fetch"])
def test_the_native_async_calls_notice_too(call: str, url: str) -> None:
    """The async upsert, query and fetch run their own statements (psycopg's async
    connections): they refuse the same way, and the async upsert writes nothing."""

    async def run() -> None:
        async with await connect_async(url) as astore:
            old = await astore.create_index("gen_idx", 2, "dotproduct")
            await old.upsert([("a", [1.0, 0.0])], namespace="n")
            with vectorport.connect(url) as other:
                other.delete_index("gen_idx")
                other.create_index("gen_idx", 2, "euclidean").upsert([("b", [0.0, 1.0])],
                                                                     namespace="n")
            with pytest.raises(vectorport.IndexNotFoundError):
                if call == "upsert":
                    await old.upsert([("c", [1.0, 1.0])], namespace="n")
                elif call == "query":
                    await old.query([1.0, 0.0], namespace="n")
                else:
                    await old.fetch(["b"], "n")

    asyncio.run(run())
    with vectorport.connect(url) as other:
        assert sorted(other.index("gen_idx").fetch(["b", "c"], "n")) == ["b"]

"""A handle kept across a delete of its Pinecone index reaches no index created again
under its name: through the same store always, through another connection where the
adapter reads the index's description, stats or an engine failure (the creation token
in the index's tags tells the two indexes apart; both have the same host)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

pytest.importorskip("pinecone")

import vectorport
from vectorport.conformance import handles as stale
from vectorport.testing.emulators import pinecone as emulator
from vectorport.testing.emulators.pinecone.server import PineconeEmulator

KEY_VARIABLE = "VECTORPORT_TEST_PINECONE_HANDLES_KEY"

NOTICED_ELSEWHERE = ("count", "list_namespaces", "delete", "delete_namespace")
"""The calls that notice an index created again by another connection with the same
dimension (docs/backends/pinecone.md): the stats name the metric, deletes describe
the index first. Upserts, queries and fetches of that dimension do not."""


@pytest.fixture(scope="module")
def emu() -> Iterator[PineconeEmulator]:
    with emulator.emulate() as running, pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_VARIABLE, "emulator-key")
        yield running


@pytest.fixture
def url(emu: PineconeEmulator) -> Iterator[str]:
    address = f"pinecone://?api_key_env={KEY_VARIABLE}&host={emu.server.url}"
    yield address
    with vectorport.connect(address) as store:
        for name in store.list_indexes():
            store.delete_index(name)


def test_a_handle_of_an_index_dropped_here_reaches_no_new_one(url: str) -> None:
    """Dropped and created again with another metric through the same store: the old
    handle answers as the reference adapter's does, and the new index is untouched."""
    with vectorport.connect(url) as store:
        stale.assert_like_oracle(stale.stale_handle_outcomes(store, store), stale.oracle_outcomes())


def test_another_connection_s_new_index_is_noticed_by_stats_and_deletes(url: str) -> None:
    """Created again elsewhere with the same dimension: the calls that read the index's
    stats or description answer as the oracle does, and so does every call after."""
    want = stale.oracle_outcomes()
    with vectorport.connect(url) as store, vectorport.connect(url) as again:
        got = stale.stale_handle_outcomes(store, again)
    assert {call: got[call] for call in NOTICED_ELSEWHERE} == {
        call: want[call] for call in NOTICED_ELSEWHERE}
    assert got["list_ids"] == want["list_ids"]  # after count noticed it: every call does


def test_another_connection_s_index_of_another_dimension_is_not_written(url: str) -> None:
    """Created again elsewhere with another dimension: Pinecone refuses the old handle's
    upserts and queries, which the adapter reads as a stale handle (nothing written)."""
    v2, v3 = np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0, 0.0], np.float32)
    with vectorport.connect(url) as store, vectorport.connect(url) as again:
        old = store.create_index("dims", 2, "cosine")
        old.upsert([("a", v2)])
        again.delete_index("dims")
        new = again.create_index("dims", 3, "cosine")
        new.upsert([("b", v3)])
        with pytest.raises(vectorport.IndexNotFoundError):
            old.upsert([("c", v2)])
        with pytest.raises(vectorport.IndexNotFoundError):
            old.query(v2)
        assert sorted(new.fetch(["a", "b", "c"])) == ["b"]
        assert [m.id for m in store.index("dims").query(v3)] == ["b"]  # opened again: fine


def test_the_creating_handle_stays_valid_with_backend_options(url: str) -> None:
    """Pinecone's description holds no backend options: the handle that created the
    index with some is still its handle where the adapter compares it with the stored
    description (deletes, stats)."""
    with vectorport.connect(url) as store:
        index = store.create_index("opts", 2, "cosine",
                                   backend_options={"pinecone": {"tags": {"team": "a"}}})
        index.upsert([("a", [1.0, 0.0]), ("b", [0.0, 1.0])])
        assert index.count() == 2
        assert index.list_namespaces() == [""]
        index.delete(["b"])
        assert sorted(index.fetch(["a", "b"])) == ["a"]

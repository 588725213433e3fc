"""A handle kept across a delete of its turbopuffer index reaches no index created again
under its name: through the same store always, through another connection where the
adapter reads the catalog row (its creation token tells the two indexes apart) or the
engine refuses a request of the old distance metric or dimension."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

pytest.importorskip("turbopuffer")

import vectorport
from vectorport.conformance import handles as stale
from vectorport.testing.emulators.http import EmulatorServer
from vectorport.testing.emulators.turbopuffer import DEFAULT_API_KEY, running

KEY_ENV = "VECTORPORT_TEST_TURBOPUFFER_HANDLES_KEY"


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with running() as srv:
        yield srv


@pytest.fixture
def url(server: EmulatorServer) -> Iterator[str]:
    os.environ[KEY_ENV] = DEFAULT_API_KEY
    address = f"turbopuffer://?base_url={server.url}&api_key_env={KEY_ENV}"
    yield address
    with vectorport.connect(address) as store:
        for name in store.list_indexes():
            store.delete_index(name)


COSINE_FIRST = (2, "cosine")
"""turbopuffer has no dot product: the first index is a cosine one (the second,
euclidean, differs in metric all the same)."""


def _outcomes(store: vectorport.Store, again: vectorport.Store) -> dict[str, str]:
    return stale.stale_handle_outcomes(store, again, first=COSINE_FIRST)


@pytest.mark.parametrize("where", ["same store", "another connection"])
def test_a_handle_of_a_dropped_index_reaches_no_new_one(where: str, url: str) -> None:
    """Dropped and created again with another metric, through the same store or
    another connection: the old handle answers as the reference adapter's does
    (another connection's index is noticed by the first upsert, which turbopuffer
    refuses for its distance metric), and the new index is untouched."""
    want = stale.oracle_outcomes(first=COSINE_FIRST)
    with vectorport.connect(url) as store:
        if where == "same store":
            stale.assert_like_oracle(_outcomes(store, store), want)
            return
        with vectorport.connect(url) as again:
            stale.assert_like_oracle(_outcomes(store, again), want)


def test_another_connection_s_index_is_noticed_by_deletes_and_listings(url: str) -> None:
    """Created again elsewhere with the same metric and dimension (nothing the engine
    would refuse): deletes, patches and listings of namespaces read the catalog row
    first, so they refuse the old handle, and every call does from then on."""
    with vectorport.connect(url) as store, vectorport.connect(url) as again:
        old = store.create_index("same", 2, "cosine")
        old.upsert([("a", [1.0, 0.0])])
        again.delete_index("same")
        new = again.create_index("same", 2, "cosine")
        new.upsert([("b", [0.0, 1.0])])
        with pytest.raises(vectorport.IndexNotFoundError):
            old.delete(["b"])
        with pytest.raises(vectorport.IndexNotFoundError):
            old.upsert([("c", [1.0, 1.0])])
        assert sorted(new.fetch(["a", "b", "c"])) == ["b"]
        assert [m.id for m in store.index("same").query([0.0, 1.0])] == ["b"]


def test_the_creating_handle_stays_valid_with_tuples_among_options(url: str) -> None:
    """The catalog's JSON holds lists where the created spec held tuples: the handle
    that created the index is still its handle where the adapter reads the row."""
    with vectorport.connect(url) as store:
        index = store.create_index("tuple_idx", 2, "cosine",
                                   backend_options={"other": {"tags": ("a", "b")}})
        index.upsert([("a", [1.0, 0.0]), ("b", [0.0, 1.0])])
        assert index.list_namespaces() == [""]
        index.delete(["b"])
        assert sorted(index.fetch(["a", "b"])) == ["a"]


def test_another_connection_s_index_of_another_dimension_fails_queries_as_stale(
        url: str) -> None:
    """Created again elsewhere with another dimension: turbopuffer refuses the old
    handle's query, which the adapter reads as a stale handle."""
    with vectorport.connect(url) as store, vectorport.connect(url) as again:
        old = store.create_index("dims", 2, "cosine")
        old.upsert([("a", [1.0, 0.0])])
        again.delete_index("dims")
        again.create_index("dims", 3, "cosine").upsert([("b", [0.0, 1.0, 0.0])])
        with pytest.raises(vectorport.IndexNotFoundError):
            old.query([1.0, 0.0])
        with pytest.raises(vectorport.IndexNotFoundError):
            old.count()  # every call, once noticed

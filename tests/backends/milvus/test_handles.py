"""An Index kept across a delete of its index never reaches the collection created
again under its name: every call answers as the reference adapter's handles do
(``IndexNotFoundError``), through the same store and through another connection of the
process (which replaces pymilvus' cached schema, see adapters/milvus/generations.py)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

import vectorport
from vectorport.conformance import handles as stale
from vectorport.testing.milvus import lite_major_version, milvus_url


@pytest.fixture
def url() -> Iterator[str]:
    with milvus_url() as launched:
        yield launched


@pytest.mark.parametrize("where", ["same store", "another connection"])
def test_a_handle_of_a_dropped_index_reaches_no_new_one(where: str, url: str) -> None:
    want = stale.oracle_outcomes()
    with vectorport.connect(url) as store, vectorport.connect(url) as other:
        again = store if where == "same store" else other
        stale.assert_like_oracle(stale.stale_handle_outcomes(store, again), want)


@pytest.mark.parametrize("call", stale.CALLS)
def test_each_call_notices_a_re_creation_by_another_connection(call: str, url: str) -> None:
    """Whichever call comes first after another connection replaced the index (not
    only the first of the shared sequence), it answers as the oracle's does, the new
    index is untouched, and the handle stays refused."""
    with vectorport.connect(url) as store, vectorport.connect(url) as other:
        got = stale.first_call_outcome(store, other, call)
    assert got == stale.on_oracle(lambda s, a: stale.first_call_outcome(s, a, call))


def test_a_handle_opened_again_reaches_the_new_index(url: str) -> None:
    with vectorport.connect(url) as store, vectorport.connect(url) as other:
        got = stale.reopened_outcome(store, other)
    assert got == stale.on_oracle(stale.reopened_outcome)


_RECREATE = """
import sys, vectorport
with vectorport.connect(sys.argv[1]) as store:
    store.delete_index("proc_idx")
    store.create_index("proc_idx", 3, "euclidean").upsert([("b", [0.0, 0.0, 1.0])],
                                                          namespace="n")
"""


def test_another_process_re_creating_with_another_dimension_is_noticed() -> None:
    """Another process shares no pymilvus cache: the first call the engine fails (an
    upsert of the old dimension) reads the spec again and is refused, writing nothing."""
    if lite_major_version() < 3:
        pytest.skip("milvus-lite 2 has no server subcommand")
    with milvus_url(mode="server") as server:
        if not server.startswith("milvus://127.0.0.1:"):
            pytest.skip("VECTORPORT_TEST_MILVUS_URL is set")
        with vectorport.connect(server) as store:
            old = store.create_index("proc_idx", 2, "dotproduct")
            old.upsert([("a", [1.0, 0.0])], namespace="n")
            subprocess.run([sys.executable, "-c", _RECREATE, server], check=True,
                           timeout=120)
            with pytest.raises(vectorport.IndexNotFoundError):
                old.upsert([("c", [1.0, 1.0])], namespace="n")
            with pytest.raises(vectorport.IndexNotFoundError):
                old.count("n")
            fresh = store.index("proc_idx")
            assert [r.id for r in fresh.iter_records("n")] == ["b"]
            store.delete_index("proc_idx")

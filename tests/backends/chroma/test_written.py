"""Upserts that replace without reading first (``vectorport:written``, see
``adapters/chroma/written.py``): every stored key a new record lacks still goes, across
writers sharing a folder, after patches and bulk loads, and records read and filter
exactly as through the read-first path (a collection without the list).

The read-first path is still what collections written before this version take: the
same writes go to such a collection here, and both must end alike and agree with the
filter oracle.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("chromadb")

from chromadb.api.models.Collection import Collection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.calls import record_calls

import vectorport
from vectorport.adapters.chroma import naming
from vectorport.adapters.chroma.written import (
    DOCUMENTS_KEY,
    MAX_CLEARED_PER_RECORD,
    WRITTEN_KEY,
    written_of,
)
from vectorport.core.filters import matches, parse_filter
from vectorport.core.store import Index, Store

VECTOR = [1.0, 0.0, 0.0, 0.0]
KEYS = ("s", "n", "f", "b", "t")
FILTERS: list[dict[str, Any]] = [
    {"n": {"$exists": True}}, {"n": {"$exists": False}}, {"b": {"$exists": True}},
    {"s": {"$exists": False}}, {"t": "q"}, {"n": 1}, {"n": {"$gt": 1.5}},
    {"f": {"$not": {"$gt": 0.25}}}, {"t": {"$exists": False}}, {"b": False},
]


def canonical(metadata: dict[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in metadata.items()}


@pytest.fixture()
def folder(tmp_path: Any) -> str:
    return f"chroma:///{tmp_path}/chroma"


@pytest.fixture(params=["folder", "memory"])
def store(request: pytest.FixtureRequest, folder: str) -> Iterator[Store]:
    """A folder's store looks the list of written keys up before each write; a memory
    store, the only writer of its database, keeps it on its handles instead."""
    with vectorport.connect(folder if request.param == "folder" else "chroma+memory://") as store:
        yield store


def new_index(store: Store) -> Index:
    return store.create_index(f"written_{uuid.uuid4().hex[:8]}", 4, "cosine")


def data_collection(index: Index, namespace: str = "") -> Collection:
    client = index._adapter._client  # type: ignore[attr-defined]
    found: Collection = client.get_collection(naming.data_collection(index.name, namespace))
    return found


class Reads:
    """Counts chromadb ``Collection.get`` calls (the read before an upsert)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = Collection.get

        def counted(collection: Collection, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return original(collection, *args, **kwargs)

        monkeypatch.setattr(Collection, "get", counted)


def check(index: Index, expected: dict[str, dict[str, Any]],
          documents: dict[str, str | None] | None = None) -> None:
    fetched = index.fetch(list(expected))
    assert {i: dict(r.metadata) for i, r in fetched.items()} == {
        i: canonical(m) for i, m in expected.items()}  # replaced, not merged
    for rid, metadata in expected.items():  # kinds: 1 vs 1.0 vs True
        assert {k: type(v) for k, v in fetched[rid].metadata.items()} == {
            k: type(v) for k, v in canonical(metadata).items()}
    if documents is not None:
        assert {i: r.document for i, r in fetched.items()} == documents
    for raw in FILTERS:
        node = parse_filter(raw)
        want = sorted(i for i, m in expected.items() if matches(node, canonical(m)))
        got = sorted(m.id for m in index.query(VECTOR, top_k=50, filter=raw))
        assert got == want, raw


def test_upserts_replace_without_reading(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    index = new_index(store)
    index.upsert([("a", VECTOR, {"s": "x", "n": 1, "t": ["p", "q"]}),
                  ("b", VECTOR, {"f": 0.5, "b": True})])
    reads = Reads(monkeypatch)
    index.upsert([("a", VECTOR, {"n": 2.5}), ("b", VECTOR, {}), ("c", VECTOR, {"b": False})])
    assert reads.count == 0
    monkeypatch.undo()
    check(index, {"a": {"n": 2.5}, "b": {}, "c": {"b": False}})
    known = written_of(data_collection(index).metadata)
    assert known is not None and not known.documents
    assert known.keys == {"s", "n", "t", "f", "b", "vectorport:kinds"}


def test_a_batch_that_would_clear_many_keys_reads_instead(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    index = new_index(store)
    many = {f"k{i}": i for i in range(MAX_CLEARED_PER_RECORD + 4)}
    index.upsert([("a", VECTOR, many), ("b", VECTOR, {"n": 1})])
    reads = Reads(monkeypatch)
    index.upsert([("a", VECTOR, {}), ("b", VECTOR, {"s": "x"})])  # 21 + 21 None: too many
    assert reads.count == 1
    monkeypatch.undo()
    check(index, {"a": {}, "b": {"s": "x"}})


def test_a_document_turns_the_read_back_on(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    index = new_index(store)
    index.upsert([{"id": "a", "vector": VECTOR, "metadata": {"n": 1}, "document": "alpha"}])
    assert (data_collection(index).metadata or {})[DOCUMENTS_KEY] is True
    reads = Reads(monkeypatch)
    index.upsert([("a", VECTOR, {"s": "x"})])  # the document must go: read, flag it
    assert reads.count == 1
    monkeypatch.undo()
    check(index, {"a": {"s": "x"}}, {"a": None})


def test_keys_written_by_another_store_on_the_folder_go(folder: str) -> None:
    with vectorport.connect(folder) as first, vectorport.connect(folder) as second:
        index = new_index(first)
        index.upsert([("a", VECTOR, {"n": 1})])
        other = second.index(index.name)
        other.upsert([("b", VECTOR, {"n": 2})])  # the second store keeps its handle
        index.upsert([("a", VECTOR, {"s": "x", "t": ["q"]})])  # new keys, from the first
        other.upsert([("a", VECTOR, {"n": 3})])  # its handle predates s and t
        check(other, {"a": {"n": 3}, "b": {"n": 2}})
        check(index, {"a": {"n": 3}, "b": {"n": 2}})


def test_a_memory_store_writes_with_no_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    # its database is its own: the kept handle's list of written keys is current, also
    # after keys added through another Index object of the store and through patch
    with vectorport.connect("chroma+memory://") as store:
        index = new_index(store)
        index.upsert([("a", VECTOR, {"n": 1}), ("b", VECTOR, {"b": True})])
        store.index(index.name).upsert([("b", VECTOR, {"s": "x", "t": ["q"]})])
        assert index.patch("a", metadata={"f": 0.5})  # type: ignore[attr-defined]
        lookups = record_calls(monkeypatch, index._adapter._client,  # type: ignore[attr-defined]
                               "get_collection")
        reads = Reads(monkeypatch)
        index.upsert([("a", VECTOR, {"s": "y"}), ("b", VECTOR, {"n": 2})])
        assert lookups == [] and reads.count == 0
        monkeypatch.undo()
        check(index, {"a": {"s": "y"}, "b": {"n": 2}})


def test_keys_added_by_patch_and_bulk_loads_go(store: Store) -> None:
    index = new_index(store)
    index.upsert_bulk([("a", VECTOR, {"s": "x"}), ("b", VECTOR, {"t": ["p"]})])
    assert index.patch("a", metadata={"n": 7})  # type: ignore[attr-defined]
    index.upsert([("a", VECTOR, {"b": True}), ("b", VECTOR, {"f": 1.5})])
    check(index, {"a": {"b": True}, "b": {"f": 1.5}})


def test_a_collection_without_the_list_still_reads_first(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    index = new_index(store)
    index.upsert([("a", VECTOR, {"s": "x", "n": 1})])
    collection = data_collection(index)
    metadata = {k: v for k, v in (collection.metadata or {}).items()
                if k not in (WRITTEN_KEY, DOCUMENTS_KEY)}
    collection.modify(metadata=metadata)  # as a collection of an earlier version
    index = store.index(index.name)
    store.adapter._handles.clear()  # type: ignore[attr-defined]
    reads = Reads(monkeypatch)
    index.upsert([("a", VECTOR, {"n": 2})])
    assert reads.count == 1
    monkeypatch.undo()
    check(index, {"a": {"n": 2}})
    assert written_of(data_collection(index).metadata) is None


VALUES = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, 2.0, -1.25]), st.booleans(),
                   st.sampled_from(["x", "y"]), st.sampled_from([["p"], ["p", "q"], ["q"]]))
METADATA = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=4)
BATCHES = st.lists(st.lists(st.tuples(st.sampled_from("abcd"), METADATA), min_size=1,
                            max_size=4, unique_by=lambda r: r[0]), min_size=1, max_size=4)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=BATCHES)
def test_writes_end_as_through_the_read_first_path(store: Store, batches: list[Any]) -> None:
    fast = new_index(store)
    fast.upsert([("z", VECTOR, {"n": 0})])  # creates the collection, with its list
    slow = new_index(store)
    slow.upsert([("z", VECTOR, {"n": 0})])
    collection = data_collection(slow)
    collection.modify(metadata={k: v for k, v in (collection.metadata or {}).items()
                                if k not in (WRITTEN_KEY, DOCUMENTS_KEY)})
    store.adapter._handles.clear()  # type: ignore[attr-defined]
    expected: dict[str, dict[str, Any]] = {"z": {"n": 0}}
    for batch in batches:
        for index in (fast, slow):
            index.upsert([(rid, VECTOR, metadata) for rid, metadata in batch])
        expected.update({rid: metadata for rid, metadata in batch})
    check(fast, expected)
    check(slow, expected)
    assert written_of(data_collection(slow).metadata) is None

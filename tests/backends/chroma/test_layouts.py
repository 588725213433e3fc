"""Record layouts: data written by the previous version (the lists layout) still reads,
filters and takes writes correctly; new collections use the one-list kinds layout.

The old records are written here as raw chromadb metadata, the way the previous version
stored them (``lists_layout_metadata`` spells the format out, independently of the
adapter), so an upgrade that keeps a user's Chroma folder is what is tested.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("chromadb")

import vectorport
from vectorport.adapters.chroma import naming
from vectorport.adapters.chroma.layout import KINDS_FIELD, LAYOUT_KEY
from vectorport.core.filters import matches, parse_filter
from vectorport.core.store import Index, Store

METADATA: dict[str, dict[str, Any]] = {
    "a": {"s": "x", "n": 1, "f": 1.0, "b": True, "t": ["p", "q"]},
    "b": {"n": 2.5, "b": False, "big": 2**53 + 1},
    "c": {},
    "d": {"s": "y", "t": ["q"], "n": True},
}
VECTORS = {"a": [1.0, 0, 0, 0], "b": [0.9, 0.1, 0, 0], "c": [0.8, 0.2, 0, 0],
           "d": [0.7, 0.3, 0, 0]}
DOCUMENTS: dict[str, str | None] = {"a": "alpha", "b": None, "c": "gamma", "d": None}
FILTERS: list[dict[str, Any]] = [
    {"n": {"$exists": True}}, {"n": {"$exists": False}}, {"b": {"$exists": True}},
    {"s": {"$exists": False}}, {"t": "q"}, {"n": 1}, {"n": True}, {"n": {"$gt": 1.5}},
    {"n": {"$not": {"$gt": 1.5}}}, {"big": {"$gt": 2**53}}, {"f": 1}, {"b": False},
]


def canonical(metadata: dict[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in metadata.items()}


NODOC = {"vectorport:nodoc": True}
"""The previous version's flag on a record whose document was removed (unchanged since)."""


def lists_layout_metadata(metadata: dict[str, Any]) -> dict[str, Any] | None:
    """The raw chromadb metadata the previous version stored for ``metadata`` (which
    may hold its reserved flag ``NODOC``)."""
    user = {k: v for k, v in metadata.items() if not k.startswith("vectorport:")}
    out = dict(metadata)
    ints = sorted(k for k, v in user.items() if type(v) is int)
    floats = sorted(k for k, v in user.items() if type(v) is float)
    if user:
        out["vectorport:keys"] = sorted(user)
    if ints:
        out["vectorport:ints"] = ints
    if floats:
        out["vectorport:floats"] = floats
    return out or None


def old_collection(index: Index, namespace: str = "") -> Any:
    client = index._adapter._client  # type: ignore[attr-defined]
    return client.create_collection(
        naming.data_collection(index.name, namespace),
        configuration={"hnsw": {"space": "cosine"}},
        metadata={"vectorport:kind": "namespace", "vectorport:index": index.name,
                  "vectorport:namespace": namespace},
        embedding_function=None)


def write_lists_layout(index: Index, namespace: str, ids: list[str], vectors: list[Any],
                       metadatas: list[dict[str, Any]],
                       documents: list[str] | None = None) -> None:
    """Create ``namespace``'s collection and write records into it as the previous
    version did."""
    old_collection(index, namespace).upsert(
        ids=ids, embeddings=vectors, metadatas=[lists_layout_metadata(m) for m in metadatas],
        documents=documents)  # type: ignore[arg-type]


@pytest.fixture()
def store(tmp_path: Any) -> Iterator[Store]:
    with vectorport.connect(f"chroma:///{tmp_path}/chroma") as store:
        yield store


@pytest.fixture()
def old_index(store: Store) -> Index:
    """An index whose default namespace was written by the previous version; record
    ``d`` had its document removed (the previous version's empty-document flag)."""
    index = store.create_index(f"layouts_{uuid.uuid4().hex[:8]}", 4, "cosine")
    ids = list(METADATA)
    write_lists_layout(index, "", ids, [VECTORS[i] for i in ids],
                       [{**METADATA[i], **NODOC} if i == "d" else METADATA[i] for i in ids],
                       [DOCUMENTS[i] if i != "d" else "" for i in ids])
    return index


def raw_metadata(index: Index, rid: str, namespace: str = "") -> dict[str, Any]:
    client = index._adapter._client  # type: ignore[attr-defined]
    collection = client.get_collection(naming.data_collection(index.name, namespace))
    return dict(collection.get(ids=[rid], include=["metadatas"])["metadatas"][0] or {})


def check_filters(index: Index, metadata: dict[str, dict[str, Any]]) -> None:
    for raw in FILTERS:
        node = parse_filter(raw)
        want = sorted(i for i, m in metadata.items() if matches(node, canonical(m)))
        got = sorted(m.id for m in index.query([1, 0, 0, 0], top_k=10, filter=raw))
        assert got == want, raw
        assert index.count(filter=raw) == len(want), raw


def test_records_of_the_lists_layout_read_back_with_their_kinds(old_index: Index) -> None:
    fetched = old_index.fetch(list(METADATA))
    for rid, metadata in METADATA.items():
        got = fetched[rid]
        assert dict(got.metadata) == canonical(metadata)
        assert {k: type(v) for k, v in got.metadata.items()} == {
            k: type(v) for k, v in canonical(metadata).items()}, rid  # 1 vs 1.0 vs True
        assert got.document == DOCUMENTS[rid]
    matches_ = {m.id: m for m in old_index.query([1, 0, 0, 0], top_k=10)}
    assert {i: dict(m.metadata or {}) for i, m in matches_.items()} == {
        i: canonical(m) for i, m in METADATA.items()}
    assert {i: m.document for i, m in matches_.items()} == DOCUMENTS
    scanned = {r.id: dict(r.metadata) for r in old_index.iter_records(page_size=3)}
    assert scanned == {i: canonical(m) for i, m in METADATA.items()}


def test_filters_over_the_lists_layout_match_the_oracle(old_index: Index) -> None:
    check_filters(old_index, METADATA)


def test_writes_into_a_lists_layout_collection_keep_its_layout(old_index: Index) -> None:
    new = {"a": {"n": 3}, "b": {"s": "z", "t": ["p"]}, "e": {"f": 0.5, "b": True}}
    old_index.upsert([(rid, VECTORS.get(rid, [0.5, 0.5, 0, 0]), m) for rid, m in new.items()])
    metadata = {**METADATA, **new}
    fetched = old_index.fetch(list(metadata))
    assert {i: dict(r.metadata) for i, r in fetched.items()} == {
        i: canonical(m) for i, m in metadata.items()}  # replaced, not merged
    assert raw_metadata(old_index, "a") == {"n": 3, "vectorport:keys": ["n"],
                                            "vectorport:ints": ["n"],
                                            "vectorport:nodoc": True}  # "alpha" went
    assert old_index.fetch(["a"])["a"].document is None
    check_filters(old_index, metadata)
    assert old_index.patch("b", metadata={"n": 7, "t": None})  # type: ignore[attr-defined]
    metadata["b"] = {"s": "z", "n": 7}
    assert dict(old_index.fetch(["b"])["b"].metadata) == metadata["b"]
    check_filters(old_index, metadata)


def test_new_collections_keep_kinds_in_one_list(store: Store) -> None:
    index = store.create_index(f"layouts_{uuid.uuid4().hex[:8]}", 4, "cosine")
    index.upsert([{"id": rid, "vector": VECTORS[rid], "metadata": m, "document": DOCUMENTS[rid]}
                  for rid, m in METADATA.items()])
    client = index._adapter._client  # type: ignore[attr-defined]
    collection = client.get_collection(naming.data_collection(index.name, ""))
    assert (collection.metadata or {}).get(LAYOUT_KEY) == 2
    # one element per key that is not a bool; nothing reserved for a record with none
    assert raw_metadata(index, "a")[KINDS_FIELD] == ["s", "i:n", "f:f", "t"]
    assert raw_metadata(index, "b")[KINDS_FIELD] == ["f:n", "i:big"]
    assert raw_metadata(index, "c") == {}
    assert raw_metadata(index, "d") == {"s": "y", "t": ["q"], "n": True,
                                        KINDS_FIELD: ["s", "t"]}
    check_filters(index, METADATA)
    index.upsert([("b", VECTORS["b"], {"b": False})])  # only a bool: the list goes
    assert raw_metadata(index, "b") == {"b": False}
    check_filters(index, {**METADATA, "b": {"b": False}})


def test_bulk_loads_follow_the_collection_layout(store: Store) -> None:
    index = store.create_index(f"layouts_{uuid.uuid4().hex[:8]}", 4, "cosine")
    old_collection(index, "old")
    rows = [(rid, VECTORS[rid], m) for rid, m in METADATA.items()]
    index.upsert_bulk(rows, namespace="old")
    index.upsert_bulk(rows, namespace="new")
    assert raw_metadata(index, "a", "old")["vectorport:keys"] == ["b", "f", "n", "s", "t"]
    assert raw_metadata(index, "a", "new")[KINDS_FIELD] == ["s", "i:n", "f:f", "t"]
    for namespace in ("old", "new"):
        for raw in FILTERS:
            node = parse_filter(raw)
            want = sum(matches(node, canonical(m)) for m in METADATA.values())
            assert index.count(filter=raw, namespace=namespace) == want, (namespace, raw)

"""Embedders are part of an index's identity (SemanticRecall).

Two hashing embedders with other n-grams share the default index name
``recall_hashing_embedder_64``; a recall embedded by one against the other's vectors
used to recall unrelated messages. Now the index records which embedder built it, and
another one is refused with :class:`EmbedderMismatchError`, or re-embeds the stored
messages when asked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from tests.support.backends import EMBEDDED, Backend, open_backend

import vectorport
from vectorport.embedders.hashing import HashingEmbedder
from vectorport.embedders.identity import (
    IDENTITY_NAMESPACE,
    EmbedderIdentity,
    EmbedderMismatchError,
    identity_of,
    record_identity,
    stored_identity,
)
from vectorport.recall import InMemoryStorage, Message, SemanticRecall

OLD = HashingEmbedder(64)
OTHER_OPTIONS = HashingEmbedder(64, ngram_range=(2, 3))
OTHER_DIMENSION = HashingEmbedder(32)

CHAT = [
    ("user", "My cat is called Miso"),
    ("assistant", "Miso is a lovely name for a cat"),
    ("user", "The weather in Lisbon is sunny today"),
    ("user", "I play the violin in an orchestra"),
]


@pytest.fixture(params=EMBEDDED, ids=lambda b: b.name)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[vectorport.Store]:
    backend: Backend = request.param
    with open_backend(backend, tmp_path / "store") as url, vectorport.connect(url) as store:
        yield store


def messages() -> list[Message]:
    return [Message(role, text, id=f"m{i}", thread_id="t1", resource_id="alice")  # type: ignore[arg-type]
            for i, (role, text) in enumerate(CHAT)]


def recall(store: vectorport.Store, storage: InMemoryStorage, embedder: HashingEmbedder,
           **kw: object) -> SemanticRecall:
    return SemanticRecall(vector=store, storage=storage, embedder=embedder, top_k=1,
                          message_range=0, **kw)  # type: ignore[arg-type]


def ask(processor: SemanticRecall, text: str) -> list[str]:
    query = Message("user", text, id="q", thread_id="t1", resource_id="alice")
    return [m.content for m in processor.process_input([query]) if m.id != "q"]


def built(store: vectorport.Store, storage: InMemoryStorage, **kw: object) -> SemanticRecall:
    first = recall(store, storage, OLD, **kw)
    first.process_output(messages())
    return first


def vectors_of(index: vectorport.Index, namespace: str = "") -> dict[str, np.ndarray]:
    return {r.id: np.asarray(r.vector) for r in index.iter_records(namespace)}


def test_the_first_write_records_the_embedder(store: vectorport.Store) -> None:
    first = built(store, InMemoryStorage())
    index = store.index(first.index_name or "")
    assert first.index_name == "recall_hashing_embedder_64"
    assert stored_identity(index) == identity_of(OLD)
    # the record lives in its own namespace: no recall, count or scan of the data sees it
    assert index.count() == len(CHAT) and index.count(IDENTITY_NAMESPACE) == 1


def test_the_same_embedder_reopens(store: vectorport.Store) -> None:
    storage = InMemoryStorage()
    built(store, storage)
    assert ask(recall(store, storage, HashingEmbedder(64)), "what is my cat called") == [
        "My cat is called Miso"]


def test_another_embedder_of_the_same_name_is_refused(store: vectorport.Store) -> None:
    storage = InMemoryStorage()
    first = built(store, storage)
    index = store.index(first.index_name or "")
    before = vectors_of(index)
    switched = recall(store, storage, OTHER_OPTIONS)
    assert switched.index_name == first.index_name  # the default name cannot tell them apart
    with pytest.raises(EmbedderMismatchError, match="reembed=True") as raised:
        ask(switched, "what is my cat called")
    assert "ngram_range=(2, 3)" in str(raised.value)
    assert isinstance(raised.value, vectorport.ConfigError)
    new = Message("user", "I also have a dog", id="m9", thread_id="t1", resource_id="alice")
    with pytest.raises(EmbedderMismatchError):
        switched.process_output([new])
    after = vectors_of(index)  # the refused write wrote nothing
    assert after.keys() == before.keys()
    assert all(np.array_equal(after[k], before[k]) for k in before)


def test_an_explicit_index_name_of_another_dimension_is_refused(store: vectorport.Store) -> None:
    storage = InMemoryStorage()
    built(store, storage, index_name="chat_memory")
    with pytest.raises(EmbedderMismatchError, match="dimension=32"):
        ask(recall(store, storage, OTHER_DIMENSION, index_name="chat_memory"), "cat")


@pytest.mark.parametrize("other", [OTHER_OPTIONS, OTHER_DIMENSION],
                         ids=["other-options", "other-dimension"])
def test_reembed_embeds_every_stored_message_again(store: vectorport.Store,
                                                   other: HashingEmbedder) -> None:
    storage = InMemoryStorage()
    first = built(store, storage, index_name="chat_memory")
    old_records = {r.id: r for r in store.index("chat_memory").iter_records()}
    switched = recall(store, storage, other, index_name="chat_memory", reembed=True)
    assert ask(switched, "what is my cat called") == ["My cat is called Miso"]
    index = store.index("chat_memory")
    assert index.dimension == other.dimension
    assert stored_identity(index) == identity_of(other)
    records = {r.id: r for r in index.iter_records()}
    assert records.keys() == old_records.keys()
    for rid, record in records.items():  # exactly the new embedder's vectors, all else kept
        assert record.document == old_records[rid].document
        assert dict(record.metadata) == dict(old_records[rid].metadata)
        expected = np.asarray(other.embed([record.document or ""])[0], dtype=np.float32)
        assert np.allclose(record.vector, expected, atol=1e-6)
    # reopened without reembed: the new embedder is at home, the old one refused
    assert ask(recall(store, storage, other, index_name="chat_memory"), "violin") == [
        "I play the violin in an orchestra"]
    with pytest.raises(EmbedderMismatchError):
        ask(recall(store, storage, OLD, index_name="chat_memory"), "cat")
    assert first.index_name == "chat_memory"


def test_reembed_into_another_dimension_keeps_other_namespaces(store: vectorport.Store) -> None:
    storage = InMemoryStorage()
    built(store, storage, index_name="chat_memory", namespace="a")
    built(store, InMemoryStorage(), index_name="chat_memory", namespace="b")
    switched = recall(store, storage, OTHER_DIMENSION, index_name="chat_memory",
                      namespace="a", reembed=True)
    with pytest.raises(EmbedderMismatchError, match=r"namespaces \['b'\]"):
        ask(switched, "cat")
    index = store.index("chat_memory")  # nothing was dropped
    assert index.dimension == OLD.dimension
    assert index.count("a") == len(CHAT) and index.count("b") == len(CHAT)


def test_each_namespace_records_its_own_embedder(store: vectorport.Store) -> None:
    built(store, InMemoryStorage(), index_name="chat_memory", namespace="a")
    storage = InMemoryStorage()
    other = recall(store, storage, OTHER_OPTIONS, index_name="chat_memory", namespace="b")
    other.process_output(messages())
    assert ask(other, "violin orchestra") == ["I play the violin in an orchestra"]
    index = store.index("chat_memory")
    assert stored_identity(index, "a") == identity_of(OLD)
    assert stored_identity(index, "b") == identity_of(OTHER_OPTIONS)


def test_an_index_without_a_record_is_adopted(store: vectorport.Store) -> None:
    storage = InMemoryStorage()
    storage.save_messages(messages())
    index = store.create_index("chat_memory", 64, "cosine")
    index.upsert([{"id": m.id, "vector": OLD.embed([m.content])[0], "document": m.content,
                   "metadata": {"thread_id": "t1", "resource_id": "alice"}}
                  for m in messages()])  # as written before identities were recorded
    assert ask(recall(store, storage, OLD, index_name="chat_memory"), "cat Miso") == [
        "My cat is called Miso"]
    assert stored_identity(index) == identity_of(OLD)
    with pytest.raises(EmbedderMismatchError):
        ask(recall(store, storage, OTHER_OPTIONS, index_name="chat_memory"), "cat")


def test_reembed_reads_text_from_storage_and_drops_vectors_without_text(
        store: vectorport.Store) -> None:
    storage = InMemoryStorage()
    kept = messages()[:2]
    storage.save_messages(kept)
    index = store.create_index("chat_memory", 64, "cosine")
    ghost = Message("user", "nobody stored me", id="ghost", thread_id="t1", resource_id="alice")
    index.upsert([{"id": m.id, "vector": OLD.embed([m.content])[0],  # no document
                   "metadata": {"thread_id": "t1", "resource_id": "alice"}}
                  for m in [*kept, ghost]])
    record_identity(index, EmbedderIdentity("some-old-model", None, 64))
    switched = recall(store, storage, OTHER_OPTIONS, index_name="chat_memory", reembed=True)
    assert ask(switched, "what is my cat called") == ["My cat is called Miso"]
    records = {r.id: r for r in index.iter_records()}
    assert sorted(records) == ["m0", "m1"]  # the ghost had no text anywhere: deleted
    for message in kept:
        assert records[message.id].document == message.content
        expected = np.asarray(OTHER_OPTIONS.embed([message.content])[0], dtype=np.float32)
        assert np.allclose(records[message.id].vector, expected, atol=1e-6)

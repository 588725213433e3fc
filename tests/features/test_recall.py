"""SemanticRecall: scope isolation, message ranges, threshold, output storage, caching.

Every test runs on each store of ``BACKENDS`` (add a backend by adding a URL factory).
The embedder is a bag of topic words with a constant extra dimension, so which stored
messages are similar to a query, and by how much, is known exactly from the texts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import vectorport
from vectorport.core.errors import ValidationError
from vectorport.embedders import CachedEmbedder, FunctionEmbedder, HashingEmbedder
from vectorport.recall import (
    MEMORY_SOURCE,
    InMemoryStorage,
    Message,
    MessageRange,
    SemanticRecall,
    SQLiteStorage,
    Thread,
    as_message,
    default_index_name,
)
from vectorport.recall.formatting import CLOSE_TAG, HEADER, OPEN_TAG

BACKENDS: dict[str, Callable[[Path], str]] = {
    "memory": lambda tmp: "memory://",
    "local": lambda tmp: f"local://{tmp / 'store.db'}",
}

TOPICS = ("cat", "dog", "pizza", "paris", "guitar", "weather", "python", "coffee")
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def topic_vector(text: str) -> list[float]:
    words = text.lower().replace("?", " ").replace(".", " ").split()
    return [float(words.count(t)) for t in TOPICS] + [0.1]


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


class CountingEmbedder:
    """The topic embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.inner = FunctionEmbedder(topic_vector, name="topics", dimension=len(TOPICS) + 1)
        self.texts: list[str] = []

    @property
    def dimension(self) -> int | None:
        return self.inner.dimension

    @property
    def name(self) -> str:
        return "topics"

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts.extend(texts)
        return self.inner.embed(texts)


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[vectorport.Store]:
    with vectorport.connect(BACKENDS[request.param](tmp_path)) as opened:
        yield opened


def msg(mid: str, minute: int, content: str, *, thread: str = "t1", resource: str = "r1",
        role: str = "user") -> Message:
    return Message(role=role, content=content, id=mid, thread_id=thread,  # type: ignore[arg-type]
                   resource_id=resource, created_at=T0 + timedelta(minutes=minute))


def make(store: vectorport.Store, **options: object) -> SemanticRecall:
    options.setdefault("embedder", CountingEmbedder())
    options.setdefault("threshold", 0.5)
    return SemanticRecall(vector=store, **options)  # type: ignore[arg-type]


def question(text: str, *, thread: str = "t1", resource: str = "r1") -> list[Message]:
    return [msg("q", 500, text, thread=thread, resource=resource)]


def seed_three_threads(recall: SemanticRecall) -> None:
    """The same cat sentence in t1 and t2 (resource r1) and t3 (resource r2)."""
    recall.storage.save_thread(Thread("t2", "r1", title="Pet chat"))
    recall.process_output([msg("t1-a", 0, "I like coffee"), msg("t1-b", 1, "my cat sleeps a lot"),
                           msg("t1-c", 2, "nice weather today", role="assistant")])
    recall.process_output([msg("t2-a", 10, "my cat sleeps all day", thread="t2"),
                           msg("t2-b", 11, "cats are like that", thread="t2", role="assistant")])
    recall.process_output([msg("t3-a", 20, "my cat sleeps too", thread="t3", resource="r2")])


# -- scope ------------------------------------------------------------------------------

def all_ids(messages: list[Message]) -> set[str]:
    return {m.id for m in messages}


def test_thread_scope_never_shows_another_thread(store: vectorport.Store) -> None:
    recall = make(store, scope="thread", top_k=10, message_range=5)
    seed_three_threads(recall)
    out = recall.process_input(question("where does my cat sleep?"))
    assert [m.role for m in out].count("system") == 0
    recalled = [m for m in out if m.source == MEMORY_SOURCE]
    assert all(m.thread_id == "t1" and m.resource_id == "r1" for m in recalled)
    assert {m.id for m in recalled} == {"t1-a", "t1-b", "t1-c"}
    assert "sleeps all day" not in " ".join(m.content for m in out)
    assert out[-1].id == "q" and out[-1].source is None


def test_thread_scope_filters_in_the_database_not_after(store: vectorport.Store) -> None:
    """top_k=1: the other thread's message is the better match (cosine 1). A scope
    applied after a top-1 query would leave nothing; the filtered query finds t1's."""
    recall = make(store, scope="thread", top_k=1, message_range=0)
    recall.process_output([msg("mine", 0, "cat cat dog")])
    recall.process_output([msg("theirs", 1, "cat", thread="t2")])
    assert cosine(topic_vector("cat"), topic_vector("cat")) > cosine(
        topic_vector("cat"), topic_vector("cat cat dog")) > 0.5
    out = recall.process_input(question("cat"))
    assert [m.id for m in out] == ["mine", "q"]


def test_resource_scope_brings_other_threads_as_one_system_message(
        store: vectorport.Store) -> None:
    recall = make(store, scope="resource", top_k=10, message_range=0)
    seed_three_threads(recall)
    out = recall.process_input(question("where does my cat sleep?"))
    system = [m for m in out if m.role == "system"]
    assert len(system) == 1 and out[0] is system[0]
    text = system[0].content
    assert system[0].source == MEMORY_SOURCE
    assert text.startswith(HEADER + "\n" + OPEN_TAG) and text.endswith(CLOSE_TAG)
    assert 'Conversation "Pet chat" (thread t2), from 2024-05-01 09:10 UTC:' in text
    assert "[2024-05-01 09:10 UTC] user: my cat sleeps all day" in text
    assert "sleeps too" not in text  # resource r2 never appears
    assert "t3-a" not in all_ids(out)
    here = [m for m in out if m.source == MEMORY_SOURCE and m.role != "system"]
    assert [m.id for m in here] == ["t1-b"]  # only the cat message passes the threshold here
    assert all(m.thread_id == "t1" for m in here)


def test_other_resources_never_appear_even_with_huge_top_k(store: vectorport.Store) -> None:
    recall = make(store, scope="resource", top_k=50, message_range=10, threshold=None)
    seed_three_threads(recall)
    for resource, thread in (("r1", "t1"), ("r2", "t3")):
        out = recall.process_input(question("cat", thread=thread, resource=resource))
        text = " ".join(m.content for m in out)
        others = {"r1": "sleeps too", "r2": "sleeps all day"}[resource]
        assert others not in text
        assert all(m.resource_id == resource for m in out)


def test_a_foreign_vector_narrows_but_never_widens(store: vectorport.Store) -> None:
    """A vector whose metadata says r1 but whose stored message belongs to r2 (a stale
    or tampered index) is dropped: storage is checked against the scope again."""
    recall = make(store, scope="resource", top_k=5, message_range=0)
    recall.process_output([msg("own", 0, "my cat")])
    recall.storage.save_messages([msg("foreign", 1, "cat cat", thread="tx", resource="r2")])
    index = store.index(recall.index_name)  # type: ignore[arg-type]
    index.upsert([{"id": "foreign", "vector": topic_vector("cat cat"), "metadata": {
        "message_id": "foreign", "thread_id": "t1", "resource_id": "r1", "role": "user",
        "created_at": "2024-05-01T09:01:00.000000+00:00"}}])
    out = recall.process_input(question("cat"))
    assert "foreign" not in all_ids(out)
    assert "own" in all_ids(out)


def test_scope_needs_its_ids(store: vectorport.Store) -> None:
    recall = make(store, scope="resource")
    with pytest.raises(ValidationError, match="needs a resource_id"):
        recall.process_input([{"role": "user", "content": "cat", "thread_id": "t1"}])
    recall = make(store, scope="thread")
    with pytest.raises(ValidationError, match="needs a thread_id"):
        recall.process_input([{"role": "user", "content": "cat", "resource_id": "r1"}])


# -- message range and threshold --------------------------------------------------------

def seed_long_thread(recall: SemanticRecall) -> None:
    texts = ["coffee", "weather", "python", "guitar", "paris", "cat", "pizza", "dog",
             "coffee weather", "python paris"]
    recall.process_output([msg(f"m{i}", i, f"about {t}", role="user" if i % 2 == 0 else "assistant")
                           for i, t in enumerate(texts)])


@pytest.mark.parametrize(("message_range", "expected"), [
    (0, ["m5"]),
    (2, ["m3", "m4", "m5", "m6", "m7"]),
    ({"before": 1, "after": 3}, ["m4", "m5", "m6", "m7", "m8"]),
    ({"before": 4}, ["m1", "m2", "m3", "m4", "m5"]),
    ({"after": 10}, ["m5", "m6", "m7", "m8", "m9"]),
    (MessageRange(9, 0), ["m0", "m1", "m2", "m3", "m4", "m5"]),
])
def test_message_range(store: vectorport.Store, message_range: object, expected: list[str]) -> None:
    recall = make(store, scope="thread", top_k=3, message_range=message_range)
    seed_long_thread(recall)
    out = recall.process_input(question("tell me about the cat"))
    assert [m.id for m in out if m.source == MEMORY_SOURCE] == expected
    assert [m.role for m in out if m.source == MEMORY_SOURCE] == [
        "user" if int(i[1:]) % 2 == 0 else "assistant" for i in expected]


def test_overlapping_windows_are_merged_in_order(store: vectorport.Store) -> None:
    recall = make(store, scope="thread", top_k=2, message_range=1)
    seed_long_thread(recall)
    out = recall.process_input(question("cat and dog"))  # matches m5 and m7
    assert [m.id for m in out if m.recalled] == ["m4", "m5", "m6", "m7", "m8"]


def test_threshold_is_a_minimum_cosine(store: vectorport.Store) -> None:
    recall = make(store, scope="thread", top_k=5, message_range=0, threshold=None)
    recall.process_output([msg("strong", 0, "cat"), msg("mixed", 1, "cat dog guitar pizza")])
    query = "cat"
    mixed = cosine(topic_vector(query), topic_vector("cat dog guitar pizza"))
    assert 0.4 < mixed < 0.6
    for threshold, expected in ((None, {"strong", "mixed"}), (mixed - 1e-3, {"strong", "mixed"}),
                                (mixed + 1e-3, {"strong"}), (1.0 - 1e-6, {"strong"})):
        recall.threshold = threshold
        assert {m.id for m in recall.process_input(question(query)) if m.recalled} == expected


def test_top_k_counts_matches_not_neighbours(store: vectorport.Store) -> None:
    recall = make(store, scope="thread", top_k=1, message_range=1)
    seed_long_thread(recall)
    out = recall.process_input(question("about the cat"))
    assert [m.id for m in out if m.recalled] == ["m4", "m5", "m6"]


def test_messages_already_in_the_input_are_not_repeated(store: vectorport.Store) -> None:
    recall = make(store, scope="thread", top_k=5, message_range=1)
    seed_long_thread(recall)
    current = [msg("m5", 5, "about cat"), msg("m6", 6, "about pizza", role="assistant"),
               msg("q", 500, "cat again")]
    out = recall.process_input(current)
    assert [m.id for m in out] == ["m4", "m5", "m6", "q"]
    assert [m.source for m in out] == ["memory", None, None, None]


def test_nothing_to_recall(store: vectorport.Store) -> None:
    recall = make(store, scope="thread")
    assert [m.id for m in recall.process_input(question("cat"))] == ["q"]  # no index yet
    assert recall.process_input([msg("a", 0, "hello", role="assistant")])[0].id == "a"
    assert recall.process_input([]) == []


# -- output -----------------------------------------------------------------------------

def test_output_stores_user_and_assistant_messages(store: vectorport.Store) -> None:
    recall = make(store, scope="thread")
    given = [msg("u", 0, "my cat"), msg("a", 1, "nice cat", role="assistant"),
             msg("s", 2, "be brief", role="system"), msg("t", 3, "tool output", role="tool"),
             msg("e", 4, "   "), Message(role="user", content="recalled cat", id="old",
                                         thread_id="t1", resource_id="r1", source="memory")]
    assert recall.process_output(given) == given
    assert [m.id for m in recall.storage.list_messages("t1")] == ["u", "a"]
    assert recall.index_name == "recall_topics_9"
    index = store.index("recall_topics_9")
    records = index.fetch(["u", "a", "s", "t", "e", "old"])
    assert sorted(records) == ["a", "u"]
    assert dict(records["a"].metadata) == {
        "message_id": "a", "thread_id": "t1", "resource_id": "r1", "role": "assistant",
        "created_at": "2024-05-01T09:01:00.000000+00:00"}
    assert records["a"].document == "nice cat"
    assert index.describe().metric == "cosine"


def test_output_takes_dicts_and_fills_thread_and_resource(store: vectorport.Store) -> None:
    recall = make(store, scope="resource")
    out = recall.process_output([
        {"role": "user", "content": [{"type": "text", "text": "my cat"}, {"type": "image"}]},
        {"role": "assistant", "content": "ok", "createdAt": "2024-05-01T10:00:00Z"},
    ], thread_id="t7", resource_id="r7")
    assert [(m.thread_id, m.resource_id) for m in out] == [("t7", "r7"), ("t7", "r7")]
    assert out[0].content == "my cat"
    assert out[1].created_at == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert len(recall.storage.list_messages("t7")) == 2
    with pytest.raises(ValidationError, match="has thread_id 't1', not 't7'"):
        recall.process_output([msg("x", 0, "cat")], thread_id="t7", resource_id="r1")


def test_save_messages_false_only_embeds(store: vectorport.Store) -> None:
    storage = InMemoryStorage()
    recall = make(store, storage=storage, save_messages=False)
    recall.process_output([msg("u", 0, "my cat")])
    assert storage.list_messages("t1") == []
    assert store.index("recall_topics_9").count() == 1


def test_embeddings_go_through_an_lru_cache(store: vectorport.Store) -> None:
    embedder = CountingEmbedder()
    recall = make(store, embedder=embedder, scope="thread", cache_size=2)
    assert isinstance(recall.embedder, CachedEmbedder)
    recall.process_output([msg("u1", 0, "my cat")])
    recall.process_input(question("my cat?"))
    recall.process_output([msg("q", 500, "my cat?"), msg("a", 501, "yes, a cat", role="assistant")])
    assert embedder.texts == ["my cat", "my cat?", "yes, a cat"]  # "my cat?" embedded once
    info = recall.embedder.cache_info()
    assert (info.hits, info.maxsize) == (1, 2)


def test_recall_over_sqlite_storage(store: vectorport.Store, tmp_path: Path) -> None:
    with SQLiteStorage(tmp_path / "messages.db") as storage:
        recall = make(store, storage=storage, scope="resource", top_k=2, message_range=1)
        seed_three_threads(recall)
        out = recall.process_input(question("cat"))
        assert out[0].role == "system" and "Pet chat" in out[0].content
        assert [m.id for m in out[1:]] == ["t1-a", "t1-b", "t1-c", "q"]


async def test_async_variants(store: vectorport.Store) -> None:
    recall = make(store, scope="thread", message_range=0)
    await recall.aprocess_output([msg("u", 0, "my cat")])
    out = await recall.aprocess_input(question("cat"))
    assert [m.id for m in out] == ["u", "q"]


# -- configuration ----------------------------------------------------------------------

def test_default_index_name_from_embedder_and_dimension() -> None:
    assert default_index_name(HashingEmbedder(), 384) == "recall_hashing_embedder_384"
    assert default_index_name(CachedEmbedder(HashingEmbedder(64)), 64) == "recall_hashing_embedder_64"

    class Remote:
        model = "text-embedding-3-small"

    assert default_index_name(Remote(), 1536) == "recall_text_embedding_3_small_1536"
    long_a = type("A", (), {"model": "org/" + "x" * 60 + "-a"})()
    long_b = type("B", (), {"model": "org/" + "x" * 60 + "-b"})()
    name_a, name_b = default_index_name(long_a, 768), default_index_name(long_b, 768)
    assert name_a != name_b and len(name_a) <= 45 and name_a.endswith("_768")
    vectorport.core.validation.index_name(name_a)


def test_settings_are_validated(store: vectorport.Store) -> None:
    with pytest.raises(ValidationError):
        make(store, index_name="Not-Valid")
    with pytest.raises(ValidationError):
        make(store, scope="global")
    with pytest.raises(ValidationError):
        make(store, threshold=1.5)
    with pytest.raises(ValidationError):
        make(store, top_k=0)
    with pytest.raises(ValidationError):
        make(store, message_range={"before": -1})
    with pytest.raises(ValidationError):
        make(store, message_range={"around": 1})
    recall = make(store, index_name="my_memory")
    recall.process_output([msg("u", 0, "cat")])
    assert store.has_index("my_memory")
    assert (recall.id, recall.name) == ("semantic-recall", "SemanticRecall")


def test_defaults_need_nothing() -> None:
    recall = SemanticRecall(scope="thread", message_range=0, top_k=1)
    recall.process_output([{"role": "user", "content": "My cat is called Miso"},
                           {"role": "user", "content": "The weather is nice"}],
                          thread_id="t", resource_id="r")
    out = recall.process_input([{"role": "user", "content": "What is my cat called?"}],
                               thread_id="t", resource_id="r")
    assert [m.content for m in out if m.recalled] == ["My cat is called Miso"]
    assert recall.index_name == "recall_hashing_embedder_384"


def test_as_message_rejects_unknown_keys() -> None:
    with pytest.raises(ValidationError, match="unknown message keys"):
        as_message({"role": "user", "content": "x", "colour": "red"})
    with pytest.raises(ValidationError):
        as_message({"role": "robot", "content": "x"})


def test_the_query_message_itself_is_not_a_match(store: vectorport.Store) -> None:
    recall = make(store, scope="thread", top_k=1, message_range=0)
    recall.process_output([msg("older", 0, "cat dog"), msg("q", 500, "cat")])
    out = recall.process_input(question("cat"))  # "q" is stored already and matches best
    assert [m.id for m in out] == ["older", "q"]

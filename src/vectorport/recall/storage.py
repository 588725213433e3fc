"""Where conversation messages live: the protocol, and the in-process default.

Recall needs three things from a storage: save messages (an upsert by id), read
messages by id, and read the window of messages around one message in its thread, in
conversation order. Conversation order is ``(created_at, arrival)``: messages written
with the same timestamp keep the order in which they were first saved.

Every storage binds a thread to the resource of its first message and refuses a
message that would put the thread under another resource; scope isolation then holds
in the storage itself, not only in the vector filter.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from vectorport.core.errors import ValidationError
from vectorport.recall.messages import Message, Thread, iso_utc


@runtime_checkable
class MessageStorage(Protocol):
    """The storage a :class:`~vectorport.recall.SemanticRecall` reads and writes."""

    def save_thread(self, thread: Thread) -> None:
        """Create or update a thread (its title); its resource never changes."""

    def get_thread(self, thread_id: str) -> Thread | None: ...

    def save_messages(self, messages: Sequence[Message]) -> None:
        """Insert or replace messages by id; each needs a thread and a resource."""

    def get_messages(self, ids: Iterable[str]) -> list[Message]:
        """The stored messages among ``ids``, in conversation order."""

    def list_messages(self, thread_id: str) -> list[Message]:
        """A thread's messages, in conversation order."""

    def message_window(self, message_id: str, before: int, after: int) -> list[Message]:
        """The message with up to ``before`` earlier and ``after`` later messages of its
        thread, in conversation order; empty when the message is unknown."""


def check_storable(messages: Sequence[Message]) -> list[Message]:
    """Messages with a thread and a resource, without recall tags (a recalled copy is
    never stored again as if it were new)."""
    out: list[Message] = []
    for message in messages:
        if not isinstance(message, Message):
            raise ValidationError(f"storage takes Message values, got {type(message).__name__}")
        if message.thread_id is None or message.resource_id is None:
            raise ValidationError(f"message {message.id!r} needs a thread_id and a resource_id")
        out.append(replace(message, source=None) if message.source is not None else message)
    return out


def resource_conflict(thread_id: str, owner: str, other: str) -> ValidationError:
    return ValidationError(
        f"thread {thread_id!r} belongs to resource {owner!r}, not {other!r}"
    )


@dataclass(slots=True)
class _Stored:
    message: Message
    arrival: int

    @property
    def order(self) -> tuple[str, int]:
        return iso_utc(self.message.created_at), self.arrival


class InMemoryStorage:
    """Messages in a dict, for one process (tests, examples, short-lived agents)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: dict[str, Thread] = {}
        self._messages: dict[str, _Stored] = {}
        self._arrivals = 0

    def __repr__(self) -> str:
        return f"InMemoryStorage(threads={len(self._threads)}, messages={len(self._messages)})"

    def save_thread(self, thread: Thread) -> None:
        with self._lock:
            known = self._threads.get(thread.id)
            if known is not None and known.resource_id != thread.resource_id:
                raise resource_conflict(thread.id, known.resource_id, thread.resource_id)
            self._threads[thread.id] = thread if known is None else replace(
                known, title=thread.title)

    def get_thread(self, thread_id: str) -> Thread | None:
        with self._lock:
            return self._threads.get(thread_id)

    def save_messages(self, messages: Sequence[Message]) -> None:
        storable = check_storable(messages)
        with self._lock:
            owners = {tid: t.resource_id for tid, t in self._threads.items()}
            for message in storable:  # check the whole batch before writing any of it
                assert message.thread_id is not None and message.resource_id is not None
                owner = owners.setdefault(message.thread_id, message.resource_id)
                if owner != message.resource_id:
                    raise resource_conflict(message.thread_id, owner, message.resource_id)
                known = self._messages.get(message.id)
                if known is not None and known.message.thread_id != message.thread_id:
                    raise ValidationError(f"message {message.id!r} is stored in thread "
                                          f"{known.message.thread_id!r} already")
            for message in storable:
                assert message.thread_id is not None and message.resource_id is not None
                if message.thread_id not in self._threads:
                    self._threads[message.thread_id] = Thread(
                        message.thread_id, message.resource_id, created_at=message.created_at)
                known = self._messages.get(message.id)
                if known is None:
                    self._arrivals += 1
                    self._messages[message.id] = _Stored(message, self._arrivals)
                else:
                    known.message = message

    def get_messages(self, ids: Iterable[str]) -> list[Message]:
        with self._lock:
            found = [self._messages[i] for i in dict.fromkeys(ids) if i in self._messages]
        return [s.message for s in sorted(found, key=lambda s: s.order)]

    def _thread(self, thread_id: str) -> list[_Stored]:
        return sorted((s for s in self._messages.values() if s.message.thread_id == thread_id),
                      key=lambda s: s.order)

    def list_messages(self, thread_id: str) -> list[Message]:
        with self._lock:
            return [s.message for s in self._thread(thread_id)]

    def message_window(self, message_id: str, before: int, after: int) -> list[Message]:
        with self._lock:
            center = self._messages.get(message_id)
            if center is None:
                return []
            assert center.message.thread_id is not None
            thread = self._thread(center.message.thread_id)
        position = next(i for i, s in enumerate(thread) if s.message.id == message_id)
        return [s.message for s in thread[max(0, position - before): position + after + 1]]

"""Conversation messages and threads, as semantic recall stores and returns them.

A message belongs to exactly one thread, and a thread to exactly one resource (a user,
a tenant, an account): that two-level ownership is what ``scope`` follows. Content is
plain text; chat-style ``[{"type": "text", "text": ...}]`` parts are joined into it, so
what gets embedded is what a reader sees.

Times are timezone-aware UTC. They are stored as fixed-width ISO 8601 strings
(:func:`iso_utc`), whose string order is their time order, in every storage.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal, TypeAlias

from vectorport.core.errors import ValidationError

Role: TypeAlias = Literal["user", "assistant", "system", "tool"]
ROLES: tuple[Role, ...] = ("user", "assistant", "system", "tool")

MEMORY_SOURCE = "memory"
"""The ``source`` tag of every message that recall adds to a conversation."""


@dataclass(frozen=True, slots=True)
class Message:
    """One message. ``source`` is ``"memory"`` on recalled messages, ``None`` otherwise."""

    role: Role
    content: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    thread_id: str | None = None
    resource_id: str | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    source: str | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValidationError(f"message role must be one of {', '.join(ROLES)}, got {self.role!r}")
        if not isinstance(self.content, str):
            raise ValidationError(f"message content must be a str, got {type(self.content).__name__}")
        if not isinstance(self.id, str) or not self.id or "\x00" in self.id:
            raise ValidationError(f"message id must be a non-empty str without NUL, got {self.id!r}")
        if len(self.id.encode("utf-8")) > 512:
            raise ValidationError("message id is longer than 512 UTF-8 bytes")
        for label, value in (("thread_id", self.thread_id), ("resource_id", self.resource_id)):
            if value is not None and (not isinstance(value, str) or not value):
                raise ValidationError(f"{label} must be a non-empty str, got {value!r}")
        object.__setattr__(self, "created_at", as_utc(self.created_at))

    @property
    def recalled(self) -> bool:
        return self.source == MEMORY_SOURCE


@dataclass(frozen=True, slots=True)
class Thread:
    """A conversation: owned by one resource, optionally titled (used in recall labels)."""

    id: str
    resource_id: str
    title: str | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __post_init__(self) -> None:
        for label, value in (("thread id", self.id), ("resource_id", self.resource_id)):
            if not isinstance(value, str) or not value:
                raise ValidationError(f"{label} must be a non-empty str, got {value!r}")
        object.__setattr__(self, "created_at", as_utc(self.created_at))


def as_utc(value: datetime | str) -> datetime:
    """An aware UTC datetime; naive datetimes are taken as UTC, strings as ISO 8601."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError as exc:
            raise ValidationError(f"not an ISO 8601 time: {value!r}") from exc
    if not isinstance(value, datetime):
        raise ValidationError(f"created_at must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def iso_utc(value: datetime) -> str:
    """Fixed-width ISO 8601 in UTC (``2024-05-01T09:30:00.000000+00:00``): sortable as text."""
    return as_utc(value).isoformat(timespec="microseconds")


def text_of(content: Any) -> str:
    """The text of a message content: a str, or chat parts whose text parts are joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, (bytes, bytearray)):
        texts: list[str] = []
        for position, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping):
                if part.get("type", "text") == "text" and isinstance(part.get("text"), str):
                    texts.append(part["text"])
            else:
                raise ValidationError(f"content part {position} is a {type(part).__name__}")
        return "\n".join(texts)
    raise ValidationError(f"message content must be a str or a list of parts, got {content!r}")


_MESSAGE_KEYS = frozenset({"role", "content", "id", "thread_id", "resource_id", "created_at",
                           "source", "threadId", "resourceId", "createdAt"})


def as_message(raw: Message | Mapping[str, Any], *, thread_id: str | None = None,
               resource_id: str | None = None) -> Message:
    """A :class:`Message` from a message or a dict (snake_case or Mastra's camelCase
    keys). ``thread_id``/``resource_id`` fill in what the message leaves out; a message
    that names a different thread or resource than the one given is refused, since
    silently moving it would break isolation."""
    if isinstance(raw, Message):
        message = raw
    elif isinstance(raw, Mapping):
        unknown = set(raw) - _MESSAGE_KEYS
        if unknown:
            raise ValidationError(f"unknown message keys {sorted(unknown)}")
        if "role" not in raw or "content" not in raw:
            raise ValidationError("a message needs 'role' and 'content'")
        options: dict[str, Any] = {}
        for key, alias in (("id", "id"), ("thread_id", "threadId"), ("resource_id", "resourceId"),
                           ("created_at", "createdAt"), ("source", "source")):
            value = raw.get(key, raw.get(alias))
            if value is not None:
                options[key] = value
        message = Message(role=raw["role"], content=text_of(raw["content"]), **options)
    else:
        raise ValidationError(f"a message is a Message or a dict, got {type(raw).__name__}")
    for label, given in (("thread_id", thread_id), ("resource_id", resource_id)):
        current = getattr(message, label)
        if given is not None and current is not None and current != given:
            raise ValidationError(f"message {message.id!r} has {label} {current!r}, not {given!r}")
    if (message.thread_id is None and thread_id is not None) or (
        message.resource_id is None and resource_id is not None
    ):
        message = replace(message, thread_id=message.thread_id or thread_id,
                          resource_id=message.resource_id or resource_id)
    return message

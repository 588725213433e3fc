"""How messages recalled from other conversations are shown to the model.

They arrive as ONE system message, not as turns of the current conversation: replayed
as turns, another thread's "yes, book it" would read as if said here and now. Each
conversation is labelled with its title (or id) and every line with its time, so the
model can tell where and when something was said.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime

from vectorport.recall.messages import MEMORY_SOURCE, Message, Thread

HEADER = "The following messages were remembered from other conversations:"
OPEN_TAG = "<remembered_from_other_conversation>"
CLOSE_TAG = "</remembered_from_other_conversation>"


def timestamp(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _line(message: Message) -> str:
    first, *rest = message.content.splitlines() or [""]
    lines = [f"[{timestamp(message.created_at)}] {message.role}: {first}"]
    lines.extend("    " + more for more in rest)
    return "\n".join(lines)


def conversation_label(thread_id: str, thread: Thread | None) -> str:
    if thread is not None and thread.title:
        return f'Conversation "{thread.title}" (thread {thread_id})'
    return f"Conversation {thread_id}"


def other_threads_message(
    conversations: Sequence[tuple[str, Thread | None, Sequence[Message]]],
    *,
    thread_id: str | None,
    resource_id: str | None,
) -> Message:
    """The system message holding ``(thread id, thread, messages)`` groups, each group in
    conversation order; groups are ordered by their first message."""
    ordered = sorted(conversations, key=lambda c: (c[2][0].created_at, c[0]))
    blocks = []
    for tid, thread, messages in ordered:
        started = timestamp(messages[0].created_at)
        body = "\n".join(_line(m) for m in messages)
        blocks.append(f"{conversation_label(tid, thread)}, from {started}:\n{body}")
    text = "\n".join([HEADER, OPEN_TAG, "\n\n".join(blocks), CLOSE_TAG])
    ids = ",".join(m.id for _, _, ms in ordered for m in ms)
    digest = hashlib.blake2b(ids.encode("utf-8"), digest_size=8).hexdigest()
    return Message(role="system", content=text, id=f"semantic-recall-{digest}",
                   thread_id=thread_id, resource_id=resource_id,
                   created_at=min(c[2][0].created_at for c in ordered), source=MEMORY_SOURCE)

"""``SemanticRecall``: find earlier messages similar to what the user just said.

On input, the last user message is embedded and the vector index is queried for
similar stored messages **within the scope**: ``thread`` filters on the thread and the
resource, ``resource`` on the resource. The scope is a vectorport filter on the
``thread_id``/``resource_id`` metadata of every stored vector, so the database itself
never returns a message outside it, whatever the backend; the messages read back from
storage are checked against the scope again, so a stale or foreign vector can narrow
what is recalled but never widen it.

Each match is expanded by ``message_range`` into the surrounding messages of its
thread (from storage, in conversation order). Messages of the current thread are added
as themselves, tagged ``source="memory"``; messages of other threads of the resource
become one timestamped system message (see :mod:`vectorport.recall.formatting`).

On output, the new user and assistant messages are saved to storage and their
embeddings upserted (id = message id) with ``message_id``, ``thread_id``,
``resource_id``, ``role`` and ``created_at`` metadata and the content as the document.
Embeddings go through an LRU cache, so a message embedded on input is not embedded
again on output.

The embedder is part of the index's identity (:mod:`vectorport.recall.identity`): an
index recorded by another embedder is refused with ``EmbedderMismatchError``, or its
vectors embedded again from the stored messages with ``reembed=True``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from vectorport.core import validation
from vectorport.core.errors import ValidationError
from vectorport.core.store import Index, Store, connect
from vectorport.embedders.base import Embedder
from vectorport.embedders.cache import CachedEmbedder
from vectorport.embedders.function import as_embedder
from vectorport.embedders.hashing import default_embedder
from vectorport.recall.formatting import other_threads_message
from vectorport.recall.identity import RecallIndex
from vectorport.recall.messages import MEMORY_SOURCE, Message, as_message, iso_utc
from vectorport.recall.options import (
    MessageRange,
    Scope,
    check_scope,
    check_threshold,
    check_top_k,
    default_index_name,
)
from vectorport.recall.storage import InMemoryStorage, MessageStorage

EMBEDDED_ROLES = frozenset({"user", "assistant"})
RawMessage = Message | Mapping[str, Any]


class SemanticRecall:
    """The recall processor. Use it as both an input and an output processor.

    ``storage`` holds the messages (default: :class:`InMemoryStorage`); ``vector`` is
    any vectorport :class:`Store` (default: a fresh ``memory://`` store); ``embedder``
    an :class:`Embedder` or a function (default: the offline hashing embedder).
    ``threshold`` is the minimal cosine similarity of a match. ``index_name`` defaults
    to ``recall_<embedder>_<dimension>``. With ``save_messages=False`` the processor
    only embeds, for when another component already writes messages to the storage.
    ``reembed=True`` re-embeds an index built by another embedder instead of refusing
    it (see :mod:`vectorport.recall.identity`).
    """

    id = "semantic-recall"
    name = "SemanticRecall"

    def __init__(
        self,
        *,
        storage: MessageStorage | None = None,
        vector: Store | None = None,
        embedder: Embedder | Any = None,
        top_k: int = 4,
        message_range: int | Mapping[str, int] | MessageRange = 1,
        scope: Scope = "resource",
        threshold: float | None = None,
        index_name: str | None = None,
        namespace: str = "",
        cache_size: int = 1000,
        save_messages: bool = True,
        logger: logging.Logger | None = None,
        reembed: bool = False,
    ) -> None:
        if storage is not None and not isinstance(storage, MessageStorage):
            raise ValidationError(f"storage must implement MessageStorage, got {type(storage).__name__}")
        if vector is not None and not isinstance(vector, Store):
            raise ValidationError(f"vector must be a vectorport Store, got {type(vector).__name__}")
        self.storage: MessageStorage = storage if storage is not None else InMemoryStorage()
        self.vector = vector if vector is not None else connect("memory://")
        base = as_embedder(embedder) if embedder is not None else default_embedder()
        self.embedder = base if isinstance(base, CachedEmbedder) else CachedEmbedder(base, cache_size)
        self.top_k = check_top_k(top_k)
        self.message_range = MessageRange.of(message_range)
        self.scope = check_scope(scope)
        self.threshold = check_threshold(threshold)
        self._index_name = validation.index_name(index_name) if index_name is not None else None
        self.namespace = validation.namespace(namespace)
        self.save_messages = bool(save_messages)
        self.logger = logger or logging.getLogger("vectorport.recall")
        self.reembed = bool(reembed)
        self._opener = RecallIndex(self.vector, self.embedder, self.storage, self.namespace,
                                   self.reembed, self.logger)
        self._index: Index | None = None

    def __repr__(self) -> str:
        return (f"SemanticRecall(scope={self.scope!r}, top_k={self.top_k}, "
                f"message_range={self.message_range}, index={self._index_name!r})")

    # -- the vector index --------------------------------------------------------------

    def index_name_for(self, dimension: int) -> str:
        return self._index_name or default_index_name(self.embedder, dimension)

    @property
    def index_name(self) -> str | None:
        """The index in use: the one given, or the derived one once the dimension is known."""
        if self._index_name is not None:
            return self._index_name
        dimension = self.embedder.dimension
        return default_index_name(self.embedder, dimension) if dimension else None

    def _open_index(self, dimension: int, *, create: bool) -> Index | None:
        if self._index is not None and self._index.dimension == dimension:
            return self._index
        self._index = self._opener.open(self.index_name_for(dimension), dimension,
                                        create=create)
        return self._index

    # -- input: recall -----------------------------------------------------------------

    def _scope_filter(self, thread_id: str | None, resource_id: str | None) -> dict[str, str]:
        if self.scope == "thread":
            if thread_id is None:
                raise ValidationError("scope 'thread' needs a thread_id")
            return {"thread_id": thread_id, **({"resource_id": resource_id} if resource_id else {})}
        if resource_id is None:
            raise ValidationError("scope 'resource' needs a resource_id")
        return {"resource_id": resource_id}

    def _in_scope(self, message: Message, thread_id: str | None, resource_id: str | None) -> bool:
        if resource_id is not None and message.resource_id != resource_id:
            return False
        return self.scope != "thread" or message.thread_id == thread_id

    def recall(self, query: str, *, thread_id: str | None, resource_id: str | None,
               exclude: Sequence[str] = (), query_id: str | None = None) -> list[Message]:
        """The recalled messages for ``query`` in conversation order (untagged): the
        ``top_k`` best matches (the query's own message ``query_id`` aside), each with
        its ``message_range`` neighbours, minus the messages in ``exclude`` (already in
        the conversation)."""
        scope_filter = self._scope_filter(thread_id, resource_id)
        if not query.strip():
            return []
        vector = self.embedder.embed([query])[0]
        index = self._open_index(len(vector), create=False)
        if index is None:
            return []
        wanted = min(self.top_k + 1, self.vector.capabilities.max_top_k)
        matches = index.query(vector, top_k=wanted, filter=scope_filter,
                              min_score=self.threshold, namespace=self.namespace,
                              include_documents=False)
        hits = [m.id for m in matches if m.id != query_id][: self.top_k]
        self.logger.debug("semantic recall: %d matches in scope %s", len(hits), scope_filter)
        skip = set(exclude)
        around: dict[str, None] = {}
        before, after = self.message_range.before, self.message_range.after
        for hit in hits:
            for message in self.storage.message_window(hit, before, after):
                if message.id not in skip and self._in_scope(message, thread_id, resource_id):
                    around[message.id] = None
        ordered = self.storage.get_messages(list(around))
        return [m for m in ordered if self._in_scope(m, thread_id, resource_id)]

    def process_input(self, messages: Sequence[RawMessage], *, thread_id: str | None = None,
                      resource_id: str | None = None) -> list[Message]:
        """``messages`` with the recalled ones before them: first one system message
        for other threads (if any), then recalled messages of this thread, all tagged
        ``source="memory"``. Thread and resource default to the last user message's."""
        current = [as_message(m, thread_id=thread_id, resource_id=resource_id) for m in messages]
        last_user = next((m for m in reversed(current) if m.role == "user" and not m.recalled),
                         None)
        if last_user is None:
            return current
        thread_id = thread_id or last_user.thread_id
        resource_id = resource_id or last_user.resource_id
        recalled = self.recall(last_user.content, thread_id=thread_id, resource_id=resource_id,
                               exclude=[m.id for m in current], query_id=last_user.id)
        here = [replace(m, source=MEMORY_SOURCE) for m in recalled if m.thread_id == thread_id]
        groups: dict[str, list[Message]] = {}
        for message in recalled:
            if message.thread_id != thread_id:
                assert message.thread_id is not None
                groups.setdefault(message.thread_id, []).append(message)
        added: list[Message] = []
        if groups:
            conversations = [(tid, self.storage.get_thread(tid), ms) for tid, ms in groups.items()]
            added.append(other_threads_message(conversations, thread_id=thread_id,
                                               resource_id=resource_id))
        return [*added, *here, *current]

    # -- output: remember --------------------------------------------------------------

    def process_output(self, messages: Sequence[RawMessage], *, thread_id: str | None = None,
                       resource_id: str | None = None) -> list[Message]:
        """Save and embed the new user and assistant messages among ``messages``
        (recalled and empty ones are skipped); returns the messages, ids filled in."""
        current = [as_message(m, thread_id=thread_id, resource_id=resource_id) for m in messages]
        new = [m for m in current
               if m.role in EMBEDDED_ROLES and not m.recalled and m.content.strip()]
        if not new:
            return current
        for message in new:
            if message.thread_id is None or message.resource_id is None:
                raise ValidationError(f"message {message.id!r} needs a thread_id and a resource_id")
        vectors = self.embedder.embed([m.content for m in new])
        if self.save_messages:
            self.storage.save_messages(new)
        index = self._open_index(len(vectors[0]), create=True)
        assert index is not None
        index.upsert([
            {"id": m.id, "vector": v, "document": m.content, "metadata": {
                "message_id": m.id, "thread_id": m.thread_id, "resource_id": m.resource_id,
                "role": m.role, "created_at": iso_utc(m.created_at)}}
            for m, v in zip(new, vectors, strict=True)
        ], namespace=self.namespace)
        return current

    # -- async -------------------------------------------------------------------------

    async def aprocess_input(self, messages: Sequence[RawMessage], *, thread_id: str | None = None,
                             resource_id: str | None = None) -> list[Message]:
        """:meth:`process_input` in a worker thread."""
        return await asyncio.to_thread(self.process_input, messages, thread_id=thread_id,
                                       resource_id=resource_id)

    async def aprocess_output(self, messages: Sequence[RawMessage], *, thread_id: str | None = None,
                              resource_id: str | None = None) -> list[Message]:
        """:meth:`process_output` in a worker thread."""
        return await asyncio.to_thread(self.process_output, messages, thread_id=thread_id,
                                       resource_id=resource_id)

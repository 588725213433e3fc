"""Open data-plane clients, one per index host, shared by the adapter's threads.

Pinecone serves each index from its own host; the SDK's data-plane client for a host is
costly to make, so the adapter keeps one per index and drops it when the index is gone
(a 404) or deleted. Threads may still hold a dropped handle; only an explicit delete or
``close`` closes its client.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pinecone.index import Index as PineconeIndex

from vectorport.adapterkit import BackendError
from vectorport.adapters.pinecone.codec import layout_of


@dataclass(frozen=True, slots=True)
class Handle:
    """An open index: its Pinecone name, the SDK data-plane client for its host, and the
    layout of its records (``codec.layout_of`` its tags)."""

    name: str
    host: str
    client: PineconeIndex
    layout: int


class Handles:
    """The thread-safe map of index name → :class:`Handle`."""

    def __init__(self, connect: Callable[[str], PineconeIndex]) -> None:
        self._connect = connect
        self._handles: dict[str, Handle] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> Handle | None:
        with self._lock:
            return self._handles.get(name)

    def open(self, name: str, model: Any) -> Handle:
        """The handle for the index described by ``model`` (an SDK index model)."""
        host = model.host
        if not host:
            raise BackendError(f"pinecone: index {name!r} has no host yet")
        with self._lock:
            handle = self._handles.get(name)
            if handle is not None and handle.host == host:
                return handle
            self._handles[name] = Handle(model.name, host, self._connect(host),
                                         layout_of(model.tags))
            return self._handles[name]

    def drop(self, name: str, *, close: bool = True) -> None:
        with self._lock:
            handle = self._handles.pop(name, None)
        if handle is not None and close:
            handle.client.close()

    def close(self) -> None:
        with self._lock:
            handles = list(self._handles.values())
            self._handles.clear()
        for handle in handles:
            handle.client.close()


__all__ = ["Handle", "Handles"]

"""The namespaces each collection of a single-writer engine holds.

Local mode evaluates every filter in Python, point by point, and even Qdrant's own
engine (Edge) spends ≈ 10 µs of a 130 µs query on the tenant condition: a collection
holding one namespace is better searched without it. That is sound only where this
process is the one writer of the data: qdrant-client's local mode (which locks its
folder) and an Edge shard (whose WAL is locked), each shared by every connection of
the process. A server has other writers and keeps the condition always.

:class:`Tenants` keeps a superset of the namespaces of each collection: a namespace is
added before points of it are written and never removed on delete (a superset only
costs the condition), and a collection not yet seen is read once with an exact facet.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from vectorport.adapters.qdrant import naming
from vectorport.adapters.qdrant.filters import QdrantFilter

_UNREAD = object()

Reader = Callable[[int], Sequence[str]]
"""An exact facet over the namespace field: at most ``limit`` distinct namespaces."""


def leading_namespace(flt: QdrantFilter) -> str | None:
    """The namespace of ``flt``'s leading tenant condition (:func:`..filters.scoped`
    puts it first), or None."""
    must = flt.get("must")
    if not must or must[0].get("key") != naming.NAMESPACE:
        return None
    value = must[0]["match"]["value"]
    return value if isinstance(value, str) else None


class Tenants:
    """A superset of the namespaces held by each collection of one single-writer engine.

    Reads of the superset take no lock (a reader racing a write into a new namespace
    must be able to tell: :meth:`unscoped` callers whose engine reads without the
    writers' lock check the namespace of what comes back); the first read of a
    collection and every change take ``lock``, which the engine's writers hold."""

    MANY = 10_000
    """More namespaces than this: never reported as sole."""

    def __init__(self, lock: threading.RLock | None = None) -> None:
        self._known: dict[str, set[str] | None] = {}  # None: too many to track
        self._lock = lock if lock is not None else threading.RLock()

    def created(self, name: str) -> None:
        with self._lock:
            self._known[name] = set()

    def dropped(self, name: str) -> None:
        with self._lock:
            self._known.pop(name, None)

    def writing(self, name: str, namespaces: set[str], read: Reader) -> None:
        """Call before writing points of ``namespaces`` into ``name``."""
        with self._lock:
            known = self._load(name, read)
            if known is not None:
                known.update(namespaces)
                if len(known) > self.MANY:
                    self._known[name] = None

    def unscoped(self, name: str, flt: QdrantFilter, read: Reader) -> QdrantFilter:
        """``flt`` without its leading namespace condition when every point of
        ``name`` is in that namespace (``flt`` itself otherwise). For a filter of
        :func:`..filters.scoped`, that is its user part itself (the same object
        every time, so that the engine's SDK objects of it are kept), or ``{}``."""
        namespace = leading_namespace(flt)
        if namespace is None:
            return flt
        known = self._known.get(name, _UNREAD)
        if known is _UNREAD:
            known = self._load(name, read)
        if not isinstance(known, set) or not known <= {namespace}:
            return flt
        must = flt["must"]
        if len(flt) == 1 and len(must) <= 2:
            return must[1] if len(must) == 2 else {}
        rest = {k: v for k, v in flt.items() if k != "must"}
        if len(must) > 1:
            rest["must"] = must[1:]
        return rest

    def _load(self, name: str, read: Reader) -> set[str] | None:
        with self._lock:
            if name not in self._known:
                found = read(self.MANY + 1)
                self._known[name] = set(found) if len(found) <= self.MANY else None
            return self._known[name]


__all__ = ["Reader", "Tenants", "leading_namespace"]

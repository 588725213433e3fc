"""The vector side of a workspace: entries embedded into one vectorport index.

The index is created (cosine) on the first write, with the dimension of the first
embeddings. Replacing a document upserts its new entries first and then deletes the
chunks past its new length, so a search never sees the document missing; each
document's first chunk is written last, and it is the one whose fingerprint says
whether a document is up to date, so an interrupted write is redone by the next sync.

**The embedder is part of the index's identity.** The first write records the
embedder's :class:`~vectorport.embedders.identity.EmbedderIdentity` in the reserved
namespace ``vp.embedder`` of the same index (one small record per workspace namespace,
never seen by searches of the workspace's own namespace). Opening an index recorded by
another embedder raises :class:`EmbedderMismatchError`, unless ``reembed`` is on: then
the namespace's entries are dropped (the whole index when the dimension changed) so
that the next sync embeds everything again with the new embedder. An index written
before identities were recorded is adopted by the first embedder that opens it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from vectorport.core.filters.ast import Filter
from vectorport.core.store import Index, Store
from vectorport.core.types import Match
from vectorport.embedders.base import Embedder, Vector
from vectorport.embedders.identity import (
    IDENTITY_NAMESPACE,
    EmbedderIdentity,
    check_identity,
    identity_of,
    record_identity,
    stored_identity,
)
from vectorport.workspace.entries import CHUNK, CHUNKS, FINGERPRINT, ORIGIN, PATH, Entry
from vectorport.workspace.naming import entry_key


@dataclass(frozen=True, slots=True)
class StoredState:
    """What the index holds for a document: its fingerprint and number of chunks."""

    fingerprint: str
    chunks: int


def cosine01(value: float) -> float:
    """A cosine similarity as a score in [0, 1]: negative similarity counts as none."""
    return min(1.0, max(0.0, float(value)))


__all__ = ["IDENTITY_NAMESPACE", "StoredState", "VectorSide", "cosine01"]


class VectorSide:
    def __init__(self, store: Store, embedder: Embedder, index_name: str, namespace: str,
                 *, reembed: bool = False) -> None:
        self.store = store
        self.embedder = embedder
        self.index_name = index_name
        self.namespace = namespace
        self.reembed = reembed
        self._index: Index | None = None

    def _open(self, dimension: int | None, *, create: bool) -> Index | None:
        if self._index is not None:
            return self._index
        if self.store.has_index(self.index_name):
            self._index = self._checked(self.store.index(self.index_name))
        if self._index is None and create:
            assert dimension is not None
            self._index = self.store.create_index(self.index_name, dimension, "cosine",
                                                  exist_ok=True)
            self._record(self._index)
        return self._index

    def stored_identity(self, index: Index) -> EmbedderIdentity | None:
        return stored_identity(index, self.namespace)

    def _checked(self, index: Index) -> Index | None:
        """``index`` if this embedder built it (recording it on a legacy index), after a
        re-embed reset if asked; ``None`` when the reset dropped the index."""
        check = check_identity(index, self.embedder, self.namespace)
        if check.compatible:
            if not check.recorded:
                self._record(index)
            return index
        if not self.reembed:
            raise check.mismatch_error(
                "Use the embedder that built it, another search_index_name, or reembed=True "
                "(CLI: --reembed) to embed everything again with this one")
        if check.current.dimension != index.spec.dimension:
            self.store.delete_index(self.index_name, missing_ok=True)
            return None
        index.delete_namespace(self.namespace)
        self._record(index)
        return index

    def _record(self, index: Index) -> None:
        record_identity(index, identity_of(self.embedder, index.spec.dimension), self.namespace)

    def stored_states(self, paths: Sequence[str]) -> dict[str, StoredState]:
        index = self._open(None, create=False)
        if index is None or not paths:
            return {}
        records = index.fetch([entry_key(p, 0) for p in paths], namespace=self.namespace)
        states = {}
        for record in records.values():
            meta = record.metadata
            path, print_, chunks = meta.get(PATH), meta.get(FINGERPRINT), meta.get(CHUNKS)
            if isinstance(path, str) and isinstance(print_, str) and isinstance(chunks, int):
                states[path] = StoredState(print_, chunks)
        return states

    def write(self, documents: Mapping[str, list[Entry]], known: Mapping[str, StoredState]) -> None:
        """Embed and store the entries of ``documents`` (path → entries), replacing what
        ``known`` says the index held for them."""
        entries = [e for group in documents.values() for e in group]
        if not entries:
            return
        entries.sort(key=lambda e: e.chunk == 0)  # first chunks last (see the module doc)
        vectors = self.embedder.embed([e.text for e in entries])
        index = self._open(len(vectors[0]), create=True)
        assert index is not None
        index.upsert([{"id": e.key, "vector": v, "document": e.text,
                       "metadata": e.stored_metadata()}
                      for e, v in zip(entries, vectors, strict=True)], namespace=self.namespace)
        for path, group in documents.items():
            state = known.get(path)
            if state is not None and state.chunks > len(group):
                index.delete(filter={PATH: path, CHUNK: {"$gte": len(group)}},
                             namespace=self.namespace)

    def remove(self, path: str) -> None:
        index = self._open(None, create=False)
        if index is not None:
            index.delete(filter={PATH: path}, namespace=self.namespace)

    def remove_auto_except(self, keep: Sequence[str]) -> int:
        """Delete the auto-indexed entries of documents not in ``keep``; returns how many."""
        index = self._open(None, create=False)
        if index is None:
            return 0
        gone: dict[str, object] = {ORIGIN: "auto"}
        if keep:
            gone[PATH] = {"$nin": list(keep)}
        count = index.count(self.namespace, filter=gone)
        if count:
            index.delete(filter=gone, namespace=self.namespace)
        return count

    def embed_query(self, query: str) -> Vector:
        return self.embedder.embed([query])[0]

    def query(self, vector: Vector, top_k: int, filter: Filter | None) -> list[Match] | None:
        """The nearest entries, or ``None`` when nothing was ever indexed."""
        index = self._open(len(vector), create=False)
        if index is None:
            return None
        top_k = min(top_k, self.store.capabilities.max_top_k)
        return index.query(vector, top_k=top_k, filter=filter, namespace=self.namespace)

    def cosines(self, vector: Vector, keys: Sequence[str]) -> dict[str, float]:
        """Exact cosine similarities of stored entries to ``vector`` (missing keys left out)."""
        index = self._open(len(vector), create=False)
        if index is None or not keys:
            return {}
        query = np.asarray(vector, dtype=np.float64)
        query_norm = float(np.linalg.norm(query))
        out = {}
        for key, record in index.fetch(keys, namespace=self.namespace).items():
            stored = np.asarray(record.vector, dtype=np.float64)
            denominator = query_norm * float(np.linalg.norm(stored))
            out[key] = float(query @ stored) / denominator if denominator else 0.0
        return out

"""The embedder is part of a recall index's identity.

The default index name (``recall_<embedder>_<dimension>``) keeps most embedders apart,
but not all: two hashing embedders with other n-grams, two functions, or any embedder
given an explicit ``index_name`` share a name, and a query embedded by one against the
other's vectors recalls unrelated messages with plausible scores. So the first write
records the embedder's :class:`~vectorport.embedders.identity.EmbedderIdentity` for the
recall namespace (the shared code of :mod:`vectorport.embedders.identity`), and opening
an index recorded by another embedder raises :class:`EmbedderMismatchError`.

With ``reembed=True`` the vectors are embedded again instead, in place: the text of
every message is in the index (its document) or, failing that, in the storage, so
recall can rebuild its vectors itself (the Workspace can only drop its entries and let
the next sync read the files). The new identity is recorded last: a process stopped
half-way leaves the old record, so the next ``reembed=True`` redoes the whole namespace.
An index written before identities were recorded is adopted by the first embedder that
opens it with vectors of the index's dimension.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from vectorport.core.store import Index, Store
from vectorport.core.types import MetadataValue
from vectorport.embedders.base import Embedder
from vectorport.embedders.identity import (
    IDENTITY_NAMESPACE,
    check_identity,
    record_identity,
)
from vectorport.recall.storage import MessageStorage

REMEDY = ("Use the embedder that built it, another index_name or namespace, or "
          "reembed=True to embed the stored messages again with this one")
_BATCH = 256  # messages embedded per call while re-embedding


@dataclass(frozen=True, slots=True)
class _Stored:
    id: str
    text: str
    metadata: dict[str, MetadataValue]


@dataclass(frozen=True, slots=True)
class RecallIndex:
    """Opens the recall index of one embedder, checking (and recording) its identity."""

    store: Store
    embedder: Embedder
    storage: MessageStorage
    namespace: str
    reembed: bool
    logger: logging.Logger

    def open(self, name: str, dimension: int, *, create: bool) -> Index | None:
        """The index ``name`` for vectors of ``dimension``, checked; created (and its
        identity recorded) when ``create``; ``None`` when it does not exist."""
        if self.store.has_index(name):
            index = self.store.index(name)
        elif create:
            index = self.store.create_index(name, dimension, "cosine", exist_ok=True)
        else:
            return None
        return self._checked(index, dimension)

    def _checked(self, index: Index, dimension: int) -> Index:
        check = check_identity(index, self.embedder, self.namespace, dimension)
        if check.compatible:
            if not check.recorded and dimension == index.dimension:
                # a new index, or one written before identities were recorded: adopt it
                # (a legacy index of another dimension is refused by the write or query)
                record_identity(index, check.current, self.namespace)
            return index
        if not self.reembed:
            raise check.mismatch_error(REMEDY)
        self.logger.warning("semantic recall: re-embedding index %r (namespace %r), built by "
                            "[%s], with [%s]", index.name, self.namespace,
                            check.stored.describe() if check.stored else "unknown",
                            check.current.describe())
        resize = dimension != index.dimension
        if resize:
            self._check_alone(index, check.mismatch_error)
        stored = self._read_all(index)
        # every vector first: an embedder failing half-way leaves the index as it was
        vectors = [v for start in range(0, len(stored), _BATCH)
                   for v in self.embedder.embed([s.text for s in stored[start:start + _BATCH]])]
        if resize:
            self.store.delete_index(index.name, missing_ok=True)
            index = self.store.create_index(index.name, dimension, "cosine", exist_ok=True)
        if stored:
            index.upsert([{"id": s.id, "vector": v, "document": s.text, "metadata": s.metadata}
                          for s, v in zip(stored, vectors, strict=True)],
                         namespace=self.namespace)
        record_identity(index, check.current, self.namespace)  # last: see the module doc
        return index

    def _read_all(self, index: Index) -> list[_Stored]:
        """Every message vector of the namespace with its text (the index's document,
        else the storage's content). Read whole before any write: a scan need not be
        stable under upserts of the records it is walking."""
        records = [(r.id, r.document, dict(r.metadata))
                   for r in index.iter_records(self.namespace)]
        missing = [rid for rid, text, _ in records if text is None]
        contents = {m.id: m.content for m in self.storage.get_messages(missing)} if missing else {}
        out, lost = [], []
        for rid, text, metadata in records:
            text = text if text is not None else contents.get(rid)
            if text is None or not text.strip():
                lost.append(rid)
            else:
                out.append(_Stored(rid, text, metadata))
        if lost:  # an old vector left in place would be searched with the new embedder
            self.logger.warning("semantic recall: %d vectors have no text in the index or "
                                "the storage; they are deleted", len(lost))
            index.delete(lost, namespace=self.namespace)
        return out

    def _check_alone(self, index: Index, refuse: Callable[[str], Exception]) -> None:
        """Re-embedding into another dimension recreates the index whole, so it may hold
        no other namespace's data: that would be lost."""
        others = sorted(ns for ns in index.list_namespaces()
                        if ns not in (self.namespace, IDENTITY_NAMESPACE))
        if others:
            raise refuse(f"Re-embedding into another dimension recreates the index, which "
                         f"also holds namespaces {others}: use another index_name instead")

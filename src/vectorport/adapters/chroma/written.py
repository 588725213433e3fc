"""Every metadata key a collection's records were ever written with, kept in the
collection's own metadata, so that an upsert replaces without reading first.

Chroma's ``upsert`` merges keys into a stored record; to replace it, every stored key
the new record lacks must be sent as ``None``. Without knowing which keys are stored,
the adapter reads the batch's stored metadata first (measured on Chroma 1.5, 100
records × 384 with six keys: a ``get`` of ≈ 3.5–5 ms against an upsert of ≈ 75 ms).
A collection created by this version instead lists, in ``vectorport:written``, every
key (user and reserved) any of its records was ever written with, and in
``vectorport:documents`` whether any record ever had a document. When no record ever
had one, an upsert needs no read: it sends ``None`` for each listed key a new record
lacks (keys never stored on that record cost Chroma ≈ 3 µs each, nothing to undo), and
the list is extended, before the records are written, when a batch brings a new key
(a crash between the two leaves a longer list, which is harmless).

The list is read afresh under the write lock before each write (a collection lookup,
≈ 0.3 ms), since another writer sharing the folder may have extended it. Collections
written before this version have no list and keep the read; so does a collection that
has held a document (a record whose document must go is flagged, which needs the
stored document), and a batch that would send more ``None`` than it saves
(:data:`MAX_CLEARED_PER_RECORD`). Writers of earlier versions do not extend the list:
such a writer and this one writing one collection at the same time fall back to merging
keys that only the earlier one wrote (the same holds for other processes on a
``chroma+http://`` server, which the lock cannot see anyway).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from chromadb.api.models.Collection import Collection

from vectorport.adapterkit import Record
from vectorport.adapters.chroma.codec import NODOC_FIELD, replacing
from vectorport.adapters.chroma.layout import layout_of

WRITTEN_KEY = "vectorport:written"
DOCUMENTS_KEY = "vectorport:documents"
MAX_CLEARED_PER_RECORD = 16
"""Above this many ``None`` keys a record on average, the read is cheaper."""


@dataclass(frozen=True, slots=True)
class Written:
    """What a collection's records were ever written with."""

    keys: frozenset[str]
    documents: bool


def initial() -> dict[str, Any]:
    """A new data collection's entries: nothing written yet."""
    return {WRITTEN_KEY: "[]", DOCUMENTS_KEY: False}


def written_of(collection_metadata: Mapping[str, Any] | None) -> Written | None:
    """The collection's list, or ``None`` where it keeps none (or it is unreadable)."""
    if not collection_metadata:
        return None
    raw = collection_metadata.get(WRITTEN_KEY)
    if not isinstance(raw, str):
        return None
    try:
        keys = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        return None
    return Written(frozenset(keys), collection_metadata.get(DOCUMENTS_KEY) is True)


def extend(collection: Collection, known: Written, metadatas: Iterable[Mapping[str, Any] | None],
           documents: bool) -> Written:
    """Add the keys of ``metadatas`` (and the document flag) to the collection's list
    before they are written; one ``modify`` only when something is new."""
    keys = set(known.keys)
    for metadata in metadatas:
        if metadata:
            keys.update(metadata)
    grown = Written(frozenset(keys), known.documents or documents)
    if grown != known:
        # modify replaces the collection metadata whole: keep every other entry
        collection.modify(metadata={**(collection.metadata or {}),
                                    WRITTEN_KEY: json.dumps(sorted(grown.keys)),
                                    DOCUMENTS_KEY: grown.documents})
    return grown


def clearing(metadatas: Sequence[dict[str, Any]], known: Written
             ) -> list[dict[str, Any] | None] | None:
    """Each new metadata with ``None`` for every listed key it lacks (what a merging
    upsert needs to leave exactly it), or ``None`` when reading first is cheaper."""
    cleared = 0
    out: list[dict[str, Any] | None] = []
    for metadata in metadatas:
        gone = known.keys.difference(metadata)
        if gone:
            cleared += len(gone)
            metadata = {**metadata, **dict.fromkeys(gone)}
        out.append(metadata or None)  # Chroma refuses an empty metadata: none to send
    if cleared > MAX_CLEARED_PER_RECORD * len(metadatas):
        return None
    return out


def replace(collection: Collection, records: Sequence[Record]) -> None:
    """Upsert ``records`` so that each wholly replaces its stored version; the caller
    holds the write lock and has looked ``collection`` up under it (:mod:`.written`)."""
    ids = [r.id for r in records]
    encode = layout_of(collection.metadata).encode
    encoded = [encode(r.metadata) for r in records]
    documents: list[str | None] = [r.document for r in records]
    known = written_of(collection.metadata)
    if known is not None and not known.documents:
        cleared = clearing(encoded, known)
        if cleared is not None:  # no read: every key a record may hold is listed
            extend(collection, known, encoded, any(d is not None for d in documents))
            _send(collection, ids, records, cleared, documents)
            return
    stored = collection.get(ids=ids, include=["metadatas", "documents"])
    old_metadata = dict(zip(stored["ids"], stored["metadatas"] or [], strict=False))
    old_document = dict(zip(stored["ids"], stored["documents"] or [], strict=False))
    metadatas: list[Any] = []
    for i, (r, new) in enumerate(zip(records, encoded, strict=True)):
        if r.document is None and old_document.get(r.id) is not None:
            # Chroma cannot clear a document: a flagged empty one, in this
            # same write, so no crash can leave the record half-replaced
            new[NODOC_FIELD], documents[i] = True, ""
        metadatas.append(replacing(new, old_metadata.get(r.id)))
    if known is not None:
        extend(collection, known, encoded, any(d is not None for d in documents))
    _send(collection, ids, records, metadatas, documents)


def _send(collection: Collection, ids: list[str], records: Sequence[Record],
          metadatas: list[Any], documents: list[str | None]) -> None:
    collection.upsert(
        ids=ids,
        embeddings=np.stack([r.vector for r in records]),
        metadatas=metadatas if any(m is not None for m in metadatas) else None,
        documents=documents if any(d is not None for d in documents) else None,  # type: ignore[arg-type]
    )


__all__ = ["DOCUMENTS_KEY", "MAX_CLEARED_PER_RECORD", "WRITTEN_KEY", "Written", "clearing",
           "extend", "initial", "replace", "written_of"]

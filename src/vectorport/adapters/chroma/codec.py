"""Records as Chroma stores them, and Chroma answers as matches and records.

**Metadata.** User metadata goes in unchanged (list values as lists) and comes back with
its kinds intact (Chroma keeps ``str``, ``int`` as int64, ``float``, ``bool`` and lists
exactly; lists come back as tuples, the canonical form). Beside it, the reserved lists
the filters read (:mod:`.layout`).

``vectorport:nodoc`` marks a record whose document was removed: Chroma
cannot clear a stored document, so such a record is written with the empty document
``""`` and this flag, in the same single write (no delete-then-add that a crash could
interrupt); it reads back as "no document".

Reserved keys (``vectorport:`` and a name) are removed from everything read back.

**Scores** from Chroma's distances: ``cosine`` → ``1 - d``; ``l2`` (Chroma reports the
*squared* distance) → ``1 / (1 + sqrt(d))``; ``ip`` (``d = 1 - q·x``) → ``1 - d``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vectorport.adapterkit import (
    Include,
    Match,
    MetadataValue,
    Metric,
    Record,
    match_of,
    read_only_float32,
    score_from_distance,
)
from vectorport.adapters.chroma import floats

RESERVED_PREFIX = "vectorport:"
NODOC_FIELD = "vectorport:nodoc"

ChromaMetadata = dict[str, Any]


def decode_metadata(stored: Mapping[str, Any] | None) -> dict[str, MetadataValue]:
    """User metadata in canonical form from what Chroma returned."""
    if not stored:
        return {}
    # On every match, so kept lean: user keys never hold a ":" (validation's key rule),
    # every reserved key does; with an exact type test for lists (Chroma returns plain
    # lists) this took decoding the ten metadatas of a top-10 answer from 29 to 8 µs
    # against startswith and isinstance.
    metadata = {key: tuple(value) if type(value) is list else value
                for key, value in stored.items()
                if value is not None and ":" not in key}
    exact = stored.get(floats.EXACT_FIELD)
    if exact is not None:
        floats.restore(metadata, exact)
    return metadata


def replacing(new: ChromaMetadata, old: Mapping[str, Any] | None) -> ChromaMetadata | None:
    """What to send so that a merging write leaves exactly ``new`` in place of ``old``.

    Chroma's ``upsert`` and ``update`` merge keys into the stored metadata, and delete a
    key given as ``None``. ``None`` as a result means "send no metadata" (nothing to set
    and nothing to remove).
    """
    out: ChromaMetadata = dict(new)
    for key in old or {}:
        if key not in out:
            out[key] = None
    return out or None


def document_of(document: Any, stored_metadata: Mapping[str, Any] | None) -> str | None:
    """The record's document: ``None`` where the stored one is only a placeholder."""
    if stored_metadata and stored_metadata.get(NODOC_FIELD):
        return None
    return document if isinstance(document, str) else None


def chroma_score(metric: Metric, distance: float) -> float:
    """The CONTRACT §3 score of a Chroma distance in the index's space."""
    if metric == "euclidean":
        return score_from_distance("l2_squared", distance)
    return 1.0 - distance  # cosine: d = 1 - cos(q, x); ip: d = 1 - q·x


@dataclass(frozen=True, slots=True)
class QueryRow:
    """One query's neighbours in a Chroma answer (parts not asked for are ``None``)."""

    ids: list[str]
    distances: list[float]
    metadatas: list[Any] | None
    documents: list[Any] | None
    embeddings: Any | None

    @classmethod
    def of(cls, result: Any, row: int) -> QueryRow:
        def part(key: str) -> Any:
            value = result.get(key)
            return None if value is None else value[row]

        return cls(result["ids"][row], [float(d) for d in part("distances") or []],
                   part("metadatas"), part("documents"), part("embeddings"))

    def scores(self, metric: Metric) -> list[float]:
        if metric == "euclidean":
            return [chroma_score(metric, d) for d in self.distances]
        return [1.0 - d for d in self.distances]  # chroma_score's, the metric asked once


Hit = tuple[float, QueryRow, int]
"""A candidate before decoding: its score, its query's answer, its position there."""


def matches_of(hits: Sequence[Hit], include: Include) -> list[Match]:
    """The matches of ``hits``, with the parts ``include`` asks for (one loop with the
    choices made once: ten matches a query)."""
    metadata_wanted, vectors_wanted, documents_wanted = (
        include.metadata, include.vectors, include.documents)
    out = []
    for score, row, i in hits:
        stored = row.metadatas[i] if row.metadatas is not None else None
        metadata = decode_metadata(stored) if metadata_wanted else None
        vector = (read_only_float32(row.embeddings[i])
                  if vectors_wanted and row.embeddings is not None else None)
        document = (document_of(row.documents[i], stored)
                    if documents_wanted and row.documents is not None else None)
        # match_of: the same frozen Match in a third of the dataclass __init__'s time
        out.append(match_of(row.ids[i], score, metadata, vector, None, document))
    return out


def records_of(result: Any) -> list[Record]:
    """The records of a Chroma ``get`` that included embeddings, metadatas and documents."""
    embeddings = result["embeddings"]
    metadatas = result.get("metadatas")
    documents = result.get("documents")
    out = []
    for i, rid in enumerate(result["ids"]):
        stored = metadatas[i] if metadatas is not None else None
        out.append(Record(
            id=rid,
            vector=read_only_float32(embeddings[i]),
            metadata=decode_metadata(stored),
            document=document_of(documents[i], stored) if documents is not None else None,
        ))
    return out


__all__ = [
    "NODOC_FIELD",
    "RESERVED_PREFIX",
    "Hit",
    "QueryRow",
    "chroma_score",
    "decode_metadata",
    "document_of",
    "matches_of",
    "records_of",
    "replacing",
]

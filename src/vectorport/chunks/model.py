"""The values of chunked documents: where a chunk sits, what a result is, what a patch is.

A *source* (a document) is cut into *chunks*. Each chunk is one record of an index:
its text is the record's document, and four reserved metadata keys say where it sits,
with half-open character offsets ``[start_offset, end_offset)`` into the source text.
Chunk ids are derived from the source id and the chunk's position, so re-ingesting a
source overwrites its chunks in place instead of piling up copies.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy.typing as npt

from vectorport.core import validation
from vectorport.core.errors import ValidationError
from vectorport.core.types import Match, MetadataValue, Record

SOURCE_ID = "source_id"
START_OFFSET = "start_offset"
END_OFFSET = "end_offset"
CHUNK_INDEX = "chunk_index"
RESERVED_KEYS: frozenset[str] = frozenset({SOURCE_ID, START_OFFSET, END_OFFSET, CHUNK_INDEX})
"""Metadata keys that place a chunk; ingestion writes them, patches may not change them."""

CHUNK_ID_SEPARATOR = "#"
CHUNK_INDEX_DIGITS = 6
"""Zero-padding of the position in a chunk id, so that listing ids in ascending order
lists a source's first million chunks in document order (nothing relies on it)."""


class NavigationDirection(enum.Enum):
    """Which way :meth:`NavigableIndex.navigate` moves from a span."""

    NEXT = "next"
    PREVIOUS = "previous"


class GrepMode(enum.Enum):
    """How :meth:`NavigableIndex.grep` reads its pattern.

    ``PHRASE``: the pattern is literal text, matched case-insensitively.
    ``REGEX``: the pattern is a Python regular expression, used as written (add ``(?i)``
    for case-insensitivity).
    """

    PHRASE = "phrase"
    REGEX = "regex"


def chunk_prefix(source_id: str) -> str:
    """The id prefix shared by every chunk of ``source_id`` (and of no other source whose
    id lacks the separator; listing by prefix therefore re-checks ``source_id``)."""
    return source_id + CHUNK_ID_SEPARATOR


def chunk_id(source_id: str, chunk_index: int) -> str:
    """The id of the chunk at ``chunk_index`` of ``source_id``: ``<source_id>#000042``.

    One-to-one: the part after the last ``#`` is digits only, so the source id is
    everything before it, whatever ``#`` the source id itself contains.
    """
    return f"{chunk_prefix(source_id)}{chunk_index:0{CHUNK_INDEX_DIGITS}d}"


def check_source_id(source_id: object) -> str:
    """A source id is any non-empty str whose chunk ids are valid record ids."""
    if not isinstance(source_id, str) or not source_id:
        raise ValidationError(f"source_id must be a non-empty str, got {source_id!r}")
    try:
        validation.record_id(chunk_id(source_id, 10**CHUNK_INDEX_DIGITS - 1))
    except ValidationError as exc:
        raise ValidationError(f"source_id {source_id[:40]!r}…: {exc}") from None
    return source_id


def check_span(start_offset: object, end_offset: object) -> tuple[int, int]:
    for name, value in (("start_offset", start_offset), ("end_offset", end_offset)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValidationError(f"{name} must be a non-negative int, got {value!r}")
    assert isinstance(start_offset, int) and isinstance(end_offset, int)
    if start_offset > end_offset:
        raise ValidationError(
            f"start_offset {start_offset} is after end_offset {end_offset} (spans are [start, end))"
        )
    return start_offset, end_offset


def check_top_k(top_k: object) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValidationError(f"top_k must be a positive int, got {top_k!r}")
    return top_k


def check_user_metadata(metadata: Mapping[str, Any] | None) -> dict[str, MetadataValue]:
    """User metadata for chunks: the contract's rules, minus the reserved keys."""
    clean = validation.metadata(metadata)
    taken = sorted(RESERVED_KEYS & clean.keys())
    if taken:
        raise ValidationError(f"metadata keys {taken} are reserved for chunk positions")
    return clean


@dataclass(frozen=True, slots=True, eq=False)
class ChunkResult:
    """One chunk as navigation, lookup, grep and search return it.

    ``metadata`` is the user's metadata, without the reserved position keys (those are
    the attributes). ``score`` is set by a vector search and ``None`` for positional
    results. ``spans`` holds, for grep, the ``[start, end)`` source offsets of each match.
    """

    chunk_id: str
    source_id: str
    start_offset: int
    end_offset: int
    chunk_index: int
    text: str
    metadata: Mapping[str, MetadataValue] = field(default_factory=dict)
    score: float | None = None
    spans: tuple[tuple[int, int], ...] = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChunkResult):
            return NotImplemented
        return (
            self.chunk_id, self.source_id, self.start_offset, self.end_offset,
            self.chunk_index, self.text, dict(self.metadata), self.score, self.spans,
        ) == (
            other.chunk_id, other.source_id, other.start_offset, other.end_offset,
            other.chunk_index, other.text, dict(other.metadata), other.score, other.spans,
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def span(self) -> tuple[int, int]:
        return self.start_offset, self.end_offset

    @classmethod
    def parse(
        cls,
        record_id: str,
        metadata: Mapping[str, MetadataValue] | None,
        document: str | None,
        score: float | None = None,
    ) -> ChunkResult | None:
        """The chunk a stored record holds, or ``None`` when it does not hold one (a
        record without the reserved keys, or with ill-typed ones, is not a chunk)."""
        if not metadata or document is None:
            return None
        source = metadata.get(SOURCE_ID)
        start, end, index = (metadata.get(k) for k in (START_OFFSET, END_OFFSET, CHUNK_INDEX))
        if not isinstance(source, str):
            return None
        ints = (start, end, index)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in ints):
            return None
        assert isinstance(start, int) and isinstance(end, int) and isinstance(index, int)
        user = {k: v for k, v in metadata.items() if k not in RESERVED_KEYS}
        return cls(record_id, source, start, end, index, document, user, score)

    @classmethod
    def from_record(cls, record: Record) -> ChunkResult | None:
        return cls.parse(record.id, record.metadata, record.document)

    @classmethod
    def from_match(cls, match: Match) -> ChunkResult | None:
        return cls.parse(match.id, match.metadata, match.document, match.score)


def _patch_metadata(metadata: Mapping[str, Any] | None) -> Mapping[str, MetadataValue | None]:
    clean: dict[str, MetadataValue | None] = {}
    for key, value in (metadata or {}).items():
        validation.metadata_key(key)
        if key in RESERVED_KEYS:
            raise ValidationError(
                f"metadata key {key!r} places the chunk in its source; re-ingest to move it"
            )
        clean[key] = None if value is None else validation.metadata_value(key, value)
    return clean


@dataclass(frozen=True, slots=True)
class ChunkPatch:
    """A change to one chunk, without re-chunking its source.

    ``vector`` replaces the chunk's embedding; ``metadata`` keys are merged in, and a key
    set to ``None`` is deleted. The text and the reserved position keys cannot change:
    that would re-chunk, which is :func:`~vectorport.chunks.ingest` 's job.
    """

    vector: Sequence[float] | npt.NDArray[Any] | None = None
    metadata: Mapping[str, MetadataValue | list[str] | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", _patch_metadata(self.metadata))
        if self.vector is None and not self.metadata:
            raise ValidationError("an empty ChunkPatch changes nothing")


@dataclass(frozen=True, slots=True)
class DocumentPatch:
    """A change to every chunk of one source, without re-chunking it.

    ``metadata`` is merged into every chunk (``None`` deletes a key). ``vectors``, when
    given, replaces the embeddings of all chunks at once (for example after changing
    embedding model), one vector per chunk in chunk order.
    """

    metadata: Mapping[str, MetadataValue | list[str] | None] = field(default_factory=dict)
    vectors: Sequence[Sequence[float]] | npt.NDArray[Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", _patch_metadata(self.metadata))
        if self.vectors is not None:
            object.__setattr__(self, "vectors", tuple(self.vectors))
        if self.vectors is None and not self.metadata:
            raise ValidationError("an empty DocumentPatch changes nothing")

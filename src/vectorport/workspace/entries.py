"""Index entries: a document, or one chunk of it, with where it sits in the file.

Without a chunker a document is one entry; with a :class:`~vectorport.chunks.Chunker`
it is one entry per chunk, whose character offsets are turned into line numbers.
Every entry carries the document's fingerprint (content, metadata, chunking and
origin), so a sync can tell an unchanged file from a changed one without embedding it.

In a vector store an entry is a record ``<path>#<chunk:06d>`` whose metadata holds the
user's metadata plus the reserved ``ws_*`` keys below, and whose document is the text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from vectorport.chunks.splitting import Chunker
from vectorport.core import validation
from vectorport.core.errors import ValidationError
from vectorport.core.types import MetadataValue
from vectorport.workspace.naming import entry_key

Origin: TypeAlias = Literal["auto", "manual"]

RESERVED_PREFIX = "ws_"
PATH, CHUNK, CHUNKS = "ws_path", "ws_chunk", "ws_chunks"
LINE_START, LINE_END = "ws_line_start", "ws_line_end"
FINGERPRINT, ORIGIN = "ws_fingerprint", "ws_origin"


@dataclass(frozen=True, slots=True)
class Entry:
    """One searchable unit of a document."""

    path: str
    chunk: int
    chunks: int
    text: str
    line_start: int
    line_end: int
    fingerprint: str
    origin: Origin
    metadata: Mapping[str, MetadataValue] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return entry_key(self.path, self.chunk)

    def stored_metadata(self) -> dict[str, MetadataValue]:
        return {**self.metadata, PATH: self.path, CHUNK: self.chunk, CHUNKS: self.chunks,
                LINE_START: self.line_start, LINE_END: self.line_end,
                FINGERPRINT: self.fingerprint, ORIGIN: self.origin}

    @classmethod
    def from_stored(cls, document: str | None, metadata: Mapping[str, MetadataValue]) -> Entry:
        """The entry of a stored record (one indexed by an earlier process)."""
        try:
            user = {k: v for k, v in metadata.items() if not k.startswith(RESERVED_PREFIX)}
            origin: Origin = "auto" if metadata[ORIGIN] == "auto" else "manual"
            return cls(str(metadata[PATH]), _int(metadata[CHUNK]), _int(metadata[CHUNKS]),
                       document or "", _int(metadata[LINE_START]), _int(metadata[LINE_END]),
                       str(metadata[FINGERPRINT]), origin, user)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValidationError(f"not a workspace index entry: missing or bad {exc}") from exc


def _int(value: MetadataValue) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{value!r} is not a number")
    return int(value)


def user_metadata(value: Mapping[str, Any] | None) -> dict[str, MetadataValue]:
    """Validated metadata, without the reserved ``ws_`` keys."""
    clean = validation.metadata(dict(value or {}))
    reserved = sorted(k for k in clean if k.startswith(RESERVED_PREFIX))
    if reserved:
        raise ValidationError(f"metadata keys starting with 'ws_' are reserved: {reserved}")
    return clean


def fingerprint(content: str, metadata: Mapping[str, MetadataValue], chunker: Chunker | None,
                origin: Origin) -> str:
    chunking = None if chunker is None else [chunker.size, chunker.overlap, chunker.unit]
    payload = json.dumps([content, sorted(metadata.items()), chunking, origin],
                         ensure_ascii=False, separators=(",", ":"), default=list)
    return hashlib.blake2b(payload.encode("utf-8"), digest_size=16).hexdigest()


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def split_document(path: str, content: str, metadata: Mapping[str, MetadataValue],
                   chunker: Chunker | None, origin: Origin) -> list[Entry]:
    """The entries of one document (at least one, also for empty content)."""
    print_ = fingerprint(content, metadata, chunker, origin)
    spans = [] if chunker is None else [(s.start, s.end, s.text) for s in chunker.split(content)]
    if not spans:
        spans = [(0, len(content), content)]
    return [
        Entry(path, n, len(spans), text, _line_of(content, start),
              _line_of(content, max(start, end - 1)), print_, origin, dict(metadata))
        for n, (start, end, text) in enumerate(spans)
    ]

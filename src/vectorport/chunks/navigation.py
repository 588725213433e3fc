"""The meaning of navigation, as pure functions over one source's chunks.

The generic :class:`~vectorport.chunks.ChunkedIndex` narrows on the server where it can
and then always applies these functions, so the answer is the same whatever the backend
pushed down. A custom store can reuse them to get the same semantics.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from vectorport.chunks.model import ChunkResult, GrepMode, NavigationDirection
from vectorport.core.errors import ValidationError


def document_order(chunk: ChunkResult) -> tuple[int, int, int, str]:
    return chunk.start_offset, chunk.end_offset, chunk.chunk_index, chunk.chunk_id


def direction_of(value: NavigationDirection | str) -> NavigationDirection:
    """Accept the enum or its value (``"next"``, ``"previous"``), as agents send strings."""
    if isinstance(value, NavigationDirection):
        return value
    try:
        return NavigationDirection(str(value).lower())
    except ValueError:
        raise ValidationError(
            f"direction must be NavigationDirection.NEXT or .PREVIOUS, got {value!r}"
        ) from None


def mode_of(value: GrepMode | str) -> GrepMode:
    if isinstance(value, GrepMode):
        return value
    try:
        return GrepMode(str(value).lower())
    except ValueError:
        raise ValidationError(f"mode must be GrepMode.PHRASE or .REGEX, got {value!r}") from None


def is_next(chunk: ChunkResult, start: int, end: int) -> bool:
    return chunk.start_offset >= start and chunk.end_offset > end


def is_previous(chunk: ChunkResult, start: int, end: int) -> bool:
    return chunk.start_offset < start and chunk.end_offset <= end


def is_within(chunk: ChunkResult, start: int, end: int) -> bool:
    return chunk.start_offset >= start and chunk.end_offset <= end


def select_adjacent(
    chunks: Iterable[ChunkResult],
    start: int,
    end: int,
    direction: NavigationDirection,
    top_k: int,
) -> list[ChunkResult]:
    """The ``top_k`` chunks next to ``[start, end)`` in ``direction``, nearest first."""
    if direction is NavigationDirection.NEXT:
        ahead = sorted((c for c in chunks if is_next(c, start, end)), key=document_order)
        return ahead[:top_k]
    behind = sorted((c for c in chunks if is_previous(c, start, end)), key=document_order)
    return behind[::-1][:top_k]


def select_within(
    chunks: Iterable[ChunkResult], start: int, end: int, top_k: int
) -> list[ChunkResult]:
    """The first ``top_k`` chunks lying within ``[start, end)``, in document order."""
    return sorted((c for c in chunks if is_within(c, start, end)), key=document_order)[:top_k]


def compile_pattern(pattern: object, mode: GrepMode) -> re.Pattern[str]:
    """PHRASE: literal and case-insensitive. REGEX: as written; a bad one is a
    ``ValidationError``, never a backend error."""
    if not isinstance(pattern, str) or not pattern:
        raise ValidationError(f"grep pattern must be a non-empty str, got {pattern!r}")
    if mode is GrepMode.PHRASE:
        return re.compile(re.escape(pattern), re.IGNORECASE)
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValidationError(f"invalid regular expression {pattern!r}: {exc}") from None


def grep_chunks(
    chunks: Iterable[ChunkResult], compiled: re.Pattern[str], top_k: int
) -> list[ChunkResult]:
    """The first ``top_k`` matching chunks in document order, each with the source
    offsets of its matches in ``spans``."""
    found: list[ChunkResult] = []
    for chunk in sorted(chunks, key=document_order):
        spans = tuple(
            (chunk.start_offset + m.start(), chunk.start_offset + m.end())
            for m in compiled.finditer(chunk.text)
        )
        if spans:
            found.append(replace(chunk, spans=spans))
            if len(found) == top_k:
                break
    return found

"""Optional abilities over chunked documents, as runtime-checkable protocols.

A store either has an ability or does not announce it: callers test with ``isinstance``
and never catch ``NotImplementedError``::

    if isinstance(store, NavigableIndex):
        chunk = store.get_chunk(chunk_id)

The sync and async forms have different method names (``get_chunk`` / ``aget_chunk``),
so that ``isinstance`` cannot mistake one for the other (a runtime check sees names,
not whether a method is a coroutine function).

Offsets are half-open character offsets ``[start, end)`` into the source text.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from vectorport.chunks.model import (
    ChunkPatch,
    ChunkResult,
    DocumentPatch,
    GrepMode,
    NavigationDirection,
)


@runtime_checkable
class NavigableIndex(Protocol):
    """Positional navigation over the chunks of each source.

    ``navigate`` and ``read`` and ``grep`` raise
    :class:`~vectorport.core.errors.SourceNotFoundError` for a source with no chunks, and
    return an empty list when the request runs past the source's edge.
    """

    def navigate(
        self,
        source_id: str,
        start_offset: int,
        end_offset: int,
        direction: NavigationDirection,
        *,
        top_k: int = 1,
    ) -> list[ChunkResult]:
        """The ``top_k`` chunks next to the span ``[start_offset, end_offset)`` in
        ``direction``, nearest first.

        NEXT: chunks with ``start >= start_offset`` and ``end > end_offset``.
        PREVIOUS: chunks with ``start < start_offset`` and ``end <= end_offset``.
        Overlapping chunks therefore count as adjacent, and a chunk's own span never
        returns the chunk itself.
        """
        ...

    def read(
        self, source_id: str, start_offset: int, end_offset: int, *, top_k: int = 20
    ) -> list[ChunkResult]:
        """The first ``top_k`` chunks whose span lies within ``[start_offset, end_offset)``,
        in document order."""
        ...

    def get_chunk(self, chunk_id: str) -> ChunkResult | None:
        """The chunk with that id, or ``None``."""
        ...

    def grep(
        self, source_id: str, pattern: str, *, mode: GrepMode = GrepMode.PHRASE, top_k: int = 5
    ) -> list[ChunkResult]:
        """The first ``top_k`` chunks of one source whose text matches ``pattern``, in
        document order, with the match offsets in ``spans``. Lexical only."""
        ...


@runtime_checkable
class PatchableChunks(Protocol):
    """Partial updates of chunks without re-chunking or re-embedding their source.

    ``atomic`` tells whether each chunk's update is a single atomic backend operation
    (``True``) or a read-modify-write that a concurrent writer of the same chunk can
    undo (``False``). A document patch is never atomic across its chunks.
    """

    @property
    def atomic(self) -> bool: ...

    def patch_chunk(self, chunk_id: str, patch: ChunkPatch) -> bool:
        """Apply ``patch`` to one chunk; ``False`` when there is no such chunk."""
        ...

    def patch_document(self, document_id: str, patch: DocumentPatch) -> int:
        """Apply ``patch`` to every chunk of a source; returns how many were changed.
        ``SourceNotFoundError`` when the source has no chunks."""
        ...


@runtime_checkable
class AsyncNavigableIndex(Protocol):
    """The async form of :class:`NavigableIndex`, same meaning, ``a``-prefixed names."""

    async def anavigate(
        self,
        source_id: str,
        start_offset: int,
        end_offset: int,
        direction: NavigationDirection,
        *,
        top_k: int = 1,
    ) -> list[ChunkResult]: ...

    async def aread(
        self, source_id: str, start_offset: int, end_offset: int, *, top_k: int = 20
    ) -> list[ChunkResult]: ...

    async def aget_chunk(self, chunk_id: str) -> ChunkResult | None: ...

    async def agrep(
        self, source_id: str, pattern: str, *, mode: GrepMode = GrepMode.PHRASE, top_k: int = 5
    ) -> list[ChunkResult]: ...


@runtime_checkable
class AsyncPatchableChunks(Protocol):
    """The async form of :class:`PatchableChunks`."""

    @property
    def atomic(self) -> bool: ...

    async def apatch_chunk(self, chunk_id: str, patch: ChunkPatch) -> bool: ...

    async def apatch_document(self, document_id: str, patch: DocumentPatch) -> int: ...

"""The generic implementation of the chunk protocols over any facade index.

``ChunkedIndex(index)`` returns an object whose class carries exactly the abilities the
index can back, so ``isinstance(chunked, NavigableIndex)`` and ``isinstance(chunked,
PatchableChunks)`` tell the truth and no method ever raises ``NotImplementedError``:

- :class:`~vectorport.chunks.NavigableIndex` when a source's chunks can be read exactly
  (see :mod:`vectorport.chunks.access`) and the backend stores documents;
- :class:`~vectorport.chunks.PatchableChunks` when, in addition, the index is a
  :class:`~vectorport.core.store.PatchableIndex` (``atomic = True``), or when the caller
  passes ``allow_non_atomic_patch=True`` (fetch, merge, upsert; ``atomic = False``).

Each wrapper works in one namespace. Async forms (``anavigate``, ``apatch_chunk``…) run
the sync call in a worker thread, as the facade does for adapters without native async.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from vectorport.chunks import navigation
from vectorport.chunks.access import (
    ChunkSupport,
    Narrowing,
    Predicate,
    SourceReader,
    chunk_support,
    delete_chunks_from,
)
from vectorport.chunks.ingest import Embedder, EmbedFunction, IngestResult, ingest
from vectorport.chunks.model import (
    END_OFFSET,
    START_OFFSET,
    ChunkPatch,
    ChunkResult,
    DocumentPatch,
    GrepMode,
    NavigationDirection,
    check_source_id,
    check_span,
    check_top_k,
)
from vectorport.chunks.splitting import Chunker
from vectorport.core import validation
from vectorport.core.async_store import AsyncIndex
from vectorport.core.errors import SourceNotFoundError, UnsupportedFeatureError, ValidationError
from vectorport.core.filters.ast import Filter
from vectorport.core.store import Index, PatchableIndex
from vectorport.core.types import Record


def _unwrap(index: Index | AsyncIndex) -> Index:
    """The sync handle behind an async one: the wrapper has both forms itself."""
    return index.sync if isinstance(index, AsyncIndex) else index


class ChunkedIndex:
    """Chunked documents in one namespace of an index; see the module docstring."""

    support: ChunkSupport

    def __new__(
        cls, index: Index | AsyncIndex, *, namespace: str = "", allow_non_atomic_patch: bool = False
    ) -> ChunkedIndex:
        index = _unwrap(index)
        if not isinstance(index, Index):
            raise ValidationError(f"ChunkedIndex wraps a vectorport Index, got {type(index).__name__}")
        if cls is ChunkedIndex:
            support = chunk_support(index, allow_non_atomic_patch=allow_non_atomic_patch)
            cls = _chunked_class(support.navigable, support.patchable)
        return super().__new__(cls)

    def __init__(
        self, index: Index | AsyncIndex, *, namespace: str = "", allow_non_atomic_patch: bool = False
    ) -> None:
        index = _unwrap(index)
        self.index = index
        self.namespace = validation.namespace(namespace)
        self.support = chunk_support(index, allow_non_atomic_patch=allow_non_atomic_patch)
        wants_navigation = isinstance(self, _Navigation)
        wants_patch = isinstance(self, _Patching)
        if (wants_navigation and not self.support.navigable) or (
            wants_patch and not self.support.patchable
        ):
            raise UnsupportedFeatureError(index.store.backend, "chunk navigation or patching",
                                          "; ".join(self.support.missing))
        self._reader = (
            SourceReader(index, self.namespace, self.support)
            if self.support.enumeration is not None else None
        )

    def __repr__(self) -> str:
        abilities = [name for name, has in (("navigable", isinstance(self, _Navigation)),
                                            ("patchable", isinstance(self, _Patching))) if has]
        return (f"ChunkedIndex(index={self.index.name!r}, backend={self.index.store.backend!r}, "
                f"namespace={self.namespace!r}, abilities={abilities})")

    # -- writing --------------------------------------------------------------------------

    def ingest(
        self,
        source_id: str,
        text: str,
        embed: EmbedFunction | Embedder,
        *,
        chunker: Chunker | None = None,
        metadata: Mapping[str, Any] | None = None,
        embed_batch_size: int = 64,
        batch_size: int | None = None,
    ) -> IngestResult:
        """Chunk, embed and store ``text`` as ``source_id``, replacing its older chunks
        (see :func:`vectorport.chunks.ingest`)."""
        return ingest(self.index, source_id, text, embed, namespace=self.namespace,
                      chunker=chunker, metadata=metadata, embed_batch_size=embed_batch_size,
                      batch_size=batch_size)

    def delete_source(self, source_id: str) -> None:
        """Delete every chunk of ``source_id`` (no error when it has none)."""
        delete_chunks_from(self.index, self.namespace, check_source_id(source_id), 0, self._reader)

    def search(
        self,
        vector: Any,
        *,
        top_k: int = 10,
        filter: Mapping[str, Any] | Filter | None = None,
        min_score: float | None = None,
    ) -> list[ChunkResult]:
        """Nearest chunks to ``vector``, with scores; records that are not chunks are
        left out (keep chunks in an index or namespace of their own)."""
        matches = self.index.query(vector, top_k=top_k, filter=filter, min_score=min_score,
                                   namespace=self.namespace, include_metadata=True,
                                   include_documents=True)
        return [c for c in map(ChunkResult.from_match, matches) if c is not None]

    async def aingest(self, source_id: str, text: str, embed: EmbedFunction | Embedder,
                      **kwargs: Any) -> IngestResult:
        return await asyncio.to_thread(self.ingest, source_id, text, embed, **kwargs)

    async def adelete_source(self, source_id: str) -> None:
        await asyncio.to_thread(self.delete_source, source_id)

    async def asearch(self, vector: Any, **kwargs: Any) -> list[ChunkResult]:
        return await asyncio.to_thread(self.search, vector, **kwargs)


class _Navigation(ChunkedIndex):
    """Implements :class:`~vectorport.chunks.NavigableIndex`."""

    @property
    def _source_reader(self) -> SourceReader:
        assert self._reader is not None
        return self._reader

    def _chunks_or_missing(self, source_id: str, narrowing: Narrowing | None,
                           predicate: Predicate | None) -> list[ChunkResult]:
        source = check_source_id(source_id)
        found = self._source_reader.chunks(source, narrowing, predicate)
        if not found and not self._source_reader.exists(source):
            raise SourceNotFoundError(source)
        return found

    def chunks(self, source_id: str) -> list[ChunkResult]:
        """Every chunk of a source, in document order (``SourceNotFoundError`` if none)."""
        return sorted(self._chunks_or_missing(source_id, None, None),
                      key=navigation.document_order)

    def navigate(
        self,
        source_id: str,
        start_offset: int,
        end_offset: int,
        direction: NavigationDirection,
        *,
        top_k: int = 1,
    ) -> list[ChunkResult]:
        start, end = check_span(start_offset, end_offset)
        way = navigation.direction_of(direction)
        k = check_top_k(top_k)
        if way is NavigationDirection.NEXT:
            narrowing: Narrowing = {START_OFFSET: {"$gte": start}, END_OFFSET: {"$gt": end}}
            keep: Predicate = lambda c: navigation.is_next(c, start, end)  # noqa: E731
        else:
            narrowing = {START_OFFSET: {"$lt": start}, END_OFFSET: {"$lte": end}}
            keep = lambda c: navigation.is_previous(c, start, end)  # noqa: E731
        found = self._chunks_or_missing(source_id, narrowing, keep)
        return navigation.select_adjacent(found, start, end, way, k)

    def read(
        self, source_id: str, start_offset: int, end_offset: int, *, top_k: int = 20
    ) -> list[ChunkResult]:
        start, end = check_span(start_offset, end_offset)
        k = check_top_k(top_k)
        narrowing: Narrowing = {START_OFFSET: {"$gte": start}, END_OFFSET: {"$lte": end}}
        found = self._chunks_or_missing(source_id, narrowing,
                                        lambda c: navigation.is_within(c, start, end))
        return navigation.select_within(found, start, end, k)

    def get_chunk(self, chunk_id: str) -> ChunkResult | None:
        wanted = validation.record_id(chunk_id)
        record = self.index.fetch([wanted], self.namespace).get(wanted)
        return None if record is None else ChunkResult.from_record(record)

    def grep(
        self, source_id: str, pattern: str, *, mode: GrepMode = GrepMode.PHRASE, top_k: int = 5
    ) -> list[ChunkResult]:
        compiled = navigation.compile_pattern(pattern, navigation.mode_of(mode))
        k = check_top_k(top_k)
        return navigation.grep_chunks(self._chunks_or_missing(source_id, None, None), compiled, k)

    async def anavigate(self, source_id: str, start_offset: int, end_offset: int,
                        direction: NavigationDirection, *, top_k: int = 1) -> list[ChunkResult]:
        return await asyncio.to_thread(self.navigate, source_id, start_offset, end_offset,
                                       direction, top_k=top_k)

    async def aread(self, source_id: str, start_offset: int, end_offset: int, *,
                    top_k: int = 20) -> list[ChunkResult]:
        return await asyncio.to_thread(self.read, source_id, start_offset, end_offset,
                                       top_k=top_k)

    async def aget_chunk(self, chunk_id: str) -> ChunkResult | None:
        return await asyncio.to_thread(self.get_chunk, chunk_id)

    async def agrep(self, source_id: str, pattern: str, *, mode: GrepMode = GrepMode.PHRASE,
                    top_k: int = 5) -> list[ChunkResult]:
        return await asyncio.to_thread(self.grep, source_id, pattern, mode=mode, top_k=top_k)


class _Patching(ChunkedIndex):
    """Implements :class:`~vectorport.chunks.PatchableChunks`."""

    @property
    def atomic(self) -> bool:
        return self.support.patch == "native"

    def _patch_one(self, chunk_id: str, vector: Any, metadata: Mapping[str, Any]) -> bool:
        index = self.index
        if isinstance(index, PatchableIndex) and self.atomic:
            return index.patch(chunk_id, vector=vector, metadata=metadata,
                               namespace=self.namespace)
        old = index.fetch([chunk_id], self.namespace).get(chunk_id)
        if old is None:
            return False
        merged = dict(old.metadata)
        for key, value in metadata.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        index.upsert([Record(id=old.id, vector=old.vector if vector is None else vector,
                             metadata=merged, sparse=old.sparse, document=old.document)],
                     namespace=self.namespace)
        return True

    def patch_chunk(self, chunk_id: str, patch: ChunkPatch) -> bool:
        if not isinstance(patch, ChunkPatch):
            raise ValidationError(f"patch must be a ChunkPatch, got {type(patch).__name__}")
        wanted = validation.record_id(chunk_id)
        vector = (None if patch.vector is None
                  else validation.dense_vector(patch.vector, self.index.dimension))
        return self._patch_one(wanted, vector, patch.metadata)

    def patch_document(self, document_id: str, patch: DocumentPatch) -> int:
        if not isinstance(patch, DocumentPatch):
            raise ValidationError(f"patch must be a DocumentPatch, got {type(patch).__name__}")
        source = check_source_id(document_id)
        assert self._reader is not None
        chunks = sorted(self._reader.chunks(source), key=navigation.document_order)
        if not chunks:
            raise SourceNotFoundError(source)
        vectors: Sequence[Any] = [None] * len(chunks)
        if patch.vectors is not None:
            if len(patch.vectors) != len(chunks):
                raise ValidationError(
                    f"DocumentPatch has {len(patch.vectors)} vectors for the {len(chunks)} "
                    f"chunks of source {source!r}"
                )
            vectors = [validation.dense_vector(v, self.index.dimension, f"vector {i}")
                       for i, v in enumerate(patch.vectors)]
        return sum(self._patch_one(c.chunk_id, v, patch.metadata)
                   for c, v in zip(chunks, vectors, strict=True))

    async def apatch_chunk(self, chunk_id: str, patch: ChunkPatch) -> bool:
        return await asyncio.to_thread(self.patch_chunk, chunk_id, patch)

    async def apatch_document(self, document_id: str, patch: DocumentPatch) -> int:
        return await asyncio.to_thread(self.patch_document, document_id, patch)


@cache
def _chunked_class(navigable: bool, patchable: bool) -> type[ChunkedIndex]:
    """The wrapper class for an index's abilities, so that ``isinstance`` tells."""
    if navigable and patchable:
        return type("NavigablePatchableChunkedIndex", (_Navigation, _Patching), {})
    if navigable:
        return type("NavigableChunkedIndex", (_Navigation,), {})
    if patchable:
        return type("PatchableChunkedIndex", (_Patching,), {})
    return ChunkedIndex

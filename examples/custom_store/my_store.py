"""A custom store that implements the optional protocols itself, and one that does not.

Run: ``python examples/custom_store/my_store.py``

The protocols are structural: a class offers an ability by having the methods, with no
base class to inherit, and callers find out with ``isinstance``, never by catching
``NotImplementedError``. This store keeps chunks in a dict and reuses
``vectorport.chunks.navigation`` so that its answers mean exactly what the generic
``ChunkedIndex`` answers mean.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sample import TEXT

from vectorport.chunks import (
    ChunkPatch,
    ChunkResult,
    DocumentPatch,
    GrepMode,
    NavigableIndex,
    NavigationDirection,
    PatchableChunks,
    SourceNotFoundError,
    chunk_id,
    split_text,
)
from vectorport.chunks import navigation as nav


class NotebookStore:
    """Chunks of notes in memory; navigable and (atomically, under the GIL) patchable."""

    atomic = True

    def __init__(self) -> None:
        self._chunks: dict[str, ChunkResult] = {}
        self._vectors: dict[str, list[float]] = {}

    def add(self, source_id: str, text: str, size: int = 80) -> list[str]:
        ids = []
        for span in split_text(text, size=size, overlap=20):
            cid = chunk_id(source_id, span.index)
            self._chunks[cid] = ChunkResult(cid, source_id, span.start, span.end, span.index,
                                            span.text)
            ids.append(cid)
        return ids

    def _source(self, source_id: str) -> list[ChunkResult]:
        found = [c for c in self._chunks.values() if c.source_id == source_id]
        if not found:
            raise SourceNotFoundError(source_id)
        return found

    # NavigableIndex
    def navigate(self, source_id: str, start_offset: int, end_offset: int,
                 direction: NavigationDirection, *, top_k: int = 1) -> list[ChunkResult]:
        return nav.select_adjacent(self._source(source_id), start_offset, end_offset,
                                   nav.direction_of(direction), top_k)

    def read(self, source_id: str, start_offset: int, end_offset: int, *,
             top_k: int = 20) -> list[ChunkResult]:
        return nav.select_within(self._source(source_id), start_offset, end_offset, top_k)

    def get_chunk(self, chunk_id: str) -> ChunkResult | None:
        return self._chunks.get(chunk_id)

    def grep(self, source_id: str, pattern: str, *, mode: GrepMode = GrepMode.PHRASE,
             top_k: int = 5) -> list[ChunkResult]:
        compiled = nav.compile_pattern(pattern, nav.mode_of(mode))
        return nav.grep_chunks(self._source(source_id), compiled, top_k)

    # PatchableChunks
    def patch_chunk(self, chunk_id: str, patch: ChunkPatch) -> bool:
        chunk = self._chunks.get(chunk_id)
        if chunk is None:
            return False
        metadata: dict[str, Any] = {
            k: v for k, v in chunk.metadata.items() if k not in patch.metadata
        }
        metadata.update({k: v for k, v in patch.metadata.items() if v is not None})
        self._chunks[chunk_id] = replace(chunk, metadata=metadata)
        if patch.vector is not None:
            self._vectors[chunk_id] = [float(x) for x in patch.vector]
        return True

    def patch_document(self, document_id: str, patch: DocumentPatch) -> int:
        chunks = sorted(self._source(document_id), key=nav.document_order)
        for chunk in chunks:
            self.patch_chunk(chunk.chunk_id, ChunkPatch(metadata=patch.metadata))
        return len(chunks)


class SearchOnlyStore:
    """Implements search only: it announces no optional ability, and nothing fails."""

    def search(self, query: str) -> list[str]:
        return [query]


def open_chunk(store: Any, chunk_id: str) -> str:
    """What an agent tool does with an opaque chunk id, on any store (Mistral's search toolkit pattern)."""
    if isinstance(store, NavigableIndex):
        chunk = store.get_chunk(chunk_id)
        return "missing" if chunk is None else f"[{chunk.start_offset}:{chunk.end_offset}] {chunk.text!r}"
    return "this store cannot open chunks"


def main() -> None:
    notes = NotebookStore()
    ids = notes.add("harbour-notes", TEXT)
    plain = SearchOnlyStore()
    print("NotebookStore navigable:", isinstance(notes, NavigableIndex))
    print("NotebookStore patchable:", isinstance(notes, PatchableChunks))
    print("SearchOnlyStore navigable:", isinstance(plain, NavigableIndex))
    print("SearchOnlyStore patchable:", isinstance(plain, PatchableChunks))

    print("open:", open_chunk(notes, ids[1]))
    print("open on the plain store:", open_chunk(plain, ids[1]))
    first = notes.get_chunk(ids[0])
    assert first is not None
    after = notes.navigate("harbour-notes", first.start_offset, first.end_offset,
                           NavigationDirection.NEXT)
    print("after chunk 0:", [c.chunk_id for c in after])
    print("grep 'keeper':", [(c.chunk_id, c.spans) for c in notes.grep("harbour-notes", "keeper")])
    notes.patch_document("harbour-notes", DocumentPatch(metadata={"reviewed": True}))
    print("patched metadata:", dict(notes.get_chunk(ids[0]).metadata))  # type: ignore[union-attr]
    try:
        notes.read("no-such-notes", 0, 10)
    except SourceNotFoundError as exc:
        print("unknown source:", exc)


if __name__ == "__main__":
    main()

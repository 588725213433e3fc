"""Reading all the chunks of one source, exactly, through the facade.

The generic implementation needs one primitive: *every* chunk of a source (optionally
narrowed by offsets). There are two exact ways to get it from the facade:

``listing``
    The index is a :class:`~vectorport.core.store.ListableIndex`: list the ids under the
    source's chunk-id prefix (with the offset filter when the backend declares the
    operators; a backend that refuses filters on listing falls back to the prefix
    alone), then fetch them a page at a time. Listing is exact by definition.

``query``
    The backend counts with a filter and filters on ``source_id`` with ``$eq``: count the
    matching chunks (``n``), then run one filtered query with ``top_k = n`` and any probe
    vector. On an exact engine that returns all ``n``. On an ANN engine a filtered query
    may return fewer (the graph walk ends before ``n`` matches pass the filter), so the
    result is checked against the count and a shortfall raises :class:`BackendError`
    instead of answering with a silently truncated source. A source larger than the
    backend's ``max_top_k`` cannot be read this way and raises
    :class:`UnsupportedFeatureError`. Backends with ANN filtering should declare
    ``list_ids``, which is then preferred.

Whatever was pushed down, the caller re-applies the exact predicate to what comes back,
and a record under the prefix that is not a chunk of this source is ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias

import numpy as np

from vectorport.chunks.model import (
    CHUNK_INDEX,
    SOURCE_ID,
    ChunkResult,
    chunk_prefix,
)
from vectorport.core.errors import BackendError, UnsupportedFeatureError
from vectorport.core.store import Index, ListableIndex, PatchableIndex

Enumeration: TypeAlias = Literal["listing", "query"]
PatchMode: TypeAlias = Literal["native", "read-modify-write"]
Narrowing: TypeAlias = Mapping[str, Mapping[str, int]]
Predicate: TypeAlias = Callable[[ChunkResult], bool]

PAGE_SIZE = 200
PUSHDOWN_OPERATORS = frozenset({"$eq", "$gt", "$gte", "$lt", "$lte", "$and"})
STALE_DELETE_OPERATORS = frozenset({"$eq", "$gte", "$and"})


@dataclass(frozen=True, slots=True)
class ChunkSupport:
    """What the generic implementation can offer over one index, and what is missing.

    ``enumeration``: how a source's chunks are read (``None``: they cannot be, exactly).
    ``pushdown``: offset ranges are filtered by the backend, not only after reading.
    ``patch``: ``"native"`` through the backend's atomic patch, ``"read-modify-write"``
    (fetch, merge, upsert; not atomic) when asked for, or ``None``.
    """

    enumeration: Enumeration | None
    pushdown: bool
    documents: bool
    patch: PatchMode | None
    missing: tuple[str, ...]

    @property
    def navigable(self) -> bool:
        return self.enumeration is not None and self.documents

    @property
    def patchable(self) -> bool:
        return self.patch is not None


def chunk_support(index: Index, *, allow_non_atomic_patch: bool = False) -> ChunkSupport:
    caps = index.store.capabilities
    missing: list[str] = []
    enumeration: Enumeration | None = None
    if isinstance(index, ListableIndex):
        enumeration = "listing"
    elif caps.count_by_filter and "$eq" in caps.filter_operators:
        enumeration = "query"
    else:
        missing.append("listing ids, or counting and querying with a $eq filter")
    if not caps.documents:
        missing.append("documents (chunk text)")
    patch: PatchMode | None = None
    if enumeration is not None:
        if isinstance(index, PatchableIndex):
            patch = "native"
        elif allow_non_atomic_patch:
            patch = "read-modify-write"
        else:
            missing.append("atomic patch (pass allow_non_atomic_patch=True for read-modify-write)")
    return ChunkSupport(
        enumeration=enumeration,
        pushdown=caps.filter_operators >= PUSHDOWN_OPERATORS,
        documents=caps.documents,
        patch=patch,
        missing=tuple(missing),
    )


class SourceReader:
    """Reads one namespace's chunks of a source, by the index's enumeration strategy."""

    def __init__(self, index: Index, namespace: str, support: ChunkSupport) -> None:
        if support.enumeration is None:
            raise UnsupportedFeatureError(index.store.backend, "reading a source's chunks",
                                          "; ".join(support.missing))
        self.index = index
        self.namespace = namespace
        self.support = support
        self._filters_in_listing = True

    # -- the two strategies -------------------------------------------------------------

    def _source_filter(self, source_id: str, narrowing: Narrowing | None) -> dict[str, Any]:
        flt: dict[str, Any] = {SOURCE_ID: source_id}
        if narrowing and self.support.pushdown:
            flt.update(narrowing)
        return flt

    def _listed_pages(self, source_id: str, flt: Mapping[str, Any] | None,
                      limit: int = PAGE_SIZE) -> Iterator[tuple[str, ...]]:
        index = self.index
        assert isinstance(index, ListableIndex)
        if not self._filters_in_listing:
            flt = None
        cursor: str | None = None
        while True:
            try:
                page = index.list_ids(self.namespace, prefix=chunk_prefix(source_id),
                                      filter=flt, limit=limit, cursor=cursor)
            except UnsupportedFeatureError:
                if flt is None:
                    raise
                # This backend lists by prefix but not with a filter: the prefix alone is
                # still exact, as every record read back is re-checked.
                self._filters_in_listing, flt, cursor = False, None, None
                continue
            if page.ids:
                yield page.ids
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def _fetch_chunks(self, ids: tuple[str, ...], source_id: str) -> list[ChunkResult]:
        found = self.index.fetch(ids, self.namespace)
        out: list[ChunkResult] = []
        for record in found.values():
            chunk = ChunkResult.from_record(record)
            if chunk is not None and chunk.source_id == source_id:
                out.append(chunk)
        return out

    def _by_listing(self, source_id: str, narrowing: Narrowing | None) -> list[ChunkResult]:
        flt = self._source_filter(source_id, narrowing)
        out: list[ChunkResult] = []
        for ids in self._listed_pages(source_id, flt):
            out.extend(self._fetch_chunks(ids, source_id))
        return out

    def _by_query(self, source_id: str, narrowing: Narrowing | None) -> list[ChunkResult]:
        index = self.index
        flt = self._source_filter(source_id, narrowing)
        expected = index.count(self.namespace, filter=flt)
        if expected == 0:
            return []
        limit = index.store.capabilities.max_top_k
        if expected > limit:
            raise UnsupportedFeatureError(
                index.store.backend, f"reading more than {limit} chunks of one source",
                "without id listing, a source is read by one filtered query bounded by max_top_k",
            )
        probe = np.zeros(index.dimension, dtype=np.float32)
        probe[0] = 1.0
        matches = index.query(probe, top_k=expected, filter=flt, namespace=self.namespace,
                              include_metadata=True, include_documents=True)
        if len(matches) < expected:
            raise BackendError(
                f"a filtered query returned {len(matches)} of the {expected} chunks of source "
                f"{source_id!r}: the backend's approximate search truncated it (or chunks were "
                "deleted meanwhile), so the source cannot be read exactly this way; an adapter "
                "with list_ids avoids this"
            )
        out: list[ChunkResult] = []
        for match in matches:
            chunk = ChunkResult.from_match(match)
            if chunk is not None and chunk.source_id == source_id:
                out.append(replace_score(chunk))
        return out

    # -- what the implementation uses -----------------------------------------------------

    def chunks(self, source_id: str, narrowing: Narrowing | None = None,
               predicate: Predicate | None = None) -> list[ChunkResult]:
        """The chunks of ``source_id`` passing ``predicate`` (the exact form of
        ``narrowing``), in no particular order."""
        if self.support.enumeration == "listing":
            found = self._by_listing(source_id, narrowing)
        else:
            found = self._by_query(source_id, narrowing)
        return found if predicate is None else [c for c in found if predicate(c)]

    def exists(self, source_id: str) -> bool:
        """Whether the source has at least one chunk (asked only after an empty answer,
        to tell the edge of a source from an unknown source)."""
        if self.support.enumeration == "query":
            return self.index.count(self.namespace, filter={SOURCE_ID: source_id}) > 0
        for ids in self._listed_pages(source_id, {SOURCE_ID: source_id}):
            if self._filters_in_listing or self._fetch_chunks(ids, source_id):
                return True
        return False


def deletes_by_filter(index: Index) -> bool:
    """Whether stale chunks can be deleted with one exact filtered delete."""
    caps = index.store.capabilities
    return caps.delete_by_filter and caps.filter_operators >= STALE_DELETE_OPERATORS


def delete_chunks_from(
    index: Index, namespace: str, source_id: str, first_stale: int, reader: SourceReader | None
) -> None:
    """Delete the chunks of ``source_id`` at positions ``>= first_stale``: one filtered
    delete where the backend can, else by the ids that ``reader`` finds."""
    if deletes_by_filter(index):
        flt: dict[str, Any] = {SOURCE_ID: source_id}
        if first_stale > 0:
            flt[CHUNK_INDEX] = {"$gte": first_stale}
        index.delete(filter=flt, namespace=namespace)
        return
    if reader is None:
        raise UnsupportedFeatureError(index.store.backend, "replacing a source's chunks",
                                      "needs delete by filter, or reading a source's chunks")
    stale = [c.chunk_id for c in reader.chunks(source_id) if c.chunk_index >= first_stale]
    for start in range(0, len(stale), PAGE_SIZE):
        index.delete(stale[start:start + PAGE_SIZE], namespace=namespace)


def replace_score(chunk: ChunkResult) -> ChunkResult:
    """A positional result carries no score, even when read through a query."""
    return chunk if chunk.score is None else replace(chunk, score=None)

"""``Workspace``: search over the files of a local folder, by BM25, vectors, or both.

- ``bm25=True`` (or ``{"k1": ..., "b": ...}``) keeps an in-process BM25 index
  (:class:`~vectorport.workspace.bm25.BM25Index`); it lives as long as the workspace
  object and is rebuilt from the files by :meth:`Workspace.init`.
- ``vector_store`` (any vectorport :class:`Store`) with ``embedder`` stores one vector per
  entry in the index named by ``search_index_name``; it persists with the store, and a
  sync embeds only documents whose content, metadata or chunking changed.
- With both, ``mode="hybrid"`` mixes them: ``vector_weight·cosine + (1 − vector_weight)·bm25``.

Scores are in [0, 1]: BM25 divided by the best BM25 score among the hits (the best hit
scores 1); cosine similarity for vectors (a negative one counts as 0); the weighted mix
in hybrid mode, computed exactly for the returned results (see :meth:`Workspace.search`).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from vectorport.chunks.splitting import Chunker
from vectorport.core import validation
from vectorport.core.errors import ConfigError, ValidationError
from vectorport.core.filters.ast import Filter
from vectorport.core.filters.oracle import matches
from vectorport.core.filters.parse import parse_filter
from vectorport.core.store import Store
from vectorport.core.types import Match, MetadataValue
from vectorport.embedders.base import Embedder
from vectorport.embedders.function import FunctionEmbedder, as_embedder
from vectorport.workspace.bm25 import BM25Index, bm25_settings
from vectorport.workspace.entries import Entry, Origin, split_document, user_metadata
from vectorport.workspace.filesystem import LocalFilesystem
from vectorport.workspace.naming import (
    check_search_index_name,
    default_search_index_name,
    default_workspace_id,
    normalize_path,
    store_index_name,
)
from vectorport.workspace.results import LineRange, ScoreDetails, SearchResult, SyncReport
from vectorport.workspace.vectors import StoredState, VectorSide, cosine01

SearchMode: TypeAlias = Literal["bm25", "vector", "hybrid"]
Progress: TypeAlias = Callable[[int, int, str], None]
"""Called after each file of a sync: ``(files done, files in all, path)``."""

DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024
_GROUP_ENTRIES = 256  # entries embedded per call during a sync (progress granularity)


def resolve_embedder(embedder: Any) -> Embedder:
    """An :class:`Embedder` as is; a function of one text; or a batch function marked
    as Mastra's Workspace does (``fn.batch = True``, optional ``fn.max_batch_size``)."""
    if isinstance(embedder, Embedder):
        return embedder
    if callable(embedder) and getattr(embedder, "batch", False) is True:
        return FunctionEmbedder(embedder, batch=True,
                                max_batch_size=getattr(embedder, "max_batch_size", None))
    return as_embedder(embedder)


@dataclass(frozen=True, slots=True)
class _Document:
    path: str
    content: str
    metadata: Mapping[str, MetadataValue]
    origin: Origin


@dataclass(frozen=True, slots=True)
class _Scored:
    entry: Entry
    score: float
    vector: float | None = None
    bm25: float | None = None


class Workspace:
    """Search over a folder (``filesystem``: a :class:`LocalFilesystem` or a path) and
    over content indexed by hand. See the module docstring for the modes."""

    def __init__(
        self,
        filesystem: LocalFilesystem | str | os.PathLike[str] | None = None,
        *,
        id: str | None = None,
        bm25: bool | Mapping[str, Any] = False,
        vector_store: Store | None = None,
        embedder: Embedder | Callable[..., Any] | None = None,
        search_index_name: str | None = None,
        auto_index_paths: Sequence[str] = (),
        chunker: Chunker | None = None,
        namespace: str = "",
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        logger: logging.Logger | None = None,
        reembed: bool = False,
    ) -> None:
        if filesystem is not None and not isinstance(filesystem, LocalFilesystem):
            filesystem = LocalFilesystem(filesystem)
        self.filesystem = filesystem
        self.id = id if id is not None else default_workspace_id(
            str(filesystem.base_path) if filesystem else None)
        if not isinstance(self.id, str) or not self.id:
            raise ValidationError(f"workspace id must be a non-empty str, got {self.id!r}")
        self.search_index_name = check_search_index_name(
            search_index_name if search_index_name is not None
            else default_search_index_name(self.id))
        settings = bm25_settings(bm25)
        self._bm25 = BM25Index(*settings) if settings else None
        if (vector_store is None) != (embedder is None):
            raise ConfigError("vector search needs both vector_store and embedder")
        if vector_store is not None and not isinstance(vector_store, Store):
            raise ConfigError(f"vector_store must be a vectorport Store, got {type(vector_store).__name__}")
        self._vectors = None if vector_store is None else VectorSide(
            vector_store, resolve_embedder(embedder), store_index_name(self.search_index_name),
            validation.namespace(namespace), reembed=bool(reembed))
        if isinstance(auto_index_paths, str):
            auto_index_paths = [auto_index_paths]
        self.auto_index_paths = tuple(auto_index_paths)
        if self.auto_index_paths and filesystem is None:
            raise ConfigError("auto_index_paths needs a filesystem")
        if chunker is not None and not isinstance(chunker, Chunker):
            raise ConfigError(f"chunker must be a vectorport.chunks.Chunker, got {chunker!r}")
        self.chunker = chunker
        if isinstance(max_file_bytes, bool) or not isinstance(max_file_bytes, int) or max_file_bytes < 1:
            raise ValidationError(f"max_file_bytes must be a positive int, got {max_file_bytes!r}")
        self.max_file_bytes = max_file_bytes
        self.logger = logger or logging.getLogger("vectorport.workspace")
        self._documents: dict[str, list[Entry]] = {}
        self._entries: dict[str, Entry] = {}

    def __repr__(self) -> str:
        return (f"Workspace(id={self.id!r}, modes={self.modes}, "
                f"search_index_name={self.search_index_name!r})")

    # -- configuration -----------------------------------------------------------------

    @property
    def modes(self) -> tuple[SearchMode, ...]:
        out: list[SearchMode] = []
        if self._bm25 is not None:
            out.append("bm25")
        if self._vectors is not None:
            out.append("vector")
        if len(out) == 2:
            out.append("hybrid")
        return tuple(out)

    @property
    def default_mode(self) -> SearchMode:
        """The best mode configured: hybrid, else the only one."""
        modes = self.modes
        if not modes:
            raise ConfigError("this workspace has no search: set bm25 and/or vector_store + embedder")
        return modes[-1]

    @property
    def vector_index_name(self) -> str | None:
        """The vectorport index behind ``search_index_name`` (``None`` without vectors)."""
        return self._vectors.index_name if self._vectors else None

    @property
    def bm25_index(self) -> BM25Index | None:
        return self._bm25

    # -- indexing ----------------------------------------------------------------------

    def init(self, progress: Progress | None = None) -> SyncReport:
        """Index the files of ``auto_index_paths`` (see :meth:`sync`)."""
        return self.sync(progress)

    def index(self, path: str, content: str, *, metadata: Mapping[str, Any] | None = None) -> None:
        """Index ``content`` under the document id ``path``, replacing what it held."""
        if not isinstance(content, str):
            raise ValidationError(f"content must be a str, got {type(content).__name__}")
        self._require_search()
        self._index_documents([_Document(normalize_path(path), content, user_metadata(metadata),
                                         "manual")])

    def unindex(self, path: str) -> None:
        """Remove a document from every index."""
        path = normalize_path(path)
        self._forget(path)
        if self._vectors is not None:
            self._vectors.remove(path)

    def sync(self, progress: Progress | None = None) -> SyncReport:
        """Bring the index in line with the files of ``auto_index_paths``: new and changed
        files are (re)indexed, unchanged ones left alone, and the entries of files that
        are gone (or no longer readable text) removed."""
        self._require_search()
        if self.filesystem is None or not self.auto_index_paths:
            return SyncReport()
        selection = self.filesystem.select(self.auto_index_paths)
        skipped = [(p, "matches no file") for p in selection.missing]
        indexed: list[str] = []
        unchanged: list[str] = []
        kept: list[str] = []
        total, done = len(selection.paths), 0
        group: list[_Document] = []

        def flush() -> None:
            nonlocal done
            written = self._index_documents(group)
            for document in group:
                (indexed if document.path in written else unchanged).append(document.path)
                kept.append(document.path)
                done += 1
                if progress is not None:
                    progress(done, total, document.path)
            group.clear()

        for path in selection.paths:
            content, reason = self._read(path)
            if content is None:
                skipped.append((path, reason))
                done += 1
                if progress is not None:
                    progress(done, total, path)
                continue
            group.append(_Document(path, content, {}, "auto"))
            if self._entry_count(group) >= _GROUP_ENTRIES:
                flush()
        flush()
        removed = self._remove_vanished(kept)
        return SyncReport(tuple(indexed), tuple(unchanged), tuple(skipped), removed)

    def _require_search(self) -> None:
        if not self.modes:
            raise ConfigError("this workspace has no search: set bm25 and/or vector_store + embedder")

    def _entry_count(self, documents: Sequence[_Document]) -> int:
        if self.chunker is None:
            return len(documents)
        return sum(max(1, math.ceil(len(d.content) / self.chunker.size)) for d in documents)

    def _read(self, path: str) -> tuple[str | None, str]:
        assert self.filesystem is not None
        try:
            file = self.filesystem.resolve(path)
            if file.stat().st_size > self.max_file_bytes:
                return None, f"larger than {self.max_file_bytes} bytes"
            data = file.read_bytes()
        except (OSError, ConfigError) as exc:
            return None, f"unreadable: {exc}"
        if b"\x00" in data:
            return None, "binary"
        try:
            return data.decode("utf-8"), ""
        except UnicodeDecodeError:
            return None, "not UTF-8 text"

    def _index_documents(self, documents: Sequence[_Document]) -> set[str]:
        """Index documents; returns the paths whose index changed (the vector store's
        when there is one, else the BM25 index's)."""
        if not documents:
            return set()
        split = {d.path: split_document(d.path, d.content, d.metadata, self.chunker, d.origin)
                 for d in documents}
        memory_changed = {p for p, entries in split.items()
                          if [e.key for e in self._documents.get(p, [])] != [e.key for e in entries]
                          or self._documents[p][0].fingerprint != entries[0].fingerprint}
        written = memory_changed
        if self._vectors is not None:
            known = self._vectors.stored_states(list(split))
            stale = {p: entries for p, entries in split.items()
                     if known.get(p) != StoredState(entries[0].fingerprint, len(entries))}
            self._vectors.write(stale, known)
            written = set(stale)
        for path in memory_changed:
            self._forget(path)
            self._remember(split[path])
        return written

    def _remember(self, entries: list[Entry]) -> None:
        self._documents[entries[0].path] = entries
        for entry in entries:
            self._entries[entry.key] = entry
            if self._bm25 is not None:
                self._bm25.add(entry.key, entry.text)

    def _forget(self, path: str) -> None:
        for entry in self._documents.pop(path, []):
            self._entries.pop(entry.key, None)
            if self._bm25 is not None:
                self._bm25.remove(entry.key)

    def _remove_vanished(self, kept: Sequence[str]) -> int:
        keep = set(kept)
        vanished = [p for p, entries in self._documents.items()
                    if entries[0].origin == "auto" and p not in keep]
        removed = sum(len(self._documents[p]) for p in vanished)
        for path in vanished:
            self._forget(path)
        if self._vectors is not None:
            removed = self._vectors.remove_auto_except(sorted(keep))
        return removed

    # -- search ------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: SearchMode | None = None,
        min_score: float | None = None,
        vector_weight: float = 0.5,
        filter: Mapping[str, Any] | None = None,
    ) -> list[SearchResult]:
        """The ``top_k`` best entries for ``query``, best first (ties by path).

        ``mode`` defaults to :attr:`default_mode`. ``min_score`` (in [0, 1]) drops
        weaker results; ``vector_weight`` is the share of the vector score in hybrid
        mode (0: BM25 only, 1: vector only). ``filter`` is a vectorport filter on the
        documents' metadata, applied the same way by both indexes.
        """
        if not isinstance(query, str):
            raise ValidationError(f"query must be a str, got {type(query).__name__}")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValidationError(f"top_k must be a positive int, got {top_k!r}")
        mode = self.default_mode if mode is None else mode
        if mode not in ("bm25", "vector", "hybrid"):
            raise ValidationError(f"mode must be 'bm25', 'vector' or 'hybrid', got {mode!r}")
        if mode not in self.modes:
            raise ConfigError(f"search mode {mode!r} is not configured on this workspace "
                              f"(available: {', '.join(self.modes) or 'none'})")
        for label, value in (("min_score", min_score), ("vector_weight", vector_weight)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not 0.0 <= value <= 1.0):
                raise ValidationError(f"{label} must be a number in [0, 1], got {value!r}")
        node = parse_filter(filter)
        if mode == "bm25":
            scored = self._bm25_search(query, top_k, node)
        elif mode == "vector":
            scored = self._vector_search(query, top_k, node)
        else:
            scored = self._hybrid_search(query, top_k, node, float(vector_weight))
        if min_score is not None:
            scored = [s for s in scored if s.score >= min_score]
        return [self._result(s, query, mode) for s in scored[:top_k]]

    def _bm25_normalized(self, query: str, node: Filter | None) -> list[tuple[str, float]]:
        assert self._bm25 is not None
        raw = self._bm25.scores(query)
        if node is not None:
            raw = {k: v for k, v in raw.items()
                   if matches(node, self._entries[k].stored_metadata())}
        best = max(raw.values(), default=0.0)
        if best <= 0.0:
            return []
        return sorted(((k, v / best) for k, v in raw.items()), key=lambda kv: (-kv[1], kv[0]))

    def _bm25_search(self, query: str, top_k: int, node: Filter | None) -> list[_Scored]:
        return [_Scored(self._entries[k], s) for k, s in self._bm25_normalized(query, node)[:top_k]]

    def _entry_of(self, match: Match) -> Entry:
        entry = self._entries.get(match.id)
        if entry is not None:
            return entry
        return Entry.from_stored(match.document, match.metadata or {})

    def _vector_search(self, query: str, top_k: int, node: Filter | None) -> list[_Scored]:
        assert self._vectors is not None
        found = self._vectors.query(self._vectors.embed_query(query), top_k, node) or []
        scored = [_Scored(self._entry_of(m), cosine01(m.score)) for m in found]
        return sorted(scored, key=lambda s: (-s.score, s.entry.key))  # clamped ties: by path

    def _hybrid_search(self, query: str, top_k: int, node: Filter | None,
                       weight: float) -> list[_Scored]:
        """Exact weighted hybrid: candidates are the top ``pool`` of each ranking, each
        rescored on both sides; the pool grows until no entry outside it could beat the
        ``top_k``-th result (an unseen entry scores at most ``weight·v + (1−weight)·b``
        with ``v``, ``b`` the weakest scores seen in each ranking)."""
        assert self._vectors is not None
        vector = self._vectors.embed_query(query)
        bm25_ranked = self._bm25_normalized(query, node)
        bm25 = dict(bm25_ranked)
        limit = self._vectors.store.capabilities.max_top_k
        pool = min(max(4 * top_k, 20), limit)
        while True:
            found = self._vectors.query(vector, pool, node) or []
            cosines = {m.id: cosine01(m.score) for m in found}
            entries = {m.id: self._entry_of(m) for m in found}
            candidates = set(cosines) | {k for k, _ in bm25_ranked[:pool]}
            missing = sorted(candidates - set(cosines))
            cosines.update({k: cosine01(c) for k, c in self._vectors.cosines(vector, missing).items()})
            scored = sorted(
                (_Scored(entries.get(k) or self._entries[k],
                         weight * cosines.get(k, 0.0) + (1.0 - weight) * bm25.get(k, 0.0),
                         cosines.get(k, 0.0), bm25.get(k, 0.0)) for k in candidates),
                key=lambda s: (-s.score, s.entry.key))
            vectors_done = len(found) < pool
            bm25_done = len(bm25_ranked) <= pool
            bound = (weight * (0.0 if vectors_done else cosine01(found[-1].score))
                     + (1.0 - weight) * (0.0 if bm25_done else bm25_ranked[pool][1]))
            if (vectors_done and bm25_done) or pool >= limit or (
                len(scored) >= top_k and scored[top_k - 1].score > bound
            ):
                return scored
            pool = min(pool * 4, limit)

    def _result(self, scored: _Scored, query: str, mode: SearchMode) -> SearchResult:
        entry = scored.entry
        lines = LineRange(entry.line_start, entry.line_end)
        if mode != "vector" and self._bm25 is not None:
            lines = self._matching_lines(entry, query) or lines
        details = None if mode != "hybrid" else ScoreDetails(scored.vector or 0.0, scored.bm25 or 0.0)
        return SearchResult(entry.path, entry.text, scored.score, lines, dict(entry.metadata), details)

    def _matching_lines(self, entry: Entry, query: str) -> LineRange | None:
        assert self._bm25 is not None
        terms = set(self._bm25.query_terms(query))
        hits = [n for n, line in enumerate(entry.text.split("\n"))
                if terms.intersection(self._bm25.tokenize(line))]
        if not hits:
            return None
        return LineRange(entry.line_start + hits[0], entry.line_start + hits[-1])

    # -- convenience -------------------------------------------------------------------

    def indexed_paths(self) -> list[str]:
        """The documents this workspace object has indexed (in memory), sorted."""
        return sorted(self._documents)

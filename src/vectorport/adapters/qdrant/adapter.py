"""The ``qdrant`` adapter: Qdrant through qdrant-client (server, local mode) or
qdrant-edge-py (Qdrant Edge).

URLs:

- ``qdrant://host:6333`` (REST, port 6333 by default) and ``qdrants://host`` (TLS) reach a
  Qdrant server; ``api_key_env=VAR`` names the variable holding the API key (held as a
  masked :class:`Secret`), ``timeout=`` is in seconds.
- ``qdrant+local:///path`` and ``qdrant+memory://``: qdrant-client's local mode, on disk
  or in memory (a Python re-implementation by Qdrant's team, brute-force search).
- ``qdrant+edge:///path``: Qdrant Edge, Qdrant's Rust engine embedded in the process,
  one shard per index under ``path``.

**Indexes** are collections (Edge: shards) of the same name; the IndexSpec is kept in
the collection's metadata (Edge: a file beside the shard). The point layout (UUIDv5
point ids, the original id in the payload, metadata under ``m``, the vectors as written
on cosine indexes) is described in :mod:`.naming`.

**Namespaces** follow Qdrant's multitenancy guide: one collection for all tenants, the
namespace in the keyword payload field ``_ns`` with a tenant index (``is_tenant``),
which co-locates each tenant's points, and ``_ns == namespace`` as the first ``must``
of every search, scroll, count and delete. Point ids hash the namespace with the id,
so the same id lives in several namespaces and an operation by id never reaches
another namespace. ``list_namespaces`` and the counts of ``describe_index`` are one
exact facet over ``_ns``.

**Scores** are computed by the adapter from the vectors the searches return
(:mod:`.ranking`): exact for every metric (Qdrant's Euclid distance would otherwise
need ``1/(1+d)``, its cosine works on normalised float32), ties at the cut resolved
by id, hybrid queries scored as ``dense + sparse`` with a proven bound.
"""

from __future__ import annotations

import heapq
import importlib.util
import random
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from vectorport.adapterkit import batches, unique
from vectorport.adapterkit.http_deadline import deadline_hook
from vectorport.adapters.qdrant import codec, naming
from vectorport.adapters.qdrant.capabilities import (
    EDGE_CAPABILITIES,
    LOCAL_CAPABILITIES,
    QDRANT_CAPABILITIES,
)
from vectorport.adapters.qdrant.codec import Hit, Point
from vectorport.adapters.qdrant.engines import Engine
from vectorport.adapters.qdrant.explain import explain_query
from vectorport.adapters.qdrant.filters import QdrantFilter, namespace_condition, scoped
from vectorport.adapters.qdrant.options import SearchOptions, collection_layout, search_options
from vectorport.adapters.qdrant.ranking import Scorer, exact_top_k, first_depth
from vectorport.adapters.qdrant.settled import settled_top_k
from vectorport.core import validation
from vectorport.core.capabilities import Capabilities
from vectorport.core.config import ConnectionURL, Secret
from vectorport.core.errors import (
    BackendError,
    ConfigError,
    IndexNotFoundError,
    UnsupportedFeatureError,
)
from vectorport.core.filters.ast import Filter
from vectorport.core.types import (
    Explanation,
    IdPage,
    IndexInfo,
    IndexSpec,
    Match,
    QueryRequest,
    Record,
    RecordPage,
    RecordPatch,
)

BACKEND = "qdrant"
DEFAULT_PORT = 6333
_SERVER_OPTIONS = frozenset({"api_key", "api_key_env", "timeout"})
_SCAN_PAGE = 1_024
_FETCH_CHUNK = 1_000
_FACET_LIMIT = 10_000
_PATCH_ATTEMPTS = 16


def size_batches(points: Sequence[Point], max_bytes: int | None) -> Iterator[list[Point]]:
    """Consecutive runs of ``points`` whose estimated JSON size stays under
    ``max_bytes`` (``None``: the engine takes any request, one batch, and no point's
    size is estimated)."""
    if max_bytes is None:
        return iter([list(points)] if points else [])
    return batches(points, max(1, len(points)), cost=codec.estimated_bytes,
                   max_cost=max_bytes)


_REST_TIMEOUT = 5.0
"""qdrant-client's REST timeout when none is given (httpx's default)."""


def _timeout(url: ConnectionURL) -> float | None:
    raw = url.option("timeout")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError("URL option timeout must be a number of seconds") from None
    if not value > 0:
        raise ConfigError("URL option timeout must be positive")
    return value


def _local_path(url: ConnectionURL) -> Path:
    if url.host:
        raise ConfigError(f"{url.scheme}:// URLs name a folder: {url.scheme}:///path/to/dir")
    if url.path in ("", "/"):
        raise ConfigError(f"{url.scheme} needs a folder: {url.scheme}:///path/to/dir")
    return Path(url.path)


class QdrantAdapter:
    """Qdrant through one :class:`~.engines.Engine`; see the module docstring."""

    backend: ClassVar[str] = BACKEND

    def __init__(self, engine: Engine, capabilities: Capabilities, *, shown_as: str) -> None:
        self._engine = engine
        self._capabilities = capabilities
        self._shown_as = shown_as
        self._versions: dict[str, int] = {}
        """The point layout of each collection (:data:`.naming.LAYOUT`), read once."""
        self._opened: dict[str, tuple[int, IndexSpec, int]] = {}
        """Per collection, where the engine tells its incarnations apart: the incarnation
        its settings were read at, its IndexSpec and point layout (see :meth:`_layout`)."""

    @classmethod
    def from_url(cls, url: ConnectionURL) -> QdrantAdapter:
        if url.scheme == "qdrant+edge":
            url.unknown_options(frozenset({"optimize_every"}))
            if importlib.util.find_spec("qdrant_edge") is None:
                raise ConfigError(
                    'qdrant+edge:// needs qdrant-edge-py: pip install "vectorport[qdrant]"'
                )
            from vectorport.adapters.qdrant.engines.edge import OPTIMIZE_EVERY, EdgeEngine

            every = url.int_option("optimize_every", OPTIMIZE_EVERY)
            if every < 0:
                raise ConfigError("URL option optimize_every must be 0 (never) or more")
            return cls(EdgeEngine(_local_path(url), optimize_every=every), EDGE_CAPABILITIES,
                       shown_as=url.redacted())
        from qdrant_client import QdrantClient

        from vectorport.adapters.qdrant.engines.client import ClientEngine, local_folder_engine

        if url.scheme in ("qdrant+local", "qdrant+memory"):
            url.unknown_options(frozenset())
            if url.scheme == "qdrant+memory":
                if url.host or url.path not in ("", "/"):
                    raise ConfigError("qdrant+memory:// takes no host or path")
                engine = ClientEngine(QdrantClient(location=":memory:"), local=True,
                                      name="qdrant-client local mode")
            else:
                path = _local_path(url)
                path.mkdir(parents=True, exist_ok=True)
                engine = local_folder_engine(path)
            return cls(engine, LOCAL_CAPABILITIES, shown_as=url.redacted())
        url.unknown_options(_SERVER_OPTIONS)
        if not url.host:
            raise ConfigError(f"{url.scheme}:// URLs need a host: {url.scheme}://host:6333")
        if url.path not in ("", "/"):
            raise ConfigError("Qdrant server URLs take no path")
        api_key: Secret | None = url.credential("api_key")
        # check_compatibility off: it asks the server for its version inside the
        # constructor, which would make connect() do I/O (and wait out a dead host)
        kwargs: dict[str, Any] = {"host": url.host, "port": url.port or DEFAULT_PORT,
                                  "https": url.scheme == "qdrants",
                                  "check_compatibility": False}
        timeout = _timeout(url)
        if timeout is not None:
            kwargs["timeout"] = max(1, round(timeout))  # qdrant-client takes whole seconds
        # each request's timeout cut to what is left of the call's deadline: a stalled
        # server is given up on when the call's time is up, not when the client's
        # timeout (rounded to whole seconds) runs out (the kwargs reach httpx.Client)
        kwargs["event_hooks"] = {"request": [deadline_hook(timeout or _REST_TIMEOUT)]}
        if api_key is not None:
            kwargs["api_key"] = api_key.reveal()
        client = QdrantClient(**kwargs)
        engine = ClientEngine(client, local=False, name="Qdrant server")
        return cls(engine, QDRANT_CAPABILITIES, shown_as=url.redacted())

    def __repr__(self) -> str:
        return f"QdrantAdapter({self._shown_as!r})"

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    @property
    def engine(self) -> Engine:
        """The engine this connection talks to (see :mod:`.engines`)."""
        return self._engine

    def _scoped(self, namespace: str, node: Filter | None) -> QdrantFilter:
        return scoped(namespace, node, bools_native=self._engine.bools_native,
                      numbers_exact=self._engine.numbers_exact)

    # -- lifecycle ----------------------------------------------------------------

    def _settings(self, name: str) -> tuple[IndexSpec, int]:
        mark = self._engine.incarnation(name)  # before the read: a change meanwhile shows
        text = self._engine.spec_json(name)
        if text is None:
            self._versions.pop(name, None)
            self._opened.pop(name, None)
            raise IndexNotFoundError(name)  # absent, or a collection vectorport did not create
        spec, version = codec.settings_from_json(text)
        self._versions[name] = version
        if mark is not None:
            self._opened[name] = (mark, spec, version)
        return spec, version

    def _layout(self, index: IndexSpec) -> int:
        """The point layout of the collection the handle of ``index`` was opened on.

        Where this process is the collection's one writer (Edge, local mode), a handle
        whose collection was dropped and created again with other settings (through
        another connection, or another handle) raises ``IndexNotFoundError``, as the
        local engine's handles do, rather than read or write the new collection with
        the old settings. The check costs a dict lookup, and an IndexSpec comparison
        when the handle's spec is another object than the one read (≈ 1 µs)."""
        mark = self._engine.incarnation(index.name)
        if mark is None:
            return self._version(index.name)
        known = self._opened.get(index.name)
        if known is None or known[0] != mark:
            self._settings(index.name)
            known = self._opened.get(index.name)
            if known is None:  # the shard closed meanwhile: nothing to compare with
                return self._version(index.name)
        spec = known[1]
        if spec is not index and spec != index:
            stale = IndexNotFoundError(index.name)
            stale.args = (f"index {index.name!r} this handle was opened on was deleted; "
                          "the index of that name now is another one: open it again",)
            raise stale
        return known[2]

    def _spec(self, name: str) -> IndexSpec:
        return self._settings(name)[0]

    def _version(self, name: str) -> int:
        """The point layout of collection ``name``: collections written before layout 2
        keep the vector as written of a cosine index as the named vector ``raw``, and
        are read and written so (see :mod:`.naming`)."""
        version = self._versions.get(name)
        return self._settings(name)[1] if version is None else version

    def create_index(self, spec: IndexSpec) -> None:
        layout = collection_layout(spec)  # checked before any I/O
        self._engine.create(spec.name, layout, codec.settings_to_json(spec))
        self._versions[spec.name] = naming.LAYOUT
        mark = self._engine.incarnation(spec.name)
        if mark is not None:
            self._opened[spec.name] = (mark, spec, naming.LAYOUT)

    def describe_index(self, name: str) -> IndexInfo:
        spec = self._spec(name)
        counts = self._namespace_counts(spec)
        return IndexInfo(spec=spec, count=sum(counts.values()), namespaces=counts)

    def list_indexes(self) -> list[str]:
        return self._engine.names()

    def delete_index(self, name: str) -> None:
        self._spec(name)
        self._engine.drop(name)
        self._versions.pop(name, None)
        self._opened.pop(name, None)

    # -- data ---------------------------------------------------------------------

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        bools_native, numbers_exact = self._engine.bools_native, self._engine.numbers_exact
        version = self._layout(index)
        points = [codec.to_point(index, namespace, r, bools_native=bools_native,
                                 numbers_exact=numbers_exact, version=version, revision=revision)
                  for r, revision in zip(records, naming.revisions(len(records)), strict=True)]
        written: list[str] = []
        try:
            for batch in size_batches(points, self._engine.max_request_bytes):
                self._engine.upsert(index.name, batch)
                written.extend(codec.record_id_of(p.payload) for p in batch)
        except BackendError as exc:
            exc.written_ids = tuple(written)  # of this call's batch (see the facade)
            raise

    def query(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        options = search_options(request)
        if options.acorn is not None:
            self._check_acorn()
        flt = self._scoped(request.namespace, request.filter)
        names = codec.vector_names(index, self._layout(index))
        include = request.include
        if request.sparse is None and request.vector is not None and not names:
            # the common query: the payloads hold all it needs (see .settled)
            query = np.asarray(request.vector, dtype=np.float64)
            depth = first_depth(request.top_k, True)
            settled = settled_top_k(self._engine.search_payloads(
                index.name, request.vector, flt, depth, options,
                request.consistency == "strong"), query, request.top_k, depth,
                request.min_score)
            if settled is not None:
                metadata, vectors, documents = include.metadata, include.vectors, include.documents
                return [codec.payload_match(record_id, payload, score, metadata=metadata,
                                            vectors=vectors, documents=documents)
                        for score, record_id, payload in settled]
        scorer = Scorer.for_query(index.metric, codec.stored_vector_name(index),
                                  request.vector, request.sparse)
        source = _Candidates(self._engine, index, request, flt, options, names)
        best = exact_top_k(scorer, source, request.top_k, request.min_score)
        return [codec.to_match(index, hit, score, metadata=include.metadata,
                               vectors=include.vectors, documents=include.documents)
                for hit, score in best]

    def explain_query(self, index: IndexSpec, request: QueryRequest) -> Explanation:
        if search_options(request).acorn is not None:
            self._check_acorn()
        engine = self._engine
        return explain_query(index, request, bools_native=engine.bools_native,
                             numbers_exact=engine.numbers_exact, engine=engine.name,
                             acorn=engine.uses_acorn)

    def _check_acorn(self) -> None:
        """The ``acorn`` option means something where a graph is searched with or
        without ACORN (Edge) and nothing where every search scans (local mode); a
        server is not asked for ACORN by vectorport, so the option is refused there
        rather than ignored."""
        engine = self._engine
        if engine.applies_hints and not engine.uses_acorn:
            raise UnsupportedFeatureError(
                "qdrant", "the acorn query option",
                f"vectorport does not ask ACORN of a {engine.name} (only of Qdrant Edge)")

    def fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        uids = [naming.point_id(namespace, i) for i in unique(ids)]
        out: list[Record] = []
        names = codec.vector_names(index, self._layout(index))
        for chunk in batches(uids, _FETCH_CHUNK):
            for hit in self._engine.retrieve(index.name, chunk, names):
                if hit.payload.get(naming.NAMESPACE) == namespace:
                    out.append(codec.to_record(index, hit))
        return out

    def delete(self, index: IndexSpec, namespace: str, ids: Sequence[str] | None,
               filter: Filter | None) -> None:
        self._layout(index)
        if ids is None:
            self._engine.delete_by_filter(index.name, self._scoped(namespace, filter))
            return
        uids = [naming.point_id(namespace, i) for i in unique(ids)]
        for chunk in batches(uids, _FETCH_CHUNK):
            self._engine.delete_points(index.name, chunk)

    def count(self, index: IndexSpec, namespace: str, filter: Filter | None) -> int:
        self._layout(index)
        return self._engine.count(index.name, self._scoped(namespace, filter))

    def _namespace_counts(self, index: IndexSpec) -> dict[str, int]:
        limit = _FACET_LIMIT
        while True:
            hits = self._engine.facet(index.name, naming.NAMESPACE, None, limit)
            if len(hits) < limit:
                return {value: n for value, n in hits if n > 0}
            limit *= 10

    def list_namespaces(self, index: IndexSpec) -> list[str]:
        self._layout(index)
        return sorted(self._namespace_counts(index))

    def delete_namespace(self, index: IndexSpec, namespace: str) -> None:
        self._layout(index)
        self._engine.delete_by_filter(index.name, {"must": [namespace_condition(namespace)]})

    # -- optional protocols ---------------------------------------------------------

    def patch(self, index: IndexSpec, namespace: str, patch: RecordPatch) -> bool:
        """Read the point, write the patched point conditioned on the revision read
        (compare-and-swap, :data:`.naming.REVISION`), and check which revision is
        stored: a concurrent write makes the swap fail and the patch start again, so a
        patch is atomic and never undoes another write."""
        uid = naming.point_id(namespace, patch.id)
        version = self._layout(index)
        names = codec.vector_names(index, version)
        for attempt in range(_PATCH_ATTEMPTS):
            if attempt:
                time.sleep(random.uniform(0, 0.002 * attempt))  # back off under contention
            found = self._engine.retrieve(index.name, [uid], names)
            if not found:
                return False
            current = found[0]
            point = codec.to_point(index, namespace,
                                   codec.patched(codec.to_record(index, current), patch),
                                   bools_native=self._engine.bools_native,
                                   numbers_exact=self._engine.numbers_exact, version=version)
            self._engine.replace_if(index.name, point, codec.revision_condition(current.payload))
            after = self._engine.retrieve(index.name, [uid], ())
            if not after:
                return False  # deleted meanwhile
            if codec.revision_of(after[0].payload) == codec.revision_of(point.payload):
                return True
        raise BackendError(
            f"qdrant patch of {patch.id!r}: the record kept changing under "
            f"{_PATCH_ATTEMPTS} attempts (concurrent writes)"
        )


    def list_ids(self, index: IndexSpec, namespace: str, *, prefix: str | None,
                 filter: Filter | None, limit: int, cursor: str | None) -> IdPage:
        # Qdrant orders scrolls by point id (here a hash) or by numeric fields, never
        # by a string: the ids of the namespace are read and sorted. O(namespace size)
        # per page, documented in docs/backends/qdrant.md.
        self._layout(index)
        flt = self._scoped(namespace, filter)
        ids = heapq.nsmallest(limit + 1, (
            hit.record_id for hit in scroll_all(self._engine, index.name, flt, ())
            if (prefix is None or hit.record_id.startswith(prefix))
            and (cursor is None or hit.record_id > cursor)
        ))
        page = tuple(ids[:limit])
        return IdPage(page, page[-1] if len(ids) > limit else None)

    def scan(self, index: IndexSpec, namespace: str, *, filter: Filter | None,
             page_size: int, cursor: str | None) -> RecordPage:
        """One page of Qdrant's own scroll: points in point-id order (a hash of the
        namespace and the record id), resumed from the next point's id, so a whole scan
        reads each point once. (Through :meth:`list_ids`, which must give ids in order,
        every page read the whole namespace: a verified copy of 50,000 records into
        Edge spent most of its 99 s there.)"""
        version = self._layout(index)
        hits, next_offset = self._engine.scroll(
            index.name, self._scoped(namespace, filter), page_size, cursor,
            codec.vector_names(index, version))
        return RecordPage(tuple(codec.to_record(index, hit) for hit in hits), next_offset)

    def optimize(self, name: str) -> None:
        """Run Qdrant's optimizers on index ``name`` now (``store.adapter.optimize``).

        On Edge they otherwise run in the write that crosses ``optimize_every`` when its
        deadline leaves them time (docs/backends/qdrant.md); this runs them whatever the
        deadline, in one engine call that is not cut short. A server runs them in the
        background and local mode has none: there it does nothing, after checking
        that the index exists (as everywhere, a missing one raises
        ``IndexNotFoundError``)."""
        validation.index_name(name)  # called directly, not through the facade
        self._settings(name)
        self._engine.optimize(name)

    def close(self) -> None:
        self._engine.close()


def scroll_all(engine: Engine, name: str, flt: QdrantFilter, vectors: Sequence[str],
               strong: bool = True) -> Iterator[Hit]:
    offset: str | None = None
    while True:
        hits, offset = engine.scroll(name, flt, _SCAN_PAGE, offset, vectors, strong)
        yield from hits
        if offset is None:
            return


class _Candidates:
    """The :class:`~.ranking.CandidateSource` of one query."""

    def __init__(self, engine: Engine, index: IndexSpec, request: QueryRequest,
                 flt: QdrantFilter, options: SearchOptions, vectors: list[str]) -> None:
        self.engine = engine
        self.index = index
        self.request = request
        self.flt = flt
        self.options = options
        self.vectors = vectors
        self.strong = request.consistency == "strong"

    def dense(self, limit: int) -> Sequence[Hit]:
        assert self.request.vector is not None
        return self.engine.search(self.index.name, naming.DENSE, self.request.vector,
                                  self.flt, limit, self.vectors, self.options, self.strong)

    def sparse(self, limit: int) -> Sequence[Hit]:
        assert self.request.sparse is not None
        return self.engine.search(self.index.name, naming.SPARSE, self.request.sparse,
                                  self.flt, limit, self.vectors, self.options, self.strong)

    def scan(self) -> Iterator[Hit]:
        return scroll_all(self.engine, self.index.name, self.flt, self.vectors, self.strong)

    def smallest_ids(self, exclude: set[str], limit: int) -> Sequence[Hit]:
        smallest = heapq.nsmallest(
            limit, (hit for hit in scroll_all(self.engine, self.index.name, self.flt, (),
                                              self.strong) if hit.uid not in exclude),
            key=lambda hit: hit.record_id)
        if not smallest:
            return []
        found = {hit.uid: hit for hit in self.engine.retrieve(
            self.index.name, [hit.uid for hit in smallest], self.vectors)}
        return [found[hit.uid] for hit in smallest if hit.uid in found]


__all__ = ["QdrantAdapter", "scroll_all", "size_batches"]

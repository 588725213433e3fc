"""The ``qdrant-client`` engine: a Qdrant server over REST, or the client's local mode.

Local mode (``QdrantClient(path=...)`` or ``":memory:"``) is a Python re-implementation
shipped by Qdrant's team. It searches by brute force (``hnsw_ef`` and ``exact`` have no
effect there, so the adapter declares no hints on it), keeps no payload indexes (the
tenant index is only created on a server), and is not safe for concurrent use, so its
calls are serialised by one lock.

Local mode evaluates every filter in Python, point by point: the namespace condition
alone made a query five times slower than the same search unfiltered. A local-mode
client is the only writer of its data (it locks its folder against other processes,
and this process shares one client per folder), so it knows a superset of the
namespaces each collection holds (:class:`~.tenants.Tenants`); when that is the operation's own
namespace alone, every point is in it and the condition is dropped as redundant.
"""

from __future__ import annotations

import atexit
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient, models

from vectorport.adapters.qdrant import naming
from vectorport.adapters.qdrant.codec import Hit, Point, QueryValue, VectorValue, hit_of
from vectorport.adapters.qdrant.engines.tenants import Reader, Tenants
from vectorport.adapters.qdrant.errors import translated
from vectorport.adapters.qdrant.filters import QdrantFilter
from vectorport.adapters.qdrant.options import CollectionLayout, SearchOptions
from vectorport.core.errors import BackendError, IndexExistsError
from vectorport.core.types import DenseVector, SparseVector


def to_model(part: QdrantFilter) -> Any:
    """A qdrant-client model of a REST filter document (filter or condition)."""
    if "key" in part:
        key = part["key"]
        if "range" in part:
            return models.FieldCondition(key=key, range=models.Range(**part["range"]))
        match = part["match"]
        if "any" in match:
            return models.FieldCondition(key=key, match=models.MatchAny(any=list(match["any"])))
        return models.FieldCondition(key=key, match=models.MatchValue(value=match["value"]))
    if "is_empty" in part:
        return models.IsEmptyCondition(is_empty=models.PayloadField(key=part["is_empty"]["key"]))
    return models.Filter(
        must=[to_model(p) for p in part["must"]] if "must" in part else None,
        should=[to_model(p) for p in part["should"]] if "should" in part else None,
        must_not=[to_model(p) for p in part["must_not"]] if "must_not" in part else None,
    )


def _vector(value: QueryValue | VectorValue) -> Any:
    """A point's or a query's vector for qdrant-client. A dense query stays a NumPy
    array, which the client takes as it is: local mode deep-copies the query of every
    search, float by float for a list (a few percent of a small local-mode query), in
    one copy for an array; over REST the client serialises either the same."""
    if isinstance(value, SparseVector):
        return models.SparseVector(indices=list(value.indices), values=list(value.values))
    return value


def _hit(point: Any) -> Hit:
    return hit_of(point, models.SparseVector)


def _namespace_reader(client: QdrantClient, name: str) -> Reader:
    def read(limit: int) -> list[str]:
        hits = client.facet(name, key=naming.NAMESPACE, limit=limit, exact=True).hits
        return [str(h.value) for h in hits]
    return read


@dataclass
class _SharedLocal:
    client: QdrantClient
    lock: threading.RLock
    tenants: Tenants = field(default_factory=Tenants)
    holders: int = 0
    incarnations: dict[str, int] = field(default_factory=dict)


_LOCAL_FOLDERS: dict[str, _SharedLocal] = {}
_SERIALS = itertools.count(1)
_LOCAL_FOLDERS_LOCK = threading.Lock()


def local_folder_engine(path: Path) -> ClientEngine:
    """An engine on the local-mode folder ``path``. qdrant-client locks a folder for one
    client, so every connection of this process to it shares one client (and its lock);
    another process gets a clear error."""
    key = str(path.resolve())
    with _LOCAL_FOLDERS_LOCK:
        shared = _LOCAL_FOLDERS.get(key)
        if shared is None:
            try:
                client = QdrantClient(path=key)
            except RuntimeError as exc:
                if "already accessed" not in str(exc):
                    raise
                raise BackendError(
                    f"qdrant+local: the folder {key} is open in another process "
                    "(qdrant-client's local mode has a single owner; use a server)"
                ) from exc
            shared = _LOCAL_FOLDERS[key] = _SharedLocal(client, threading.RLock())
        shared.holders += 1

    def release() -> None:
        with _LOCAL_FOLDERS_LOCK:
            shared.holders -= 1
            if shared.holders == 0:
                if _LOCAL_FOLDERS.get(key) is shared:  # not already closed at exit
                    del _LOCAL_FOLDERS[key]
                with shared.lock, translated("close"):
                    shared.client.close()

    return ClientEngine(shared.client, local=True, name="qdrant-client local mode",
                        lock=shared.lock, release=release, tenants=shared.tenants,
                        incarnations=shared.incarnations)


@atexit.register
def _close_local_folders() -> None:
    """Close the local-mode clients of stores still open when the interpreter exits.
    Left to the garbage collector, qdrant-client's own close runs while the interpreter
    tears its modules down, fails to import the module that unlocks the folder and
    prints an ``Exception ignored … ImportError`` traceback (qdrant-client issue 1079);
    closed here, before that, the folder is unlocked cleanly and the later close does
    nothing. A store closed afterwards closes its client again, which is harmless."""
    with _LOCAL_FOLDERS_LOCK:
        open_folders = list(_LOCAL_FOLDERS.values())
        _LOCAL_FOLDERS.clear()
    for shared in open_folders:
        with shared.lock, translated("close"):
            shared.client.close()


class ClientEngine:
    """qdrant-client against a server, or in local mode."""

    bools_native = True
    numbers_exact = True
    uses_acorn = False
    """ACORN is not asked of a server (not measured here); local mode has no graph."""

    def __init__(self, client: QdrantClient, *, local: bool, name: str,
                 lock: threading.RLock | None = None,
                 release: Callable[[], None] | None = None,
                 tenants: Tenants | None = None,
                 incarnations: dict[str, int] | None = None) -> None:
        self._client = client
        self.local = local
        self.name = name
        self.applies_hints = not local
        # a server takes requests of at most 32 MiB by default; local mode has no limit
        self.max_request_bytes: int | None = None if local else 8 * 1024 * 1024
        self._lock = lock if lock is not None else threading.RLock() if local else None
        self._release = release
        # local mode only: a server has other writers (and a tenant index)
        self._tenants = (tenants or Tenants()) if local else None
        # local mode only (the one writer of its folder or memory): each collection's
        # number, changed by every create and drop, 0 for one found there
        self._incarnations = (incarnations if incarnations is not None else {}) \
            if local else None

    @contextmanager
    def _guard(self, operation: str, index: str | None = None) -> Iterator[QdrantClient]:
        with self._lock if self._lock is not None else nullcontext(), translated(operation,
                                                                                  index):
            yield self._client

    def _filter(self, client: QdrantClient, name: str, flt: QdrantFilter) -> Any:
        """The model of ``flt`` as sent (None: no condition left). Every call runs
        under the client's lock, so the namespaces cannot change under it."""
        if self._tenants is not None:
            flt = self._tenants.unscoped(name, flt, _namespace_reader(client, name))
        return to_model(flt) if flt else None

    def _writing(self, client: QdrantClient, name: str, points: Sequence[Point]) -> None:
        if self._tenants is not None:
            self._tenants.writing(name, {str(p.payload[naming.NAMESPACE]) for p in points},
                                  _namespace_reader(client, name))

    def _read_consistency(self, strong: bool) -> Any:
        # "all" replicas answer a strong read on a replicated cluster (writes wait for
        # their replicas); local mode takes no consistency parameter.
        if self.local:
            return None
        return models.ReadConsistencyType.ALL if strong else None

    # -- collections ----------------------------------------------------------------

    def create(self, name: str, layout: CollectionLayout, spec_json: str) -> None:
        hnsw = None
        if layout.hnsw_m is not None or layout.ef_construct or layout.full_scan_threshold:
            hnsw = models.HnswConfigDiff(m=layout.hnsw_m, ef_construct=layout.ef_construct,
                                         full_scan_threshold=layout.full_scan_threshold)
        vectors = {naming.DENSE: models.VectorParams(
            size=layout.dimension, distance=models.Distance[layout.distance.upper()],
            hnsw_config=hnsw, on_disk=layout.on_disk or None)}
        if layout.keep_raw:
            # the vectors as written, for returning them: never searched, so no graph
            vectors[naming.RAW] = models.VectorParams(
                size=layout.dimension, distance=models.Distance.DOT,
                hnsw_config=models.HnswConfigDiff(m=0), on_disk=True)
        sparse = {naming.SPARSE: models.SparseVectorParams()} if layout.sparse else None
        with self._guard("create_collection") as client:
            if client.collection_exists(name):
                raise IndexExistsError(name)
            optimizers = None
            if layout.indexing_threshold is not None:
                optimizers = models.OptimizersConfigDiff(
                    indexing_threshold=layout.indexing_threshold)
            client.create_collection(name, vectors_config=vectors,
                                     sparse_vectors_config=sparse, optimizers_config=optimizers,
                                     metadata={naming.SPEC_KEY: spec_json})
            if self._tenants is not None:
                self._tenants.created(name)
            if self._incarnations is not None:
                self._incarnations[name] = next(_SERIALS)
            if not self.local:
                client.create_payload_index(
                    name, naming.NAMESPACE,
                    models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD,
                                              is_tenant=True),
                    wait=True,
                )

    def drop(self, name: str) -> None:
        with self._guard("delete_collection", name) as client:
            client.delete_collection(name)
            if self._tenants is not None:
                self._tenants.dropped(name)
            if self._incarnations is not None:
                self._incarnations[name] = next(_SERIALS)

    def incarnation(self, name: str) -> int | None:
        return None if self._incarnations is None else self._incarnations.get(name, 0)

    def optimize(self, name: str) -> None:
        """Nothing to run: a server optimizes in the background, local mode never."""

    def names(self) -> list[str]:
        with self._guard("get_collections") as client:
            found = [c.name for c in client.get_collections().collections]
        return [n for n in found if self.spec_json(n) is not None]

    def spec_json(self, name: str) -> str | None:
        with self._guard("get_collection") as client:
            if not client.collection_exists(name):
                return None
            metadata = client.get_collection(name).config.metadata or {}
        value = metadata.get(naming.SPEC_KEY)
        return value if isinstance(value, str) else None

    # -- points -----------------------------------------------------------------------

    def upsert(self, name: str, points: Sequence[Point]) -> None:
        structs = [models.PointStruct(id=p.uid, payload=dict(p.payload),
                                      vector={k: _vector(v) for k, v in p.vectors.items()})
                   for p in points]
        with self._guard("upsert", name) as client:
            self._writing(client, name, points)
            client.upsert(name, points=structs, wait=True)

    def replace_if(self, name: str, point: Point, condition: QdrantFilter) -> None:
        struct = models.PointStruct(id=point.uid, payload=dict(point.payload),
                                    vector={k: _vector(v) for k, v in point.vectors.items()})
        with self._guard("upsert", name) as client:
            self._writing(client, name, [point])
            client.upsert(name, points=[struct], wait=True, update_filter=to_model(condition),
                          update_mode=models.UpdateMode.UPDATE_ONLY)

    def delete_points(self, name: str, uids: Sequence[str]) -> None:
        with self._guard("delete", name) as client:
            client.delete(name, points_selector=models.PointIdsList(points=list(uids)),
                          wait=True)

    def delete_by_filter(self, name: str, flt: QdrantFilter) -> None:
        with self._guard("delete", name) as client:
            selected = self._filter(client, name, flt) or models.Filter()
            client.delete(name, points_selector=models.FilterSelector(filter=selected),
                          wait=True)

    def search(self, name: str, using: str, query: QueryValue, flt: QdrantFilter,
               limit: int, vectors: Sequence[str], options: SearchOptions,
               strong: bool) -> list[Hit]:
        return [_hit(p) for p in self._points(name, using, query, flt, limit, vectors,
                                              options, strong)]

    def search_payloads(self, name: str, query: DenseVector, flt: QdrantFilter, limit: int,
                        options: SearchOptions, strong: bool) -> list[dict[str, Any]]:
        return [p.payload or {} for p in self._points(name, naming.DENSE, query, flt, limit, (),
                                                      options, strong)]

    def _points(self, name: str, using: str, query: QueryValue, flt: QdrantFilter,
                limit: int, vectors: Sequence[str], options: SearchOptions,
                strong: bool) -> list[Any]:
        params = None
        if self.applies_hints and (options.ef is not None or options.exact):
            params = models.SearchParams(hnsw_ef=options.ef, exact=options.exact)
        with self._guard("query_points", name) as client:
            response = client.query_points(
                name, query=_vector(query), using=using,
                query_filter=self._filter(client, name, flt),
                limit=limit, with_payload=True, with_vectors=list(vectors) or False,
                search_params=params, consistency=self._read_consistency(strong),
            )
        points: list[Any] = response.points
        return points

    def scroll(self, name: str, flt: QdrantFilter, limit: int, offset: str | None,
               vectors: Sequence[str], strong: bool = True) -> tuple[list[Hit], str | None]:
        with self._guard("scroll", name) as client:
            points, next_offset = client.scroll(
                name, scroll_filter=self._filter(client, name, flt), limit=limit, offset=offset,
                with_payload=True, with_vectors=list(vectors) or False,
                consistency=self._read_consistency(strong),
            )
        return [_hit(p) for p in points], None if next_offset is None else str(next_offset)

    def retrieve(self, name: str, uids: Sequence[str], vectors: Sequence[str]) -> list[Hit]:
        with self._guard("retrieve", name) as client:
            points = client.retrieve(name, ids=list(uids), with_payload=True,
                                     with_vectors=list(vectors) or False,
                                     consistency=self._read_consistency(True))
        return [_hit(p) for p in points]

    def count(self, name: str, flt: QdrantFilter) -> int:
        with self._guard("count", name) as client:
            return int(client.count(name, count_filter=self._filter(client, name, flt),
                                    exact=True).count)

    def facet(self, name: str, key: str, flt: QdrantFilter | None,
              limit: int) -> list[tuple[str, int]]:
        with self._guard("facet", name) as client:
            response = client.facet(name, key=key,
                                    facet_filter=None if flt is None else to_model(flt),
                                    limit=limit, exact=True,
                                    consistency=self._read_consistency(True))
        return [(str(h.value), int(h.count)) for h in response.hits]

    def close(self) -> None:
        if self._release is not None:
            release, self._release = self._release, None
            release()
            return
        with self._guard("close") as client:
            client.close()


__all__ = ["ClientEngine", "local_folder_engine", "to_model"]

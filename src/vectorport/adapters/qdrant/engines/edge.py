"""The ``qdrant-edge-py`` engine: Qdrant's own Rust storage and search engine, in process.

An index is a folder under the root: ``<root>/<index>/shard`` holds one
:class:`qdrant_edge.EdgeShard` (a whole single-shard collection: segments, WAL,
HNSW and payload indexes), and ``<root>/<index>/vectorport.json`` the IndexSpec
(Edge shards keep no collection metadata). The spec file is written last and removed
first, so a folder without it is no index.

What differs from a server: the Python bindings turn a ``bool`` given to
``MatchValue`` into an int (``MatchValue(True).value == 1``), so filters cannot match
JSON bools; the adapter matches them on string shadows instead (``bools_native``
false, see :mod:`..naming`). Payload floats come back, and are compared, up to two
units in the last place off (a parser that is not correctly rounded): numbers are
compared, and floats read, on their order keys (``numbers_exact`` false, see
:mod:`..numbers`). Every update is applied before ``update`` returns, so reads are
strong.

One process opens a shard at a time (its WAL is locked): every connection of the
process to the same folder shares one open shard, kept open until the last of them
closes, and writes and folder changes are serialised by one process-wide lock.
"""

from __future__ import annotations

import itertools
import logging
import shutil
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from vectorport.adapterkit import UpkeepSchedule, say_deferred, time_short
from vectorport.adapters.qdrant import naming, numbers
from vectorport.adapters.qdrant.codec import Hit, Point, QueryValue, VectorValue, hit_of
from vectorport.adapters.qdrant.engines.tenants import Reader, Tenants, leading_namespace
from vectorport.adapters.qdrant.errors import TRANSLATOR, translated
from vectorport.adapters.qdrant.filters import QdrantFilter, SdkFilters
from vectorport.adapters.qdrant.options import (
    ACORN_MAX_SELECTIVITY,
    CollectionLayout,
    SearchOptions,
    asks_acorn,
)
from vectorport.core.errors import (
    BackendError,
    IndexExistsError,
    IndexNotFoundError,
    VectorportError,
)
from vectorport.core.types import DenseVector, SparseVector

SPEC_FILE = "vectorport.json"
NUMBER_KEYS_FILE = "vectorport.number-keys"
"""Present when every point of the shard keeps the order keys of its metadata numbers
(:data:`..naming.NUMBERS`). A shard without it was written before they existed and gets
them when it is first opened (:func:`_add_number_keys`); apart from the point layout of
the stored settings (:data:`..naming.LAYOUT_KEY`), which concerns vectors and ids."""
_MIGRATION_PAGE = 1_000
OPTIMIZE_EVERY = 10_000
"""Points written (or deleted) between two runs of the optimizers, by default."""
SECONDS_PER_POINT = 0.001
"""The least a run of the optimizers is taken to cost per point written since the last
run (the slowest rate timed on the shard in this process, if higher). Measured here
(2 cores, 384 dimensions): 0.23 ms a point for a shard's first run, then 0.67 to
1.0 ms as it grew to 80,000 points (each run builds the HNSW graph of the new points
into the segments). Not the last rate alone: a run below the indexing threshold takes
almost nothing, and would promise the same of the first run above it."""
INDEX_SECONDS_PER_POINT = 2e-5
"""The least a payload index build is taken to cost per point of the shard (it reads
every point's payload): a keyword index over 50,000 points × 384 took 0.33-0.72 s
here, 7-15 µs a point."""
_TIMED_POINTS = 10_000
"""Index builds over fewer points are not timed (see ``_build_indexes``)."""
SEGMENTS = 8
"""The segments Qdrant's optimizers keep a shard in. Qdrant's default (one per CPU, 2
here) merged every run's new points into the shard's one large segment and built its
HNSW graph again, so a run cost more the larger the shard and a load grew with the
square of its points: runs of 10,000 points × 384 took 0.9 s at 10,000 points and 3.8
s at 100,000, and the load of 100,000 took 26.5 s. With 8 the runs index the new points
in segments of their own, merged only as their number passes 8: 0.7-0.9 s each up to
100,000 points (10.8 s in all), 0.8-2.1 s up to 250,000; queries of the 100,000 (top
10) took 2.04 against 1.87 ms at the median, recall@10 1.000 against 0.987."""
SHARD_DIR = "shard"
_DEFAULT_M = 16
_DEFAULT_EF_CONSTRUCT = 100
_DEFAULT_FULL_SCAN_THRESHOLD = 10_000
"""Qdrant's defaults (kilobytes of vectors below which a segment is searched in full)."""


def to_edge(part: QdrantFilter) -> Any:
    """A qdrant-edge-py object of a REST filter document (filter or condition)."""
    if "key" in part:
        key = part["key"]
        if "range" in part:
            return qe.FieldCondition(key=key, range=qe.RangeFloat(**part["range"]))
        match = part["match"]
        if "any" in match:
            return qe.FieldCondition(key=key, match=qe.MatchAny(list(match["any"])))
        value = match["value"]
        assert not isinstance(value, bool), "the bindings turn bools into ints"
        return qe.FieldCondition(key=key, match=qe.MatchValue(value))
    if "is_empty" in part:
        return qe.IsEmptyCondition(part["is_empty"]["key"])
    return qe.Filter(
        must=[to_edge(p) for p in part["must"]] if "must" in part else None,
        should=[to_edge(p) for p in part["should"]] if "should" in part else None,
        must_not=[to_edge(p) for p in part["must_not"]] if "must_not" in part else None,
    )


_FILTERS = SdkFilters(to_edge)
"""The qdrant-edge-py filters of the memoised filter documents searches, scrolls and
counts are handed (see :class:`..filters.SdkFilters`)."""

ACORN = qe.AcornSearchParams(enable=True, max_selectivity=ACORN_MAX_SELECTIVITY)
"""ACORN for every filtered dense search (unless the query says ``acorn: False``).
Qdrant's graph has payload-aware links only for indexed fields (the namespace, the
numbers' order keys); a condition on any other metadata field strands the traversal
among points it filters out. ACORN steps over them to their neighbours. At its default
``max_selectivity`` (0.4) it did not engage for a string condition keeping 25% of the
points (the engine cannot estimate an unindexed field's selectivity), so it is always
asked for: on 20,000 clustered rows × 384, ``{"lang": "en"}`` read recall@10 0.55 at
``ef`` 10 without it, 1.00 with it, for about four times the time (13.4 against 3.5 ms
a query; a range on an indexed number: 15.5 against 14.9 ms, recall 1.00 both)."""


def _vector(value: VectorValue) -> Any:
    if isinstance(value, SparseVector):
        return qe.SparseVector(list(value.indices), list(value.values))
    return value


def _edge_point(point: Point) -> Any:
    """``point`` for qdrant-edge-py, which copies what it is given into Rust: the
    codec's own fresh dicts go as they are (a copy of each was ≈ 1 µs a point), only
    sparse vectors need the SDK's class."""
    payload = point.payload if type(point.payload) is dict else dict(point.payload)
    vectors: Any = point.vectors  # dense lists as the codec built them
    if type(vectors) is not dict or naming.SPARSE in vectors:
        vectors = {k: _vector(v) for k, v in vectors.items()}
    return qe.Point(id=point.uid, payload=payload, vector=vectors)


def _hit(point: Any) -> Hit:
    return hit_of(point, qe.SparseVector)


def _has_graph(shard: Any, name: str) -> bool:
    """Whether some of the shard's vectors are searched through an HNSW graph (none
    before the optimizers first ran, nor below the indexing threshold): without one,
    every search is already a full scan. ≈ 1 µs."""
    with translated("info", name):
        return int(shard.info().indexed_vectors_count) > 0


def _hnsw(m: int, layout: CollectionLayout) -> Any:
    return qe.HnswIndexConfig(
        m=m, ef_construct=layout.ef_construct or _DEFAULT_EF_CONSTRUCT,
        full_scan_threshold=layout.full_scan_threshold or _DEFAULT_FULL_SCAN_THRESHOLD,
    )


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _index_number_keys(shard: Any, fields: Iterable[str], indexed: set[str]) -> None:
    """An integer index (ranges) on each high part of an order key among the payload
    ``fields`` that ``indexed`` (the shard's indexed fields, kept up to date here)
    lacks: number conditions then read the index instead of every point's payload (a
    top-10 query with one range condition over 2,000 points: ≈ 0.18 ms against 2.5–8
    ms unindexed). Range structure only: the filters compare high parts by ranges
    alone (equality too, :mod:`..filters`), and the lookup structure beside it was ≈
    10% of an upsert's time in the engine (100 points of three numbers: 13.1 against
    14.8 ms, loaded machine). Shards indexed before keep both; ranges use theirs."""
    for key in {f for f in fields if naming.is_number_key(f)} - indexed:
        shard.update(qe.UpdateOperation.create_field_index(key, _RANGE_INDEX))
        indexed.add(key)


def _wanted_indexes(points: Sequence[Point]) -> dict[str, Any]:
    """The payload indexes the fields of ``points`` want, by field: an integer range
    index on each order key's high part (:func:`_index_number_keys`), and a keyword
    index on each metadata key holding a string or a list (of strings) and on each
    bool's string shadow.

    Without a keyword index a string condition reads every candidate point's whole
    payload, which holds the vector as written (:data:`..naming.VECTOR`): over 5,000
    points a top-10 query with ``{"lang": "en"}`` took 22.7 ms at 384 dimensions and
    46.9 ms at 1536, against 0.58 and 1.16 ms with the index (an unfiltered one: 0.8
    and 2.1-2.6 ms). Answers are the same: the index holds a field's string values, and
    a point whose value there is of another kind (a number, a bool) is still found by
    its payload, as ``$exists``, ``$ne`` and a number equality on the same field are
    (tested).

    This runs on every write: the batch's payload keys are gathered first (one C-level
    pass) and asked :func:`~..naming.is_number_key` once each, not once a point (100
    points of six metadata keys: 89 µs a write, against 175 µs)."""
    payloads = [point.payload for point in points]
    wanted: dict[str, Any] = {
        key: _RANGE_INDEX for key in dict.fromkeys(itertools.chain.from_iterable(payloads))
        if naming.is_number_key(key)}
    meta_key, bool_key = naming.meta_key, naming.bool_key
    for payload in payloads:
        meta = payload.get(naming.META)
        if meta:
            for key, value in meta.items():
                if type(value) is str or type(value) is list:
                    wanted[meta_key(key)] = _KEYWORD_INDEX
        flags = payload.get(naming.BOOLS)
        if flags:
            for key in flags:
                wanted[bool_key(key)] = _KEYWORD_INDEX
    return wanted


_RANGE_INDEX = qe.IntegerIndexParams(lookup=False, range=True)
_KEYWORD_INDEX = qe.KeywordIndexParams()


def _add_number_keys(shard: Any, indexed: set[str]) -> None:
    """Give every point of a shard written before order keys existed the keys of its
    metadata numbers (computed from the values Edge reads back, so that its filters and
    reads agree). Runs once, under the process lock, before the shard is shared: no
    other writer."""
    offset = None
    while True:
        points, offset = shard.scroll(qe.ScrollRequest(
            offset=offset, limit=_MIGRATION_PAGE, with_payload=True, with_vector=False))
        for point in points:
            keys = numbers.payload_keys((point.payload or {}).get(naming.META) or {})
            if keys:
                shard.update(qe.UpdateOperation.set_payload([point.id], keys))
                _index_number_keys(shard, keys, indexed)
        if offset is None:
            return


def _optimize_and_flush(shard: Any) -> None:
    """Run Qdrant's optimizers, then flush. An Edge shard flushes only when asked (no
    timer, unlike a server), and until a flush it keeps every segment an optimizer run
    replaced, on disk and mapped, and its whole write-ahead log: loading 50,000 points ×
    384 left 1,177 MB on disk and a resident set of 1,414 MB (RssFile 1,180 MB), growing
    with the square of the points loaded (each run leaves the merged segment it
    replaced); flushed after each run, 275 MB and 323 MB, for 0.07-0.13 s a flush."""
    shard.optimize()
    shard.flush()


def _load(folder: Path, name: str) -> Any:
    """The shard of the index in ``folder``; a ``BackendError`` saying so when another
    process holds it (its WAL is locked)."""
    try:
        return qe.EdgeShard.load(str(folder / SHARD_DIR))
    except Exception as exc:
        if "wouldblock" in str(exc).lower():
            raise BackendError(
                f"qdrant+edge: index {name!r} is open in another process "
                "(an Edge shard has a single owner)"
            ) from exc
        raise


def _claim(folder: Path, name: str) -> Any:
    """The shard of an index about to be dropped, or ``None`` when it cannot be read (a
    damaged shard is still removable); refused while another process holds it."""
    try:
        return _load(folder, name)
    except BackendError:
        raise
    except Exception:
        return None


log = logging.getLogger("vectorport.qdrant")
_SERIALS = itertools.count(1)
_PROCESS_LOCK = threading.RLock()
"""Guards :data:`_OPEN`, folder changes and writes of every Edge engine in the process."""


@dataclass
class _Open:
    """One open shard, shared by every engine of the process on the same folder."""

    shard: Any
    holders: set[object] = field(default_factory=set)
    optimizers: UpkeepSchedule = field(
        default_factory=lambda: UpkeepSchedule(SECONDS_PER_POINT))
    """Points written since the optimizers last ran, and what a run costs a point."""
    tenants: Tenants = field(default_factory=lambda: Tenants(_PROCESS_LOCK))
    """The namespaces of the shard, while it is open here (its single owner)."""
    indexed: set[str] = field(default_factory=set)
    """The payload fields with an index (read when the shard is opened, grown as
    writes bring fields that want one, :func:`_wanted_indexes`)."""
    pending: dict[str, Any] = field(default_factory=dict)
    """Indexes wanted and not built yet: a write's deadline left no time for them."""
    index_seconds_per_point: float = INDEX_SECONDS_PER_POINT
    """The slowest index build timed here, per point of the shard (at least
    :data:`INDEX_SECONDS_PER_POINT`)."""
    indexes_deferred: bool = False
    """Builds were left for later (logged once until they ran)."""
    serial: int = field(default_factory=lambda: next(_SERIALS))
    """Distinct for every opening of a shard in the process (see ``incarnation``)."""


_OPEN: dict[str, _Open] = {}


class EdgeEngine:
    """Qdrant Edge shards in a folder.

    An Edge shard has one owner (its WAL is locked), so every connection of this process
    to the same folder shares one open shard (and sees every write at once), while a
    second process gets a clear error.
    """

    name = "Qdrant Edge"
    bools_native = False
    numbers_exact = False
    applies_hints = True
    uses_acorn = True
    max_request_bytes: int | None = None

    def __init__(self, root: Path, *, optimize_every: int = OPTIMIZE_EVERY) -> None:
        self._root = root
        self._root.mkdir(parents=True, exist_ok=True)
        self._token = object()
        self._optimize_every = optimize_every
        self._keys: dict[str, str] = {}
        self._closed = False

    def _check_open(self) -> None:
        """A closed engine opens no shard again: one reopened after :meth:`close` would
        stay open (and locked against every other process) until this process ends, since
        nothing would close it a second time."""
        if self._closed:
            raise BackendError("qdrant+edge: this store is closed")

    def _folder(self, name: str) -> Path:
        return self._root / name

    def _key(self, name: str) -> str:
        # resolved once per name: resolving the path took four lstat calls a query
        key = self._keys.get(name)
        if key is None:
            key = self._keys[name] = str(self._folder(name).resolve())
        return key

    def _shard(self, name: str) -> Any:
        return self._entry(name).shard

    def _entry(self, name: str) -> _Open:
        entry = _OPEN.get(self._key(name))
        if entry is not None and self._token in entry.holders:
            return entry
        with _PROCESS_LOCK:
            self._check_open()
            if not (self._folder(name) / SPEC_FILE).is_file():
                raise IndexNotFoundError(name)
            key = self._key(name)
            entry = _OPEN.get(key)
            if entry is None:
                try:
                    shard = _load(self._folder(name), name)
                except BackendError:
                    raise
                except Exception:
                    with translated("load", name):
                        raise
                with translated("load", name):
                    indexed = set(shard.info().payload_schema)
                    keyed = self._folder(name) / NUMBER_KEYS_FILE
                    if not keyed.is_file():
                        _add_number_keys(shard, indexed)
                        _write_atomically(keyed, "")
                entry = _OPEN[key] = _Open(shard, indexed=indexed)
            entry.holders.add(self._token)
            return entry

    @contextmanager
    def _writing(self, operation: str, name: str, points: int) -> Iterator[Any]:
        shard = self._shard(name)
        with _PROCESS_LOCK, translated(operation, name):
            yield shard
            self._after_write(name, points)

    def _after_write(self, name: str, points: int) -> None:
        """Run Qdrant's optimizers once enough points were written since the last run,
        if they fit in what is left of the call's deadline.

        Inside a server they run in the background; an Edge shard runs them only when
        asked, and until then new points sit in unindexed segments (searched in full:
        exact, slower as they grow) and deleted ones are never vacuumed. A run is one
        engine call that cannot be cut short and holds the interpreter (no other thread
        of the process runs meanwhile), seconds on large shards, so the write that
        crosses the threshold runs it only when its estimate (see
        :data:`SECONDS_PER_POINT`) fits in the time left; otherwise the call returns in
        time and a later write with time enough, or :meth:`optimize`, runs it.
        """
        entry = _OPEN.get(self._key(name))
        if entry is None or not entry.optimizers.count(points, self._optimize_every):
            return
        schedule = entry.optimizers
        left = schedule.run_or_defer(lambda: _optimize_and_flush(entry.shard))
        if left is not None:
            say_deferred(log, schedule, left, upkeep="qdrant+edge: Qdrant's optimizers run",
                         index=name, units="points", waits_for="write",
                         meanwhile="new points are searched in full")

    def optimize(self, name: str) -> None:
        """Run Qdrant's optimizers on the shard of ``name`` now, whatever the deadline:
        index the points written since they last ran and vacuum deleted ones; first
        build the payload indexes a write left pending. Engine calls that hold the
        interpreter until done (seconds on large shards)."""
        with _PROCESS_LOCK, translated("optimize", name):
            entry = self._entry(name)
            self._build_indexes(entry)
            _optimize_and_flush(entry.shard)
            entry.optimizers.ran(None)  # whatever was written: no rate to learn

    def _index_fields(self, name: str, entry: _Open, wanted: dict[str, Any]) -> None:
        """Build the indexes ``wanted`` (and any left pending) that the shard lacks, if
        they fit in what is left of the call's deadline. A build is one engine call that
        cannot be cut short and reads every point of the shard (0.33-0.72 s for a
        keyword index over 50,000 points), so it is estimated first, at the slowest rate
        timed on the shard or :data:`INDEX_SECONDS_PER_POINT`, whichever is higher, per
        point; when 1.25 times that does not fit, the write returns in time, says so
        once, and a later write with time enough, or :meth:`optimize`, builds them.
        Until then conditions on those fields read the payloads: slower, same answers."""
        for key, params in wanted.items():
            if key not in entry.indexed:
                entry.pending[key] = params
        if not entry.pending:
            return
        points = int(entry.shard.info().points_count)
        estimate = entry.index_seconds_per_point * points * len(entry.pending)
        left = time_short(estimate)
        if left is not None:
            if not entry.indexes_deferred:
                entry.indexes_deferred = True
                log.warning(
                    "qdrant+edge: the payload indexes of %s for index %r wait for a "
                    "write with more time left (an estimated %.1f s over %d points, "
                    "%.1f s left of the call's deadline); until then conditions on "
                    "them read every point's payload. Call store.adapter.optimize(%r) "
                    "or allow writes more time (?timeout=, vectorport.deadline)",
                    ", ".join(sorted(entry.pending)), name, estimate, points, left, name)
            return
        self._build_indexes(entry, points)

    @staticmethod
    def _build_indexes(entry: _Open, points: int | None = None) -> None:
        """Build every pending index of the shard (of ``points`` points, asked when not
        given) now, timing each on a shard large enough for the time to be the points'
        (a build's fixed cost, a few ms, over the first write's handful of points would
        promise minutes for the next)."""
        if not entry.pending:
            return
        if points is None:
            points = int(entry.shard.info().points_count)
        for key, params in list(entry.pending.items()):
            started = time.monotonic()
            entry.shard.update(qe.UpdateOperation.create_field_index(key, params))
            if points >= _TIMED_POINTS:
                entry.index_seconds_per_point = max(entry.index_seconds_per_point,
                                                    (time.monotonic() - started) / points)
            entry.indexed.add(key)
            del entry.pending[key]
        entry.indexes_deferred = False

    def _namespaces(self, name: str, shard: Any) -> Reader:
        def read(limit: int) -> list[str]:
            request = qe.FacetRequest(key=naming.NAMESPACE, limit=limit, exact=True)
            with translated("facet", name):
                return [str(h.value) for h in shard.facet(request).hits]
        return read

    def _adding(self, name: str, shard: Any, points: Sequence[Point]) -> None:
        """Record the namespaces of ``points`` before they are written, and index the
        fields they bring that want an index (under the writers' lock)."""
        entry = self._entry(name)
        entry.tenants.writing(
            name, {str(p.payload[naming.NAMESPACE]) for p in points}, self._namespaces(name, shard))
        self._index_fields(name, entry, _wanted_indexes(points))

    # -- collections ----------------------------------------------------------------

    def create(self, name: str, layout: CollectionLayout, spec_json: str) -> None:
        dense = qe.EdgeVectorParams(
            size=layout.dimension, distance=getattr(qe.Distance, layout.distance),
            on_disk=layout.on_disk or None,
            hnsw_config=None if layout.hnsw_m is None and not layout.ef_construct
            and not layout.full_scan_threshold
            else _hnsw(_DEFAULT_M if layout.hnsw_m is None else layout.hnsw_m, layout),
        )
        vectors = {naming.DENSE: dense}
        if layout.keep_raw:
            vectors[naming.RAW] = qe.EdgeVectorParams(
                size=layout.dimension, distance=qe.Distance.Dot, on_disk=True,
                hnsw_config=_hnsw(0, layout))
        sparse = {naming.SPARSE: qe.EdgeSparseVectorParams()} if layout.sparse else None
        folder = self._folder(name)
        with _PROCESS_LOCK, translated("create"):
            self._check_open()
            if (folder / SPEC_FILE).is_file():
                raise IndexExistsError(name)
            if folder.exists():
                shutil.rmtree(folder)  # a half-created or half-deleted index
            folder.mkdir(parents=True)
            try:
                optimizers = qe.EdgeOptimizersConfig(
                    indexing_threshold=layout.indexing_threshold,
                    default_segment_number=SEGMENTS)
                shard = qe.EdgeShard.create(
                    str(folder / SHARD_DIR),
                    qe.EdgeConfig(vectors=vectors, sparse_vectors=sparse, optimizers=optimizers))
                shard.update(qe.UpdateOperation.create_field_index(
                    naming.NAMESPACE, qe.KeywordIndexParams(is_tenant=True)))
                _write_atomically(folder / NUMBER_KEYS_FILE, "")
                _write_atomically(folder / SPEC_FILE, spec_json)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            entry = _OPEN[self._key(name)] = _Open(shard, {self._token})
            entry.tenants.created(name)

    def drop(self, name: str) -> None:
        folder = self._folder(name)
        with _PROCESS_LOCK, translated("drop", name):
            self._check_open()
            if not (folder / SPEC_FILE).is_file():
                raise IndexNotFoundError(name)
            entry = _OPEN.get(self._key(name))
            # Claim the shard first: open in another process, its WAL lock refuses the
            # load and nothing is removed (removing the folder under its owner lost
            # every write of that owner). A shard that cannot be read is removed anyway.
            shard = entry.shard if entry is not None else _claim(folder, name)
            (folder / SPEC_FILE).unlink()
            _OPEN.pop(self._key(name), None)
            if shard is not None:
                shard.close()
            shutil.rmtree(folder, ignore_errors=True)

    def incarnation(self, name: str) -> int | None:
        # a shard is dropped or created again only by its one owner, this process, and
        # every opening of it is a new _Open
        entry = _OPEN.get(self._key(name))
        return None if entry is None else entry.serial

    def indexed_vectors(self, name: str) -> int:
        """How many vectors Qdrant's HNSW indexes hold (0 before the optimizers ran)."""
        with translated("info", name):
            return int(self._shard(name).info().indexed_vectors_count)

    def names(self) -> list[str]:
        self._check_open()
        if not self._root.is_dir():
            return []
        return sorted(p.name for p in self._root.iterdir() if (p / SPEC_FILE).is_file())

    def spec_json(self, name: str) -> str | None:
        self._check_open()
        path = self._folder(name) / SPEC_FILE
        try:
            return path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return None

    # -- points -----------------------------------------------------------------------

    def upsert(self, name: str, points: Sequence[Point]) -> None:
        edge_points = [_edge_point(p) for p in points]
        with self._writing("upsert", name, len(edge_points)) as shard:
            self._adding(name, shard, points)
            shard.update(qe.UpdateOperation.upsert_points(edge_points))

    def replace_if(self, name: str, point: Point, condition: QdrantFilter) -> None:
        edge_point = _edge_point(point)
        with self._writing("upsert", name, 1) as shard:
            self._adding(name, shard, [point])
            shard.update(qe.UpdateOperation.upsert_points(
                [edge_point], condition=to_edge(condition), update_mode=qe.UpdateMode.UpdateOnly))

    def delete_points(self, name: str, uids: Sequence[str]) -> None:
        with self._writing("delete", name, len(uids)) as shard:
            shard.update(qe.UpdateOperation.delete_points(list(uids)))

    def delete_by_filter(self, name: str, flt: QdrantFilter) -> None:
        with self._writing("delete", name, self._optimize_every // 10) as shard:
            # counted as a tenth of the threshold: how many it removed is not reported
            shard.update(qe.UpdateOperation.delete_points_by_filter(to_edge(flt)))

    def search(self, name: str, using: str, query: QueryValue, flt: QdrantFilter,
               limit: int, vectors: Sequence[str], options: SearchOptions,
               strong: bool) -> list[Hit]:
        """Searches leave the namespace condition out while the shard holds that
        namespace alone (:mod:`.tenants`). They read without the writers' lock, so a
        write into a new namespace may land during the search: any point of another
        namespace coming back sends the search again, with the condition. (Without
        one, the points returned are the best of a superset of the namespace, all in
        it: the namespace's best.)"""
        entry = self._entry(name)
        namespace = leading_namespace(flt)
        sent = entry.tenants.unscoped(name, flt, self._namespaces(name, entry.shard))
        hits = self._search(entry.shard, name, using, query, sent, limit, vectors, options)
        if sent is not flt and any(h.payload.get(naming.NAMESPACE) != namespace for h in hits):
            hits = self._search(entry.shard, name, using, query, flt, limit, vectors, options)
        return hits

    def search_payloads(self, name: str, query: DenseVector, flt: QdrantFilter, limit: int,
                        options: SearchOptions, strong: bool) -> list[dict[str, Any]]:
        """The payloads of a dense search's points, no vectors, as :meth:`search` (the
        same namespace condition left out, and the same search again should another
        namespace show), without building a :class:`~..codec.Hit` a point."""
        entry = self._entry(name)
        sent = entry.tenants.unscoped(name, flt, self._namespaces(name, entry.shard))
        payloads = [p.payload or {} for p in self._points(
            entry.shard, name, naming.DENSE, query, sent, limit, (), options)]
        if sent is not flt:
            namespace = leading_namespace(flt)
            if any(p.get(naming.NAMESPACE) != namespace for p in payloads):
                payloads = [p.payload or {} for p in self._points(
                    entry.shard, name, naming.DENSE, query, flt, limit, (), options)]
        return payloads

    def _search(self, shard: Any, name: str, using: str, query: QueryValue,
                flt: QdrantFilter, limit: int, vectors: Sequence[str],
                options: SearchOptions) -> list[Hit]:
        return [_hit(p) for p in self._points(shard, name, using, query, flt, limit, vectors,
                                              options)]

    def _points(self, shard: Any, name: str, using: str, query: QueryValue,
                flt: QdrantFilter, limit: int, vectors: Sequence[str],
                options: SearchOptions) -> list[Any]:
        """The engine's best ``limit`` points. A filtered dense search goes through the
        graph with ACORN (:data:`ACORN`) unless the query turned it off; should it come
        back with fewer points than asked while the shard has an HNSW graph, the
        traversal may have stopped short of points that match (without ACORN, on
        20,000 clustered rows, ``{"lang": "en"}`` matching 5,000: one search returned 1
        point at ``ef`` 10 and at 40), so it is sent again as an exact search, which
        scores every matching point: an answer is never cut short silently. A sparse
        search reads the inverted index and is complete."""
        dense = not isinstance(query, SparseVector)
        acorn = ACORN if asks_acorn(options, engine_uses_acorn=self.uses_acorn, dense=dense,
                                    filtered=bool(flt)) else None
        params = None
        if options.ef is not None or options.exact or acorn is not None:
            params = qe.SearchParams(hnsw_ef=options.ef, exact=options.exact, acorn=acorn)
        nearest = qe.Query.Nearest(_vector(
            query if isinstance(query, SparseVector) else query.tolist()), using=using)
        edge_filter = _FILTERS(flt) if flt else None

        def search(search_params: Any) -> list[Any]:
            request = qe.QueryRequest(limit=limit, query=nearest, filter=edge_filter,
                                      with_payload=True, with_vector=list(vectors) or False,
                                      params=search_params)
            try:  # translated() inline: the context manager costs ≈ 3 µs, 2% of a query
                found: list[Any] = shard.query(request)
            except VectorportError:
                raise
            except Exception as exc:
                raise TRANSLATOR.error(exc, "query", index=name) from exc
            return found

        points = search(params)
        if (dense and flt and not options.exact and len(points) < limit
                and _has_graph(shard, name)):
            points = search(qe.SearchParams(hnsw_ef=options.ef, exact=True))
        return points

    def scroll(self, name: str, flt: QdrantFilter, limit: int, offset: str | None,
               vectors: Sequence[str], strong: bool = True) -> tuple[list[Hit], str | None]:
        shard = self._shard(name)
        request = qe.ScrollRequest(offset=offset, limit=limit, filter=_FILTERS(flt),
                                   with_payload=True, with_vector=list(vectors) or False)
        with translated("scroll", name):
            points, next_offset = shard.scroll(request)
        return [_hit(p) for p in points], None if next_offset is None else str(next_offset)

    def retrieve(self, name: str, uids: Sequence[str], vectors: Sequence[str]) -> list[Hit]:
        shard = self._shard(name)
        with translated("retrieve", name):
            points = shard.retrieve(list(uids), with_payload=True,
                                    with_vector=list(vectors) or False)
        return [_hit(p) for p in points]

    def count(self, name: str, flt: QdrantFilter) -> int:
        shard = self._shard(name)
        with translated("count", name):
            return int(shard.count(qe.CountRequest(filter=_FILTERS(flt), exact=True)))

    def facet(self, name: str, key: str, flt: QdrantFilter | None,
              limit: int) -> list[tuple[str, int]]:
        shard = self._shard(name)
        request = qe.FacetRequest(key=key, limit=limit, exact=True,
                                  filter=None if flt is None else to_edge(flt))
        with translated("facet", name):
            response = shard.facet(request)
        return [(str(h.value), int(h.count)) for h in response.hits]

    def close(self) -> None:
        with _PROCESS_LOCK:
            self._closed = True
            for key, entry in list(_OPEN.items()):
                entry.holders.discard(self._token)
                if not entry.holders:
                    del _OPEN[key]
                    with translated("close"):
                        entry.shard.close()


__all__ = ["ACORN", "EdgeEngine", "to_edge"]

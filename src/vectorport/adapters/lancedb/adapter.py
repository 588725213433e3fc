"""The ``lancedb`` adapter: LanceDB's own engine, embedded or LanceDB Cloud.

URLs: ``lancedb:///path/to/folder`` opens (creating) an embedded database in that
folder; ``db://database?api_key_env=VAR`` (optionally ``&region=…``,
``&host_override=…``) reaches LanceDB Cloud or Enterprise. A ``db://`` URL without a
key is a ``ConfigError`` before any network I/O; the key is held as a masked
:class:`Secret` and scrubbed from every error message.

**Indexes** are tables of the same name (index names are valid table names as they
are); the layout of a row is described in :mod:`.codec`, and the IndexSpec is kept in
the table schema's metadata.

**Namespaces** are a column (``ns``) of the index's one table, not a table each: an
index then has one ANN index and one schema, a namespace costs nothing to create, and
``list_namespaces`` is one scan of a single column. Every count, fetch, delete and
listing carries ``ns = '<namespace>'`` in its ``where``, and upserts merge on
``pk = namespace/id``, so the same id can live in several namespaces. Exact searches
carry it too once the table has shown a row of another namespace; until then they go
without it and check the ``ns`` of every row returned (see :meth:`LanceDBAdapter.query`).

**Table handles** are opened once per adapter and kept: with
``read_consistency_interval=0`` a handle follows its table's latest version, also
after another connection dropped and re-created it. Searches go through a second,
async, connection (:mod:`.search`: the sync query builder reads the schema three
times per search).

**Upserts** are one ``merge_insert`` on ``pk`` per batch (when matched: replace every
column, so re-upserting replaces metadata instead of merging it), handed to the engine
without the SDK's schema read and input sanitiser (:mod:`.writes`). Writes of one
adapter are serialised by a lock: concurrent Lance commits to one table would
otherwise conflict; a conflict with another process surfaces as a
``TransientBackendError``, which the facade retries.

**Consistency**: the connection is opened with ``read_consistency_interval=0``, so
every read checks for the latest table version: a read after a write returned sees it,
from any process.

**Scores** are computed by the adapter in float64 from the vectors the search returns,
ties at the cut resolved by widening the search (:mod:`.ranking`). ``index_type``
``auto``/``flat`` search exactly (``bypass_vector_index``); ``ivf``/``hnsw`` build a
LanceDB ANN index (IVF_FLAT / IVF_HNSW_SQ by default) once the table holds
``build_threshold`` rows, and are then approximate; rows written after the build are
searched exhaustively by LanceDB and merged in, until LanceDB's optimize folds them in:
the write that brings them to ``optimize_every`` runs it (``_fold_in_when_due``).
``probes`` → ``nprobes``, ``ef`` → ``ef``, ``refine_factor`` from the ``lancedb``
options section. A load that
:meth:`LanceDBAdapter.defer_upkeep` announced (``copy_index`` and ``import_index`` into
an index they created) trains the index at its end, over every row.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vectorport.adapterkit import (
    UpkeepSchedule,
    batches,
    exact_scores,
    read_only_float32,
    say_deferred,
    unique,
)
from vectorport.adapterkit.handles import Handles
from vectorport.adapters.lancedb import codec, explain
from vectorport.adapters.lancedb.capabilities import LANCEDB_CAPABILITIES
from vectorport.adapters.lancedb.errors import remote_client_config, translated
from vectorport.adapters.lancedb.escaping import quote_string
from vectorport.adapters.lancedb.explain import DISTANCE_TYPES, prepare_query
from vectorport.adapters.lancedb.filters import (
    compile_filter,
    namespace_expression,
    pk_in,
    scoped,
)
from vectorport.adapters.lancedb.options import (
    BACKEND,
    IndexOptions,
    check_index_params,
    index_options,
)
from vectorport.adapters.lancedb.ranking import exact_top_k
from vectorport.adapters.lancedb.search import AsyncTables, nearest
from vectorport.adapters.lancedb.writes import (
    LatestTables,
    merge_upsert,
    write_connection_options,
)
from vectorport.core import validation
from vectorport.core.capabilities import Capabilities
from vectorport.core.config import ConnectionURL, Secret
from vectorport.core.errors import (
    ConfigError,
    IndexExistsError,
    IndexNotFoundError,
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
)

_EMBEDDED_OPTIONS: frozenset[str] = frozenset()
_CLOUD_OPTIONS = frozenset({"api_key", "api_key_env", "region", "host_override"})
_FETCH_CHUNK = 1_000
_RECORD_COLUMNS = [codec.ID, codec.VECTOR, codec.META, codec.DOCUMENT]
"""The columns a whole record is made of (no pk, namespace or tokens)."""


def ann_config(spec: IndexSpec, options: IndexOptions, rows: int) -> Any:
    """The LanceDB index config for an ``ivf``/``hnsw`` IndexSpec: IVF_FLAT (exact
    distances within the probed lists) and IVF_HNSW_SQ (one list) unless the
    ``ann_index`` option names another; ``lists``, ``m``, ``ef_construction`` and
    ``num_sub_vectors`` are passed on."""
    from lancedb import index as lance_index

    kind = options.ann_index or ("IVF_HNSW_SQ" if spec.index_type == "hnsw" else "IVF_FLAT")
    params: dict[str, Any] = {"distance_type": DISTANCE_TYPES[spec.metric]}
    if kind.startswith("IVF_HNSW"):
        params["num_partitions"] = spec.index_params.get("lists", 1)
        params["m"] = spec.index_params.get("m", 20)
        params["ef_construction"] = spec.index_params.get("ef_construction", 300)
    else:
        params["num_partitions"] = spec.index_params.get("lists", max(1, int(math.sqrt(rows))))
    if kind.endswith("_PQ") and options.num_sub_vectors is not None:
        params["num_sub_vectors"] = options.num_sub_vectors
    classes = {"IVF_FLAT": "IvfFlat", "IVF_SQ": "IvfSq", "IVF_PQ": "IvfPq", "IVF_RQ": "IvfRq",
               "IVF_HNSW_SQ": "HnswSq", "IVF_HNSW_PQ": "HnswPq", "IVF_HNSW_FLAT": "HnswFlat"}
    return getattr(lance_index, classes[kind])(**params)


def _options_of(index: IndexSpec) -> IndexOptions:
    """The ``lancedb`` section of ``index``'s options, checked (:func:`.options.index_options`)."""
    return index_options(index.backend_options.get(BACKEND, {}), index.index_type)


log = logging.getLogger("vectorport.lancedb")

SECONDS_PER_ROW = 5e-5
"""The least a run of LanceDB's ``optimize`` on an ANN index is taken to cost per row
written since the last run (the slowest rate timed on the index here, if higher):
0.10-0.12 s for 5,000 rows into an IVF index of 100,000 × 384, 20-24 µs a row."""


class LanceDBAdapter:
    """LanceDB through its Python SDK; see the module docstring for the mapping."""

    backend: ClassVar[str] = BACKEND

    def __init__(self, uri: str, *, api_key: Secret | None = None, region: str | None = None,
                 host_override: str | None = None, shown_as: str = "",
                 timeout: float | None = None) -> None:
        import lancedb

        self._shown_as = shown_as or uri
        self._secrets = (api_key.reveal(),) if api_key is not None else ()
        kwargs: dict[str, Any] = {"read_consistency_interval": timedelta(0)}
        if api_key is not None:
            kwargs["api_key"] = api_key.reveal()
        if region:
            kwargs["region"] = region
        if host_override:
            kwargs["host_override"] = host_override
        if uri.startswith("db://"):
            kwargs["client_config"] = remote_client_config(timeout)
        with self._translated("connect"):
            self._db = lancedb.connect(uri, **kwargs)
        # searches go through the async API (one round trip, no schema reads: .search)
        self._search_tables = AsyncTables(lambda: lancedb.connect_async(uri, **kwargs))
        # embedded merges open their table afresh with one version check (.writes)
        self._latest_tables = LatestTables(
            lambda: lancedb.connect_async(uri, **write_connection_options(kwargs)))
        self._tables: dict[str, Any] = {}
        self._schemas: dict[str, tuple[IndexSpec, pa.Schema]] = {}
        """Each index's Arrow schema, with the spec it was made of (a schema is ≈ 10 µs)."""
        self._mixed: set[str] = set()  # tables seen holding several namespaces
        self._deferred: set[str] = set()
        """Indexes whose ANN index is trained by :meth:`optimize`, not by the write that
        passes ``build_threshold`` (:meth:`defer_upkeep`)."""
        self._upkeep: dict[str, UpkeepSchedule] = {}
        """Rows written into each trained ANN index since LanceDB's optimize last ran."""
        # which Index handles still reach the index they were opened on (the kit's
        # Handles). An index dropped and re-created by another process is noticed when
        # it differs from what a handle holds: at once on deletes (which read the stored
        # spec first, so a delete never removes another index's records), and on the
        # first failing search or upsert or a fetched vector of another dimension;
        # counts and listings see it once the index is described again
        self._handles = Handles(self._current_spec)
        self._write_lock = threading.Lock()

    @classmethod
    def from_url(cls, url: ConnectionURL) -> LanceDBAdapter:
        if url.scheme == "db":
            url.unknown_options(_CLOUD_OPTIONS)
            if not url.host:
                raise ConfigError("LanceDB Cloud URLs name a database: db://my-database")
            key = url.credential("api_key", default_env="LANCEDB_API_KEY")
            if key is None:
                raise ConfigError(
                    "db:// (LanceDB Cloud/Enterprise) needs an API key: add "
                    "?api_key_env=VAR naming an environment variable that holds it"
                )
            return cls(f"db://{url.host}", api_key=key, region=url.option("region"),
                       host_override=url.option("host_override"), shown_as=url.redacted(),
                       timeout=url.timeout())
        url.unknown_options(_EMBEDDED_OPTIONS)
        if url.host or url.path in ("", "/"):
            raise ConfigError("lancedb URLs name a folder: lancedb:///path/to/folder")
        path = Path(url.path)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create the LanceDB folder {url.path!r}: {exc}") from exc
        return cls(str(path), shown_as=url.redacted())

    def __repr__(self) -> str:
        return f"LanceDBAdapter({self._shown_as!r})"

    @property
    def capabilities(self) -> Capabilities:
        return LANCEDB_CAPABILITIES

    # -- plumbing -----------------------------------------------------------------

    def _translated(self, operation: str, index: str | None = None) -> Any:
        return translated(operation, index, self._secrets)

    def _table(self, name: str) -> Any:
        table = self._tables.get(name)
        if table is None:
            with self._translated("open_table", name):
                table = self._db.open_table(name)
            self._tables[name] = table
        return table

    def _stored_spec(self, name: str) -> IndexSpec:
        self._tables.pop(name, None)  # re-open: another process may have replaced it
        self._search_tables.forget(name)
        with self._translated("open_table", name):
            spec = codec.spec_from_schema(self._table(name).schema)
        if spec is None:
            raise IndexNotFoundError(name)  # a table vectorport did not create
        self._handles.stored(name, spec)
        return spec

    def _current_spec(self, name: str) -> IndexSpec:
        """The spec stored in the table the kept handle reaches (its latest version,
        also of a table re-created elsewhere): one schema read."""
        with self._translated("open_table", name):
            spec = codec.spec_from_schema(self._table(name).schema)
        if spec is None:
            raise IndexNotFoundError(name)
        return spec

    def _rows(self, table: Any, where: str, columns: list[str], limit: int | None,
              order_by_id: bool = False) -> pa.Table:
        from lancedb.query import ColumnOrdering

        query = table.search().where(where).select(columns).limit(limit)
        if order_by_id:
            query = query.order_by([ColumnOrdering(column_name=codec.ID)])
        return query.to_arrow()

    # -- lifecycle ----------------------------------------------------------------

    def create_index(self, spec: IndexSpec) -> None:
        _options_of(spec)  # refused before anything is created
        check_index_params(spec)
        schema = codec.schema(spec)
        with self._translated("create_table"):
            if self._exists(spec.name):
                raise IndexExistsError(spec.name)
            try:
                self._tables[spec.name] = self._db.create_table(spec.name, schema=schema)
            except ValueError as exc:
                if "already exists" in str(exc):
                    raise IndexExistsError(spec.name) from exc
                raise
        self._handles.created(spec)

    def _exists(self, name: str) -> bool:
        return name in self._table_names()

    def _table_names(self) -> list[str]:
        names: list[str] = []
        token: str | None = None
        while True:
            page = self._db.list_tables(page_token=token)
            names.extend(page.tables)
            token = page.page_token
            if not token:
                return names

    def describe_index(self, name: str) -> IndexInfo:
        spec = self._stored_spec(name)
        with self._translated("describe", name):
            column = self._rows(self._table(name), "true", [codec.NAMESPACE], None)
        counts = {str(row["values"]): int(row["counts"])
                  for row in pc.value_counts(column[codec.NAMESPACE]).to_pylist()}
        return IndexInfo(spec=spec, count=sum(counts.values()), namespaces=counts)

    def list_indexes(self) -> list[str]:
        with self._translated("list_tables"):
            names = self._table_names()
        out = []
        for name in names:
            try:
                self._stored_spec(name)
            except (IndexNotFoundError, ConfigError):
                continue
            out.append(name)
        return out

    def delete_index(self, name: str) -> None:
        self._stored_spec(name)
        with self._translated("drop_table", name):
            self._db.drop_table(name)
        self._handles.deleted(name)
        self._tables.pop(name, None)
        self._search_tables.forget(name)
        self._mixed.discard(name)
        self._deferred.discard(name)
        self._upkeep.pop(name, None)

    # -- data ---------------------------------------------------------------------

    def _arrow(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> pa.Table:
        """One batch as an Arrow table of the index's schema (:func:`.codec.record_batch`)."""
        cached = self._schemas.get(index.name)
        if cached is None or (cached[0] is not index and cached[0] != index):
            cached = self._schemas[index.name] = (index, codec.schema(index))
        return codec.record_batch(cached[1], index.dimension, namespace, records)

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        if not records:
            return
        self._handles.check(index)
        data = self._arrow(index, namespace, records)
        table = self._table(index.name)
        with (self._handles.replaced_on_failure(index), self._write_lock,
              self._translated("merge_insert", index.name)):
            merge_upsert(table, data, self._latest_tables)
        if index.index_type not in ("ivf", "hnsw") or index.name in self._deferred:
            return
        options = _options_of(index)  # read once for both steps of the write
        if self._maybe_build_ann(index, table, options):  # rows written after it: outside
            self._fold_in_when_due(index, table, options, len(records))

    def _maybe_build_ann(self, index: IndexSpec, table: Any, options: IndexOptions) -> bool:
        """Train the ANN index once there are rows enough (k-means and PQ need data);
        whether it was trained before this call (rows written since are outside it)."""
        with self._write_lock, self._translated("create_index", index.name):
            if any(codec.VECTOR in i.columns for i in table.list_indices()):
                return True
            rows = table.count_rows()
            if rows < options.build_threshold:
                return False
            config = ann_config(index, options, rows)
            table.create_index(codec.VECTOR, config=config)
            self._upkeep.pop(index.name, None)  # every row is in it: count afresh
            return False

    def _fold_in_when_due(self, index: IndexSpec, table: Any, options: IndexOptions,
                          rows: int) -> None:
        """Run LanceDB's ``optimize`` once ``optimize_every`` rows were written since
        the ANN index was trained or last optimized, when it fits in what is left of the
        write's deadline (the kit's :class:`UpkeepSchedule`). LanceDB leaves rows
        written after the training outside the index and searches them in full: 45,000
        such rows beside an IVF index of 5,000 (50,000 × 384) made a top-10 query take
        74.7 ms, 15.9 ms once optimized. A run folds them in and compacts the small
        fragments the writes left: 0.10-0.12 s for 5,000 rows written in 50 upserts
        into an IVF index of 100,000 rows."""
        def fold_in() -> None:
            with self._translated("optimize", index.name):
                table.optimize()

        # under the writers' lock: concurrent writes count every row, and one runs it
        with self._write_lock:
            schedule = self._upkeep.setdefault(index.name, UpkeepSchedule(SECONDS_PER_ROW))
            if not schedule.count(rows, options.optimize_every):
                return
            left = schedule.run_or_defer(fold_in)
        if left is None:
            return
        say_deferred(log, schedule, left, upkeep="lancedb: folding new rows into the ANN "
                     "index", index=index.name, units="rows", waits_for="write",
                     meanwhile="searches read them in full")

    def _columns(self, request_include: Any) -> list[str]:
        columns = [codec.ID, codec.VECTOR]
        if request_include.metadata:
            columns.append(codec.META)
        if request_include.documents:
            columns.append(codec.DOCUMENT)
        return columns

    def query(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        assert request.vector is not None  # no sparse: the facade refuses sparse queries
        self._handles.check(index)
        prepared = prepare_query(index, request, self._columns(request.include))  # as explain
        vector = np.asarray(request.vector, dtype=np.float32)
        batches: dict[int, pa.Table] = {}
        # The namespace condition costs a fifth of a small exact search. While a table
        # has shown no row of another namespace, search without it and check the rows:
        # if all the best ``depth`` rows are in the namespace, they are also the best
        # ``depth`` of the namespace, the same answer; if not, search again with it.
        optimistic = prepared.exact and index.name not in self._mixed
        unscoped = (compile_filter(request.filter) if request.filter is not None else None)

        def run(depth: int, where: str | None, columns: list[str]) -> pa.Table:
            with self._handles.replaced_on_failure(index), self._translated("search", index.name):
                return nearest(self._search_tables.table(index.name), prepared, vector, depth,
                               where, columns, codec.VECTOR)

        def search(depth: int) -> tuple[list[str], Any]:
            nonlocal optimistic
            result = None
            if optimistic:
                found = run(depth, unscoped, [*prepared.columns, codec.NAMESPACE])
                if all(ns == request.namespace for ns in found[codec.NAMESPACE].to_pylist()):
                    result = found
                else:
                    optimistic = False
                    self._mixed.add(index.name)
            if result is None:
                result = run(depth, prepared.where, list(prepared.columns))
            batches[depth] = result
            vectors = _matrix(result[codec.VECTOR], index.dimension)
            ids = result[codec.ID].to_pylist()
            scores = exact_scores(index.metric, vector, vectors) if ids else np.zeros(0)
            return ids, scores

        ranked = exact_top_k(search, request.top_k, request.min_score)
        return self._matches(batches[max(batches)], ranked, request, index.dimension)

    def explain_query(self, index: IndexSpec, request: QueryRequest) -> Explanation:
        self._handles.check(index)
        return explain.explain_query(index, request, self._columns(request.include))

    def _matches(self, result: pa.Table, ranked: Sequence[tuple[str, float, int]],
                 request: QueryRequest, dimension: int) -> list[Match]:
        """The ranked rows as matches, each column converted once for all of them (a
        scalar at a time costs more than the rest of the mapping, and so does taking
        the rows out of the Arrow table first)."""
        include = request.include
        positions = [position for _, _, position in ranked]
        count = len(ranked)
        metadata: list[Any] = [None] * count
        if include.metadata:
            texts = _python_values(result[codec.META])
            metadata = [codec.decode_metadata(texts[p]) for p in positions]
        documents: list[Any] = [None] * count
        if include.documents:
            column = result[codec.DOCUMENT].to_pylist()
            documents = [column[p] for p in positions]
        vectors: list[Any] = [None] * count
        if include.vectors and count:
            matrix = _matrix(result[codec.VECTOR], dimension)
            vectors = [read_only_float32(matrix[p]) for p in positions]
        return [Match(id=rid, score=score, metadata=meta, vector=vector, document=document)
                for (rid, score, _), meta, vector, document
                in zip(ranked, metadata, vectors, documents, strict=True)]

    def fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        self._handles.check(index)
        table = self._table(index.name)
        out: list[Record] = []
        for batch in batches(unique(ids), _FETCH_CHUNK):
            chunk = [codec.make_pk(namespace, i) for i in batch]
            with self._translated("fetch", index.name):
                rows = self._rows(table, scoped(namespace, None, pk_in(chunk)), _RECORD_COLUMNS,
                                  len(chunk))
            out.extend(self._records(index, rows))
        return out

    def scan(self, index: IndexSpec, namespace: str, *, filter: Filter | None,
             page_size: int, cursor: str | None) -> RecordPage:
        """One page of the namespace in id order, read by one search: the records whose
        id follows ``cursor`` (the last id of the page before), the filter in the same
        ``where``. Without it the facade would list a page of ids, then fetch them by an
        ``IN`` list of 2,000: two searches a page, and every vector made a list of Python
        floats on the way (58 µs a record over 40,000 records)."""
        self._handles.check(index)
        rows, more = self._page_by_id("scan", index, namespace, filter, cursor,
                                      _RECORD_COLUMNS, page_size)
        records = self._records(index, rows)
        return RecordPage(tuple(records), records[-1].id if more else None)

    def _page_by_id(self, operation: str, index: IndexSpec, namespace: str,
                    filter: Filter | None, cursor: str | None, columns: list[str],
                    limit: int, *extra: str) -> tuple[pa.Table, bool]:
        """Up to ``limit`` rows of ``columns`` in id order after ``cursor`` (and matching
        the ``extra`` conditions), and whether more follow."""
        after = [] if cursor is None else [f"{codec.ID} > {quote_string(cursor)}"]
        where = scoped(namespace, filter, *after, *extra)
        with self._translated(operation, index.name):
            rows = self._rows(self._table(index.name), where, columns, limit + 1,
                              order_by_id=True)
        return rows.slice(0, limit), rows.num_rows > limit

    def _records(self, index: IndexSpec, rows: pa.Table) -> list[Record]:
        """The records of rows of :data:`_RECORD_COLUMNS`, decoded a column at a time
        (the vectors as one matrix, never as lists of Python floats)."""
        if not rows.num_rows:
            return []
        if rows.schema.field(codec.VECTOR).type.list_size != index.dimension:
            self._handles.check_stored(index)  # replaced elsewhere: stale
        matrix = _matrix(rows[codec.VECTOR], index.dimension)
        matrix.setflags(write=False)  # the records' vectors are views of it
        ids = rows[codec.ID].to_pylist()
        texts = _python_values(rows[codec.META])
        documents = rows[codec.DOCUMENT].to_pylist()
        decode = codec.decode_metadata
        return [Record(id=ids[i], vector=matrix[i], metadata=decode(texts[i]),
                       document=documents[i]) for i in range(len(ids))]

    def delete(self, index: IndexSpec, namespace: str, ids: Sequence[str] | None,
               filter: Filter | None) -> None:
        self._handles.check_stored(index)  # never delete from an index replaced elsewhere
        table = self._table(index.name)
        if ids is not None:
            wheres = [scoped(namespace, None, pk_in([codec.make_pk(namespace, i) for i in batch]))
                      for batch in batches(unique(ids), _FETCH_CHUNK)]
        else:
            wheres = [scoped(namespace, filter)]
        with self._write_lock, self._translated("delete", index.name):
            for where in wheres:
                table.delete(where)

    def count(self, index: IndexSpec, namespace: str, filter: Filter | None) -> int:
        self._handles.check(index)
        with self._translated("count_rows", index.name):
            return int(self._table(index.name).count_rows(scoped(namespace, filter)))

    def list_namespaces(self, index: IndexSpec) -> list[str]:
        self._handles.check(index)
        with self._translated("list_namespaces", index.name):
            column = self._rows(self._table(index.name), "true", [codec.NAMESPACE], None)
        return sorted(str(v) for v in pc.unique(column[codec.NAMESPACE]).to_pylist())

    def delete_namespace(self, index: IndexSpec, namespace: str) -> None:
        self._handles.check_stored(index)
        with self._write_lock, self._translated("delete", index.name):
            self._table(index.name).delete(namespace_expression(namespace))
        self._mixed.discard(index.name)  # perhaps one namespace left

    def list_ids(self, index: IndexSpec, namespace: str, *, prefix: str | None,
                 filter: Filter | None, limit: int, cursor: str | None) -> IdPage:
        """Ids in ascending (code point) order; the cursor is the last id returned."""
        self._handles.check(index)
        extra = [f"starts_with({codec.ID}, {quote_string(prefix)})"] if prefix else []
        rows, more = self._page_by_id("list_ids", index, namespace, filter, cursor,
                                      [codec.ID], limit, *extra)
        ids = [str(v) for v in rows[codec.ID].to_pylist()]
        return IdPage(tuple(ids), ids[-1] if more else None)

    def defer_upkeep(self, name: str) -> None:
        """Put off training the ANN index of index ``name`` (``ivf``/``hnsw``) until
        :meth:`optimize`: a load is about to begin (``copy_index`` and ``import_index``
        call this on an index they created). Trained by the write that passes
        ``build_threshold``, the index would learn its lists from the load's first page
        alone, √2,000 = 44 of them for any size, placed by rows that an id-ordered
        source may not spread over the data; trained at the end, it has √rows lists
        placed by every row. Until then queries search exhaustively (exact answers).
        Held by this connection only: another one, or this one after a restart, writes
        as always, and :meth:`optimize` trains whatever index is still missing."""
        validation.index_name(name)  # called directly, not through the facade
        self._current_spec(name)  # IndexNotFoundError before anything is put off
        self._deferred.add(name)

    def optimize(self, name: str) -> None:
        """LanceDB's ``optimize`` on the table of index ``name`` (``store.adapter.optimize``):
        it folds the rows written since the ANN index was trained into it, compacts the
        table's fragments and drops versions older than LanceDB's ``cleanup_older_than``.
        An ``ivf``/``hnsw`` index holding ``build_threshold`` rows without its ANN index
        yet (its training put off by :meth:`defer_upkeep`) is trained first, over every
        row.

        Otherwise the ANN index is trained by the write that first takes the table past
        ``build_threshold`` rows, the first batch by default, and LanceDB searches the
        rows written after it exhaustively until this runs: 6,000 rows loaded in pages of
        2,000 left 5,000 of them outside an IVF index; this folded them in within 0.07 s.
        ``copy_index`` and ``import_index`` call it once their records are in. Answers are
        the same, up to the ANN search's recall."""
        validation.index_name(name)  # called directly, not through the facade
        spec = self._current_spec(name)
        self._deferred.discard(name)
        table = self._table(name)
        if spec.index_type in ("ivf", "hnsw"):
            self._maybe_build_ann(spec, table, _options_of(spec))
        with self._write_lock, self._translated("optimize", name):
            table.optimize()
            schedule = self._upkeep.get(name)
            if schedule is not None:
                schedule.ran(None)  # whatever was written: no rate to learn

    def close(self) -> None:
        self._tables.clear()
        self._search_tables.clear()


def _matrix(column: pa.ChunkedArray, dimension: int) -> Any:
    """A fixed-size-list column of vectors as one (rows × dimension) float32 array."""
    chunk = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if chunk.offset == 0 and chunk.null_count == 0:
        # the child array backs the rows from its start: no flatten kernel (≈ 8 µs of
        # a pyarrow compute call), one view of it
        values = chunk.values.to_numpy(zero_copy_only=False)
        return values.reshape(-1, dimension)[:len(chunk)]
    return chunk.flatten().to_numpy(zero_copy_only=False).reshape(-1, dimension)


def _python_values(column: pa.ChunkedArray) -> list[Any]:
    """A column's values; a JSON column's as their text, read from its string storage
    (the extension type's own conversion is ten times slower)."""
    if isinstance(column.type, pa.BaseExtensionType):
        return [value for chunk in column.chunks for value in chunk.storage.to_pylist()]
    values: list[Any] = column.to_pylist()
    return values


__all__ = ["LanceDBAdapter"]

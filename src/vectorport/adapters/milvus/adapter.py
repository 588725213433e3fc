"""The ``milvus`` adapter: pymilvus' ``MilvusClient`` against milvus-lite or a server.

URLs: ``milvus:///path/file.db`` opens a milvus-lite database in process (a path not
ending in ``.db`` is a folder holding ``vectorport.db``); ``milvus://host:port`` and
``milvus+https://host:port`` reach a Milvus server (port 19530 by default). The options
are in :mod:`.options`; the token is held as a masked :class:`Secret`.

**Indexes** are collections of the same name; the collection layout is described in
:mod:`.layout`, and the IndexSpec is kept in a collection property.

**Engine lines** (:mod:`.engine_line`) are told apart at connect time: a Milvus server or
milvus-lite 3, or milvus-lite 2 (the C++ engine), which needs another layout (no
partition key, no nullable field, the IndexSpec in a catalog collection) and offers
fewer capabilities (no negation in filters, no HNSW). Each connection declares the
capabilities of its own engine line.

**Namespaces** are the values of the partition-key field ``ns``: Milvus hashes them
into the collection's partitions (on milvus-lite 2, ``ns`` is a plain field). Every
query, count, fetch, delete and listing carries ``ns == "<namespace>"`` in its
expression, and primary keys are ``namespace/id``, so that the same id can live in
several namespaces and a fetch or delete by id can only reach its own namespace.
Nothing is ever partition-scoped: milvus-lite 3 deletes rows of every partition when
``delete`` is given a ``partition_name``. ``list_namespaces``
walks the namespaces in primary-key order, one ordered query per namespace.

**Scores** are computed by the adapter from the vectors the search returns
(:mod:`.ranking`, over the native searches of :mod:`.search`): exact for every metric,
candidates complete under ties at the cut, and hybrid queries scored as
``dense + sparse`` with a proven bound.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from vectorport.adapterkit import (
    BackendError,
    Capabilities,
    ConfigError,
    ConnectionURL,
    Explanation,
    Filter,
    IdPage,
    IndexExistsError,
    IndexInfo,
    IndexNotFoundError,
    IndexSpec,
    Match,
    QueryRequest,
    Record,
    RecordPage,
    Secret,
    VectorportError,
    batches,
    prefix_upper_bound,
    read_only_float32,
    request_timeout,
    unique,
)
from vectorport.adapterkit.handles import Handles
from vectorport.adapters.milvus import bulk, explain, layout
from vectorport.adapters.milvus.capabilities import MILVUS_MAX_TOP_K
from vectorport.adapters.milvus.collection import (
    CATALOG_NAME,
    CATALOG_SPEC,
    SPEC_PROPERTY,
    build_index_params,
    build_schema,
    catalog_row,
    catalog_schema,
    has_aux,
    new_layout,
    spec_from_json,
    spec_to_json,
)
from vectorport.adapters.milvus.columns import ColumnUpserts
from vectorport.adapters.milvus.engine_line import CATALOG, Engine, detect_engine
from vectorport.adapters.milvus.errors import is_not_found, is_not_loaded, translated
from vectorport.adapters.milvus.escaping import quote_string
from vectorport.adapters.milvus.filters import (
    namespace_expression,
    other_namespaces_expression,
    pk_in,
    scoped,
)
from vectorport.adapters.milvus.generations import SchemaTokens
from vectorport.adapters.milvus.hits import ColumnHits
from vectorport.adapters.milvus.options import QUERY_OPTIONS, URL_OPTIONS, creation_options
from vectorport.adapters.milvus.ranking import Row, Scorer, exact_top_k
from vectorport.adapters.milvus.rows import aux_of, record_row, sparse_of
from vectorport.adapters.milvus.sealing import Sealing
from vectorport.adapters.milvus.search import Candidates
from vectorport.core import validation
from vectorport.extras import install_hint


class _ReleasedCollectionFilter(logging.Filter):
    """Drops pymilvus's ERROR record (with a full traceback) for a search on a released
    collection: ``_call`` loads the collection and retries, so the failure is expected
    and handled, and the traceback only alarms whoever reads the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage().lower()
        return not (("released" in message and "load" in message) or "not loaded" in message)


def _quiet_released_collection_errors() -> None:
    logger = logging.getLogger("pymilvus.decorators")
    if not any(isinstance(f, _ReleasedCollectionFilter) for f in logger.filters):
        logger.addFilter(_ReleasedCollectionFilter())


_quiet_released_collection_errors()

BACKEND = "milvus"
_KEY_FIELDS = frozenset({layout.PK, layout.NAMESPACE})
"""Fields a query on milvus-lite 2 may ask for on a collection that never held a row."""
DEFAULT_PORT = 19530
LITE_FILENAME = "vectorport.db"
_PK_CHUNK = 1_000
_BOUNDS_IN_META = (layout.BOUNDS_IN_META, layout.FILTER_KEYS)
"""The layout markers of collections that keep lists bounds first in ``meta``: every
marker this version writes and reads."""


_DROPS = threading.Lock()
"""Serialises ``delete_index`` within the process (see there)."""


class MilvusAdapter:
    """Milvus through ``MilvusClient``; see the module docstring for the mapping."""

    backend: ClassVar[str] = BACKEND

    def __init__(self, uri: str, *, token: Secret | None = None, db_name: str | None = None,
                 timeout: float | None = None, shown_as: str = "") -> None:
        from pymilvus import MilvusClient

        self._shown_as = shown_as or uri
        self._timeout = timeout
        kwargs: dict[str, Any] = {"uri": uri}
        if token is not None:
            kwargs["token"] = token.reveal()
        if db_name:
            kwargs["db_name"] = db_name
        if timeout is not None:
            kwargs["timeout"] = timeout
        with translated("connect"):
            self._client = MilvusClient(**kwargs)
        self._embedded = not uri.startswith(("http://", "https://"))  # a milvus-lite file
        self._layouts: dict[str, str | None] = {}
        """Per collection: its :data:`.layout.LAYOUT_PROPERTY` marker (None: the first
        layout), read with its spec and kept."""
        self._engine: Engine = detect_engine(
            self._client, lite_file=self._embedded,
            timeout=None if timeout is None else request_timeout(timeout),
        )
        self._sealing = Sealing(self._flush, engine_seals=self._engine.seals_on_its_own)
        """Rows written since each collection's last seal, sealed by a read
        (:mod:`.sealing`)."""
        self._columns = (ColumnUpserts(self._client)
                         if self._embedded and self._engine.inserts_replace
                         and self._engine.spec_in_properties
                         and self._engine.nullable_documents else None)
        """Column-wise upserts (:mod:`.columns`): milvus-lite 3 files only."""
        self._hits = ColumnHits()
        """Search hits and query rows read column-wise where proven (:mod:`.hits`)."""
        # which Index handles still reach the index they were opened on (the kit's
        # Handles): a collection handle here is only a name, so without this an Index
        # kept across a delete read and wrote the collection created again under its
        # name. Each data call is an identity test of the spec, plus one of pymilvus'
        # cached schema object (:mod:`.generations`), which any client of this process
        # dropping the collection replaces; deletes read the stored spec first, and an
        # engine failure reads it again (see docs/backends/milvus.md)
        self._specs = Handles(self._stored_spec)
        self._tokens = SchemaTokens(self._client, self._t)
        self._seen: dict[str, object | None] = {}
        """Per collection: the schema token seen when its spec was last read."""

    @classmethod
    def from_url(cls, url: ConnectionURL) -> MilvusAdapter:
        options = URL_OPTIONS.url(url)
        timeout: float = url.timeout()  # also bounds pymilvus's own retries of a call
        db_name = options.get("db_name")
        token = url.credential("token")
        if url.username is not None:
            if token is not None:
                raise ConfigError("give either user:password in the URL or a token, not both")
            password = url.password.reveal() if url.password else ""
            token = Secret(f"{url.username}:{password}")
        if url.scheme == "milvus" and not url.host:
            if token is not None or db_name:
                raise ConfigError("milvus-lite files (milvus:///path.db) take no token or db_name")
            if url.path in ("", "/"):
                raise ConfigError(
                    "milvus URLs name a milvus-lite file (milvus:///path/file.db) or a server "
                    "(milvus://host:19530)"
                )
            if importlib.util.find_spec("milvus_lite") is None:
                raise ConfigError(
                    f'milvus:///file.db needs milvus-lite: {install_hint("milvus-lite")}'
                )
            path = Path(url.path)
            if path.suffix != ".db":
                path = path / LITE_FILENAME
            path.parent.mkdir(parents=True, exist_ok=True)
            return cls(str(path), timeout=timeout, shown_as=url.redacted())
        if not url.host:
            raise ConfigError(f"{url.scheme}:// URLs need a host: {url.scheme}://host:port")
        if url.path not in ("", "/"):
            raise ConfigError("Milvus server URLs take no path; use ?db_name=NAME for a database")
        protocol = "https" if url.scheme == "milvus+https" else "http"
        host = f"[{url.host}]" if ":" in url.host else url.host
        uri = f"{protocol}://{host}:{url.port or DEFAULT_PORT}"
        return cls(uri, token=token, db_name=db_name, timeout=timeout, shown_as=url.redacted())

    def __repr__(self) -> str:
        return f"MilvusAdapter({self._shown_as!r})"

    @property
    def capabilities(self) -> Capabilities:
        return self._engine.capabilities

    @property
    def engine(self) -> Engine:
        """The engine line this connection talks to (see :mod:`.engine_line`)."""
        return self._engine

    def _scoped(self, index: IndexSpec, namespace: str, node: Filter | None,
                *extra: str) -> str:
        marker = None if node is None else self._layout(index)
        return scoped(namespace, node, *extra, negation=self._engine.negation,
                      encoded=self._engine.encoded_text,
                      exact_numbers=self._engine.exact_numbers,
                      bounds_in_meta=marker in _BOUNDS_IN_META,
                      filter_keys=marker == layout.FILTER_KEYS)

    def _layout(self, index: IndexSpec) -> str | None:
        """The layout marker of the collection of ``index``, read with its spec."""
        if index.name not in self._layouts:
            self._stored_spec(index.name)
        return self._layouts.get(index.name)

    def _bounds_in_meta(self, index: IndexSpec) -> bool:
        """Whether the collection of ``index`` keeps list bounds in ``meta`` (the
        :data:`.layout.BOUNDS_IN_META` layout, and :data:`.layout.FILTER_KEYS`)."""
        return self._layout(index) in _BOUNDS_IN_META

    def _metadata_field(self, index: IndexSpec) -> str:
        """The field a record's metadata is read from."""
        return layout.DYNAMIC if self._filter_keys(index) else layout.META

    def _filter_keys(self, index: IndexSpec) -> bool:
        """Whether the collection of ``index`` keeps each record's filter keys in its
        dynamic field (the :data:`.layout.FILTER_KEYS` layout)."""
        return self._layout(index) == layout.FILTER_KEYS

    def _pk(self, namespace: str, record_id: str) -> str:
        return layout.make_pk(namespace, record_id, encoded=self._engine.encoded_text)

    def _id_of(self, row: Row) -> str:
        return layout.split_pk(str(row[layout.PK]), encoded=self._engine.encoded_text)[1]

    def _metadata_of(self, row: Row) -> dict[str, Any]:
        # rows of the FILTER_KEYS layout hold the tagged keys themselves (the dynamic
        # field's, merged in), the others a meta field
        stored = row.get(layout.META) if layout.META in row else row
        return dict(layout.decode_metadata(stored, encoded=self._engine.encoded_text))

    # -- plumbing -----------------------------------------------------------------

    def _t(self) -> dict[str, float]:
        """``timeout=`` for one pymilvus call: what is left of the call's deadline.
        Every client call takes it (collection calls too): without one, pymilvus
        retries an unanswered call for up to a minute on its own."""
        return {} if self._timeout is None else {"timeout": request_timeout(self._timeout)}

    def _call(self, operation: str, collection: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run one client call on a collection, loading the collection if it was
        released (as every collection is after a milvus-lite or server restart)."""
        with translated(operation, collection):
            try:
                return fn(collection, *args, **{**self._t(), **kwargs})
            except Exception as exc:
                if not is_not_loaded(exc):
                    raise
            self._client.load_collection(collection, **self._t())
            return fn(collection, *args, **{**self._t(), **kwargs})

    def _stored_spec(self, name: str) -> IndexSpec:
        """The spec stored with collection ``name`` now (also recorded as the one the
        kept handles must equal, with the schema token of the collection it was read
        from: the token first, so that a drop in between changes it)."""
        with translated("describe_collection", name):
            if name == CATALOG or not self._client.has_collection(name, **self._t()):
                raise IndexNotFoundError(name)  # (pymilvus logs a failed describe)
            token = self._tokens.current(name)
            if self._engine.spec_in_properties:
                description = self._client.describe_collection(name, **self._t())
                properties = description.get("properties") or {}
                text = properties.get(SPEC_PROPERTY)
                marker = properties.get(layout.LAYOUT_PROPERTY)
            else:
                text, marker = self._catalog_specs([name]).get(name), None
        if not text:
            raise IndexNotFoundError(name)  # a collection vectorport did not create
        if marker is not None and marker not in _BOUNDS_IN_META:
            raise BackendError(f"milvus: collection {name!r} has layout {marker!r}, which "
                               f"this version of vectorport cannot read; upgrade "
                               f"vectorport")
        self._layouts[name] = marker
        spec = spec_from_json(text)
        self._specs.stored(name, spec)
        self._seen[name] = token
        return spec

    def _check(self, index: IndexSpec) -> None:
        """``IndexNotFoundError`` if ``index`` is not the index stored under its name:
        an identity test of the spec and of pymilvus' cached schema (:mod:`.generations`);
        the stored spec is read again only when the latter changed."""
        self._specs.check(index)
        token = self._tokens.current(index.name)
        if token is not None and token is not self._seen.get(index.name):
            self._specs.check_stored(index)

    # -- the catalog (engines that keep no collection properties) -------------------

    def _catalog_specs(self, names: list[str]) -> dict[str, str]:
        """The stored spec JSON of those of ``names`` that are in the catalog."""
        if not names or not self._client.has_collection(CATALOG, **self._t()):
            return {}
        rows = self._call("query", CATALOG, self._client.query,
                          filter=f"{CATALOG_NAME} in [" + ", ".join(map(quote_string, names))
                          + "]", output_fields=[CATALOG_NAME, CATALOG_SPEC],
                          consistency_level="Strong")
        return {str(r[CATALOG_NAME]): str(r[CATALOG_SPEC]) for r in rows}

    def _catalog_write(self, spec: IndexSpec) -> None:
        if not self._client.has_collection(CATALOG, **self._t()):
            schema, index_params = catalog_schema(self._client)
            try:
                self._client.create_collection(CATALOG, schema=schema,
                                               consistency_level="Strong", **self._t())
            except Exception:
                if not self._client.has_collection(CATALOG, **self._t()):  # lost a race: fine
                    raise
            self._client.create_index(CATALOG, index_params, **self._t())
            self._client.load_collection(CATALOG, **self._t())
        self._call("upsert", CATALOG, self._client.upsert, [catalog_row(spec)])

    def _catalog_delete(self, name: str) -> None:
        if self._client.has_collection(CATALOG, **self._t()):
            self._call("delete", CATALOG, self._client.delete,
                       filter=f"{CATALOG_NAME} == {quote_string(name)}")

    # -- lifecycle ----------------------------------------------------------------

    def create_index(self, spec: IndexSpec) -> None:
        options = creation_options(spec, self._engine)
        marker = new_layout(self._engine)
        schema = build_schema(self._client, spec, self._engine,
                              bounds_in_meta=marker in _BOUNDS_IN_META,
                              filter_keys=marker == layout.FILTER_KEYS)
        index_params = build_index_params(self._client, spec)
        if self._engine.spec_in_properties:
            options["properties"] = {SPEC_PROPERTY: spec_to_json(spec)}
            if marker is not None:
                options["properties"][layout.LAYOUT_PROPERTY] = marker
        else:
            catalog_row(spec)  # checked before any I/O
        with translated("create_collection"):
            if self._client.has_collection(spec.name, **self._t()):
                raise IndexExistsError(spec.name)
            try:
                self._client.create_collection(
                    spec.name, schema=schema, consistency_level="Strong", **options,
                    **self._t())
            except Exception as exc:
                if "exist" in str(exc).lower() and self._client.has_collection(spec.name, **self._t()):
                    raise IndexExistsError(spec.name) from exc
                raise
            try:
                # sync=False: pymilvus would poll the (empty) index build every 0.5 s;
                # loading waits for what it needs.
                self._client.create_index(spec.name, index_params, sync=False, **self._t())
                self._client.load_collection(spec.name, **self._t())
                if not self._engine.spec_in_properties:
                    self._catalog_write(spec)
            except Exception:
                self._client.drop_collection(spec.name, **self._t())  # never leave half an index
                raise
        self._layouts[spec.name] = marker
        if self._columns is not None:
            self._columns.forget(spec.name)
        self._seen[spec.name] = self._tokens.current(spec.name)  # pymilvus' first upsert reads it too
        self._sealing.forget(spec.name)
        self._specs.created(spec)

    def describe_index(self, name: str) -> IndexInfo:
        spec = self._stored_spec(name)
        counts = {ns: self.count(spec, ns, None) for ns in self.list_namespaces(spec)}
        counts = {ns: n for ns, n in counts.items() if n}
        return IndexInfo(spec=spec, count=sum(counts.values()), namespaces=counts)

    def list_indexes(self) -> list[str]:
        with translated("list_collections"):
            names = list(self._client.list_collections(**self._t()))
        if not self._engine.spec_in_properties:
            with translated("list_collections"):
                known = self._catalog_specs([n for n in names if n != CATALOG])
            return [n for n in names if n in known]
        out = []
        for name in names:
            try:
                self._stored_spec(name)
            except IndexNotFoundError:
                continue
            out.append(name)
        return out

    def delete_index(self, name: str) -> None:
        # Milvus Lite fails a drop racing another drop of the same collection ("No such
        # file or directory: 'manifest.json'") instead of reporting it gone, so drops in
        # this process take turns, and a drop that fails is re-checked: if the
        # collection is gone, somebody else deleted it, which is "not found".
        with _DROPS:
            self._stored_spec(name)
            self._layouts.pop(name, None)
            if self._columns is not None:
                self._columns.forget(name)
            try:
                with translated("drop_collection", name):
                    self._client.drop_collection(name, **self._t())
            except VectorportError:
                with translated("has_collection", name):
                    if self._client.has_collection(name, **self._t()):
                        raise
                raise IndexNotFoundError(name) from None
            self._specs.deleted(name)
            self._sealing.forget(name)
            self._seen.pop(name, None)
            if not self._engine.spec_in_properties:
                # after the drop: a crash in between leaves a row without a collection,
                # which is no index (see _stored_spec) and is overwritten on re-creation
                with translated("drop_collection", name):
                    self._catalog_delete(name)

    # -- data ---------------------------------------------------------------------

    def _row(self, index: IndexSpec, namespace: str, record: Record,
             in_meta: bool = False) -> dict[str, Any]:
        """One record's row; ``in_meta``: the collection keeps list bounds in ``meta``
        (:meth:`_bounds_in_meta`, asked once per batch)."""
        return record_row(index, self._pk(namespace, record.id), namespace, record,
                          self._engine, in_meta, filter_keys=self._filter_keys(index))

    def _column_wise(self, index: IndexSpec, namespace: str, probe: Record,
                     in_meta: bool) -> bool:
        """Whether this upsert goes as columns (:mod:`.columns`): a milvus-lite 3 file,
        a dense collection of the current layout, proven equal to pymilvus' rows."""
        if self._columns is None or index.sparse or not in_meta:
            return False
        return self._columns.usable(index.name, probe, self._pk(namespace, probe.id),
                                    namespace, lambda: self._row(index, namespace, probe,
                                                                 in_meta),
                                    filter_keys=self._filter_keys(index))

    def _write(self, index: IndexSpec, namespace: str, records: Sequence[Record],
               in_meta: bool) -> None:
        """One upsert request of validated records."""
        if not records:
            return
        if self._columns is not None and self._column_wise(index, namespace, records[0],
                                                           in_meta):
            pks = [self._pk(namespace, r.id) for r in records]
            self._call("upsert", index.name, self._columns.upsert, pks, namespace, records,
                       filter_keys=self._filter_keys(index))
        else:
            rows = [self._row(index, namespace, r, in_meta) for r in records]
            write = self._client.insert if self._engine.inserts_replace else self._client.upsert
            self._call("upsert", index.name, write, rows)
        self._sealing.written(index, len(records))

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        self._check(index)
        with self._specs.replaced_on_failure(index):
            self._write(index, namespace, records, self._bounds_in_meta(index))

    def upsert_bulk(self, index: IndexSpec, namespace: str, records: Sequence[Record], *,
                    workers: int) -> None:
        """Large upserts, several in flight (see :mod:`.bulk`)."""
        self._check(index)
        in_meta = self._bounds_in_meta(index)
        with self._specs.replaced_on_failure(index):
            bulk.load(records, workers,
                      send=lambda chunk: self._write(index, namespace, chunk, in_meta),
                      embedded=self._embedded)

    def _output_fields(self, index: IndexSpec, request: QueryRequest) -> list[str]:
        include = request.include
        fields = [layout.PK]
        if request.vector is not None or include.vectors:
            fields.append(layout.VECTOR)
        if index.sparse and (request.sparse is not None or include.vectors):
            fields += [layout.SPARSE, layout.SPARSE_NEGATIVE]
        if include.metadata:
            fields.append(self._metadata_field(index))
        if include.vectors and index.sparse:
            fields.append(layout.AUX)
        if include.documents:
            fields.append(layout.DOCUMENT)
            if not self._engine.nullable_documents and layout.AUX not in fields:
                fields.append(layout.AUX)
        return fields

    def _document_of(self, row: Row) -> str | None:
        document = row.get(layout.DOCUMENT)
        if self._engine.nullable_documents:
            return None if document is None else str(document)
        return str(document) if aux_of(row).get(layout.DOCUMENT_PRESENT) else None

    def query(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        QUERY_OPTIONS.query(request)
        self._check(index)
        self._sealing.before_read(index)
        expression = self._scoped(index, request.namespace, request.filter)
        source = Candidates(self, index, request, expression, self._output_fields(index, request))
        scorer = Scorer.for_query(index.metric, request.vector, request.sparse)
        with self._specs.replaced_on_failure(index):
            best = exact_top_k(scorer, source, request.top_k, request.min_score,
                               MILVUS_MAX_TOP_K)
        include = request.include
        matches = []
        for row, score in best:
            matches.append(Match(
                id=self._id_of(row),
                score=score,
                metadata=self._metadata_of(row) if include.metadata else None,
                vector=read_only_float32(row[layout.VECTOR]) if include.vectors else None,
                sparse=sparse_of(row) if include.vectors and index.sparse else None,
                document=self._document_of(row) if include.documents else None,
            ))
        return matches

    def explain_query(self, index: IndexSpec, request: QueryRequest) -> Explanation:
        QUERY_OPTIONS.query(request)
        return explain.explain_query(index, request, self._scoped(index, request.namespace,
                                     request.filter), self._output_fields(index, request),
                                     MILVUS_MAX_TOP_K)

    def fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        self._check(index)
        with self._specs.replaced_on_failure(index):
            return self._fetch(index, namespace, ids)

    def _record_fields(self, index: IndexSpec) -> list[str]:
        """The fields a whole record of ``index`` is read from."""
        fields = [layout.PK, layout.VECTOR, self._metadata_field(index), layout.DOCUMENT]
        if has_aux(index, self._bounds_in_meta(index)):
            fields.append(layout.AUX)
        if index.sparse:
            fields += [layout.SPARSE, layout.SPARSE_NEGATIVE]
        return fields

    def _record(self, index: IndexSpec, row: Row) -> Record:
        """The record a row of :meth:`_record_fields` holds."""
        return Record(
            id=self._id_of(row),
            vector=read_only_float32(row[layout.VECTOR]),
            metadata=self._metadata_of(row),
            sparse=sparse_of(row) if index.sparse else None,
            document=self._document_of(row),
        )

    def scan(self, index: IndexSpec, namespace: str, *, filter: Filter | None,
             page_size: int, cursor: str | None) -> RecordPage:
        """One page of whole records in key order, by one query: the records whose key
        follows ``cursor``'s (the last id of the page before), the filter in the same
        expression. Through the facade's id listing a page was a query for its keys and
        one more per 1,000 of them, to fetch them; on milvus-lite each query of a page
        costs about as much with the rows' vectors as without them.

        On milvus-lite a scan longer than its first page seals the rows written since
        the last seal after that page (what :meth:`optimize` does), as a server does on
        its own: a query over unsealed rows reads them one by one, so a scan of
        10,000 × 384 rows written and not yet sealed took 7.7 s in 20 pages, each query
        about 0.35 s, and 3.3 to 4.0 s sealed after the first page (0.02 to 0.04 s a
        query). A scan of one page (a bridge's filter over a few records, say) is not
        worth a seal, and does none. Sealing changes no answer."""
        self._check(index)
        with self._specs.replaced_on_failure(index):
            rows, more = self._page_by_key(index, namespace, filter, cursor,
                                           self._record_fields(index), page_size)
            records = tuple(self._record(index, row) for row in rows)
        if more and cursor is None and not self._engine.seals_on_its_own:
            self._seal("scan", index.name)
        return RecordPage(records, records[-1].id if more else None)

    def _page_by_key(self, index: IndexSpec, namespace: str, filter: Filter | None,
                     cursor: str | None, fields: list[str], limit: int, *bounds: str
                     ) -> tuple[list[Row], bool]:
        """Up to ``limit`` rows of ``fields`` in key order after ``cursor``'s key (and
        within ``bounds``), and whether more follow."""
        after = [] if cursor is None else [
            f"{layout.PK} > {quote_string(self._pk(namespace, cursor))}"]
        size = min(limit, MILVUS_MAX_TOP_K - 1)
        rows = self._ordered(index, self._scoped(index, namespace, filter, *after, *bounds),
                             fields, size + 1)
        return rows[:size], len(rows) > size

    def _flush(self, operation: str, name: str) -> None:
        """Milvus' ``flush`` of collection ``name``: its growing segment sealed."""
        self._call(operation, name, self._client.flush)

    def _seal(self, operation: str, name: str) -> None:
        """:meth:`_flush`, outside the reads' schedule (:mod:`.sealing`)."""
        self._flush(operation, name)
        self._sealing.sealed(name)

    def _fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        fields = self._record_fields(index)
        out: list[Record] = []
        for chunk in batches([self._pk(namespace, i) for i in unique(ids)], _PK_CHUNK):
            if self._engine.fetch_keys_first:
                # milvus-lite 2 fails a query for vectors on a collection that never held
                # a row: look up the keys alone first
                chunk = [str(r[layout.PK]) for r in self._call(
                    "query", index.name, self._client.query, filter=pk_in(chunk),
                    output_fields=[layout.PK], consistency_level="Strong")]
                if not chunk:
                    continue
            rows = self._hits.query_rows(self._call(
                "query", index.name, self._client.query, filter=pk_in(chunk),
                output_fields=fields, consistency_level="Strong"),
                dynamic=layout.DYNAMIC in fields)
            out.extend(self._record(index, row) for row in rows)
        return out

    def delete(
        self, index: IndexSpec, namespace: str, ids: Sequence[str] | None, filter: Filter | None
    ) -> None:
        self._specs.check_stored(index)  # never delete from an index replaced elsewhere
        if ids is None:
            expression = self._scoped(index, namespace, filter)
            self._call("delete", index.name, self._client.delete, filter=expression)
            return
        for chunk in batches([self._pk(namespace, i) for i in unique(ids)], _PK_CHUNK):
            self._call("delete", index.name, self._client.delete, filter=pk_in(chunk))

    def count(self, index: IndexSpec, namespace: str, filter: Filter | None) -> int:
        """``count(*)`` of the namespace's records that match ``filter``.

        milvus-lite 3 answers a ``count(*)`` with a filter (the namespace's is always
        one) by reading every matching record whole, its vector too, then counting:
        0.42 s for 10,000 × 384 sealed rows of one namespace. There
        (``counts_by_reading``) a count without a filter is the collection's
        ``count(*)`` without one, which counts keys (8 ms), when a query for one record
        of another namespace after it finds none (13 ms); otherwise it is the number of
        keys of a query for the keys alone (0.25 s). A count with a filter of its own
        stays a ``count(*)``: with the keys alone it took as long."""
        self._check(index)
        self._sealing.before_read(index)
        with self._specs.replaced_on_failure(index):
            if filter is None and self._engine.counts_by_reading:
                return self._count_namespace(index, namespace)
            rows = self._call("count", index.name, self._client.query,
                              filter=self._scoped(index, namespace, filter),
                              output_fields=["count(*)"], consistency_level="Strong")
        return int(rows[0]["count(*)"]) if rows else 0

    def _count_namespace(self, index: IndexSpec, namespace: str) -> int:
        """:meth:`count` of a whole namespace on an engine that reads what it counts."""
        rows = self._call("count", index.name, self._client.query, filter="",
                          output_fields=["count(*)"], consistency_level="Strong")
        # after the count: a record of another namespace then is one it counted too (one
        # written since makes no difference; the count is of a moment between the two)
        others = self._call("count", index.name, self._client.query,
                            filter=other_namespaces_expression(namespace),
                            output_fields=[layout.PK], limit=1, consistency_level="Strong")
        if not others:
            return int(rows[0]["count(*)"]) if rows else 0
        keys = self._call("count", index.name, self._client.query,
                          filter=namespace_expression(namespace), output_fields=[layout.PK],
                          consistency_level="Strong")
        return len(keys)

    def _ordered(self, index: IndexSpec, expression: str, fields: list[str], limit: int,
                 consistency: str = "Strong") -> list[Row]:
        """Up to ``limit`` rows in primary-key order (the query-iterator ordering)."""
        if self._engine.fetch_keys_first and not set(fields) <= _KEY_FIELDS:
            # milvus-lite 2 fails a query for vectors on a collection that never held a
            # row (a sparse-only query's scan in id order met it): the keys alone first,
            # as fetch does
            keys = [str(r[layout.PK]) for r in
                    self._ordered(index, expression, [layout.PK], limit, consistency)]
            rows = [row for chunk in batches(keys, _PK_CHUNK)
                    for row in self._hits.query_rows(self._call(
                        "query", index.name, self._client.query, filter=pk_in(chunk),
                        output_fields=fields, consistency_level=consistency),
                        dynamic=layout.DYNAMIC in fields)]
        else:
            rows = list(self._hits.query_rows(self._call(
                "query", index.name, self._client.query, filter=expression,
                output_fields=fields, limit=limit, iterator="True",
                consistency_level=consistency), dynamic=layout.DYNAMIC in fields))
        return sorted(rows, key=lambda r: str(r[layout.PK]))

    def list_namespaces(self, index: IndexSpec) -> list[str]:
        # Primary keys are "namespace/id", so each namespace is one run of keys; the
        # next one starts at or after namespace + "0" ("/" + 1).
        self._check(index)
        found: list[str] = []
        expression = f"{layout.PK} >= {quote_string('')}"
        while True:
            rows = self._ordered(index, expression, [layout.PK, layout.NAMESPACE], 1)
            if not rows:
                return found
            namespace = str(rows[0][layout.NAMESPACE])
            found.append(namespace)
            expression = f"{layout.PK} >= {quote_string(namespace + '0')}"

    def delete_namespace(self, index: IndexSpec, namespace: str) -> None:
        self._specs.check_stored(index)
        self._call("delete", index.name, self._client.delete,
                   filter=namespace_expression(namespace))

    # -- optional protocols ---------------------------------------------------------

    def list_ids(
        self,
        index: IndexSpec,
        namespace: str,
        *,
        prefix: str | None,
        filter: Filter | None,
        limit: int,
        cursor: str | None,
    ) -> IdPage:
        self._check(index)
        self._sealing.before_read(index)
        bounds: list[str] = []
        if prefix:
            low = self._pk(namespace, prefix)
            bounds.append(f"{layout.PK} >= {quote_string(low)}")
            high = prefix_upper_bound(low)
            if high is not None:
                bounds.append(f"{layout.PK} < {quote_string(high)}")
        rows, more = self._page_by_key(index, namespace, filter, cursor, [layout.PK], limit,
                                       *bounds)
        page = tuple(self._id_of(r) for r in rows)
        return IdPage(page, page[-1] if more else None)

    def optimize(self, name: str) -> None:
        """Seal the rows of index ``name`` written since its last seal (Milvus' ``flush``;
        ``store.adapter.optimize``, as on Qdrant Edge), so that its searches read them
        through the vector index.

        milvus-lite searches the rows of a growing segment one by one, and seals a
        collection's growing segment only when asked: 5,000 rows × 1536 read 600-750 ms
        a top-10 query before, 50 ms after (384 dimensions: 160-200 against 23 ms), and
        the seal took 0.9 s (0.5 s). The adapter's searches seal once ``optimize_every``
        rows were written (:mod:`.sealing`); this seals now, whatever was written. A
        Milvus server seals on its own, by size and idle time; there this seals now.
        Answers are the same before and after."""
        validation.index_name(name)  # called directly, not through the facade
        self._stored_spec(name)  # IndexNotFoundError for what is no index here
        self._seal("optimize", name)

    def close(self) -> None:
        with translated("close"):
            self._client.close()


__all__ = ["MilvusAdapter", "is_not_found"]

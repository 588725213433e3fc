"""The ``turbopuffer`` adapter: vectorport indexes on turbopuffer namespaces.

``turbopuffer://?region=gcp-us-central1`` (the API key from ``TURBOPUFFER_API_KEY``, or
``?api_key_env=NAME``), or ``turbopuffer://?base_url=http://127.0.0.1:8765`` for the
emulator in :mod:`vectorport.testing.emulators.turbopuffer`; the options are in
:mod:`.options`.

How indexes and namespaces are mapped (the names are in :mod:`.naming`):

- every (index, namespace) pair is one turbopuffer namespace,
  ``{prefix}{index}-{namespace}`` (``-_`` for the default namespace), created by its
  first write; ``list_namespaces`` lists turbopuffer namespaces by the index's prefix
  and keeps those that hold records; ``delete_namespace`` deletes one;
- the index's :class:`IndexSpec` is a row of the catalog namespace ``{prefix}_catalog``,
  written with ``upsert_condition ["id", "Eq", null]`` so that creation is atomic;
  ``delete_index`` deletes the index's namespaces, then its catalog row (an interrupted
  delete leaves an index that can be deleted again, never orphaned data under a new one);
- records keep their id in ``vp_id`` (ids over 64 bytes are hashed into the turbopuffer
  id), their document in ``vp_doc``, and each metadata field in a typed column chosen by
  the value's kind, so ints, floats, bools, strings and lists keep their type.

Scores: ``cosine`` ranks by ``cosine_distance`` and scores ``1 − $dist``; ``euclidean``
ranks by ``euclidean_squared`` and scores ``1 / (1 + √$dist)``. To make the candidates
complete when several records tie at the cut, the adapter asks for more rows until the
tie is resolved (:func:`vectorport.adapterkit.fetch_until_settled`); the facade orders
and cuts. Queries use ``ANN``; the backend option ``{"turbopuffer": {"exact": true}}``
asks for exhaustive ``kNN`` instead.

Consistency is turbopuffer's own: ``strong`` (the default) or ``eventual``. Writes go in
one request per batch (the facade's batches, up to 1,000 records). 429, 5xx, 408/409,
timeouts and lost connections are retried per request with backoff (every request the
adapter sends is safe to repeat); when they persist they surface as
:class:`TransientBackendError`, which the facade may retry as a whole. Each request's
timeout is the store's ``?timeout=`` cut to what is left of the call's deadline, so a
request begun just before the deadline does not wait out a whole request timeout.

Handles (the kit's :class:`~vectorport.adapterkit.Handles`): an ``Index`` kept across a
delete of its index raises ``IndexNotFoundError``; the catalog row's creation token tells
an index created again elsewhere under the same name from the one a handle was opened
on, wherever the adapter reads the row (see docs/backends/turbopuffer.md for which calls
notice it).
"""

from __future__ import annotations

import contextlib
import json
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from vectorport.adapterkit import (
    BackendError,
    Capabilities,
    ConfigError,
    ConnectionURL,
    Distance,
    Explanation,
    Filter,
    IdPage,
    IndexExistsError,
    IndexInfo,
    IndexNotFoundError,
    IndexSpec,
    Match,
    Memo,
    QueryRequest,
    Record,
    RecordPage,
    RecordPatch,
    RetryPolicy,
    UnsupportedFeatureError,
    ValidationError,
    at_or_above_cut,
    batches,
    fetch_until_settled,
    fields_used,
    prefix_upper_bound,
    remaining,
    request_timeout,
    score_from_distance,
    unique,
)
from vectorport.adapterkit.handles import Handles
from vectorport.adapters.turbopuffer import bulk, codec, explain
from vectorport.adapters.turbopuffer.capabilities import TURBOPUFFER_CAPABILITIES
from vectorport.adapters.turbopuffer.errors import TRANSLATOR, is_not_found, status_of
from vectorport.adapters.turbopuffer.explain import EVERY_RECORD, query_arguments
from vectorport.adapters.turbopuffer.filters import Compiled, FilterCompiler, conjunction
from vectorport.adapters.turbopuffer.handles import NamespaceHandles
from vectorport.adapters.turbopuffer.naming import (
    DEFAULT_PREFIX,
    DOCUMENT_ATTRIBUTE,
    ID_ATTRIBUTE,
    KINDS,
    Names,
    column,
    native_id,
)
from vectorport.adapters.turbopuffer.options import INDEX_OPTIONS, QUERY_OPTIONS, URL_OPTIONS
from vectorport.extras import install_hint

if TYPE_CHECKING:
    import turbopuffer

T = TypeVar("T")

MAX_LIMIT = 10_000
ID_CHUNK = 1_000
SPEC_ATTRIBUTE = "vp_spec"
TOKEN_ATTRIBUTE = "vp_token"
_METRICS = {"cosine": "cosine_distance", "euclidean": "euclidean_squared"}


class _NamespaceMissingError(Exception):
    """The turbopuffer namespace does not exist (HTTP 404)."""


class TurbopufferAdapter:
    """vectorport on turbopuffer, through the official SDK."""

    backend: ClassVar[str] = "turbopuffer"

    def __init__(
        self,
        client: turbopuffer.Turbopuffer,
        *,
        prefix: str = DEFAULT_PREFIX,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._client = client
        given = client.timeout  # a float from from_url; an httpx Timeout if built by hand
        self._timeout = float(given if isinstance(given, (int, float))
                              else getattr(given, "read", None) or 60.0)
        self._names = Names(prefix)
        self._retry = retry or RetryPolicy(attempts=5, base_seconds=0.02, cap_seconds=1.0)
        self._columns: dict[str, frozenset[str]] = {}
        self._declared: dict[str, frozenset[str]] = {}
        """By turbopuffer namespace: the metadata fields whose five typed columns this
        adapter has declared there (see :meth:`_write_schema`)."""
        self._compilers: Memo[frozenset[str], FilterCompiler] = Memo(64)
        self._namespaces = NamespaceHandles(client)
        self._lock = threading.Lock()
        # which Index handles still reach the index they were opened on: each data call
        # is an identity test (no I/O). An index created again under a name writes to
        # the same turbopuffer namespaces, so the catalog row's creation token is what
        # tells the two apart, read wherever the adapter reads the row (_identify)
        self._specs = Handles(self._spec)

    @classmethod
    def from_url(cls, url: ConnectionURL) -> TurbopufferAdapter:
        options = URL_OPTIONS.url(url)
        if url.host or url.path not in ("", "/"):
            raise ConfigError(
                "turbopuffer URLs carry only options, for example "
                "turbopuffer://?region=gcp-us-central1 or turbopuffer://?base_url=http://…"
            )
        region, base_url = options.get("region"), options.get("base_url")
        if bool(region) == bool(base_url):
            raise ConfigError("a turbopuffer URL needs ?region=… or ?base_url=… (one of them)")
        key = url.credential("api_key", "TURBOPUFFER_API_KEY")
        if key is None:
            raise ConfigError(
                "no turbopuffer API key: set TURBOPUFFER_API_KEY or name a variable "
                "with ?api_key_env=NAME"
            )
        try:
            import turbopuffer
        except ImportError:  # pragma: no cover - the registry checks this first
            raise ConfigError(f'the turbopuffer SDK is missing: {install_hint("turbopuffer")}'
                              ) from None
        try:
            client = turbopuffer.Turbopuffer(
                api_key=key.reveal(), region=region or None, base_url=base_url or None,
                timeout=url.timeout(), max_retries=options["max_retries"],
                telemetry=False,
            )
        except (ValueError, turbopuffer.TurbopufferError) as exc:
            raise ConfigError(
                f"cannot configure the turbopuffer client for {url.redacted()}: {exc} "
                "(with base_url=, leave TURBOPUFFER_REGION unset)"
            ) from None
        return cls(client, prefix=options["prefix"])

    def __repr__(self) -> str:
        return f"TurbopufferAdapter(base_url={str(self._client.base_url)!r})"

    @property
    def capabilities(self) -> Capabilities:
        return TURBOPUFFER_CAPABILITIES

    # -- plumbing ------------------------------------------------------------------

    def _call(self, operation: str, fn: Callable[[], T]) -> T:
        """One SDK call: 404 becomes :class:`_NamespaceMissingError`, the rest vectorport errors.

        Transient failures are retried here, request by request: operations made of
        several requests (describe, delete_index, list_namespaces) would otherwise have
        to succeed in every request of one attempt, and the facade does not retry index
        creation or deletion at all. Every request the adapter sends is safe to repeat
        (creation is conditional and checks its own token)."""

        def once() -> T:
            try:
                return fn()
            except Exception as exc:
                if is_not_found(exc):
                    raise _NamespaceMissingError() from exc
                raise TRANSLATOR.error(exc, operation) from exc

        return self._retry.call(operation, once)

    def _bounded(self) -> turbopuffer.Turbopuffer:
        """The client for one request, its timeout cut to what is left of the call's
        deadline (a copy sharing the connection pool; made per request, inside each retry
        attempt, so every attempt gets what is left at its start)."""
        if remaining() is None:
            return self._client
        return self._client.with_options(timeout=request_timeout(self._timeout))

    def _ns(self, native: str) -> Any:
        """The SDK namespace ``native`` for one request, its timeout cut to what is left
        of the call's deadline (asked inside each retry attempt, so every attempt gets
        what is left at its start; see :mod:`.handles`)."""
        return self._namespaces.get(native, None if remaining() is None
                                    else request_timeout(self._timeout))

    def _native(self, index: IndexSpec | str, namespace: str) -> str:
        return self._names.namespace(index if isinstance(index, str) else index.name, namespace)

    def _forget(self, native: str | None = None, index: str | None = None) -> None:
        with self._lock:
            for cache in (self._columns, self._declared):
                if native is not None:
                    cache.pop(native, None)
                if index is not None:
                    start = self._names.index_prefix(index)
                    for name in [n for n in cache if n.startswith(start)]:
                        del cache[name]

    def _learn(self, native: str, columns: Sequence[str]) -> None:
        with self._lock:
            known = self._columns.get(native)
            if known is not None:
                self._columns[native] = known | frozenset(columns)

    def _schema_columns(self, native: str, fields: frozenset[str], *, refresh: bool = False
                        ) -> frozenset[str]:
        """The namespace's attribute names, enough to compile a filter over ``fields``.
        Raises :class:`_NamespaceMissingError` when the namespace does not exist."""
        needed = {column(kind, f) for f in fields for kind in KINDS}
        with self._lock:
            known = self._columns.get(native)
        if known is not None and not refresh and needed <= known:
            return known
        metadata = self._call("metadata", lambda: self._ns(native).metadata())
        columns = frozenset(metadata.schema_)
        with self._lock:
            self._columns[native] = columns
        return columns

    def _compile(self, native: str, node: Filter | None, *, refresh: bool = False) -> Compiled:
        if node is None:
            return True
        columns = self._schema_columns(native, fields_used(node), refresh=refresh)
        return self._compilers.get(columns, lambda: FilterCompiler(columns)).compile(node)

    def _filtered(self, operation: str, native: str, node: Filter | None,
                  run: Callable[[Compiled], T], empty: T) -> T:
        """Compile ``node`` and run; ``empty`` when the namespace is missing or the filter
        matches nothing. A 400 after compiling from cached columns (the namespace may
        have been recreated elsewhere) is retried once with a fresh schema."""
        for refresh in (False, True):
            try:
                compiled = self._compile(native, node, refresh=refresh)
                if compiled is False:
                    return empty
                return run(compiled)
            except _NamespaceMissingError:
                self._forget(native)
                return empty
            except Exception as exc:
                cause = exc.__cause__
                if refresh or node is None or cause is None or status_of(cause) != 400:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    # -- index lifecycle -------------------------------------------------------------

    def create_index(self, spec: IndexSpec) -> None:
        INDEX_OPTIONS.index(spec)
        try:
            stored_spec = json.dumps(asdict(spec), sort_keys=True)
        except (TypeError, ValueError):
            raise ValidationError(
                "backend_options must hold JSON values: the index spec is stored in "
                "turbopuffer's catalog namespace"
            ) from None
        token = uuid.uuid4().hex
        row = {"id": spec.name, SPEC_ATTRIBUTE: stored_spec, TOKEN_ATTRIBUTE: token}
        catalog = self._names.catalog
        self._call("create_index", lambda: self._ns(catalog).write(
            upsert_rows=[row],
            upsert_condition=["id", "Eq", None],
            schema={SPEC_ATTRIBUTE: {"type": "string", "filterable": False},
                    TOKEN_ATTRIBUTE: {"type": "string", "filterable": False}},
        ))
        # The row holds our token only if our conditional insert won (also when a retry
        # of ours re-sent it); reading it back does not rely on ``rows_upserted``.
        stored = self._catalog_row(spec.name)
        if stored is None or stored.get(TOKEN_ATTRIBUTE) != token:
            raise IndexExistsError(spec.name)
        self._identify(spec.name, token)
        self._specs.created(spec)

    def _catalog_row(self, name: str) -> dict[str, Any] | None:
        catalog = self._names.catalog
        try:
            result = self._call("describe_index", lambda: self._ns(catalog).query(
                filters=["id", "Eq", name], rank_by=["id", "asc"], top_k=1,
                include_attributes=[SPEC_ATTRIBUTE, TOKEN_ATTRIBUTE],
            ))
        except _NamespaceMissingError:
            return None
        rows = result.rows or []
        return codec.row_attributes(rows[0]) if rows else None

    def _spec(self, name: str) -> IndexSpec:
        row = self._catalog_row(name)
        if row is None:
            raise IndexNotFoundError(name)
        self._identify(name, row.get(TOKEN_ATTRIBUTE))
        data = json.loads(row[SPEC_ATTRIBUTE])
        return IndexSpec(**data)

    def _identify(self, name: str, token: str | None) -> None:
        """Note the creation token of index ``name``'s catalog row: another token than
        the one seen before means the index was deleted and created again (elsewhere),
        so the handles of the old one are stale."""
        self._specs.identified(name, token)

    def describe_index(self, name: str) -> IndexInfo:
        spec = self._spec(name)
        self._specs.stored(name, spec)
        counts = {ns: n for ns, n in self._namespace_counts(spec) if n}
        return IndexInfo(spec=spec, count=sum(counts.values()), namespaces=counts)

    def _native_namespaces(self, index: str) -> list[str]:
        start = self._names.index_prefix(index)

        def names() -> list[str]:
            # Paged by hand: the SDK's iterator would send every later page with the
            # timeout the first one was given, not with what is left of the deadline.
            found: list[str] = []
            page = self._bounded().namespaces(prefix=start)
            while True:
                found.extend(s.id for s in page.namespaces or [])
                if not page.next_cursor:
                    return found
                page = self._bounded().namespaces(prefix=start, cursor=page.next_cursor)

        return [n for n in self._call("list_namespaces", names)
                if n.startswith(start)]

    def _namespace_counts(self, spec: IndexSpec) -> Iterator[tuple[str, int]]:
        for native in self._native_namespaces(spec.name):
            parsed = self._names.parse(native)
            if parsed is not None and parsed[0] == spec.name:
                yield parsed[1], self._count_native(native, None)

    def list_indexes(self) -> list[str]:
        catalog = self._names.catalog
        names: list[str] = []
        after: str | None = None
        while True:
            kwargs: dict[str, Any] = {} if after is None else {"filters": ["id", "Gt", after]}

            def page_query(kwargs: dict[str, Any] = kwargs) -> Any:
                return self._ns(catalog).query(rank_by=["id", "asc"], top_k=MAX_LIMIT, **kwargs)

            try:
                result = self._call("list_indexes", page_query)
            except _NamespaceMissingError:
                return names
            page = [str(r.id) for r in result.rows or []]
            names.extend(page)
            if len(page) < MAX_LIMIT:
                return names
            after = page[-1]

    def delete_index(self, name: str) -> None:
        self._spec(name)
        for native in self._native_namespaces(name):
            self._delete_native(native)
        self._forget(index=name)
        catalog = self._names.catalog
        try:
            self._call("delete_index", lambda: self._ns(catalog).write(deletes=[name]))
        except _NamespaceMissingError:
            raise IndexNotFoundError(name) from None  # the catalog itself went away
        self._specs.deleted(name)

    def _delete_native(self, native: str) -> None:
        with contextlib.suppress(_NamespaceMissingError):
            self._call("delete_namespace", lambda: self._ns(native).delete_all())
        self._forget(native)

    # -- data ------------------------------------------------------------------------

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        if not records:
            return
        self._specs.check(index)
        # one column-oriented write, as the bulk path sends (attribute names once, vectors
        # base64 straight from the float32 arrays): a smaller body for the SDK to walk
        self._write_columns(index, self._native(index, namespace), records,
                            bulk.columns_of(records))

    def upsert_bulk(self, index: IndexSpec, namespace: str, records: Sequence[Record], *,
                    workers: int) -> None:
        """Large column-oriented writes, several at once (see :mod:`.bulk`)."""
        self._specs.check(index)
        native = self._native(index, namespace)
        bulk.load(records, workers,
                  lambda chunk, columns: self._write_columns(index, native, chunk, columns))

    def _write_columns(self, index: IndexSpec, native: str, records: Sequence[Record],
                       columns: bulk.Columns) -> None:
        fields = codec.fields_of(records)
        schema = self._write_schema(index, native, fields)
        arguments = bulk.write_arguments(columns, _METRICS[index.metric], schema)
        try:
            self._call("upsert", lambda: self._ns(native).write(**arguments))
        except BackendError as exc:
            self._specs.failed(index, exc)
            raise
        with self._lock:
            self._declared[native] = self._declared.get(native, frozenset()) | fields
        self._learn(native, list(schema))

    def _write_schema(self, index: IndexSpec, native: str, fields: set[str]) -> dict[str, Any]:
        """The ``schema`` of a write: the reserved attributes always (so that a namespace
        another client deleted meanwhile is recreated with an unfilterable document and an
        ANN vector), and the five typed columns of each field this adapter has not yet
        declared there. Declaring all of them on every write cost the emulator about
        0.75 ms per write of 100 records (5% of the write), for nothing once declared.
        Should such a recreated namespace meet a known field again, turbopuffer infers
        that column's type from the value, which is the very type its kind declares."""
        with self._lock:
            declared = self._declared.get(native, frozenset())
        return codec.schema_for(index.dimension, sorted(fields - declared))

    def query(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        exact = QUERY_OPTIONS.query(request)["exact"]
        assert request.vector is not None  # the facade refuses sparse-only queries
        self._specs.check(index)
        native = self._native(index, request.namespace)
        vector = request.vector.tolist()

        def run(compiled: Compiled) -> list[Match]:
            kwargs = query_arguments(request, compiled, exact, vector)  # explain shows it
            return self._ranked(native, index, request, kwargs)

        no_matches: list[Match] = []
        try:
            return self._filtered("query", native, request.filter, run, no_matches)
        except BackendError as exc:
            self._specs.failed(index, exc)
            raise

    def explain_query(self, index: IndexSpec, request: QueryRequest) -> Explanation:
        exact = QUERY_OPTIONS.query(request)["exact"]
        self._specs.check(index)
        native = self._native(index, request.namespace)

        def run(compiled: Compiled) -> Explanation:
            return explain.explain_query(index, request, native, compiled, exact, MAX_LIMIT)

        return self._filtered("explain", native, request.filter, run, run(False))

    def _ranked(self, native: str, index: IndexSpec, request: QueryRequest,
                kwargs: dict[str, Any]) -> list[Match]:
        kind: Distance = "cosine_distance" if index.metric == "cosine" else "l2_squared"

        def search(limit: int) -> list[dict[str, Any]]:
            rows = self._call("query", lambda: self._ns(native).query_rows(top_k=limit, **kwargs))
            return [row for row in rows if isinstance(row, dict)]

        def score(row: Mapping[str, Any]) -> float:
            return score_from_distance(kind, float(row.get("$dist") or 0.0))

        found = fetch_until_settled(search, score, request.top_k, cap=MAX_LIMIT,
                                    min_score=request.min_score)
        include = request.include
        matches = []
        for raw in at_or_above_cut(found, request.top_k, score):  # decoded only these
            row = codec.DecodedRow(raw)
            matches.append(Match(
                id=row.id,
                score=score(raw),
                metadata=row.metadata if include.metadata else None,
                vector=row.vector if include.vectors else None,
                document=row.document if include.documents else None,
            ))
        return matches

    def fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        self._specs.check(index)
        native = self._native(index, namespace)
        found: list[Record] = []
        for chunk in batches(unique(ids), ID_CHUNK):
            natives = [native_id(i) for i in chunk]

            def lookup(natives: list[str] = natives) -> Any:
                return self._ns(native).query(
                    filters=["id", "In", natives], rank_by=["id", "asc"], top_k=len(natives),
                    include_attributes=True, vector_encoding="base64",
                )

            try:
                result = self._call("fetch", lookup)
            except _NamespaceMissingError:
                return []
            asked = set(chunk)
            for raw in result.rows or []:
                row = codec.DecodedRow(codec.row_attributes(raw))
                if row.id in asked:
                    found.append(row.record(index.dimension))
        if any(len(r.vector) != index.dimension for r in found):
            self._specs.check_stored(index)  # replaced elsewhere: stale
        return found

    def delete(self, index: IndexSpec, namespace: str, ids: Sequence[str] | None,
               filter: Filter | None) -> None:
        self._specs.check_stored(index)  # never delete from an index replaced elsewhere
        native = self._native(index, namespace)
        if ids is not None:
            for chunk in batches(unique(native_id(i) for i in ids), ID_CHUNK):

                def remove(chunk: list[str] = chunk) -> Any:
                    return self._ns(native).write(deletes=chunk)

                try:
                    self._call("delete", remove)
                except _NamespaceMissingError:
                    return
            return

        def run(compiled: Compiled) -> None:
            target = EVERY_RECORD if compiled is True else compiled
            while True:
                result = self._call("delete", lambda: self._ns(native).write(
                    delete_by_filter=target, delete_by_filter_allow_partial=True,
                ))
                if not result.rows_remaining:
                    return

        self._filtered("delete", native, filter, run, None)

    def count(self, index: IndexSpec, namespace: str, filter: Filter | None) -> int:
        self._specs.check(index)
        return self._count_native(self._native(index, namespace), filter)

    def _count_native(self, native: str, node: Filter | None) -> int:
        return self._filtered("count", native, node,
                              lambda compiled: self._count_compiled(native, compiled), 0)

    def _count_compiled(self, native: str, compiled: Compiled) -> int:
        kwargs: dict[str, Any] = {} if compiled is True else {"filters": compiled}
        result = self._call("count", lambda: self._ns(native).query(
            aggregate_by={"count": ["Count"]}, **kwargs,
        ))
        return int((result.aggregations or {}).get("count", 0))

    def list_namespaces(self, index: IndexSpec) -> list[str]:
        # a listing and a count per namespace: one catalog read more notices an index
        # replaced elsewhere
        self._specs.check_stored(index)
        return [ns for ns, n in self._namespace_counts(index) if n]

    def delete_namespace(self, index: IndexSpec, namespace: str) -> None:
        self._specs.check_stored(index)  # never delete from an index replaced elsewhere
        self._delete_native(self._native(index, namespace))

    # -- optional protocols ------------------------------------------------------------

    def patch(self, index: IndexSpec, namespace: str, patch: RecordPatch) -> bool:
        """Metadata and document changes go through ``patch_rows``; turbopuffer cannot
        patch vector attributes, so a new vector means upserting the whole record."""
        if patch.vector is not None:
            raise UnsupportedFeatureError(
                self.backend, "patching a record's vector",
                "turbopuffer cannot patch vector attributes; upsert the whole record",
            )
        # a patch carries no vector nor distance metric that an index replaced elsewhere
        # would refuse: one catalog read keeps it out of another index
        self._specs.check_stored(index)
        native = self._native(index, namespace)
        row: dict[str, Any] = {"id": native_id(patch.id)}
        row.update(codec.metadata_patch(patch.set_metadata, sorted(patch.unset_metadata)))
        if patch.document is not None:
            row[DOCUMENT_ATTRIBUTE] = patch.document
        fields = sorted(set(patch.set_metadata) | set(patch.unset_metadata))
        schema = codec.schema_for(None, fields)
        try:
            result = self._call("patch", lambda: self._ns(native).write(
                patch_rows=[row], schema=schema,
            ))
        except _NamespaceMissingError:
            return False
        self._learn(native, list(schema))
        return bool(result.rows_patched)

    def _rows_by_id(self, operation: str, native: str, compiled: Compiled,
                    bounds: list[Compiled], top_k: int, **attributes: Any
                    ) -> list[codec.DecodedRow]:
        """The first ``top_k`` rows in id order that match ``compiled`` and ``bounds``
        (none where the two contradict), with the attributes ``attributes`` asks for (the
        query's ``include_attributes`` and ``vector_encoding``)."""
        filters = conjunction([compiled, *bounds])
        if filters is False:
            return []
        kwargs: dict[str, Any] = {} if filters is True else {"filters": filters}
        result = self._call(operation, lambda: self._ns(native).query(
            rank_by=[ID_ATTRIBUTE, "asc"], top_k=top_k, **attributes, **kwargs))
        return [codec.DecodedRow(codec.row_attributes(r)) for r in result.rows or []]

    def scan(self, index: IndexSpec, namespace: str, *, filter: Filter | None,
             page_size: int, cursor: str | None) -> RecordPage:
        """One page of whole records in id order, by one query: the records whose id
        follows ``cursor`` (the last id of the page before), every attribute, vectors in
        base64, the filter in the same query. Through the facade's id listing a page was a
        query for its ids and one more per :data:`ID_CHUNK` of them, to fetch them."""
        self._specs.check(index)
        native = self._native(index, namespace)
        size = min(page_size, MAX_LIMIT - 1)
        bounds: list[Compiled] = [] if cursor is None else [[ID_ATTRIBUTE, "Gt", cursor]]

        def run(compiled: Compiled) -> RecordPage:
            rows = self._rows_by_id("scan", native, compiled, bounds, size + 1,
                                    include_attributes=True, vector_encoding="base64")
            records = tuple(row.record(index.dimension) for row in rows[:size])
            if any(len(r.vector) != index.dimension for r in records):
                self._specs.check_stored(index)  # replaced elsewhere: stale
            return RecordPage(records, records[-1].id if len(rows) > size else None)

        return self._filtered("scan", native, filter, run, RecordPage((), None))

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
        self._specs.check(index)
        native = self._native(index, namespace)
        page_size = min(limit, MAX_LIMIT - 1)
        bounds: list[Compiled] = []
        if cursor is not None:
            bounds.append([ID_ATTRIBUTE, "Gt", cursor])
        if prefix:
            bounds.append([ID_ATTRIBUTE, "Gte", prefix])
            upper = prefix_upper_bound(prefix)
            if upper is not None:
                bounds.append([ID_ATTRIBUTE, "Lt", upper])

        def run(compiled: Compiled) -> IdPage:
            rows = self._rows_by_id("list_ids", native, compiled, bounds, page_size + 1,
                                    include_attributes=[ID_ATTRIBUTE])
            page = tuple(row.id for row in rows[:page_size])
            return IdPage(page, page[-1] if len(rows) > page_size else None)

        return self._filtered("list_ids", native, filter, run, IdPage((), None))

    def close(self) -> None:
        self._client.close()

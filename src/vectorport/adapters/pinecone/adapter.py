"""The ``pinecone`` adapter: Pinecone through the official ``pinecone`` SDK (REST).

``pinecone://?api_key_env=PINECONE_API_KEY`` reaches the hosted service;
``&host=http://127.0.0.1:5081`` a local emulator or a private control-plane endpoint
(the options are in :mod:`.options`). How the contract maps onto Pinecone:

- **Names** (:mod:`.naming`): ``_`` ↔ ``-`` in index names; vectorport's namespaces are
  Pinecone's. Sparse vectors need the ``dotproduct`` metric (Pinecone scores sparse-dense
  vectors on dotproduct indexes only).
- **Records** (:mod:`.codec`): ids, exact ints and documents; filters: :mod:`.filters`.
- **Scores**: cosine and dot product as they are; Pinecone's euclidean score is the
  squared distance, turned into ``1 / (1 + distance)``. Equal scores come in no set
  order, so the search widens until the group tied at the cut is complete
  (:func:`vectorport.adapterkit.fetch_until_settled`); the facade orders and cuts.
- **Writes** go in requests of at most 1,000 records and about 2 MB; the facade sends
  batches in parallel (``write_concurrency``).
- **Consistency** (:mod:`.freshness`): every write returns its log sequence number; a
  ``strong`` read (fetch, count and listings always are) first waits until a query
  reports that the namespace caught up, bounded by ``consistency_timeout``. Deletes
  return no LSN, so a delete returns once it is visible, with the same bound; so does
  an upsert whose LSN the service does not report.
- **Errors** (:mod:`.errors`): transient failures are retried by the SDK, then by the
  facade for idempotent operations; control-plane calls are retried here, with a
  creation token in the index's tags so that a retried create recognises its own index.
- **Handles** (the kit's :class:`~vectorport.adapterkit.Handles`): an ``Index`` kept
  across a delete of its index raises ``IndexNotFoundError``; the creation token tells
  an index created again elsewhere under the same name (and host) from the one a handle
  was opened on, wherever the adapter reads the index's description (see
  docs/backends/pinecone.md for which calls notice it).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from pinecone import Pinecone

from vectorport.adapterkit import (
    BackendError,
    Capabilities,
    ConfigError,
    ConnectionURL,
    ErrorKind,
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
    UnsupportedFeatureError,
    at_or_above_cut,
    batches,
    fetch_until_settled,
    unique,
    url_cost,
)
from vectorport.adapterkit.handles import Handles as IndexHandles
from vectorport.adapters.pinecone import bulk
from vectorport.adapters.pinecone.capabilities import PINECONE_CAPABILITIES
from vectorport.adapters.pinecone.client import make_client, open_index
from vectorport.adapters.pinecone.codec import (
    BACKEND,
    CURRENT_LAYOUT,
    LAYOUT_TAG,
    decode_id,
    encode_id,
    match_of,
    record_of,
    score,
    try_encode_id,
    wire_vector,
)
from vectorport.adapters.pinecone.errors import (
    CONTROL_RETRY,
    REQUEST_RETRY,
    TRANSLATOR,
    ConflictError,
    NotFoundError,
    PineconeError,
)
from vectorport.adapters.pinecone.explain import explain_query, prepare_query
from vectorport.adapters.pinecone.filters import compile_filter
from vectorport.adapters.pinecone.freshness import FreshnessTracker, wait_until
from vectorport.adapters.pinecone.handles import Handle, Handles
from vectorport.adapters.pinecone.naming import (
    index_name_from_pinecone,
    index_name_to_pinecone,
    is_vector_index,
    same_stored,
    schema_fields,
    spec_from_model,
    user_namespace,
)
from vectorport.adapters.pinecone.options import (
    CREATE_TOKEN_TAG,
    INDEX_OPTIONS,
    URL_OPTIONS,
)
from vectorport.core.validation import INDEX_NAME_RE

T = TypeVar("T")

MAX_TOP_K = 10_000
MAX_UPSERT_VECTORS = bulk.MAX_VECTORS
MAX_UPSERT_BYTES = bulk.MAX_BYTES
MAX_IDS_PER_REQUEST = 1_000
MAX_FETCH_URL_IDS_CHARS = 8_000  # fetch sends ids in the URL
MAX_LIST_PAGE = 100
MAX_FETCH_BY_METADATA_PAGE = 10_000


class PineconeAdapter:
    """Pinecone vector indexes through the official SDK."""

    backend: ClassVar[str] = BACKEND

    def __init__(
        self,
        client: Pinecone,
        *,
        host: str | None = None,
        cloud: str = "aws",
        region: str = "us-east-1",
        consistency_timeout: float = 30.0,
        ready_timeout: float = 300.0,
    ) -> None:
        self._pc = client
        self.host = host
        self.cloud = cloud
        self.region = region
        self.consistency_timeout = consistency_timeout
        self.ready_timeout = ready_timeout
        self._handles = Handles(lambda host: self._sdk(lambda: open_index(self._pc, host)))
        self._freshness = FreshnessTracker()
        # which Index handles still reach the index they were opened on: each data call
        # is an identity test (no I/O). Pinecone serves an index created again under a
        # name from the same host, so the creation token in its tags is what tells the
        # two apart, read wherever the adapter describes the index (_identify)
        self._specs = IndexHandles(self._stored_spec, same=same_stored)

    @classmethod
    def from_url(cls, url: ConnectionURL) -> PineconeAdapter:
        options = URL_OPTIONS.url(url)
        if url.host or url.path not in ("", "/"):
            raise ConfigError(
                "pinecone URLs take no host or path: use pinecone://?api_key_env=NAME, and "
                "&host=http://HOST:PORT for a private endpoint or a local emulator"
            )
        key = url.credential("api_key", "PINECONE_API_KEY")
        if not key:
            raise ConfigError(
                "no Pinecone API key: set PINECONE_API_KEY or name another variable with "
                "?api_key_env=NAME"
            )
        host = options.get("host") or None
        client = make_client(key.reveal(), host, url.timeout())
        return cls(
            client,
            host=host,
            cloud=options["cloud"] or "aws",
            region=options["region"] or "us-east-1",
            consistency_timeout=options["consistency_timeout"],
            ready_timeout=options["ready_timeout"],
        )

    def __repr__(self) -> str:
        return f"PineconeAdapter(host={self.host or 'https://api.pinecone.io'!r})"

    @property
    def capabilities(self) -> Capabilities:
        return PINECONE_CAPABILITIES

    # -- plumbing -----------------------------------------------------------------------------

    def _sdk(self, fn: Callable[[], T], index: str | None = None,
             operation: str = "request") -> T:
        """A data-plane request, retried here (within the call's deadline) on
        transient failures; the facade may retry the whole operation too."""

        def once() -> T:
            try:
                return fn()
            except PineconeError as exc:
                if index is not None and TRANSLATOR.kind(exc) is ErrorKind.NOT_FOUND:
                    self._drop(index, close=False)  # other threads may still hold it
                raise TRANSLATOR.error(exc, operation, index=index) from exc

        return REQUEST_RETRY.call(f"pinecone {operation}", once)

    def _control(self, fn: Callable[[], T], index: str | None = None,
                 operation: str = "control-plane request") -> T:
        """A control-plane call, retried here on transient failures."""
        return TRANSLATOR.call(operation, fn, index=index, retry=CONTROL_RETRY)

    def _drop(self, name: str, *, close: bool = True) -> None:
        self._handles.drop(name, close=close)

    def _model(self, name: str) -> Any:
        return self._control(lambda: self._pc.indexes.describe(index_name_to_pinecone(name)),
                             name)

    def _identify(self, name: str, model: Any) -> None:
        """Note the creation token of the index ``model`` describes: another token than
        the one seen before means the index was deleted and created again (elsewhere),
        so the handles of the old one are stale, its host client, layout and LSNs too."""
        if self._specs.identified(name, (model.tags or {}).get(CREATE_TOKEN_TAG)):
            self._drop(name, close=False)  # other threads may still hold it
            self._freshness.forget(name)

    def _described(self, name: str) -> tuple[Any, IndexSpec]:
        model = self._model(name)
        self._identify(name, model)
        return model, spec_from_model(name, model)

    def _stored_spec(self, name: str) -> IndexSpec:
        return self._described(name)[1]

    def _stats(self, handle: Handle, index: IndexSpec) -> Any:
        """The index's stats, which name its dimension and metric: others than the
        handle's mean the index was replaced elsewhere (the handle is then stale)."""
        stats = self._sdk(lambda: handle.client.describe_index_stats(), index.name)
        if ((stats.dimension is not None and stats.dimension != index.dimension)
                or (stats.metric is not None and stats.metric != index.metric)):
            self._specs.check_stored(index)
        return stats

    def _handle(self, name: str) -> Handle:
        found = self._handles.get(name)
        if found is not None:
            return found
        model = self._model(name)
        self._identify(name, model)
        return self._open(name, model)

    def _open(self, name: str, model: Any) -> Handle:
        return self._handles.open(name, model)

    def _probe(self, spec: IndexSpec) -> list[float]:
        return [1.0] + [0.0] * (spec.dimension - 1)

    def _await_fresh(self, handle: Handle, spec: IndexSpec, namespace: str) -> None:
        """Wait (bounded) until queries in ``namespace`` see this adapter's writes."""
        target = self._freshness.awaited(spec.name, namespace)
        if target is None:
            return
        probe = self._probe(spec)

        def caught_up() -> bool:
            answer = self._sdk(lambda: handle.client.query(
                top_k=1, vector=probe, namespace=namespace), spec.name)
            return self._reached(spec.name, namespace, answer, target)

        wait_until(caught_up, self.consistency_timeout,
                   f"a write to namespace {namespace!r} of index {spec.name!r}")

    def _reached(self, index: str, namespace: str, answer: Any, target: int) -> bool:
        info = answer.response_info
        lsn = info.lsn_reconciled if info is not None else None
        if lsn is None:  # no freshness reported: the write already waited for fetch
            return True
        if lsn >= target:
            self._freshness.saw(index, namespace, lsn)
            return True
        return False

    def _namespace_absent(self, spec: IndexSpec, exc: NotFoundError) -> None:
        """A 404 from a namespace-level call: fine when the index itself exists."""
        try:
            self._pc.indexes.describe(index_name_to_pinecone(spec.name))
        except PineconeError as other:
            if TRANSLATOR.kind(other) is ErrorKind.NOT_FOUND:
                self._drop(spec.name, close=False)
                raise IndexNotFoundError(spec.name) from exc
            raise TRANSLATOR.error(other, "describe_index", index=spec.name) from other

    # -- index lifecycle ---------------------------------------------------------------------

    def create_index(self, spec: IndexSpec) -> None:
        options = INDEX_OPTIONS.index(spec)
        if spec.index_params:
            raise UnsupportedFeatureError(BACKEND, "index parameters",
                                          "Pinecone manages its index structure itself")
        if spec.sparse and spec.metric != "dotproduct":
            raise UnsupportedFeatureError(
                BACKEND, f"sparse vectors with the {spec.metric} metric",
                "Pinecone scores sparse-dense vectors on dotproduct indexes only",
            )
        fields = schema_fields(spec)
        token = uuid.uuid4().hex
        tags = {**options["tags"], CREATE_TOKEN_TAG: token, LAYOUT_TAG: str(CURRENT_LAYOUT)}
        name = index_name_to_pinecone(spec.name)
        deployment = {"deployment_type": "managed",
                      "cloud": options.get("cloud", self.cloud),
                      "region": options.get("region", self.region)}

        def create() -> Any:
            try:
                return self._pc.indexes.create(
                    name=name, schema={"fields": fields}, deployment=deployment, tags=tags,
                    deletion_protection=options["deletion_protection"],
                    timeout=-1,
                )
            except ConflictError:
                # Ours when a retry (the SDK's or ours) follows a create that landed.
                existing = self._control(lambda: self._pc.indexes.describe(name), spec.name)
                if (existing.tags or {}).get(CREATE_TOKEN_TAG) == token:
                    return existing
                raise IndexExistsError(spec.name) from None

        model = self._control(create, spec.name, "create_index")

        def ready() -> bool:
            nonlocal model
            if model.status.ready:
                return True
            model = self._model(spec.name)
            return bool(model.status.ready)

        wait_until(ready, self.ready_timeout, f"the new index {spec.name!r}")
        self._identify(spec.name, model)
        self._open(spec.name, model)
        self._specs.created(spec)

    def describe_index(self, name: str) -> IndexInfo:
        model, spec = self._described(name)
        self._specs.stored(name, spec)
        handle = self._open(name, model)
        for namespace in self._freshness.pending_namespaces(name):
            self._await_fresh(handle, spec, namespace)
        stats = self._sdk(lambda: handle.client.describe_index_stats(), name)
        counts = {user_namespace(ns): summary.vector_count
                  for ns, summary in stats.namespaces.items() if summary.vector_count}
        return IndexInfo(spec=spec, count=sum(counts.values()), namespaces=counts)

    def list_indexes(self) -> list[str]:
        models = self._control(lambda: list(self._pc.indexes.list()))
        names = []
        for model in models:
            name = index_name_from_pinecone(model.name)
            if INDEX_NAME_RE.match(name) and is_vector_index(model):
                self._identify(name, model)  # the listing describes each index anyway
                names.append(name)
        return names

    def delete_index(self, name: str) -> None:
        pinecone_name = index_name_to_pinecone(name)
        # Asked first, so that a 404 below can only mean that a delete landed (a retried
        # one after a transient failure, or a concurrent one): the index is gone.
        self._described(name)

        def delete() -> None:
            with contextlib.suppress(NotFoundError):
                self._pc.indexes.delete(pinecone_name, timeout=-1)

        self._control(delete, name, "delete_index")
        self._drop(name)
        self._freshness.forget(name)
        self._specs.deleted(name)

        def gone() -> bool:
            try:
                self._pc.indexes.describe(pinecone_name)
            except NotFoundError:
                return True
            except PineconeError as exc:
                raise TRANSLATOR.error(exc, "describe_index") from exc
            return False

        wait_until(gone, self.ready_timeout, f"the deletion of index {name!r}")

    # -- data -----------------------------------------------------------------------------------

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        self._specs.check(index)
        handle = self._handle(index.name)
        vectors = [wire_vector(r, handle.layout) for r in records]  # checks before any I/O
        for chunk in bulk.requests_of(vectors, index.dimension):
            self._upsert_request(handle, index, namespace, chunk)

    def _upsert_request(self, handle: Handle, index: IndexSpec, namespace: str,
                        chunk: list[Any]) -> None:
        """One upsert request, then its LSN noted (or, with none, its records awaited)."""
        try:
            answer = self._sdk(lambda: handle.client.upsert(vectors=chunk, namespace=namespace),
                               index.name, "upsert")
        except BackendError as exc:
            self._specs.failed(index, exc)
            raise
        info = answer.response_info
        lsn = info.lsn_committed if info is not None else None
        if lsn is not None:
            self._freshness.wrote(index.name, namespace, lsn)
        else:
            wire = [v.id for v in chunk]
            wait_until(lambda: self._all_present(handle, index, namespace, wire),
                       self.consistency_timeout,
                       f"an upsert into namespace {namespace!r} of index {index.name!r}")

    def upsert_bulk(self, index: IndexSpec, namespace: str, records: Sequence[Record], *,
                    workers: int) -> None:
        """The largest requests under Pinecone's limits, many at once (see :mod:`.bulk`)."""
        self._specs.check(index)
        handle = self._handle(index.name)
        bulk.load(records, workers, handle.layout, lambda chunk: self._upsert_request(
            handle, index, namespace, chunk))

    def query(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        prepared = prepare_query(index, request, MAX_TOP_K)  # explain builds the same
        self._specs.check(index)
        handle = self._handle(index.name)
        namespace = request.namespace
        include = request.include

        def ask_for(top_k: int) -> Any:
            try:
                return self._sdk(lambda: handle.client.query(**prepared.arguments(top_k)),
                                 index.name, "query")
            except BackendError as exc:
                self._specs.failed(index, exc)
                raise

        # The first search doubles as the freshness probe of a strong read.
        ask = prepared.first_depth
        first: dict[int, list[Any]] = {}
        target = (self._freshness.awaited(index.name, namespace)
                  if request.consistency == "strong" else None)
        if target is not None:
            def caught_up() -> bool:
                answer = ask_for(ask)
                first[ask] = list(answer.matches)
                return self._reached(index.name, namespace, answer, target)

            wait_until(caught_up, self.consistency_timeout,
                       f"a write to namespace {namespace!r} of index {index.name!r}")

        def search(depth: int) -> list[Any]:
            return first.pop(depth) if depth in first else list(ask_for(depth).matches)

        def scored(match: Any) -> float:
            return score(index.metric, match.score)

        found = fetch_until_settled(search, scored, request.top_k, cap=MAX_TOP_K,
                                    min_score=request.min_score)
        return [match_of(m, index.metric, include, handle.layout)
                for m in at_or_above_cut(found, request.top_k, scored)]

    def explain_query(self, index: IndexSpec, request: QueryRequest) -> Explanation:
        self._specs.check(index)
        return explain_query(index, request, MAX_TOP_K)

    def fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        self._specs.check(index)
        wire = _wire_ids(ids)
        if not wire:
            return []
        handle = self._handle(index.name)
        self._await_fresh(handle, index, namespace)
        records = [record_of(vector, handle.layout)
                   for answer in self._fetched(handle, index, namespace, wire)
                   for vector in answer.vectors.values()]
        if any(len(r.vector) != index.dimension for r in records):
            self._specs.check_stored(index)  # replaced elsewhere: stale
        return records

    def _fetched(self, handle: Handle, index: IndexSpec, namespace: str,
                 wire: list[str]) -> list[Any]:
        """The fetch answers for ``wire``, in requests whose URL stays short enough."""
        return [self._sdk(lambda chunk=chunk: handle.client.fetch(  # type: ignore[misc]
                    ids=chunk, namespace=namespace), index.name, "fetch")
                for chunk in batches(wire, MAX_IDS_PER_REQUEST, cost=url_cost,
                                     max_cost=MAX_FETCH_URL_IDS_CHARS)]

    def delete(
        self,
        index: IndexSpec,
        namespace: str,
        ids: Sequence[str] | None,
        filter: Filter | None,
    ) -> None:
        flt = compile_filter(filter) if ids is None else None  # before any I/O
        self._specs.check_stored(index)  # never delete from an index replaced elsewhere
        if ids is None:  # the facade guarantees a filter then
            handle = self._handle(index.name)
            self._await_fresh(handle, index, namespace)
            if self._delete_call(handle, index, lambda: handle.client.delete(
                    filter=flt, namespace=namespace)):
                probe = self._probe(index)
                wait_until(lambda: not self._sdk(lambda: handle.client.query(
                    top_k=1, vector=probe, filter=flt, namespace=namespace),
                    index.name).matches, self.consistency_timeout,
                    f"a delete by filter in namespace {namespace!r} of index {index.name!r}")
            return
        wire = _wire_ids(ids)
        if not wire:
            return
        handle = self._handle(index.name)
        self._await_fresh(handle, index, namespace)
        for chunk in batches(wire, MAX_IDS_PER_REQUEST):
            if not self._delete_call(handle, index, lambda chunk=chunk: (  # type: ignore[misc]
                    handle.client.delete(ids=chunk, namespace=namespace))):
                return
        wait_until(lambda: not self._any_present(handle, index, namespace, wire),
                   self.consistency_timeout,
                   f"a delete by id in namespace {namespace!r} of index {index.name!r}")

    def _delete_call(self, handle: Handle, index: IndexSpec, call: Callable[[], Any]) -> bool:
        """Send a delete; ``False`` when the namespace does not exist (nothing to do)."""
        try:
            call()
        except NotFoundError as exc:
            self._namespace_absent(index, exc)
            return False
        except PineconeError as exc:
            raise TRANSLATOR.error(exc, "delete", index=index.name) from exc
        return True

    def _present(
        self, handle: Handle, index: IndexSpec, namespace: str, wire: list[str]
    ) -> set[str]:
        return {rid for answer in self._fetched(handle, index, namespace, wire)
                for rid in answer.vectors}

    def _any_present(
        self, handle: Handle, index: IndexSpec, namespace: str, wire: list[str]
    ) -> bool:
        return bool(self._present(handle, index, namespace, wire))

    def _all_present(
        self, handle: Handle, index: IndexSpec, namespace: str, wire: list[str]
    ) -> bool:
        return len(self._present(handle, index, namespace, wire)) == len(set(wire))

    def count(self, index: IndexSpec, namespace: str, filter: Filter | None) -> int:
        flt = compile_filter(filter)  # before any I/O
        self._specs.check(index)
        handle = self._handle(index.name)
        self._await_fresh(handle, index, namespace)
        if flt is None:
            return self._namespace_count(handle, index, namespace)
        # Serverless indexes refuse filtered stats: count the matches of a query instead.
        answer = self._sdk(lambda: handle.client.query(
            top_k=MAX_TOP_K, vector=self._probe(index), filter=flt, namespace=namespace),
            index.name)
        if len(answer.matches) < MAX_TOP_K:
            return len(answer.matches)
        total, token = 0, None
        while True:
            page = self._sdk(lambda token=token: handle.client.fetch_by_metadata(  # type: ignore[misc]
                filter=flt, namespace=namespace, limit=MAX_FETCH_BY_METADATA_PAGE,
                pagination_token=token), index.name)
            total += len(page.vectors)
            token = page.pagination.next if page.pagination is not None else None
            if not token:
                return total

    def _namespace_count(self, handle: Handle, index: IndexSpec, namespace: str) -> int:
        stats = self._stats(handle, index)
        return sum(summary.vector_count for ns, summary in stats.namespaces.items()
                   if user_namespace(ns) == namespace)

    def list_namespaces(self, index: IndexSpec) -> list[str]:
        self._specs.check(index)
        handle = self._handle(index.name)
        for namespace in self._freshness.pending_namespaces(index.name):
            self._await_fresh(handle, index, namespace)
        stats = self._stats(handle, index)
        return sorted({user_namespace(ns) for ns, summary in stats.namespaces.items()
                       if summary.vector_count})

    def delete_namespace(self, index: IndexSpec, namespace: str) -> None:
        self._specs.check_stored(index)  # never delete from an index replaced elsewhere
        handle = self._handle(index.name)
        self._await_fresh(handle, index, namespace)
        if self._delete_call(handle, index, lambda: handle.client.delete(
                delete_all=True, namespace=namespace)):
            wait_until(lambda: self._namespace_count(handle, index, namespace) == 0,
                       self.consistency_timeout,
                       f"the deletion of namespace {namespace!r} of index {index.name!r}")
        # An emptied namespace may number its writes from zero again.
        self._freshness.forget(index.name, namespace)

    # -- optional protocols -----------------------------------------------------------------

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
        if filter is not None:
            raise UnsupportedFeatureError(BACKEND, "list_ids with a filter",
                                          "Pinecone lists ids by prefix only")
        wire_prefix = encode_id(prefix) if prefix else None
        self._specs.check(index)
        if wire_prefix is not None and len(wire_prefix) > 512:
            return IdPage((), None)  # no stored id can be that long
        handle = self._handle(index.name)
        self._await_fresh(handle, index, namespace)
        ids: list[str] = []
        token = cursor
        while len(ids) < limit:
            size = min(MAX_LIST_PAGE, limit - len(ids))

            def one_page(size: int = size, token: str | None = token) -> Any:
                try:
                    return handle.client.list_paginated(
                        prefix=wire_prefix, limit=size, pagination_token=token,
                        namespace=namespace)
                except NotFoundError:
                    raise  # an absent namespace, answered below
                except PineconeError as exc:
                    raise TRANSLATOR.error(exc, "list_ids", index=index.name) from exc

            try:  # each page retried like every other request
                page = REQUEST_RETRY.call("pinecone list_ids", one_page)
            except NotFoundError as exc:
                self._namespace_absent(index, exc)
                return IdPage((), None)
            ids.extend(decode_id(item.id) for item in page.vectors if item.id is not None)
            token = page.pagination.next if page.pagination is not None else None
            if not token:
                break
        return IdPage(tuple(ids), token or None)

    def close(self) -> None:
        self._handles.close()
        self._pc.close()


# -- helpers ------------------------------------------------------------------------------------


def _wire_ids(ids: Sequence[str]) -> list[str]:
    """The stored forms of ``ids``, once each; ids Pinecone cannot hold are left out
    (no record can have them)."""
    return [w for w in unique(try_encode_id(i) for i in ids) if w is not None]


__all__ = ["PineconeAdapter"]

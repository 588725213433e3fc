"""The ``pinecone`` adapter: Pinecone through the official ``pinecone`` SDK (REST).

``pinecone://?api_key_env=PINECONE_API_KEY`` reaches the hosted service;
``&host=http://127.0.0.1:5081`` a local emulator or a private control-plane endpoint.
Other URL options: ``cloud`` / ``region`` of new indexes (default ``aws`` /
``us-east-1``), ``consistency_timeout`` (seconds a strong read may wait, default 30) and
``ready_timeout`` (seconds to wait for a new index to be ready, default 300).

Mapping of the contract onto Pinecone:

- **Index names**: ``_`` becomes ``-`` (CONTRACT §1); the map is one-to-one. An index is
  a Pinecone *vector* index: a schema with the reserved ``_values`` dense field and, for
  ``sparse=True``, the ``_sparse_values`` field, which Pinecone scores only with the
  ``dotproduct`` metric (other metrics with sparse raise ``UnsupportedFeatureError``).
- **Namespaces** are Pinecone's own namespaces. vectorport's default namespace ``""`` is
  Pinecone's default namespace (sent as ``""``, reported as ``__default__``); the other
  names pass through unchanged (vectorport's namespace names are valid Pinecone ones and
  can never be ``__default__``).
- **Records**: ids, exact ints and documents are encoded as described in
  :mod:`vectorport.adapters.pinecone.codec`; filters are compiled as described in
  :mod:`vectorport.adapters.pinecone.filters`.
- **Scores**: cosine and dot product come back as they are; Pinecone's euclidean score
  is the squared distance, turned into ``1 / (1 + distance)``. Equal scores come from
  Pinecone in no set order, so the adapter widens ``top_k`` until the group of equal
  scores at the cut is complete, and the facade orders them by id.
- **Writes** are split into requests of at most 1,000 records and about 2 MB; the facade
  sends batches in parallel (``write_concurrency``).
- **Consistency**: Pinecone is eventually consistent. Every write returns its log
  sequence number (LSN); a ``strong`` read (the default; fetch, count and listings are
  always strong) first waits until a query reports that the namespace has caught up
  with this adapter's writes, bounded by ``consistency_timeout`` and ending in
  ``ConsistencyTimeoutError``. ``eventual`` queries do not wait. The SDK does not return
  the LSN of deletes, so a delete returns only once it is visible (the deleted ids are
  gone from fetch, the filter matches nothing, the namespace is empty), with the same
  bound. If the service reports no LSN for an upsert, the upsert waits until fetch
  returns its ids.
- **Errors**: 429, 5xx, timeouts and dropped connections are ``TransientBackendError``
  (the facade retries idempotent operations; the SDK itself retries first); index
  creation and deletion are retried here, with a creation token in the index's tags so
  that a retried create recognises its own index.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn, TypeVar
from urllib.parse import quote

from pinecone import Pinecone, SparseValues, Vector
from pinecone.errors.exceptions import (
    ApiError,
    ConflictError,
    NotFoundError,
    PineconeConnectionError,
    PineconeError,
    PineconeTimeoutError,
    RateLimitError,
    ServiceError,
)
from pinecone.index import Index as PineconeIndex

from vectorport.adapters.pinecone.capabilities import PINECONE_CAPABILITIES
from vectorport.adapters.pinecone.codec import (
    BACKEND,
    checked_metadata,
    decode_id,
    decode_metadata,
    dense_values,
    encode_id,
    encode_id_checked,
    index_name_from_pinecone,
    index_name_to_pinecone,
    metadata_bytes,
    read_sparse,
    read_vector,
    sparse_values,
    try_encode_id,
    user_namespace,
)
from vectorport.adapters.pinecone.filters import compile_filter
from vectorport.adapters.pinecone.freshness import FreshnessTracker, wait_until
from vectorport.core.capabilities import Capabilities
from vectorport.core.config import ConnectionURL
from vectorport.core.errors import (
    BackendError,
    ConfigError,
    IndexExistsError,
    IndexNotFoundError,
    TransientBackendError,
    UnsupportedFeatureError,
    ValidationError,
)
from vectorport.core.filters.ast import Filter
from vectorport.core.scoring import score_from_distance, sort_matches
from vectorport.core.types import (
    IdPage,
    Include,
    IndexInfo,
    IndexSpec,
    Match,
    Metric,
    QueryRequest,
    Record,
)
from vectorport.core.validation import INDEX_NAME_RE

T = TypeVar("T")

MAX_TOP_K = 10_000
MAX_UPSERT_VECTORS = 1_000
MAX_UPSERT_BYTES = 2 * 1024 * 1024 - 128 * 1024  # Pinecone takes 2 MB; keep a margin
MAX_IDS_PER_REQUEST = 1_000
MAX_FETCH_URL_IDS_CHARS = 8_000  # fetch sends ids in the URL
MAX_LIST_PAGE = 100
MAX_FETCH_BY_METADATA_PAGE = 10_000
CREATE_TOKEN_TAG = "vectorport_create"
CONTROL_ATTEMPTS = 8
_URL_OPTIONS = frozenset({"api_key", "api_key_env", "host", "cloud", "region",
                          "consistency_timeout", "ready_timeout"})
_CREATE_OPTIONS = frozenset({"cloud", "region", "deletion_protection", "tags"})


@dataclass(frozen=True, slots=True)
class _Handle:
    """An open index: its Pinecone name and the SDK data-plane client for its host."""

    name: str
    host: str
    client: PineconeIndex


def _translate(exc: PineconeError, index: str | None = None) -> NoReturn:
    """Raise the contract's error for an SDK error (the SDK's messages carry no key)."""
    if isinstance(exc, NotFoundError) and index is not None:
        raise IndexNotFoundError(index) from exc
    if isinstance(exc, (RateLimitError, ServiceError, PineconeTimeoutError,
                        PineconeConnectionError)):
        raise TransientBackendError(f"pinecone: {exc}") from exc
    if isinstance(exc, ApiError):
        raise BackendError(f"pinecone: {exc}") from exc
    raise BackendError(f"pinecone: {type(exc).__name__}: {exc}") from exc


def _is_transient(exc: PineconeError) -> bool:
    return isinstance(exc, (RateLimitError, ServiceError, PineconeTimeoutError,
                            PineconeConnectionError))


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
        self._handles: dict[str, _Handle] = {}
        self._lock = threading.Lock()
        self._freshness = FreshnessTracker()

    @classmethod
    def from_url(cls, url: ConnectionURL) -> PineconeAdapter:
        url.unknown_options(_URL_OPTIONS)
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
        host = url.option("host") or None
        try:
            client = Pinecone(api_key=key.reveal(), host=host, source_tag="vectorport")
        except PineconeError as exc:
            raise ConfigError(f"cannot configure the Pinecone client: {exc}") from None
        return cls(
            client,
            host=host,
            cloud=url.option("cloud") or "aws",
            region=url.option("region") or "us-east-1",
            consistency_timeout=_seconds(url, "consistency_timeout", 30.0),
            ready_timeout=_seconds(url, "ready_timeout", 300.0),
        )

    def __repr__(self) -> str:
        return f"PineconeAdapter(host={self.host or 'https://api.pinecone.io'!r})"

    @property
    def capabilities(self) -> Capabilities:
        return PINECONE_CAPABILITIES

    # -- plumbing -----------------------------------------------------------------------------

    def _sdk(self, fn: Callable[[], T], index: str | None = None) -> T:
        try:
            return fn()
        except PineconeError as exc:
            if isinstance(exc, NotFoundError) and index is not None:
                self._drop(index, close=False)  # other threads may still hold it
            _translate(exc, index)

    def _control(self, fn: Callable[[], T], index: str | None = None) -> T:
        """A control-plane call, retried here on transient failures."""
        for attempt in range(CONTROL_ATTEMPTS):
            try:
                return fn()
            except PineconeError as exc:
                if not _is_transient(exc) or attempt + 1 == CONTROL_ATTEMPTS:
                    _translate(exc, index)
            time.sleep(min(0.05 * 2**attempt, 1.0))
        raise AssertionError("unreachable")

    def _drop(self, name: str, *, close: bool = True) -> None:
        with self._lock:
            handle = self._handles.pop(name, None)
        if handle is not None and close:
            handle.client.close()

    def _model(self, name: str) -> Any:
        return self._control(lambda: self._pc.indexes.describe(index_name_to_pinecone(name)),
                             name)

    def _handle(self, name: str) -> _Handle:
        with self._lock:
            handle = self._handles.get(name)
        if handle is not None:
            return handle
        return self._open(name, self._model(name))

    def _open(self, name: str, model: Any) -> _Handle:
        host = model.host
        if not host:
            raise BackendError(f"pinecone: index {name!r} has no host yet")
        with self._lock:
            handle = self._handles.get(name)
            if handle is not None and handle.host == host:
                return handle
            client = self._sdk(lambda: self._pc.index(host=host))
            self._handles[name] = _Handle(model.name, host, client)
            return self._handles[name]

    def _probe(self, spec: IndexSpec) -> list[float]:
        return [1.0] + [0.0] * (spec.dimension - 1)

    def _await_fresh(self, handle: _Handle, spec: IndexSpec, namespace: str) -> None:
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
        except NotFoundError:
            self._drop(spec.name, close=False)
            raise IndexNotFoundError(spec.name) from exc
        except PineconeError as other:
            _translate(other, spec.name)

    # -- index lifecycle ---------------------------------------------------------------------

    def create_index(self, spec: IndexSpec) -> None:
        options = _create_options(spec)
        if spec.index_params:
            raise UnsupportedFeatureError(BACKEND, "index parameters",
                                          "Pinecone manages its index structure itself")
        if spec.sparse and spec.metric != "dotproduct":
            raise UnsupportedFeatureError(
                BACKEND, f"sparse vectors with the {spec.metric} metric",
                "Pinecone scores sparse-dense vectors on dotproduct indexes only",
            )
        fields: dict[str, Any] = {"_values": {
            "type": "dense_vector", "dimension": spec.dimension, "metric": spec.metric}}
        if spec.sparse:
            fields["_sparse_values"] = {"type": "sparse_vector"}
        token = uuid.uuid4().hex
        tags = {**options.get("tags", {}), CREATE_TOKEN_TAG: token}
        name = index_name_to_pinecone(spec.name)
        deployment = {"deployment_type": "managed",
                      "cloud": options.get("cloud", self.cloud),
                      "region": options.get("region", self.region)}

        def create() -> Any:
            try:
                return self._pc.indexes.create(
                    name=name, schema={"fields": fields}, deployment=deployment, tags=tags,
                    deletion_protection=options.get("deletion_protection", "disabled"),
                    timeout=-1,
                )
            except ConflictError:
                # Ours when a retry (the SDK's or ours) follows a create that landed.
                existing = self._control(lambda: self._pc.indexes.describe(name), spec.name)
                if (existing.tags or {}).get(CREATE_TOKEN_TAG) == token:
                    return existing
                raise IndexExistsError(spec.name) from None

        model = self._control(create, spec.name)

        def ready() -> bool:
            nonlocal model
            if model.status.ready:
                return True
            model = self._model(spec.name)
            return bool(model.status.ready)

        wait_until(ready, self.ready_timeout, f"the new index {spec.name!r}")
        self._open(spec.name, model)

    def describe_index(self, name: str) -> IndexInfo:
        model = self._model(name)
        spec = _spec_from_model(name, model)
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
            if INDEX_NAME_RE.match(name) and _is_vector_index(model):
                names.append(name)
        return names

    def delete_index(self, name: str) -> None:
        pinecone_name = index_name_to_pinecone(name)
        # Asked first, so that a 404 below can only mean that a delete landed (a retried
        # one after a transient failure, or a concurrent one): the index is gone.
        self._model(name)

        def delete() -> None:
            with contextlib.suppress(NotFoundError):
                self._pc.indexes.delete(pinecone_name, timeout=-1)

        self._control(delete, name)
        self._drop(name)
        self._freshness.forget(name)

        def gone() -> bool:
            try:
                self._pc.indexes.describe(pinecone_name)
            except NotFoundError:
                return True
            except PineconeError as exc:
                _translate(exc)
            return False

        wait_until(gone, self.ready_timeout, f"the deletion of index {name!r}")

    # -- data -----------------------------------------------------------------------------------

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        vectors = [(_wire_vector(r), r) for r in records]  # all checks before any I/O
        handle = self._handle(index.name)
        for chunk in _upsert_chunks(vectors):
            answer = self._sdk(lambda chunk=chunk: handle.client.upsert(  # type: ignore[misc]
                vectors=[v for v, _ in chunk], namespace=namespace), index.name)
            info = answer.response_info
            lsn = info.lsn_committed if info is not None else None
            if lsn is not None:
                self._freshness.wrote(index.name, namespace, lsn)
            else:
                wire = [v.id for v, _ in chunk]
                wait_until(lambda wire=wire: self._all_present(  # type: ignore[misc]
                    handle, index, namespace, wire), self.consistency_timeout,
                    f"an upsert into namespace {namespace!r} of index {index.name!r}")

    def query(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        flt = compile_filter(request.filter)  # unsupported shapes fail before any I/O
        _check_query_options(request)
        sparse = sparse_values(request.sparse) if request.sparse is not None else None
        # A sparse-only query goes out as a hybrid one with a zero dense part: Pinecone
        # then scores every record (0 + sparse), not only those sharing a term.
        vector: list[float] = (request.vector.tolist() if request.vector is not None
                               else [0.0] * index.dimension)
        handle = self._handle(index.name)
        namespace = request.namespace
        include = request.include

        def run(top_k: int) -> Any:
            return self._sdk(lambda: handle.client.query(
                top_k=top_k, vector=vector, sparse_vector=sparse, namespace=namespace,
                filter=flt, include_values=include.vectors,
                include_metadata=include.metadata or include.documents,
            ), index.name)

        # One more than asked, to see whether equal scores run across the cut.
        ask = min(request.top_k + 1, MAX_TOP_K)
        target = (self._freshness.awaited(index.name, namespace)
                  if request.consistency == "strong" else None)
        if target is None:
            answer = run(ask)
        else:
            answers: list[Any] = []

            def caught_up() -> bool:
                answers.append(run(ask))
                return self._reached(index.name, namespace, answers[-1], target)

            wait_until(caught_up, self.consistency_timeout,
                       f"a write to namespace {namespace!r} of index {index.name!r}")
            answer = answers[-1]
        matches = list(answer.matches)
        while _tie_at_cut(matches, request.top_k, ask):
            ask = min(ask * 2, MAX_TOP_K)
            matches = list(run(ask).matches)
        converted = [_match(m, index.metric, include) for m in matches]
        if request.min_score is not None:
            converted = [m for m in converted if m.score >= request.min_score]
        return sort_matches(converted)[: request.top_k]

    def fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        wire = [w for w in dict.fromkeys(try_encode_id(i) for i in ids) if w is not None]
        if not wire:
            return []
        handle = self._handle(index.name)
        self._await_fresh(handle, index, namespace)
        records: list[Record] = []
        for chunk in _fetch_chunks(wire):
            answer = self._sdk(lambda chunk=chunk: handle.client.fetch(  # type: ignore[misc]
                ids=chunk, namespace=namespace), index.name)
            records.extend(_record(vector) for vector in answer.vectors.values())
        return records

    def delete(
        self,
        index: IndexSpec,
        namespace: str,
        ids: Sequence[str] | None,
        filter: Filter | None,
    ) -> None:
        if ids is None:
            flt = compile_filter(filter)  # before any I/O
            if flt is None:
                raise ValidationError("delete by filter needs a filter")
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
        wire = [w for w in dict.fromkeys(try_encode_id(i) for i in ids) if w is not None]
        if not wire:
            return
        handle = self._handle(index.name)
        self._await_fresh(handle, index, namespace)
        for start in range(0, len(wire), MAX_IDS_PER_REQUEST):
            chunk = wire[start:start + MAX_IDS_PER_REQUEST]
            if not self._delete_call(handle, index, lambda chunk=chunk: (  # type: ignore[misc]
                    handle.client.delete(ids=chunk, namespace=namespace))):
                return
        wait_until(lambda: not self._any_present(handle, index, namespace, wire),
                   self.consistency_timeout,
                   f"a delete by id in namespace {namespace!r} of index {index.name!r}")

    def _delete_call(self, handle: _Handle, index: IndexSpec, call: Callable[[], Any]) -> bool:
        """Send a delete; ``False`` when the namespace does not exist (nothing to do)."""
        try:
            call()
        except NotFoundError as exc:
            self._namespace_absent(index, exc)
            return False
        except PineconeError as exc:
            _translate(exc, index.name)
        return True

    def _present(
        self, handle: _Handle, index: IndexSpec, namespace: str, wire: list[str]
    ) -> set[str]:
        found: set[str] = set()
        for chunk in _fetch_chunks(wire):
            answer = self._sdk(lambda chunk=chunk: handle.client.fetch(  # type: ignore[misc]
                ids=chunk, namespace=namespace), index.name)
            found.update(answer.vectors)
        return found

    def _any_present(
        self, handle: _Handle, index: IndexSpec, namespace: str, wire: list[str]
    ) -> bool:
        return bool(self._present(handle, index, namespace, wire))

    def _all_present(
        self, handle: _Handle, index: IndexSpec, namespace: str, wire: list[str]
    ) -> bool:
        return len(self._present(handle, index, namespace, wire)) == len(set(wire))

    def count(self, index: IndexSpec, namespace: str, filter: Filter | None) -> int:
        flt = compile_filter(filter)  # before any I/O
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

    def _namespace_count(self, handle: _Handle, index: IndexSpec, namespace: str) -> int:
        stats = self._sdk(lambda: handle.client.describe_index_stats(), index.name)
        return sum(summary.vector_count for ns, summary in stats.namespaces.items()
                   if user_namespace(ns) == namespace)

    def list_namespaces(self, index: IndexSpec) -> list[str]:
        handle = self._handle(index.name)
        for namespace in self._freshness.pending_namespaces(index.name):
            self._await_fresh(handle, index, namespace)
        stats = self._sdk(lambda: handle.client.describe_index_stats(), index.name)
        return sorted({user_namespace(ns) for ns, summary in stats.namespaces.items()
                       if summary.vector_count})

    def delete_namespace(self, index: IndexSpec, namespace: str) -> None:
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
        if wire_prefix is not None and len(wire_prefix) > 512:
            return IdPage((), None)  # no stored id can be that long
        handle = self._handle(index.name)
        self._await_fresh(handle, index, namespace)
        ids: list[str] = []
        token = cursor
        while len(ids) < limit:
            size = min(MAX_LIST_PAGE, limit - len(ids))
            try:
                page = handle.client.list_paginated(
                    prefix=wire_prefix, limit=size, pagination_token=token, namespace=namespace)
            except NotFoundError as exc:
                self._namespace_absent(index, exc)
                return IdPage((), None)
            except PineconeError as exc:
                _translate(exc, index.name)
            ids.extend(decode_id(item.id) for item in page.vectors if item.id is not None)
            token = page.pagination.next if page.pagination is not None else None
            if not token:
                break
        return IdPage(tuple(ids), token or None)

    def close(self) -> None:
        with self._lock:
            handles = list(self._handles.values())
            self._handles.clear()
        for handle in handles:
            handle.client.close()
        self._pc.close()


# -- helpers ------------------------------------------------------------------------------------


def _seconds(url: ConnectionURL, name: str, default: float) -> float:
    raw = url.option(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"URL option {name}={raw!r} must be a number of seconds") from None
    if not value > 0:
        raise ConfigError(f"URL option {name} must be positive")
    return value


def _create_options(spec: IndexSpec) -> dict[str, Any]:
    options = dict(spec.backend_options.get(BACKEND, {}))
    unknown = set(options) - _CREATE_OPTIONS
    if unknown:
        raise ValidationError(
            f"unknown pinecone option(s) {', '.join(sorted(unknown))}; "
            f"known: {', '.join(sorted(_CREATE_OPTIONS))}"
        )
    for key in ("cloud", "region"):
        if key in options and not isinstance(options[key], str):
            raise ValidationError(f"pinecone option {key!r} must be a str")
    if options.get("deletion_protection", "disabled") not in ("enabled", "disabled"):
        raise ValidationError("pinecone option 'deletion_protection' is 'enabled' or 'disabled'")
    tags = options.get("tags", {})
    if not isinstance(tags, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in tags.items()
    ):
        raise ValidationError("pinecone option 'tags' must map str to str")
    if CREATE_TOKEN_TAG in tags:
        raise ValidationError(f"the tag {CREATE_TOKEN_TAG!r} is reserved by vectorport")
    return options


def _check_query_options(request: QueryRequest) -> None:
    options = request.options_for(BACKEND)
    if options:
        raise ValidationError(
            f"unknown pinecone query option(s) {', '.join(sorted(map(str, options)))}; "
            "the pinecone adapter takes none"
        )


def _is_vector_index(model: Any) -> bool:
    fields = getattr(getattr(model, "schema", None), "fields", None) or {}
    return "_values" in fields and set(fields) <= {"_values", "_sparse_values"}


def _spec_from_model(name: str, model: Any) -> IndexSpec:
    if not _is_vector_index(model):
        fields = sorted(getattr(model.schema, "fields", {}) or {})
        raise BackendError(
            f"pinecone: index {name!r} is not a vector index (schema fields {fields}); "
            "vectorport uses indexes with the '_values' dense field"
        )
    dense = model.schema.fields["_values"]
    metric: Metric = dense.metric
    return IndexSpec(name=name, dimension=int(dense.dimension), metric=metric,
                     sparse="_sparse_values" in model.schema.fields)


def _wire_vector(record: Record) -> Vector:
    metadata = checked_metadata(record)
    return Vector(
        id=encode_id_checked(record.id),
        values=dense_values(record.vector),
        sparse_values=(SparseValues(**sparse_values(record.sparse))
                       if record.sparse is not None else None),
        metadata=metadata or None,
    )


def _estimated_bytes(vector: Vector) -> int:
    sparse = len(vector.sparse_values.indices) if vector.sparse_values is not None else 0
    meta = metadata_bytes(vector.metadata) if vector.metadata else 0
    return 64 + len(vector.id) * 2 + 25 * len(vector.values) + 36 * sparse + meta


def _upsert_chunks(
    vectors: list[tuple[Vector, Record]],
) -> Iterator[list[tuple[Vector, Record]]]:
    chunk: list[tuple[Vector, Record]] = []
    size = 0
    for item in vectors:
        cost = _estimated_bytes(item[0])
        if chunk and (len(chunk) >= MAX_UPSERT_VECTORS or size + cost > MAX_UPSERT_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(item)
        size += cost
    if chunk:
        yield chunk


def _fetch_chunks(wire: list[str]) -> Iterator[list[str]]:
    chunk: list[str] = []
    size = 0
    for rid in wire:
        cost = len(quote(rid, safe="")) + 5
        if chunk and (len(chunk) >= MAX_IDS_PER_REQUEST or size + cost > MAX_FETCH_URL_IDS_CHARS):
            yield chunk
            chunk, size = [], 0
        chunk.append(rid)
        size += cost
    if chunk:
        yield chunk


def _tie_at_cut(matches: list[Any], top_k: int, asked: int) -> bool:
    """Whether equal scores run across the ``top_k`` cut beyond what was fetched."""
    if len(matches) < asked or asked >= MAX_TOP_K or len(matches) <= top_k:
        return False
    boundary = matches[top_k - 1].score
    return bool(matches[-1].score == boundary)


def _score(metric: Metric, raw: float) -> float:
    if metric == "euclidean":  # Pinecone reports the squared distance
        return score_from_distance("l2_squared", raw)
    return float(raw)


def _match(scored: Any, metric: Metric, include: Include) -> Match:
    metadata, document = decode_metadata(scored.metadata)
    return Match(
        id=decode_id(scored.id),
        score=_score(metric, scored.score),
        metadata=metadata if include.metadata else None,
        vector=read_vector(scored.values) if include.vectors else None,
        sparse=read_sparse(scored.sparse_values) if include.vectors else None,
        document=document if include.documents else None,
    )


def _record(vector: Any) -> Record:
    metadata, document = decode_metadata(vector.metadata)
    return Record(
        id=decode_id(vector.id),
        vector=read_vector(vector.values),
        metadata=metadata,
        sparse=read_sparse(vector.sparse_values),
        document=document,
    )


__all__ = ["PineconeAdapter"]

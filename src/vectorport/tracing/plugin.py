"""One OpenTelemetry span per facade operation, from the operation hooks.

The span opens in ``vectorport_before_operation`` and closes in
``vectorport_after_operation``; in between it is the current span, so spans of the
database client underneath (an instrumented HTTP or PostgreSQL driver) nest under it.

What a span carries (the names follow OpenTelemetry's database conventions where they
have one):

=============================  ==========================================================
``db.system.name``             the backend (``pgvector``, ``pinecone``, ``local``…)
``db.operation.name``          the operation (``query``, ``upsert``, ``fetch``…)
``db.collection.name``         the index
``vectorport.namespace``       the namespace, or its SHA-256 prefix
                               (``vectorport.namespace_hash``), or nothing
``vectorport.top_k``           for ``query``
``vectorport.query_count``     for ``query_many``: the queries of the batch
``vectorport.record_count``    records written, ids fetched or deleted, ids listed
``vectorport.retries``         transient failures retried inside the operation
``vectorport.duration_s``      the facade's own measure of the operation
``error.type``                 the exception's class name, when it failed
=============================  ==========================================================

``db.response.returned_rows`` (the result count) is set when the hooks pass one (see
:meth:`TracingPlugin.finish`); today's after-hook does not. Never on a span: vectors,
metadata or document values, filter values, exception messages (they may quote a
value), URLs or keys.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from opentelemetry import context, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from vectorport import OperationEvent, __version__, hookimpl

NamespaceMode: TypeAlias = Literal["plain", "hash", "omit"]

TRACER_NAME = "vectorport"
RETRY_LOGGER = "vectorport.retry"

_SIZE_ATTRIBUTE = {"query": "vectorport.top_k", "query_many": "vectorport.query_count"}
"""What ``OperationEvent.size`` means for operations other than the record ones."""
_RECORD_OPERATIONS = frozenset({"upsert", "fetch", "delete", "patch", "list_ids"})


def namespace_hash(namespace: str) -> str:
    """A stable, non-reversible label for a namespace (tenant names can be personal)."""
    return hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:16]


@dataclass(slots=True)
class _Open:
    """A span between its two hooks (mutable: the retry counter adds to it)."""

    span: Span
    token: object
    retries: int = 0


class _RetryCounter(logging.Handler):
    """Counts the facade's retry records against the span current in that thread.

    The retry loop runs between the two hooks, on the thread that opened the span, and
    logs each retry on ``vectorport.retry``; that is the only trace of a retry the hooks
    can see without a change to the core (see the tracing docs)."""

    def __init__(self, plugin: TracingPlugin) -> None:
        super().__init__(logging.INFO)
        self.plugin = plugin

    def emit(self, record: logging.LogRecord) -> None:
        self.plugin.count_retry(trace.get_current_span())


class TracingPlugin:
    """Register with ``registry.register_plugin(TracingPlugin())``, or set
    ``VECTORPORT_OTEL=1`` (see :mod:`vectorport.tracing`).

    ``tracer_provider`` defaults to the global one. ``namespace`` is ``"plain"``,
    ``"hash"`` (a SHA-256 prefix, for namespaces named after tenants) or ``"omit"``.
    ``count_retries`` listens to the ``vectorport.retry`` logger (and so sets it to
    ``INFO`` when it is quieter).
    """

    def __init__(self, tracer_provider: trace.TracerProvider | None = None, *,
                 namespace: NamespaceMode = "plain", count_retries: bool = True) -> None:
        if namespace not in ("plain", "hash", "omit"):
            raise ValueError(f"namespace must be 'plain', 'hash' or 'omit', got {namespace!r}")
        self.namespace_mode: NamespaceMode = namespace
        self.tracer = trace.get_tracer(TRACER_NAME, __version__, tracer_provider=tracer_provider)
        self._open: dict[int, _Open] = {}
        self._by_span: dict[int, _Open] = {}
        self._lock = threading.Lock()
        self._counter: _RetryCounter | None = None
        if count_retries:
            self._counter = _RetryCounter(self)
            retry_log = logging.getLogger(RETRY_LOGGER)
            retry_log.addHandler(self._counter)
            if not retry_log.isEnabledFor(logging.INFO):
                retry_log.setLevel(logging.INFO)

    def __repr__(self) -> str:
        return f"TracingPlugin(namespace={self.namespace_mode!r})"

    def close(self) -> None:
        """Stop listening for retries (the plugin stays registered)."""
        if self._counter is not None:
            logging.getLogger(RETRY_LOGGER).removeHandler(self._counter)
            self._counter = None

    # -- attributes -----------------------------------------------------------------------

    def attributes(self, event: OperationEvent) -> dict[str, Any]:
        """What a span of ``event`` starts with: names and counts only."""
        attrs: dict[str, Any] = {"db.system.name": event.backend,
                                 "db.operation.name": event.operation}
        if event.index is not None:
            attrs["db.collection.name"] = event.index
        if event.namespace is not None and self.namespace_mode != "omit":
            if self.namespace_mode == "hash":
                attrs["vectorport.namespace_hash"] = namespace_hash(event.namespace)
            else:
                attrs["vectorport.namespace"] = event.namespace
        if event.size is not None:
            key = ("vectorport.record_count" if event.operation in _RECORD_OPERATIONS
                   else _SIZE_ATTRIBUTE.get(event.operation, "vectorport.size"))
            attrs[key] = event.size
        return attrs

    @staticmethod
    def span_name(event: OperationEvent) -> str:
        """``{operation} {index}``, as OpenTelemetry's database conventions name spans."""
        return f"{event.operation} {event.index}" if event.index else event.operation

    # -- the hooks --------------------------------------------------------------------------

    @hookimpl
    def vectorport_before_operation(self, event: OperationEvent) -> None:
        span = self.tracer.start_span(self.span_name(event), kind=SpanKind.CLIENT,
                                      attributes=self.attributes(event))
        token = context.attach(trace.set_span_in_context(span))
        entry = _Open(span, token)
        with self._lock:
            self._open[id(event)] = entry
            self._by_span[id(span)] = entry

    @hookimpl
    def vectorport_after_operation(self, event: OperationEvent, error: BaseException | None,
                                   seconds: float) -> None:
        self.finish(event, error, seconds)

    def finish(self, event: OperationEvent, error: BaseException | None, seconds: float, *,
               result_count: int | None = None, retries: int | None = None) -> None:
        """Close the span of ``event``. ``result_count`` and ``retries`` are for an
        after-hook that reports them; until then retries come from the retry log."""
        with self._lock:
            entry = self._open.pop(id(event), None)
            if entry is not None:
                self._by_span.pop(id(entry.span), None)
        if entry is None:
            return  # registered between the two hooks of this operation
        span = entry.span
        try:
            span.set_attribute("vectorport.duration_s", float(seconds))
            counted = retries if retries is not None else (
                entry.retries if self._counter is not None else None)
            if counted is not None:
                span.set_attribute("vectorport.retries", counted)
            if result_count is not None:
                span.set_attribute("db.response.returned_rows", result_count)
            if error is not None:
                kind = type(error).__name__
                span.set_attribute("error.type", kind)
                # The class only: an exception's message may quote a filter or a value.
                span.set_status(Status(StatusCode.ERROR, kind))
        finally:
            span.end()
            context.detach(entry.token)  # type: ignore[arg-type]

    def count_retry(self, span: Span) -> None:
        with self._lock:
            entry = self._by_span.get(id(span))
            if entry is not None:
                entry.retries += 1

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
``vectorport.top_k``           for ``query`` and ``query_many``
``vectorport.query_count``     for ``query_many``: the queries of the batch
``vectorport.record_count``    records written, ids fetched or deleted, ids listed
``vectorport.retries``         transient failures retried inside the operation
``db.response.returned_rows``  the result count (matches, records found, ids, count)
``vectorport.duration_s``      the facade's own measure of the operation
``error.type``                 the exception's class name, when it failed
=============================  ==========================================================

Retries and the result count come from the after-hook's
:class:`~vectorport.core.plugin.OperationOutcome`. Never on a span: vectors, metadata
or document values, filter values, exception messages (they may quote a value), URLs
or keys.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from opentelemetry import context, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from vectorport import OperationEvent, __version__, hookimpl
from vectorport.core.plugin import OperationOutcome

NamespaceMode: TypeAlias = Literal["plain", "hash", "omit"]

TRACER_NAME = "vectorport"


def namespace_hash(namespace: str) -> str:
    """A stable, non-reversible label for a namespace (tenant names can be personal)."""
    return hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class _Open:
    """A span between its two hooks."""

    span: Span
    token: object


class TracingPlugin:
    """Register with ``registry.register_plugin(TracingPlugin())``, or set
    ``VECTORPORT_OTEL=1`` (see :mod:`vectorport.tracing`).

    ``tracer_provider`` defaults to the global one. ``namespace`` is ``"plain"``,
    ``"hash"`` (a SHA-256 prefix, for namespaces named after tenants) or ``"omit"``.
    ``count_retries=False`` leaves ``vectorport.retries`` off the spans.
    """

    def __init__(self, tracer_provider: trace.TracerProvider | None = None, *,
                 namespace: NamespaceMode = "plain", count_retries: bool = True) -> None:
        if namespace not in ("plain", "hash", "omit"):
            raise ValueError(f"namespace must be 'plain', 'hash' or 'omit', got {namespace!r}")
        self.namespace_mode: NamespaceMode = namespace
        self.count_retries = count_retries
        self.tracer = trace.get_tracer(TRACER_NAME, __version__, tracer_provider=tracer_provider)
        self._open: dict[int, _Open] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TracingPlugin(namespace={self.namespace_mode!r})"

    def close(self) -> None:
        """Nothing to release (kept for callers of the retry-log version)."""

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
        if event.top_k is not None:
            attrs["vectorport.top_k"] = event.top_k
        if event.record_count is not None:
            key = ("vectorport.query_count" if event.operation == "query_many"
                   else "vectorport.record_count")
            attrs[key] = event.record_count
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
        with self._lock:
            self._open[id(event)] = _Open(span, token)

    @hookimpl
    def vectorport_after_operation(self, event: OperationEvent, error: BaseException | None,
                                   seconds: float, outcome: OperationOutcome) -> None:
        self.finish(event, error, seconds, outcome)

    def finish(self, event: OperationEvent, error: BaseException | None, seconds: float,
               outcome: OperationOutcome | None = None) -> None:
        """Close the span of ``event`` with what the operation came to."""
        with self._lock:
            entry = self._open.pop(id(event), None)
        if entry is None:
            return  # registered between the two hooks of this operation
        span = entry.span
        try:
            span.set_attribute("vectorport.duration_s", float(seconds))
            if outcome is not None:
                if self.count_retries and outcome.attempts:
                    span.set_attribute("vectorport.retries", outcome.retries)
                if outcome.result_count is not None and error is None:
                    span.set_attribute("db.response.returned_rows", outcome.result_count)
            if error is not None:
                kind = type(error).__name__
                span.set_attribute("error.type", kind)
                # The class only: an exception's message may quote a filter or a value.
                span.set_status(Status(StatusCode.ERROR, kind))
        finally:
            span.end()
            context.detach(entry.token)  # type: ignore[arg-type]

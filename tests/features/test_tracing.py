"""The OpenTelemetry plugin: one span per operation, names and counts only.

Spans are read back with the SDK's in-memory exporter, from real stores (the local
engine, and the turbopuffer emulator for retries).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import vectorport
from vectorport import IndexNotFoundError, OperationEvent, Registry
from vectorport.core.plugin import OperationOutcome
from vectorport.testing.emulators.http import Faults
from vectorport.tracing import TracingPlugin, namespace_hash

SECRET_WORDS = ("acme-secret-tenant-value", "classified document body", "0.123456789")
VECTOR = [0.123456789, 0.5, 0.25]


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def traced_registry(plugin: TracingPlugin) -> Registry:
    registry = Registry()
    registry.register_plugin(plugin, "otel-test")
    return registry


@pytest.fixture
def plugin(provider: TracerProvider) -> Iterator[TracingPlugin]:
    plugin = TracingPlugin(provider)
    yield plugin
    plugin.close()


def by_operation(spans: tuple[ReadableSpan, ...], operation: str) -> list[ReadableSpan]:
    return [s for s in spans if (s.attributes or {}).get("db.operation.name") == operation]


def all_values(span: ReadableSpan) -> str:
    """Everything a span would export, as text, to look for leaked values."""
    return json.dumps({"name": span.name, "attributes": dict(span.attributes or {}),
                       "status": str(span.status.description),
                       "events": [dict(e.attributes or {}) for e in span.events]})


def test_one_span_per_operation_with_names_and_counts(plugin: TracingPlugin,
                                                      exporter: InMemorySpanExporter) -> None:
    store = vectorport.connect("memory://", registry=traced_registry(plugin))
    index = store.create_index("docs", dimension=3)
    records = [{"id": f"r{i}", "vector": [1.0, float(i), 0.5],
                "metadata": {"tenant": SECRET_WORDS[0], "n": i},
                "document": SECRET_WORDS[1]} for i in range(4)]
    index.upsert(records, namespace="ns-a")
    found = index.query(VECTOR, top_k=3, namespace="ns-a",
                        filter={"tenant": {"$eq": SECRET_WORDS[0]}})
    index.fetch(["r0", "r1"], namespace="ns-a")
    index.delete(["r3"], namespace="ns-a")
    fetched = index.fetch(["r0", "r1", "missing"], namespace="ns-b")
    answers = index.query_many([VECTOR, [0.5, 0.5, 0.5]], top_k=2, namespace="ns-a")

    spans = exporter.get_finished_spans()
    operations = [(s.attributes or {}).get("db.operation.name") for s in spans]
    assert operations == ["create_index", "upsert", "query", "fetch", "delete", "fetch",
                          "query_many"]

    (query,) = by_operation(spans, "query")
    attrs = dict(query.attributes or {})
    assert query.name == "query docs"
    assert attrs["db.system.name"] == store.backend == "local"
    assert attrs["db.collection.name"] == "docs"
    assert attrs["vectorport.namespace"] == "ns-a"
    assert attrs["vectorport.top_k"] == 3
    assert attrs["vectorport.retries"] == 0
    assert attrs["db.response.returned_rows"] == len(found)
    assert 0 <= attrs["vectorport.duration_s"] <= (query.end_time - query.start_time) / 1e9 + 1e-3
    assert "error.type" not in attrs
    assert len(found) == 3

    (upsert,) = by_operation(spans, "upsert")
    assert dict(upsert.attributes or {})["vectorport.record_count"] == len(records)
    fetch, fetch_other = by_operation(spans, "fetch")
    assert dict(fetch.attributes or {})["vectorport.record_count"] == 2
    assert dict(fetch.attributes or {})["db.response.returned_rows"] == 2
    assert dict(fetch_other.attributes or {})["vectorport.record_count"] == 3
    assert dict(fetch_other.attributes or {})["db.response.returned_rows"] == len(fetched) == 0
    (batch,) = by_operation(spans, "query_many")
    batch_attrs = dict(batch.attributes or {})
    assert batch_attrs["vectorport.query_count"] == 2
    assert batch_attrs["vectorport.top_k"] == 2  # the batch's top_k, no longer lost
    assert batch_attrs["db.response.returned_rows"] == sum(len(a) for a in answers)

    for span in spans:  # no metadata, document, filter or vector value anywhere
        text = all_values(span)
        for word in SECRET_WORDS:
            assert word not in text, (span.name, word)


def test_namespace_hash_and_omit(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    for mode in ("hash", "omit"):
        exporter.clear()
        plugin = TracingPlugin(provider, namespace=mode, count_retries=False)
        store = vectorport.connect("memory://", registry=traced_registry(plugin))
        index = store.create_index("docs", dimension=3)
        index.upsert([("a", [1, 0, 0], {})], namespace="tenant-42")
        (upsert,) = by_operation(exporter.get_finished_spans(), "upsert")
        attrs = dict(upsert.attributes or {})
        assert "vectorport.namespace" not in attrs
        assert "tenant-42" not in all_values(upsert)
        if mode == "hash":
            assert attrs["vectorport.namespace_hash"] == namespace_hash("tenant-42")
        else:
            assert "vectorport.namespace_hash" not in attrs
        assert "vectorport.retries" not in attrs  # not counted: not claimed
    with pytest.raises(ValueError, match="plain"):
        TracingPlugin(provider, namespace="clear")  # type: ignore[arg-type]


def test_failed_operation_records_the_error_type_only(plugin: TracingPlugin,
                                                      exporter: InMemorySpanExporter) -> None:
    store = vectorport.connect("memory://", registry=traced_registry(plugin))
    index = store.create_index("gone", dimension=3)
    store.delete_index("gone")
    with pytest.raises(IndexNotFoundError) as raised:
        index.query([1, 0, 0], top_k=2, filter={"secret": "acme-secret-tenant-value"})
    (query,) = by_operation(exporter.get_finished_spans(), "query")
    attrs = dict(query.attributes or {})
    assert attrs["error.type"] == type(raised.value).__name__ == "IndexNotFoundError"
    assert query.status.status_code is StatusCode.ERROR
    assert str(raised.value) not in all_values(query)  # the class, never the message
    assert "acme-secret-tenant-value" not in all_values(query)


def test_spans_nest_under_the_callers_span(plugin: TracingPlugin, provider: TracerProvider,
                                           exporter: InMemorySpanExporter) -> None:
    store = vectorport.connect("memory://", registry=traced_registry(plugin))
    index = store.create_index("docs", dimension=3)
    with provider.get_tracer("app").start_as_current_span("request") as parent:
        index.query([1, 0, 0], top_k=1)
    (query,) = by_operation(exporter.get_finished_spans(), "query")
    assert query.parent is not None
    assert query.parent.span_id == parent.get_span_context().span_id


def test_retries_are_counted(plugin: TracingPlugin, exporter: InMemorySpanExporter) -> None:
    turbopuffer = pytest.importorskip("turbopuffer")
    from vectorport.adapters.turbopuffer.adapter import TurbopufferAdapter
    from vectorport.core.retry import NO_RETRY
    from vectorport.testing.emulators.turbopuffer import running

    # Retries come from the after-hook's outcome, not from the retry log: silence it.
    retry_log = logging.getLogger("vectorport.retry")
    was_disabled, retry_log.disabled = retry_log.disabled, True
    with running(api_key="emulator-key") as server:
        # No retries below the facade (the SDK's, the adapter's per request), so every
        # request past the first of a query is a retry of the whole operation.
        client = turbopuffer.Turbopuffer(api_key="emulator-key", base_url=server.url,
                                         max_retries=0, telemetry=False)
        store = vectorport.Store(TurbopufferAdapter(client, retry=NO_RETRY),
                                 registry=traced_registry(plugin),
                                 retry=vectorport.RetryPolicy(attempts=30, base_seconds=0.001,
                                                              cap_seconds=0.002))
        index = store.create_index("retry_docs", dimension=3)
        index.upsert([("a", [1, 0, 0], {}), ("b", [0, 1, 0], {})])
        before = server.requests_served
        index.query([1, 0, 0], top_k=1)
        assert server.requests_served - before == 1  # one request per query, so:
        server.faults = Faults(error_rate=0.6, seed=7)
        exporter.clear()
        before = server.requests_served
        for _ in range(5):
            index.query([1, 0, 0], top_k=1)
        sent = server.requests_served - before
        server.faults = Faults()
        store.delete_index("retry_docs")
    retry_log.disabled = was_disabled
    queries = by_operation(exporter.get_finished_spans(), "query")
    retries = [int(dict(s.attributes or {})["vectorport.retries"]) for s in queries]
    assert len(queries) == 5
    assert sum(retries) == sent - 5 > 0  # every request past the first of each was a retry


class Outcomes:
    """A plugin of the new after-hook argument only, next to one of the old three."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, OperationOutcome, int | None, int | None]] = []

    @vectorport.hookimpl
    def vectorport_after_operation(self, event: OperationEvent,
                                   outcome: OperationOutcome) -> None:
        self.seen.append((event.operation, outcome, event.top_k, event.record_count))


class OldStyle:
    calls = 0

    @vectorport.hookimpl
    def vectorport_after_operation(self, event: OperationEvent, error: Any,
                                   seconds: float) -> None:
        OldStyle.calls += 1


def test_after_hook_outcome_and_old_signatures() -> None:
    registry = Registry()
    outcomes = Outcomes()
    registry.register_plugin(outcomes, "outcomes")
    registry.register_plugin(OldStyle(), "old-style")
    store = vectorport.connect("memory://", registry=registry)
    index = store.create_index("docs", dimension=3)
    index.upsert([("a", [1, 0, 0], {"n": 1}), ("b", [0, 1, 0], {"n": 2})])
    found = index.query([1, 0, 0], top_k=5, filter={"n": {"$gte": 2}})
    total = index.count()
    assert not registry.broken
    by_op = {op: (outcome, top_k, count) for op, outcome, top_k, count in outcomes.seen}
    assert by_op["create_index"][0] == OperationOutcome(1, None)
    assert by_op["upsert"] == (OperationOutcome(1, None), None, 2)
    assert by_op["query"] == (OperationOutcome(1, len(found)), 5, None)
    assert by_op["count"][0] == OperationOutcome(1, total)
    assert OldStyle.calls == len(outcomes.seen)


def test_no_plugin_no_hooks() -> None:
    registry = Registry()
    assert not registry.has_operation_hooks()  # the facade skips the hooks entirely


def _run(code: str, env: dict[str, Any]) -> str:
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


ENV_SCRIPT = """
import json, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
import vectorport
store = vectorport.connect("memory://")
store.create_index("docs", dimension=2).query([1, 0], top_k=4, namespace="t1")
print(json.dumps({"hooks": vectorport.default_registry().has_operation_hooks(),
                  "spans": [dict(s.attributes) for s in exporter.get_finished_spans()]}))
"""


def test_env_var_turns_tracing_on(tmp_path: Path) -> None:
    on = json.loads(_run(ENV_SCRIPT, {"VECTORPORT_OTEL": "1", "VECTORPORT_OTEL_NAMESPACE": "hash"}))
    assert on["hooks"] is True
    query = [a for a in on["spans"] if a["db.operation.name"] == "query"]
    assert query and query[0]["vectorport.top_k"] == 4
    assert query[0]["vectorport.namespace_hash"] == namespace_hash("t1")
    off = json.loads(_run(ENV_SCRIPT, {"VECTORPORT_OTEL": ""}))
    assert off == {"hooks": False, "spans": []}

"""OpenTelemetry tracing of every facade operation (``pip install "vectorport[otel]"``).

Two ways to turn it on::

    # in code, on any tracer provider
    from vectorport.tracing import TracingPlugin
    vectorport.default_registry().register_plugin(TracingPlugin(), "otel-tracing")

    # or from the environment, on the global tracer provider
    VECTORPORT_OTEL=1 python app.py

Only ``opentelemetry-api`` is needed at run time; configure an SDK and exporter as
usual. Without the plugin the hooks are skipped entirely. See ``docs/tracing.md``.
"""

from vectorport.tracing.plugin import TracingPlugin, namespace_hash

__all__ = ["TracingPlugin", "namespace_hash"]

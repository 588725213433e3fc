"""OpenTelemetry tracing of every facade operation (``pip install ".[otel]"``).

Two ways to turn it on::

    # in code, on any tracer provider
    from vectorport.tracing import TracingPlugin
    vectorport.default_registry().register_plugin(TracingPlugin(), "otel-tracing")

    # or from the environment, on the global tracer provider
    VECTORPORT_OTEL=1 python app.py

Only ``opentelemetry-api`` is needed at run time; configure an SDK and exporter as
usual. Without the plugin the hooks are skipped entirely. See ``docs/tracing.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vectorport.tracing.plugin import TracingPlugin, namespace_hash

__all__ = ["TracingPlugin", "namespace_hash"]


def __getattr__(name: str) -> Any:
    # Lazy, so that the entry point (vectorport.tracing.autoload) imports no
    # OpenTelemetry while tracing is off, and loads even where it is not installed.
    if name in __all__:
        from vectorport.tracing import plugin

        return getattr(plugin, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

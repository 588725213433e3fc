"""The ``otel`` entry point of the ``vectorport`` plugin group: tracing by env var.

With ``VECTORPORT_OTEL=1`` when the registry loads its plugins, :data:`plugin` is a
:class:`~vectorport.tracing.TracingPlugin` on the global tracer provider
(``VECTORPORT_OTEL_NAMESPACE=plain|hash|omit`` picks how namespaces appear). Otherwise
it is an object with no hook implementations, so the facade still skips the hooks
entirely and OpenTelemetry is not even imported.
"""

from __future__ import annotations

import os

from vectorport.extras import install_hint

ENV_FLAG = "VECTORPORT_OTEL"
ENV_NAMESPACE = "VECTORPORT_OTEL_NAMESPACE"
_TRUE = frozenset({"1", "true", "yes", "on"})


class Disabled:
    """What the entry point registers when tracing is off: nothing to call."""

    def __repr__(self) -> str:
        return f"vectorport tracing (off; set {ENV_FLAG}=1)"


def enabled() -> bool:
    return os.environ.get(ENV_FLAG, "").strip().lower() in _TRUE


def load() -> object:
    if not enabled():
        return Disabled()
    try:
        from vectorport.tracing.plugin import TracingPlugin
    except ImportError as exc:
        raise ImportError(f'{ENV_FLAG}=1 needs opentelemetry-api ({exc.name} is missing): '
                          + install_hint("otel")) from exc
    mode = os.environ.get(ENV_NAMESPACE, "plain").strip().lower() or "plain"
    if mode not in ("plain", "hash", "omit"):
        raise ValueError(f"{ENV_NAMESPACE} must be plain, hash or omit, got {mode!r}")
    return TracingPlugin(namespace=mode)  # type: ignore[arg-type]


plugin = load()

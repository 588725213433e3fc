"""SDK exceptions as vectorport errors: retryable ones become ``TransientBackendError``.

Messages carry the operation, the HTTP status and the service's own ``error`` text, never
request headers, so the API key cannot reach a message or a log line.
"""

from __future__ import annotations

from typing import Any

from vectorport.core.errors import BackendError, TransientBackendError

TRANSIENT_STATUSES = frozenset({408, 409, 429})
"""Besides every 5xx: timeouts, lock conflicts and rate limits, as the SDK itself sees them."""


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def is_not_found(exc: BaseException) -> bool:
    return status_of(exc) == 404


def _service_message(exc: BaseException) -> str:
    body: Any = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return str(body["error"])
    return type(exc).__name__


def translate(exc: BaseException, operation: str) -> BackendError:
    """The vectorport error for an SDK exception (raise it ``from exc``)."""
    import turbopuffer

    status = status_of(exc)
    if status is not None:
        message = f"turbopuffer {operation} failed: HTTP {status}: {_service_message(exc)}"
        if status in TRANSIENT_STATUSES or status >= 500:
            return TransientBackendError(message)
        return BackendError(message)
    if isinstance(exc, turbopuffer.APIConnectionError):
        kind = "timed out" if isinstance(exc, turbopuffer.APITimeoutError) else "lost its connection"
        return TransientBackendError(f"turbopuffer {operation} {kind}")
    return BackendError(f"turbopuffer {operation} failed: {type(exc).__name__}")

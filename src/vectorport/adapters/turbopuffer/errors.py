"""turbopuffer SDK exceptions → the contract's error tree, through the kit's translator.

Messages carry the operation, the HTTP status and the service's own ``error`` text, never
request headers, so the API key cannot reach a message or a log line. 404 is "not
found" (a namespace that does not exist, which the adapter reads as "empty"); 408,
409, 429 and every 5xx, timeouts and lost connections are transient.
"""

from __future__ import annotations

from typing import Any

from vectorport.adapterkit import ErrorKind, ErrorTranslator

TRANSIENT_STATUSES = frozenset({408, 409, 429})
"""Besides every 5xx: timeouts, lock conflicts and rate limits, as the SDK itself sees them."""


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def classify(exc: BaseException) -> ErrorKind:
    import turbopuffer

    status = status_of(exc)
    if status is not None:
        if status == 404:
            return ErrorKind.NOT_FOUND
        if status in TRANSIENT_STATUSES or status >= 500:
            return ErrorKind.TRANSIENT
        return ErrorKind.OTHER
    if isinstance(exc, turbopuffer.APIConnectionError):
        return ErrorKind.TRANSIENT
    return ErrorKind.OTHER


def _reason(exc: BaseException) -> str:
    import turbopuffer

    status = status_of(exc)
    if status is not None:
        body: Any = getattr(exc, "body", None)
        text = (str(body["error"]) if isinstance(body, dict) and isinstance(body.get("error"), str)
                else type(exc).__name__)
        return f"HTTP {status}: {text}"
    if isinstance(exc, turbopuffer.APITimeoutError):
        return "timed out"
    if isinstance(exc, turbopuffer.APIConnectionError):
        return "lost its connection"
    return type(exc).__name__


TRANSLATOR = ErrorTranslator("turbopuffer", classify, _reason)


def is_not_found(exc: BaseException) -> bool:
    return TRANSLATOR.kind(exc) is ErrorKind.NOT_FOUND


__all__ = ["TRANSLATOR", "classify", "is_not_found", "status_of"]

"""Turning qdrant-client and qdrant-edge-py failures into the contract's error tree.

Translation is the adapter kit's (:class:`~vectorport.adapterkit.ErrorTranslator`); this
module only classifies. Messages carry the engine's reason; the API key is never in one
(qdrant-client sends it as a header, which no error message echoes).
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from vectorport.adapterkit import ErrorKind, ErrorTranslator

_TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_TRANSIENT_WORDS = ("timed out", "timeout", "connection refused", "connection reset",
                    "unavailable", "too many requests", "temporarily")


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def is_not_found(exc: BaseException) -> bool:
    message = str(exc).lower()
    return _status(exc) == 404 or ("not found" in message and "collection" in message) or (
        "doesn't exist" in message
    )


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    try:
        import httpx
    except ImportError:  # pragma: no cover - qdrant-client depends on httpx
        httpx = None  # type: ignore[assignment]
    if httpx is not None and isinstance(exc, (httpx.TransportError, httpx.TimeoutException)):
        return True
    if _status(exc) in _TRANSIENT_STATUS:
        return True
    message = str(exc).lower()
    return any(word in message for word in _TRANSIENT_WORDS)


def classify(exc: BaseException) -> ErrorKind:
    if is_not_found(exc):
        return ErrorKind.NOT_FOUND
    if is_transient(exc):
        return ErrorKind.TRANSIENT
    return ErrorKind.OTHER


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 500 else text[:497] + "..."


TRANSLATOR = ErrorTranslator("qdrant", classify, reason=_reason)


def translated(operation: str, index: str | None = None) -> AbstractContextManager[None]:
    """Re-raise what the SDKs throw as a ``VectorportError`` (the kit's translator)."""
    return TRANSLATOR.translated(operation, index=index)


__all__ = ["TRANSLATOR", "is_not_found", "is_transient", "translated"]

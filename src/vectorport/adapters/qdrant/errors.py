"""Turning qdrant-client and qdrant-edge-py failures into the contract's error tree.

Error translation is generic adapter work, kept in :func:`translated` to be swapped for
the adapter kit's. Messages carry the engine's reason; the API key is never in one
(qdrant-client sends it as a header, which no error message echoes).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from vectorport.core.errors import (
    BackendError,
    IndexNotFoundError,
    TransientBackendError,
    VectorportError,
)

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


@contextmanager
def translated(operation: str, index: str | None = None) -> Iterator[None]:
    """Re-raise what the SDKs throw as a ``VectorportError``."""
    try:
        yield
    except VectorportError:
        raise
    except Exception as exc:
        if index is not None and is_not_found(exc):
            raise IndexNotFoundError(index) from exc
        message = f"qdrant {operation} failed: {_reason(exc)}"
        if is_transient(exc):
            raise TransientBackendError(message) from exc
        raise BackendError(message) from exc


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 500 else text[:497] + "..."


__all__ = ["is_not_found", "is_transient", "translated"]

"""Turning pymilvus and gRPC failures into the contract's error tree.

Messages name the operation and carry the server's reason (which never contains the
token: pymilvus sends it as call metadata, not in requests the server echoes).
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

COLLECTION_NOT_FOUND = 100
COLLECTION_NOT_LOADED = 101
RATE_LIMITED = 8
_TRANSIENT_WORDS = ("unavailable", "deadline", "timeout", "timed out", "connection refused",
                    "rate limit", "too many requests", "fail connecting")


def is_not_loaded(exc: BaseException) -> bool:
    """A collection that exists but is released (after a restart): load it and retry."""
    code = getattr(exc, "code", None)
    message = str(getattr(exc, "message", exc)).lower()
    return code == COLLECTION_NOT_LOADED or ("released" in message and "load" in message) or (
        "not loaded" in message
    )


def is_not_found(exc: BaseException) -> bool:
    code = getattr(exc, "code", None)
    message = str(getattr(exc, "message", exc)).lower()
    return code == COLLECTION_NOT_FOUND or (
        "collection" in message and ("not exist" in message or "not found" in message)
    )


def _is_transient(exc: BaseException) -> bool:
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    try:
        from pymilvus.exceptions import MilvusUnavailableException
    except ImportError:  # pragma: no cover - pymilvus is installed with the adapter
        return False
    if isinstance(exc, MilvusUnavailableException):
        return True
    if getattr(exc, "retriable", False) or getattr(exc, "code", None) == RATE_LIMITED:
        return True
    message = str(getattr(exc, "message", exc)).lower()
    return any(word in message for word in _TRANSIENT_WORDS)


@contextmanager
def translated(operation: str, index: str | None = None) -> Iterator[None]:
    """Re-raise anything pymilvus or gRPC throws as a ``VectorportError``."""
    try:
        yield
    except VectorportError:
        raise
    except Exception as exc:
        if index is not None and is_not_found(exc):
            raise IndexNotFoundError(index) from exc
        reason = str(getattr(exc, "message", "") or exc)
        message = f"milvus {operation} failed: {reason}"
        if _is_transient(exc):
            raise TransientBackendError(message) from exc
        raise BackendError(message) from exc


__all__ = ["is_not_found", "is_not_loaded", "translated"]

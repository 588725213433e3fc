"""pymilvus and gRPC failures → the contract's error tree, through the kit's translator.

Messages name the operation and carry the server's reason (which never contains the
token: pymilvus sends it as call metadata, not in requests the server echoes).
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from vectorport.adapterkit import ErrorKind, ErrorTranslator

COLLECTION_NOT_FOUND = 100
COLLECTION_NOT_LOADED = 101
RATE_LIMITED = 8
_TRANSIENT_WORDS = ("unavailable", "deadline", "timeout", "timed out", "connection refused",
                    "rate limit", "too many requests", "fail connecting")


def _message(exc: BaseException) -> str:
    return str(getattr(exc, "message", exc)).lower()


def is_not_loaded(exc: BaseException) -> bool:
    """A collection that exists but is released (after a restart): load it and retry."""
    code = getattr(exc, "code", None)
    message = _message(exc)
    return code == COLLECTION_NOT_LOADED or ("released" in message and "load" in message) or (
        "not loaded" in message
    )


def is_not_found(exc: BaseException) -> bool:
    code = getattr(exc, "code", None)
    message = _message(exc)
    return code == COLLECTION_NOT_FOUND or (
        "collection" in message and ("not exist" in message or "not found" in message)
    )


def _is_transient(exc: BaseException) -> bool:
    try:
        from pymilvus.exceptions import MilvusUnavailableException
    except ImportError:  # pragma: no cover - pymilvus is installed with the adapter
        return False
    if isinstance(exc, MilvusUnavailableException):
        return True
    if getattr(exc, "retriable", False) or getattr(exc, "code", None) == RATE_LIMITED:
        return True
    return any(word in _message(exc) for word in _TRANSIENT_WORDS)


def classify(exc: BaseException) -> ErrorKind:
    if is_not_found(exc):
        return ErrorKind.NOT_FOUND
    if _is_transient(exc):
        return ErrorKind.TRANSIENT
    return ErrorKind.OTHER


def _reason(exc: BaseException) -> str:
    return str(getattr(exc, "message", "") or exc)


TRANSLATOR = ErrorTranslator("milvus", classify, _reason)


def translated(operation: str, index: str | None = None) -> AbstractContextManager[None]:
    """Re-raise anything pymilvus or gRPC throws as a ``VectorportError``."""
    return TRANSLATOR.translated(operation, index=index)


__all__ = ["TRANSLATOR", "classify", "is_not_found", "is_not_loaded", "translated"]

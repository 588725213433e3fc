"""Chroma and transport exceptions → the contract's error tree.

Nothing raised by ``chromadb`` or ``httpx`` reaches a caller raw: dropped connections,
timeouts and rate limits become :class:`TransientBackendError` (the facade retries
idempotent operations), anything else :class:`BackendError`, the native exception
kept as ``__cause__``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
from chromadb.errors import ChromaError, NotFoundError, RateLimitError

from vectorport.core.errors import BackendError, TransientBackendError, VectorportError

_TRANSIENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError,
              RateLimitError, ConnectionError, TimeoutError)


def is_not_found(exc: BaseException) -> bool:
    return isinstance(exc, NotFoundError)


def is_already_exists(exc: BaseException) -> bool:
    return isinstance(exc, ChromaError) and "already exists" in str(exc)


@contextmanager
def chroma_errors(operation: str) -> Iterator[None]:
    """Wrap every non-vectorport exception raised inside as the contract says."""
    try:
        yield
    except VectorportError:
        raise
    except _TRANSIENT as exc:
        raise TransientBackendError(f"chroma {operation} failed, may succeed if retried: "
                                    f"{type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        if "Could not connect to a Chroma server" in str(exc):
            raise TransientBackendError(f"chroma {operation}: {exc}") from exc
        raise BackendError(f"chroma {operation} failed: {type(exc).__name__}: {exc}") from exc


__all__ = ["chroma_errors", "is_already_exists", "is_not_found"]

"""Chroma and transport exceptions → the contract's error tree, through the kit's translator.

Nothing raised by ``chromadb`` or ``httpx`` reaches a caller raw: dropped connections,
timeouts and rate limits are transient (the facade retries idempotent operations),
Chroma's "not found" is not found, anything else a :class:`BackendError`, the native
exception kept as ``__cause__``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import httpx
from chromadb.errors import ChromaError, NotFoundError, RateLimitError

from vectorport.adapterkit import ErrorKind, ErrorTranslator

_TRANSIENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError,
              RateLimitError)


def classify(exc: BaseException) -> ErrorKind:
    if isinstance(exc, _TRANSIENT) or "Could not connect to a Chroma server" in str(exc):
        return ErrorKind.TRANSIENT
    if isinstance(exc, NotFoundError):
        return ErrorKind.NOT_FOUND
    return ErrorKind.OTHER


TRANSLATOR = ErrorTranslator("chroma", classify)


def is_not_found(exc: BaseException) -> bool:
    return isinstance(exc, NotFoundError)


def is_already_exists(exc: BaseException) -> bool:
    return isinstance(exc, ChromaError) and "already exists" in str(exc)


def chroma_errors(operation: str) -> AbstractContextManager[None]:
    """Wrap every non-vectorport exception raised inside as the contract says."""
    return TRANSLATOR.translated(operation)


__all__ = ["TRANSLATOR", "chroma_errors", "classify", "is_already_exists",
           "is_not_found"]

"""Pinecone SDK exceptions → the contract's error tree, through the kit's translator.

429, 5xx, timeouts and dropped connections are transient (the adapter retries each
request, within the call's deadline; the SDK's own retries are switched off, see
:mod:`~vectorport.adapters.pinecone.client`); a ``Retry-After`` goes along;
404 is "not found" and 409 "conflict". The SDK's messages carry no API key (it travels
in a header).
"""

from __future__ import annotations

from pinecone.errors.exceptions import (
    ConflictError,
    NotFoundError,
    PineconeConnectionError,
    PineconeError,
    PineconeTimeoutError,
    RateLimitError,
    ServiceError,
)

from vectorport.adapterkit import ErrorKind, ErrorTranslator, RetryPolicy
from vectorport.adapters.pinecone.codec import BACKEND

_TRANSIENT = (RateLimitError, ServiceError, PineconeTimeoutError, PineconeConnectionError)

CONTROL_RETRY = RetryPolicy(attempts=8, base_seconds=0.05, cap_seconds=1.0)
"""Control-plane calls (create, describe, delete, list indexes): the facade does not
retry index creation or deletion, and every such call the adapter sends is safe to
repeat (creation carries a token that recognises its own index)."""


REQUEST_RETRY = RetryPolicy(attempts=5, base_seconds=0.05, cap_seconds=1.0)
"""Each data-plane request (what the SDK's own retries used to do, now inside the
call's deadline)."""


def classify(exc: BaseException) -> ErrorKind:
    if isinstance(exc, _TRANSIENT):
        return ErrorKind.TRANSIENT
    if isinstance(exc, NotFoundError):
        return ErrorKind.NOT_FOUND
    if isinstance(exc, ConflictError):
        return ErrorKind.CONFLICT
    return ErrorKind.OTHER


def _reason(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, PineconeError) else f"{type(exc).__name__}: {exc}"


TRANSLATOR = ErrorTranslator(BACKEND, classify, _reason)

__all__ = [
    "CONTROL_RETRY",
    "REQUEST_RETRY",
    "TRANSLATOR",
    "ConflictError",
    "NotFoundError",
    "PineconeError",
    "classify",
]

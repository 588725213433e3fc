"""Turning LanceDB failures into the contract's error tree.

LanceDB raises plain ``ValueError``/``RuntimeError``/``OSError`` with Lance's message.
Messages name the operation and carry that reason; any credential the connection holds
is scrubbed from it before it reaches a message (LanceDB Cloud errors can echo request
details).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from vectorport.core.errors import (
    BackendError,
    IndexNotFoundError,
    TransientBackendError,
    VectorportError,
)

_TRANSIENT_WORDS = ("commit conflict", "retryable", "timed out", "timeout", "temporarily",
                    "connection reset", "connection refused", "too many requests", "429",
                    "503", "unavailable", "hit retry limit")  # the Cloud client gave up


def is_not_found(exc: BaseException) -> bool:
    message = str(exc).lower()
    return "was not found" in message or ("not found" in message and "table" in message)


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    message = str(exc).lower()
    return any(word in message for word in _TRANSIENT_WORDS)


def scrub(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


@contextmanager
def translated(operation: str, index: str | None = None,
               secrets: Sequence[str] = ()) -> Iterator[None]:
    """Re-raise anything LanceDB throws as a ``VectorportError``."""
    try:
        yield
    except VectorportError:
        raise
    except Exception as exc:
        if index is not None and is_not_found(exc):
            raise IndexNotFoundError(index) from None
        message = f"lancedb {operation} failed: {scrub(str(exc), secrets)}"
        error = TransientBackendError(message) if is_transient(exc) else BackendError(message)
        if secrets:
            raise error from None  # the native exception may hold the key in its text
        raise error from exc


def remote_client_config(timeout: float | None) -> object:
    """LanceDB Cloud's client settings: every request bounded by ``timeout`` and none of
    the client's own retries (the facade's policy is the only one, inside the call's
    deadline)."""
    from datetime import timedelta

    from lancedb.remote import ClientConfig, RetryConfig, TimeoutConfig

    seconds = timedelta(seconds=timeout) if timeout is not None else None
    return ClientConfig(
        retry_config=RetryConfig(retries=0, connect_retries=0, read_retries=0),
        timeout_config=TimeoutConfig(timeout=seconds, connect_timeout=seconds,
                                     read_timeout=seconds),
    )


__all__ = ["is_not_found", "is_transient", "remote_client_config", "scrub", "translated"]

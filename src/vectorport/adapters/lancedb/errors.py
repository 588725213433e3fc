"""Turning LanceDB failures into the contract's error tree.

LanceDB raises plain ``ValueError``/``RuntimeError``/``OSError`` with Lance's message.
Messages name the operation and carry that reason; any credential the connection holds
is scrubbed from it before it reaches a message (LanceDB Cloud errors can echo request
details).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from vectorport.adapterkit import ErrorKind, ErrorTranslator, VectorportError

_TRANSIENT_WORDS = ("commit conflict", "retryable", "timed out", "timeout", "temporarily",
                    "connection reset", "connection refused", "too many requests", "429",
                    "503", "unavailable", "hit retry limit")  # the Cloud client gave up


def is_not_found(exc: BaseException) -> bool:
    message = str(exc).lower()
    # a kept handle on a table dropped elsewhere: "Not found: <folder>/<name>.lance/_versions"
    return "was not found" in message or ("not found" in message
                                          and ("table" in message or ".lance" in message))


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


def classify(exc: BaseException) -> ErrorKind:
    if is_not_found(exc):
        return ErrorKind.NOT_FOUND
    if is_transient(exc):
        return ErrorKind.TRANSIENT
    return ErrorKind.OTHER


def translator(secrets: Sequence[str] = ()) -> ErrorTranslator:
    """The kit's translator for one connection: its credentials are scrubbed from the
    message and from the text of every native exception in the chain."""
    known = tuple(s for s in secrets if s)

    def reason(exc: BaseException) -> str:
        return scrub(str(exc), known)

    def scrub_native(exc: BaseException) -> None:
        if known:
            exc.args = tuple(scrub(a, known) if isinstance(a, str) else a for a in exc.args)

    return ErrorTranslator("lancedb", classify, reason=reason, scrub=scrub_native)


@contextmanager
def translated(operation: str, index: str | None = None,
               secrets: Sequence[str] = ()) -> Iterator[None]:
    """Re-raise anything LanceDB throws as a ``VectorportError`` (the kit's translation;
    with credentials in play the native exception is dropped, not chained: its other
    attributes may still hold the key)."""
    try:
        yield
    except VectorportError:
        raise
    except Exception as exc:
        error = translator(secrets).error(exc, operation, index=index)
        if any(secrets):
            raise error from None
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


__all__ = ["is_not_found", "is_transient", "remote_client_config", "scrub", "translated", "translator"]

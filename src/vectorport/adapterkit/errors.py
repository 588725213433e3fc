"""One way from SDK exceptions to the contract's error tree (CONTRACT §6).

An adapter supplies only a *classifier*: which of its SDK's exceptions are transient
(a retry may cure them), which mean "not found" or "conflict", and which are other
failures. :class:`ErrorTranslator` does the rest the same way for every backend: the
message names backend and operation, the native exception stays ``__cause__``,
vectorport's own errors pass through, and a not-found or conflict about a named index
becomes :class:`IndexNotFoundError` / :class:`IndexExistsError`.

Messages carry the SDK's text, never a credential: SDKs send keys in headers or call
metadata, which their exception texts do not echo (each adapter's tests check this).
Where a native exception itself holds a credential (psycopg's failed-connection object
carries the conninfo), the adapter's ``scrub`` removes it before the exception becomes
``__cause__``. A transient error takes the server's ``Retry-After`` along
(:func:`retry_after`), which the retry policy honours.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from vectorport.core.errors import (
    BackendError,
    IndexExistsError,
    IndexNotFoundError,
    TransientBackendError,
    VectorportError,
)
from vectorport.core.retry import RetryPolicy

T = TypeVar("T")


class ErrorKind(enum.Enum):
    TRANSIENT = "transient"
    NOT_FOUND = "not found"
    CONFLICT = "conflict"
    OTHER = "other"


def default_reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _no_scrub(exc: BaseException) -> None:
    return None


def retry_after(exc: BaseException) -> float | None:
    """The ``Retry-After`` seconds an HTTP error carries (the header on its ``response``
    or ``headers``, or a ``retry_after`` attribute), if any; dates are not parsed."""
    direct = getattr(exc, "retry_after", None)
    if isinstance(direct, (int, float)) and not isinstance(direct, bool) and direct >= 0:
        return float(direct)
    for holder in (getattr(exc, "response", None), exc):
        headers = getattr(holder, "headers", None)
        getter = getattr(headers, "get", None)
        if getter is None:
            continue
        try:
            value = getter("retry-after") or getter("Retry-After")
        except Exception:  # an unusual header container: no hint then
            continue
        if value is None:
            continue
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            continue
        if seconds >= 0:
            return seconds
    return None


def chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and every exception it was raised from or while handling."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


TRANSIENT_BUILTINS: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError)
"""Python's own exceptions that every classifier should call transient."""


@dataclass(frozen=True, slots=True)
class ErrorTranslator:
    """Translates one backend's exceptions; see the module docstring."""

    backend: str
    classify: Callable[[BaseException], ErrorKind]
    reason: Callable[[BaseException], str] = default_reason
    scrub: Callable[[BaseException], None] = _no_scrub
    """Removes credentials a native exception holds (called on each one of its chain)."""

    def kind(self, exc: BaseException) -> ErrorKind:
        if isinstance(exc, TRANSIENT_BUILTINS):
            return ErrorKind.TRANSIENT
        return self.classify(exc)

    def error(self, exc: BaseException, operation: str, *,
              index: str | None = None) -> VectorportError:
        """The vectorport error for ``exc`` (raise it ``from exc``)."""
        if isinstance(exc, VectorportError):
            return exc
        for link in chain(exc):
            self.scrub(link)
        kind = self.kind(exc)
        if kind is ErrorKind.NOT_FOUND and index is not None:
            return IndexNotFoundError(index)
        if kind is ErrorKind.CONFLICT and index is not None:
            return IndexExistsError(index)
        message = f"{self.backend} {operation} failed: {self.reason(exc)}"
        if kind is ErrorKind.TRANSIENT:
            return TransientBackendError(message, retry_after=retry_after(exc))
        return BackendError(message)

    @contextmanager
    def translated(self, operation: str, *, index: str | None = None) -> Iterator[None]:
        """Re-raise anything raised inside as a vectorport error."""
        try:
            yield
        except VectorportError:
            raise
        except Exception as exc:
            raise self.error(exc, operation, index=index) from exc

    def call(self, operation: str, fn: Callable[[], T], *, index: str | None = None,
             retry: RetryPolicy | None = None) -> T:
        """``fn()`` translated; with ``retry``, transient failures are retried first
        (only for calls that are safe to repeat)."""

        def once() -> T:
            with self.translated(operation, index=index):
                return fn()

        return once() if retry is None else retry.call(f"{self.backend} {operation}", once)


__all__ = ["TRANSIENT_BUILTINS", "ErrorKind", "ErrorTranslator", "chain", "default_reason",
           "retry_after"]

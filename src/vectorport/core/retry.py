"""Retries with exponential backoff and full jitter, for idempotent operations only,
all inside one deadline per call.

The deadline is a context variable, set by the operation wrapper for each facade call
(the store's ``?timeout=`` URL option, :data:`DEFAULT_TIMEOUT` seconds unless set) or
by a user around a block (``with vectorport.deadline(5): ...``; the earlier of nested
deadlines wins). Every :class:`RetryPolicy` consults it, the facade's as well as an
adapter's own per-request policy, so retries nested inside retries can no longer
multiply the time a call takes: once the deadline has passed nothing is tried again and
the caller gets :class:`DeadlineExceededError`. Adapters size each request's socket
timeout with :func:`request_timeout`, so a server that accepts and never answers is
given up on in time too.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable
from contextlib import ContextDecorator
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import TypeVar

from vectorport.core.errors import DeadlineExceededError, TransientBackendError

T = TypeVar("T")
log = logging.getLogger("vectorport.retry")

DEFAULT_TIMEOUT = 30.0
"""Seconds one facade call may take, all retries included, unless ``?timeout=`` says."""

MIN_REQUEST_TIMEOUT = 0.05
"""The shortest socket timeout handed to an SDK (zero or negative mean "none" to some)."""


@dataclass(frozen=True, slots=True)
class _Deadline:
    at: float  # time.monotonic()
    seconds: float  # as configured, for messages


_current: ContextVar[_Deadline | None] = ContextVar("vectorport_deadline", default=None)


_IDLE = object()  # a deadline's token when it is not entered


class deadline(ContextDecorator):  # noqa: N801 - a function-like public name, as it was
    """Bound everything inside to ``seconds`` from now (``None``: no new bound). An
    enclosing deadline that ends earlier still applies. A context manager (also usable
    as a decorator).

    A class rather than a ``@contextmanager`` generator: every facade operation enters
    one, and the generator's machinery cost ~3 µs of each call (4× this)."""

    __slots__ = ("_token", "seconds")

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._token: object = _IDLE  # a Token while entered with a bound

    def _recreate_cm(self) -> deadline:  # a fresh one for each call of a decorated function
        return type(self)(self.seconds)

    def __enter__(self) -> None:
        if self._token is not _IDLE:  # as the generator it replaces: one block at a time
            raise RuntimeError("this deadline is already in use; make one per block")
        seconds = self.seconds
        if seconds is None:
            self._token = None
            return
        if not (isinstance(seconds, (int, float)) and seconds > 0 and math.isfinite(seconds)):
            raise ValueError("a deadline is a positive, finite number of seconds")
        mine = _Deadline(time.monotonic() + seconds, float(seconds))
        outer = _current.get()
        self._token = _current.set(mine if outer is None or mine.at < outer.at else outer)

    def __exit__(self, *exc: object) -> None:
        token, self._token = self._token, _IDLE
        if isinstance(token, Token):
            _current.reset(token)


def remaining() -> float | None:
    """Seconds left before the current deadline (negative once passed), or ``None``."""
    current = _current.get()
    return None if current is None else current.at - time.monotonic()


def request_timeout(default: float) -> float:
    """The socket timeout for one request now: ``default``, cut to what is left of the
    current deadline (never below :data:`MIN_REQUEST_TIMEOUT`)."""
    left = remaining()
    if left is None:
        return default
    return max(MIN_REQUEST_TIMEOUT, min(default, left))


def expired(operation: str, cause: BaseException | None = None) -> DeadlineExceededError:
    """The error for ``operation`` having run out of time (raise it ``from cause``)."""
    current = _current.get()
    budget = f"its {current.seconds:g} s deadline" if current is not None else "its deadline"
    last = f" (last error: {cause})" if cause is not None else ""
    return DeadlineExceededError(
        f"{operation} did not complete within {budget}{last}; raise ?timeout= in the "
        "URL or wrap the call in vectorport.deadline(seconds) to allow more time")


def check_deadline(operation: str) -> None:
    """Raise :class:`DeadlineExceededError` if the current deadline has passed."""
    left = remaining()
    if left is not None and left <= 0:
        raise expired(operation)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``attempts`` tries in all; the n-th wait is uniform in [0, min(cap, base·2ⁿ)],
    and at least the server's ``Retry-After``. No try starts, and no wait is begun,
    that the current deadline would not allow."""

    attempts: int = 6
    base_seconds: float = 0.05
    cap_seconds: float = 2.0

    def delay(self, attempt: int) -> float:
        return random.uniform(0.0, min(self.cap_seconds, self.base_seconds * 2**attempt))

    def _wait(self, operation: str, attempt: int, exc: TransientBackendError) -> float:
        """The pause before the next try, or raise when there is no next try."""
        left = remaining()
        if left is not None and left <= 0:
            raise expired(operation, exc) from exc
        if attempt + 1 >= self.attempts:
            raise exc
        wait = max(self.delay(attempt), exc.retry_after or 0.0)
        if left is not None and wait >= left:
            raise expired(operation, exc) from exc
        log.info("%s failed transiently (%s); retry %d in %.3fs",
                 operation, exc, attempt + 1, wait)
        return wait

    def call(self, operation: str, fn: Callable[[], T]) -> T:
        for attempt in range(self.attempts):
            check_deadline(operation)
            try:
                return fn()
            except DeadlineExceededError:
                raise  # an inner policy already used up the time: never retried
            except TransientBackendError as exc:
                time.sleep(self._wait(operation, attempt, exc))
        raise AssertionError("unreachable")

    async def acall(self, operation: str, fn: Callable[[], Awaitable[T]]) -> T:
        for attempt in range(self.attempts):
            check_deadline(operation)
            try:
                return await fn()
            except DeadlineExceededError:
                raise
            except TransientBackendError as exc:
                await asyncio.sleep(self._wait(operation, attempt, exc))
        raise AssertionError("unreachable")


NO_RETRY = RetryPolicy(attempts=1)

__all__ = [
    "DEFAULT_TIMEOUT",
    "NO_RETRY",
    "RetryPolicy",
    "check_deadline",
    "deadline",
    "expired",
    "remaining",
    "request_timeout",
]

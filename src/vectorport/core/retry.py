"""Retries with exponential backoff and full jitter, for idempotent operations only."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from vectorport.core.errors import TransientBackendError

T = TypeVar("T")
log = logging.getLogger("vectorport.retry")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``attempts`` tries in all; the n-th wait is uniform in [0, min(cap, base·2ⁿ)]."""

    attempts: int = 6
    base_seconds: float = 0.05
    cap_seconds: float = 2.0

    def delay(self, attempt: int) -> float:
        return random.uniform(0.0, min(self.cap_seconds, self.base_seconds * 2**attempt))

    def call(self, operation: str, fn: Callable[[], T]) -> T:
        for attempt in range(self.attempts):
            try:
                return fn()
            except TransientBackendError as exc:
                if attempt + 1 >= self.attempts:
                    raise
                wait = self.delay(attempt)
                log.info("%s failed transiently (%s); retry %d in %.3fs",
                         operation, exc, attempt + 1, wait)
                time.sleep(wait)
        raise AssertionError("unreachable")

    async def acall(self, operation: str, fn: Callable[[], Awaitable[T]]) -> T:
        for attempt in range(self.attempts):
            try:
                return await fn()
            except TransientBackendError as exc:
                if attempt + 1 >= self.attempts:
                    raise
                wait = self.delay(attempt)
                log.info("%s failed transiently (%s); retry %d in %.3fs",
                         operation, exc, attempt + 1, wait)
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")


NO_RETRY = RetryPolicy(attempts=1)

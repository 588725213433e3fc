"""The one operation wrapper of the facade: operation hooks around retries.

Every adapter call of :class:`Store`, :class:`Index` and :class:`AsyncIndex` goes
through :func:`run` (sync) or :func:`arun` (async), so a policy plugin whose
``vectorport_before_operation`` raises stops the operation on every path, and
``vectorport_after_operation`` sees every outcome, with the error if there was one,
including the refusal of a before hook (so metrics count refused operations too). The
hooks fire once per operation; retries of an idempotent operation happen inside.

Each operation runs inside the store's deadline (``timeout``, see
:mod:`vectorport.core.retry`); a batched upsert is ONE call with one deadline for all
its batches (:meth:`Runner.send_batches`), and once a batch has failed transiently
(after its retries: the server is down or stalled) no further batch is started, so a
dead server surfaces within the deadline instead of being retried batch after batch.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from vectorport.core.errors import (
    BackendError,
    TransientBackendError,
    VectorportError,
    drop_hidden_context,
)
from vectorport.core.plugin import OperationEvent, OperationOutcome, Registry, result_count
from vectorport.core.retry import DEFAULT_TIMEOUT, RetryPolicy, deadline
from vectorport.core.types import Record

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Runner:
    """The plugins and the retry policy of one store, applied to each operation."""

    registry: Registry
    retry: RetryPolicy
    backend: str
    timeout: float | None = DEFAULT_TIMEOUT
    """Seconds each operation may take, retries included (``None``: unbounded)."""

    def run(self, operation: str, fn: Callable[[], T], *, index: str | None = None,
            namespace: str | None = None, size: int | None = None,
            idempotent: bool = True, top_k: int | None = None) -> T:
        """Call ``fn`` (retried when ``idempotent``) between the operation hooks, within
        the store's deadline."""
        if not self.registry.has_operation_hooks():  # no plugin: no event, no clock
            return self._attempt(operation, fn, idempotent)
        event = OperationEvent.of(self.backend, operation, index, namespace, size, top_k)
        tally = _Tally(event.top_k)
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            self.registry.before(event=event)
            return tally.result(self._attempt(operation, tally.counting(fn), idempotent))
        except BaseException as exc:
            error = exc
            raise
        finally:
            self.registry.after(event=event, error=error, seconds=time.perf_counter() - started,
                                outcome=tally.outcome())

    def _attempt(self, operation: str, fn: Callable[[], T], idempotent: bool) -> T:
        """``fn`` within the store's deadline, retried when ``idempotent`` (a method, not
        a closure made for every operation)."""
        try:
            with deadline(self.timeout):
                return self.retry.call(operation, fn) if idempotent else fn()
        except VectorportError as exc:
            raise drop_hidden_context(exc)  # noqa: B904 - the same exception, re-raised

    async def arun(self, operation: str, fn: Callable[[], Awaitable[T]], *,
                   index: str | None = None, namespace: str | None = None,
                   size: int | None = None, idempotent: bool = True,
                   top_k: int | None = None) -> T:
        """:meth:`run` for a coroutine function; retries wait with ``asyncio.sleep``.

        The hooks are plain functions (pluggy calls them synchronously), so they run on
        the event loop: a plugin must not block there."""
        if not self.registry.has_operation_hooks():
            return await self._aattempt(operation, fn, idempotent)
        event = OperationEvent.of(self.backend, operation, index, namespace, size, top_k)
        tally = _Tally(event.top_k)
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            self.registry.before(event=event)
            return tally.result(await self._aattempt(operation, tally.counting(fn), idempotent))
        except BaseException as exc:
            error = exc
            raise
        finally:
            self.registry.after(event=event, error=error, seconds=time.perf_counter() - started,
                                outcome=tally.outcome())

    async def _aattempt(self, operation: str, fn: Callable[[], Awaitable[T]],
                        idempotent: bool) -> T:
        """:meth:`_attempt` for a coroutine function."""
        try:
            with deadline(self.timeout):
                return await (self.retry.acall(operation, fn) if idempotent else fn())
        except VectorportError as exc:
            raise drop_hidden_context(exc)  # noqa: B904 - the same exception, re-raised

    def send_batches(self, batches: Sequence[Sequence[Record]],
                     send: Callable[[Sequence[Record]], None],
                     workers: int = 1) -> list[BaseException | None]:
        """Send each batch with ``send`` (which goes through :meth:`run`), all within
        one deadline; the outcomes, in batch order, for :func:`settle_writes`.

        Sequentially, sending stops at the first failure. Concurrently, every batch is
        sent even when one fails (the others still land), except after a transient
        failure: batches not started by then are not sent, and fail with it."""
        outcomes: list[BaseException | None] = []
        with deadline(self.timeout):
            if workers <= 1 or len(batches) <= 1:
                for batch in batches:
                    try:
                        send(batch)
                        outcomes.append(None)
                    except BaseException as exc:  # stop at the first failure
                        outcomes.append(exc)
                        break
                return outcomes
            given_up: list[BaseException] = []

            def one(batch: Sequence[Record]) -> None:
                if given_up:
                    raise given_up[0]
                try:
                    send(batch)
                except TransientBackendError as exc:
                    given_up.append(exc)
                    raise

            with ThreadPoolExecutor(max_workers=workers) as pool:
                # each thread runs in a copy of this context: the deadline goes along
                futures = [pool.submit(contextvars.copy_context().run, one, b) for b in batches]
                outcomes.extend(future.exception() for future in futures)
        return outcomes

    async def asend_batches(self, batches: Sequence[Sequence[Record]],
                            send: Callable[[Sequence[Record]], Awaitable[None]],
                            workers: int = 1) -> list[BaseException | None]:
        """:meth:`send_batches` for a coroutine function (tasks inherit the deadline)."""
        outcomes: list[BaseException | None] = []
        with deadline(self.timeout):
            if workers <= 1 or len(batches) <= 1:
                for batch in batches:
                    try:
                        await send(batch)
                        outcomes.append(None)
                    except BaseException as exc:
                        outcomes.append(exc)
                        break
                return outcomes
            gate = asyncio.Semaphore(workers)
            given_up: list[BaseException] = []

            async def gated(batch: Sequence[Record]) -> None:
                async with gate:
                    if given_up:
                        raise given_up[0]
                    try:
                        await send(batch)
                    except TransientBackendError as exc:
                        given_up.append(exc)
                        raise

            results = await asyncio.gather(*(gated(b) for b in batches), return_exceptions=True)
            outcomes = [r if isinstance(r, BaseException) else None for r in results]
        return outcomes


class _Tally:
    """Attempts and result count of one hooked operation, for the after-hook's outcome.

    Attempts are counted by wrapping the callback handed to the retry policy (each call
    is one attempt), so the policy itself needs no change; only built when a plugin
    implements the hooks."""

    __slots__ = ("attempts", "count", "top_k")

    def __init__(self, top_k: int | None) -> None:
        self.attempts = 0
        self.count: int | None = None
        self.top_k = top_k

    def counting(self, fn: Callable[[], T]) -> Callable[[], T]:
        def attempt() -> T:
            self.attempts += 1
            return fn()
        return attempt

    def result(self, value: T) -> T:
        self.count = result_count(value, self.top_k)
        return value

    def outcome(self) -> OperationOutcome:
        return OperationOutcome(self.attempts, self.count)


def settle_writes(batches: Sequence[Sequence[Record]],
                  outcomes: Sequence[BaseException | None]) -> None:
    """Raise the first failure of a batched write (``outcomes`` in batch order, shorter
    when sending stopped early); a :class:`BackendError` then lists ``written_ids``."""
    failure = next((o for o in outcomes if o is not None), None)
    if failure is None:
        return
    if isinstance(failure, BackendError):
        failure.written_ids = tuple(
            r.id for batch, outcome in zip(batches, outcomes, strict=False) if outcome is None
            for r in batch)
    raise failure

"""The one operation wrapper of the facade: operation hooks around retries.

Every adapter call of :class:`Store`, :class:`Index` and :class:`AsyncIndex` goes
through :func:`run` (sync) or :func:`arun` (async), so a policy plugin whose
``vectorport_before_operation`` raises stops the operation on every path, and
``vectorport_after_operation`` sees every outcome, with the error if there was one,
including the refusal of a before hook (so metrics count refused operations too). The
hooks fire once per operation; retries of an idempotent operation happen inside.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from vectorport.core.errors import BackendError
from vectorport.core.plugin import OperationEvent, OperationOutcome, Registry, result_count
from vectorport.core.retry import RetryPolicy
from vectorport.core.types import Record

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Runner:
    """The plugins and the retry policy of one store, applied to each operation."""

    registry: Registry
    retry: RetryPolicy
    backend: str

    def run(self, operation: str, fn: Callable[[], T], *, index: str | None = None,
            namespace: str | None = None, size: int | None = None,
            idempotent: bool = True, top_k: int | None = None) -> T:
        """Call ``fn`` (retried when ``idempotent``) between the operation hooks."""
        retry = self.retry
        if not self.registry.has_operation_hooks():  # no plugin: no event, no clock
            return retry.call(operation, fn) if idempotent else fn()
        event = OperationEvent.of(self.backend, operation, index, namespace, size, top_k)
        tally = _Tally(event.top_k)
        counted = tally.counting(fn)
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            self.registry.before(event=event)
            return tally.result(retry.call(operation, counted) if idempotent else counted())
        except BaseException as exc:
            error = exc
            raise
        finally:
            self.registry.after(event=event, error=error, seconds=time.perf_counter() - started,
                                outcome=tally.outcome())

    async def arun(self, operation: str, fn: Callable[[], Awaitable[T]], *,
                   index: str | None = None, namespace: str | None = None,
                   size: int | None = None, idempotent: bool = True,
                   top_k: int | None = None) -> T:
        """:meth:`run` for a coroutine function; retries wait with ``asyncio.sleep``.

        The hooks are plain functions (pluggy calls them synchronously), so they run on
        the event loop: a plugin must not block there."""
        if not self.registry.has_operation_hooks():
            return await (self.retry.acall(operation, fn) if idempotent else fn())
        event = OperationEvent.of(self.backend, operation, index, namespace, size, top_k)
        tally = _Tally(event.top_k)
        counted = tally.counting(fn)
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            self.registry.before(event=event)
            return tally.result(
                await (self.retry.acall(operation, counted) if idempotent else counted()))
        except BaseException as exc:
            error = exc
            raise
        finally:
            self.registry.after(event=event, error=error, seconds=time.perf_counter() - started,
                                outcome=tally.outcome())


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

"""Strong consistency over an eventually consistent service: LSNs and bounded waits.

Pinecone gives every write to a namespace a log sequence number (LSN), returned with the
write, and reports with each query how far the namespace's index has caught up (the
reconciled LSN). A read sees a write once the reconciled LSN reaches the write's LSN.

:class:`FreshnessTracker` remembers, per (index, namespace), the highest LSN this
adapter's writes committed and the highest reconciled LSN a read has seen. A strong read
waits (polling, bounded) until the namespace has caught up; an eventual read does not.
:func:`wait_until` is the bounded poll, ending in :class:`ConsistencyTimeoutError`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from vectorport.core.errors import ConsistencyTimeoutError, TransientBackendError
from vectorport.core.retry import expired
from vectorport.core.retry import remaining as call_remaining

Key = tuple[str, str]


class FreshnessTracker:
    """Thread-safe LSN bookkeeping of one adapter instance."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._written: dict[Key, int] = {}
        self._seen: dict[Key, int] = {}

    def wrote(self, index: str, namespace: str, lsn: int) -> None:
        key = (index, namespace)
        with self._lock:
            self._written[key] = max(lsn, self._written.get(key, 0))

    def saw(self, index: str, namespace: str, lsn: int) -> None:
        key = (index, namespace)
        with self._lock:
            self._seen[key] = max(lsn, self._seen.get(key, 0))

    def awaited(self, index: str, namespace: str) -> int | None:
        """The LSN a strong read must wait for, or ``None`` when nothing is pending."""
        key = (index, namespace)
        with self._lock:
            target = self._written.get(key)
            if target is None or self._seen.get(key, 0) >= target:
                return None
            return target

    def pending_namespaces(self, index: str) -> list[str]:
        with self._lock:
            return [ns for (ix, ns), lsn in self._written.items()
                    if ix == index and self._seen.get((ix, ns), 0) < lsn]

    def forget(self, index: str, namespace: str | None = None) -> None:
        """Drop the bookkeeping of a namespace (or a whole index) that was emptied: its
        LSNs may start again from zero."""
        with self._lock:
            for table in (self._written, self._seen):
                for key in [k for k in table if k[0] == index
                            and (namespace is None or k[1] == namespace)]:
                    del table[key]


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``check`` with growing pauses until it holds; transient failures of the check
    count as "not yet". Raises :class:`ConsistencyTimeoutError` after ``timeout`` s, or
    the transient failure itself when the last check failed that way (so that the caller
    may retry the whole operation)."""
    started = time.monotonic()
    call_left = call_remaining()  # the call's own deadline may end first
    limit = timeout if call_left is None else max(0.0, min(timeout, call_left))
    deadline = started + limit
    pause = 0.005
    while True:
        failure: TransientBackendError | None = None
        try:
            if check():
                return
        except TransientBackendError as exc:
            failure = exc
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            if failure is not None:
                raise failure
            if limit < timeout:
                raise expired(f"pinecone: waiting for {what}")
            raise ConsistencyTimeoutError(
                f"pinecone: {what} was not visible after {timeout:g} s "
                "(raise consistency_timeout= in the URL, or read with consistency='eventual')"
            )
        time.sleep(min(pause, remaining))
        # Short pauses first (a lag is usually brief), then gentler polling.
        pause = min(pause * 2, 0.04 if time.monotonic() - started < 2.0 else 0.25)


__all__ = ["FreshnessTracker", "wait_until"]

"""Pausing Python's cyclic garbage collector while a large call builds its records.

Validating an upsert allocates a few container objects per record (the Record, its
metadata dict, a tuple per list), all of them reachable from the result: a collection
during the call can free nothing, yet every generation-2 pass traverses all of them, so
its cost grows with the call. Measured on 100,000 records × 384 with six metadata keys:
11.5 µs a record with the collector running, 8.5 µs paused. Reference counting still
frees everything as usual; only the cycle detector waits until the call returns.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

PAUSE_FROM = 5_000
"""Records below which the collector is left alone (its passes cost nothing there)."""


@contextmanager
def paused(size: int) -> Iterator[None]:
    """Pause the collector for a call of ``size`` records, unless someone else (the
    application, another call) already has; it runs again when the call ends."""
    if size < PAUSE_FROM or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


__all__ = ["PAUSE_FROM", "paused"]

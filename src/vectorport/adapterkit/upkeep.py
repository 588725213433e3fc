"""Upkeep an embedded engine leaves for later, run once enough was written to need it.

A server runs its upkeep in the background; an engine embedded in the process runs it
only when asked. Qdrant Edge's optimizers index new points (and vacuum deleted ones)
only when called, LanceDB folds the rows written after an ANN index was trained into it
only when optimized, and milvus-lite seals its growing segment only when flushed: until
then searches read those rows in full, slower as they grow. So an adapter runs that
upkeep once ``every`` units (points, rows) have been written since the last run: from
the write that makes it due (Edge, LanceDB), or from the next search, where only
searches gain from it (milvus-lite).

The engine call cannot be cut short and may take seconds, so it is estimated first, at
the slowest rate its own runs took so far or the adapter's floor, whichever is higher,
per unit written since the last run (a run the user asked for after a few units is
mostly the engine's fixed cost, and teaches it nothing); it goes ahead only when
:data:`ESTIMATE_MARGIN` times the estimate fits in what is left of the call's deadline.
Otherwise the call returns in time, the adapter says so once
(:meth:`UpkeepSchedule.run_or_defer`), and a later call with time enough, or the
adapter's ``optimize``, runs it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from vectorport.core.retry import remaining

ESTIMATE_MARGIN = 1.25
"""A run goes ahead when this many times its estimate fits in the call's time left."""


def time_short(estimate: float) -> float | None:
    """What is left of the call's deadline when ``estimate`` seconds of work that
    cannot be cut short (with :data:`ESTIMATE_MARGIN`) do not fit in it; ``None`` when
    they fit or there is no deadline."""
    left = remaining()
    if left is None or ESTIMATE_MARGIN * estimate <= left:
        return None
    return max(0.0, left)


@dataclass
class UpkeepSchedule:
    """The units written since an engine's upkeep last ran, and what a run costs."""

    least_seconds_per_unit: float
    """The floor of the estimate: a run below the engine's own thresholds takes almost
    nothing, and would promise the same of the first real run."""
    written: int = 0
    """Units written since the last run."""
    seconds_per_unit: float = field(init=False)
    """The slowest run timed here, per unit written before it (at least the floor)."""
    deferred: bool = False
    """A run was due and left for later (said once until the next run)."""

    def __post_init__(self) -> None:
        self.seconds_per_unit = self.least_seconds_per_unit

    def count(self, units: int, every: int) -> bool:
        """Count ``units`` written; whether a run is due (never when ``every`` is 0)."""
        if every <= 0:
            return False
        self.written += units
        return self.due(every)

    def due(self, every: int) -> bool:
        """Whether ``every`` units (never when 0) have been written since the last run."""
        return 0 < every <= self.written

    @property
    def estimate(self) -> float:
        """Seconds a run is expected to take now."""
        return self.seconds_per_unit * self.written

    def time_short(self) -> float | None:
        """What is left of the deadline when a run does not fit in it (None: it fits)."""
        return time_short(self.estimate)

    def defer(self) -> bool:
        """Leave the due run for later; True the first time since the last run (when
        the adapter says so)."""
        first = not self.deferred
        self.deferred = True
        return first

    def run(self, upkeep: Callable[[], object]) -> None:
        """Run ``upkeep`` now, timed: its rate learnt, the count started again."""
        started = time.monotonic()
        upkeep()
        self.ran(time.monotonic() - started)

    def run_or_defer(self, upkeep: Callable[[], object]) -> float | None:
        """Run the due ``upkeep`` (:meth:`run`) when it fits in what is left of the
        call's deadline, else leave it for later: what was left of the deadline when
        it is left for the first time since the last run (for the adapter to say so),
        otherwise None."""
        left = self.time_short()
        if left is None:
            self.run(upkeep)
            return None
        return left if self.defer() else None

    def ran(self, seconds: float | None) -> None:
        """A run took ``seconds``: learn its rate, start counting again. ``None``: a run
        not made by the schedule (the user's ``optimize``, say), whatever it covered,
        which teaches no rate: a run of a few units is mostly the engine's fixed cost."""
        if seconds is not None and self.written > 0:
            self.seconds_per_unit = max(self.seconds_per_unit, seconds / self.written)
        self.written = 0
        self.deferred = False


def say_deferred(log: logging.Logger, schedule: UpkeepSchedule, left: float, *,
                 upkeep: str, index: str, units: str, waits_for: str,
                 meanwhile: str) -> None:
    """Warn, in one wording for every adapter, that ``upkeep`` of ``index`` waits for
    a later ``waits_for`` (a write, a read) with more than the ``left`` seconds this one
    had; ``meanwhile`` says what reads do until then."""
    log.warning(
        "%s of index %r waits for a %s with more time left (%d %s written since it last "
        "ran, an estimated %.1f s, %.1f s left of the call's deadline); until then %s. "
        "Call store.adapter.optimize(%r) or allow %ss more time (?timeout=, "
        "vectorport.deadline)",
        upkeep, index, waits_for, schedule.written, units, schedule.estimate, left,
        meanwhile, index, waits_for)


__all__ = ["ESTIMATE_MARGIN", "UpkeepSchedule", "say_deferred", "time_short"]

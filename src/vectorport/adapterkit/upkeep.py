"""Upkeep an embedded engine leaves for later, run by the writes that make it due.

A server runs its upkeep in the background; an engine embedded in the process runs it
only when asked. Qdrant Edge's optimizers index new points (and vacuum deleted ones)
only when called, and LanceDB folds the rows written after an ANN index was trained
into it only when optimized: until then searches read those rows in full, slower as
they grow. So an adapter runs that upkeep from the write that makes it due, once
``every`` units (points, rows) have been written since the last run.

The engine call cannot be cut short and may take seconds, so it is estimated first, at
the slowest rate timed so far or the adapter's floor, whichever is higher, per unit
written since the last run; it goes ahead only when :data:`ESTIMATE_MARGIN` times the
estimate fits in what is left of the call's deadline. Otherwise the write returns in
time, the adapter says so once (:meth:`UpkeepSchedule.defer`), and a later write with
time enough, or the adapter's ``optimize``, runs it.
"""

from __future__ import annotations

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
        return self.written >= every

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

    def ran(self, seconds: float) -> None:
        """A run took ``seconds``: learn its rate, start counting again."""
        if self.written > 0:
            self.seconds_per_unit = max(self.seconds_per_unit, seconds / self.written)
        self.written = 0
        self.deferred = False


__all__ = ["ESTIMATE_MARGIN", "UpkeepSchedule", "time_short"]

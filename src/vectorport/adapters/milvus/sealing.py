"""When a milvus-lite read seals the rows written before it.

milvus-lite keeps the rows written since a collection's last seal in its growing
segment, in memory, and seals them only when flushed (or past 128 MB): until then each
search, count or key listing reads those rows one by one, while sealed ones go through
the vector index or columns read at once. On this machine a top-10 search over 5,000 ×
384 unsealed rows took 164 ms, 21 ms once sealed; over 20,000, 627 against 67 ms; a
count of 10,000 unsealed rows 0.79 s, 21 ms sealed; a page of 100 keys 329 against 13
ms. A seal costs about 75-100 µs a row, near what writing the row cost, so sealing from
every write would nearly double a load that nothing reads yet.

So the read seals: once ``optimize_every`` rows (an index option, :mod:`.options`) were
written through this connection since the last seal, the next search, count or key
listing of the index seals first, when that fits in what is left of its deadline (the
kit's :class:`~vectorport.adapterkit.UpkeepSchedule`); otherwise it reads the rows as
they are, says so once, and a later read with time enough seals. A scan has its own
rule (``MilvusAdapter.scan``). Rows written by other
clients of a served milvus-lite are not counted: only its own writes are this
connection's to know (closing a milvus-lite file seals what it holds). Any other seal
(``store.adapter.optimize``, a scan longer than a page) starts the count again. A
server seals on its own, and nothing here runs there. Sealing changes no answer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from vectorport.adapterkit import IndexSpec, UpkeepSchedule, say_deferred
from vectorport.adapters.milvus.options import optimize_every

log = logging.getLogger("vectorport.milvus")

SECONDS_PER_ROW = 1e-4
"""The floor of a seal's estimate: milvus-lite sealed 5,000 × 384 rows in 0.52 s and
20,000 in 1.5 s here."""


class Sealing:
    """The rows each collection got through this connection since its last seal."""

    def __init__(self, seal: Callable[[str, str], None], *, engine_seals: bool) -> None:
        self._seal = seal
        """Seals collection ``name`` for ``operation`` (the adapter's flush, which does
        not call back here)."""
        self._engine_seals = engine_seals
        self._schedules: dict[str, UpkeepSchedule] = {}
        self._lock = threading.Lock()
        """Held while a read seals: concurrent reads wait and find nothing due,
        and a write finishing meanwhile is counted after the count starts again."""

    def written(self, index: IndexSpec, rows: int) -> None:
        """``rows`` were written to ``index``'s collection."""
        if self._engine_seals:
            return
        every = optimize_every(index)
        with self._lock:
            schedule = self._schedules.setdefault(index.name, UpkeepSchedule(SECONDS_PER_ROW))
            schedule.count(rows, every)

    def before_read(self, index: IndexSpec) -> None:
        """Seal ``index``'s collection when its unsealed rows are due and the seal fits
        in the read's deadline."""
        schedule = self._schedules.get(index.name)
        if schedule is None or not schedule.written:
            return  # nothing written since the last seal: no option to read
        every = optimize_every(index)
        with self._lock:
            if not schedule.due(every):
                return
            left = schedule.run_or_defer(lambda: self._seal("query", index.name))
        if left is None:
            return
        say_deferred(log, schedule, left, upkeep="milvus: sealing", index=index.name,
                     units="rows", waits_for="read",
                     meanwhile="searches and counts read them one by one")

    def sealed(self, name: str) -> None:
        """Collection ``name`` was sealed outside the schedule: count afresh."""
        with self._lock:
            schedule = self._schedules.get(name)
            if schedule is not None:
                schedule.ran(None)

    def forget(self, name: str) -> None:
        """Collection ``name`` was dropped or made anew."""
        with self._lock:
            self._schedules.pop(name, None)


__all__ = ["SECONDS_PER_ROW", "Sealing"]

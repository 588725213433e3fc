"""The first and last steps of a load by ``copy_index`` / ``import_index``: the upkeep of
an index the job has just created put off (:class:`~vectorport.core.adapter.
UpkeepDeferringAdapter`), and the destination brought to its best state for searching
(:class:`~vectorport.core.adapter.OptimizingAdapter`) before the verification's sample
queries and the user's first ones."""

from __future__ import annotations

import time

from vectorport.core.adapter import OptimizingAdapter, UpkeepDeferringAdapter
from vectorport.core.store import Index
from vectorport.transfer.progress import log


def defer_upkeep_for_load(index: Index) -> bool:
    """Put off the upkeep of ``index`` (just created by the job, still empty) until
    :func:`optimize_after_load`, where its adapter can; whether it did."""
    adapter = index.store.adapter
    if not isinstance(adapter, UpkeepDeferringAdapter):
        return False
    adapter.defer_upkeep(index.name)
    log.info("%s: its search structures are built once the records are in", index.name)
    return True


def optimize_after_load(index: Index) -> bool:
    """Optimize ``index`` where its adapter can; whether it did. Logged (the
    ``vectorport.transfer`` logger, as the progress lines), since it can take seconds
    after the last record is in (Qdrant Edge's optimizers, pgvector's ANN index)."""
    adapter = index.store.adapter
    if not isinstance(adapter, OptimizingAdapter):
        return False
    log.info("%s: optimizing the index after the load", index.name)
    started = time.monotonic()
    adapter.optimize(index.name)
    log.info("%s: optimized in %.1f s", index.name, time.monotonic() - started)
    return True


__all__ = ["defer_upkeep_for_load", "optimize_after_load"]

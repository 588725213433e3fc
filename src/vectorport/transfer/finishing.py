"""The last step of a load by ``copy_index`` / ``import_index``: the destination brought to
its best state for searching (:class:`~vectorport.core.adapter.OptimizingAdapter`),
before the verification's sample queries and the user's first ones."""

from __future__ import annotations

import time

from vectorport.core.adapter import OptimizingAdapter
from vectorport.core.store import Index
from vectorport.transfer.progress import log


def optimize_after_load(index: Index) -> bool:
    """Optimize ``index`` where its adapter can; whether it did. Logged (the
    ``vectorport.transfer`` logger, as the progress lines), since on Qdrant Edge it can
    take seconds after the last record is in."""
    adapter = index.store.adapter
    if not isinstance(adapter, OptimizingAdapter):
        return False
    log.info("%s: optimizing the index after the load", index.name)
    started = time.monotonic()
    adapter.optimize(index.name)
    log.info("%s: optimized in %.1f s", index.name, time.monotonic() - started)
    return True


__all__ = ["optimize_after_load"]

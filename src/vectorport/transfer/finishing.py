"""The last step of a load by ``copy_index`` / ``import_index``: the destination brought to
its best state for searching (:class:`~vectorport.core.adapter.OptimizingAdapter`),
before the verification's sample queries and the user's first ones."""

from __future__ import annotations

from vectorport.core.adapter import OptimizingAdapter
from vectorport.core.store import Index


def optimize_after_load(index: Index) -> bool:
    """Optimize ``index`` where its adapter can; whether it did."""
    adapter = index.store.adapter
    if not isinstance(adapter, OptimizingAdapter):
        return False
    adapter.optimize(index.name)
    return True


__all__ = ["optimize_after_load"]

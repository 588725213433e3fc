"""What the three bridges share: opening an index, and enumerating records by filter.

Haystack's ``filter_documents`` and LlamaIndex's ``get_nodes`` list every record that
matches a filter: that is the contract's ``Index.scan``, which every backend has.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from vectorport.core.filters.ast import Filter
from vectorport.core.store import Index, Store, connect
from vectorport.core.types import Record

DEFAULT_PAGE_SIZE = 500


def open_index(
    index: Index | str | None,
    *,
    store: Store | str | None = None,
    name: str | None = None,
    dimension: int | None = None,
    metric: str = "cosine",
    sparse: bool = False,
) -> Index:
    """An :class:`Index` from what a bridge's constructor was given.

    ``index`` may already be an index handle; otherwise ``store`` (a :class:`Store` or a
    URL) and ``name`` name it, and ``dimension`` creates it when it does not exist yet.
    A URL passed as ``index`` is read as ``store``.
    """
    if isinstance(index, Index):
        return index
    if isinstance(index, str):
        store = index if store is None else store
    if name is None:
        raise ValueError("name the index (name=...) or pass an Index")
    opened = store if isinstance(store, Store) else connect(store)
    if dimension is None:
        return opened.index(name)
    return opened.create_index(name, dimension, metric, sparse=sparse, exist_ok=True)



def iter_records(
    index: Index,
    namespace: str = "",
    filter: Mapping[str, Any] | Filter | None = None,
    *,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> Iterator[Record]:
    """Every record of ``namespace`` matching ``filter``, once each, in any order."""
    return index.iter_records(namespace, filter=filter, page_size=page_size)

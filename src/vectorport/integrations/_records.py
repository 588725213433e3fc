"""What the three bridges share: opening an index, and enumerating records by filter.

Haystack's ``filter_documents`` and LlamaIndex's ``get_nodes`` list every record that
matches a filter. The contract's ``Index.scan`` is the one way to do that on every
backend; until every adapter has it, :func:`iter_records` is the single place that
falls back to listing ids and fetching them in pages, so the bridges switch to ``scan``
by themselves when it lands.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters.ast import Filter
from vectorport.core.filters.oracle import matches
from vectorport.core.store import Index, ListableIndex, Store, connect
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


def _scan(index: Index, namespace: str, node: Filter | None, page_size: int) -> Iterator[Record]:
    cursor: Any = None
    while True:
        page = index.scan(namespace, filter=node, page_size=page_size,  # type: ignore[attr-defined]
                          cursor=cursor)
        yield from page.records
        cursor = page.next_cursor
        if cursor is None:
            return


def _fetch_pages(index: Index, namespace: str, ids: Iterator[str], page_size: int) -> Iterator[Record]:
    page: list[str] = []
    for record_id in ids:
        page.append(record_id)
        if len(page) == page_size:
            yield from index.fetch(page, namespace).values()
            page = []
    if page:
        yield from index.fetch(page, namespace).values()


def iter_records(
    index: Index,
    namespace: str = "",
    filter: Mapping[str, Any] | Filter | None = None,
    *,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> Iterator[Record]:
    """Every record of ``namespace`` matching ``filter``, once each, in any order.

    Uses ``index.scan`` where the index has it. Otherwise lists ids with the filter and
    fetches them a page at a time; a backend that lists ids only without a filter
    (Pinecone lists by prefix) is listed whole and each fetched page is filtered with
    the filter oracle, which is the contract's meaning, so the answer stays exact.
    A backend that can do neither raises :class:`UnsupportedFeatureError`.
    """
    node = index.check_filter(filter)
    if hasattr(index, "scan"):
        yield from _scan(index, namespace, node, page_size)
        return
    if not isinstance(index, ListableIndex):
        raise UnsupportedFeatureError(
            index.store.backend, "enumerating records",
            "the backend can neither scan nor list ids (needs Index.scan)")
    try:
        ids = index.iter_ids(namespace, filter=node, page_size=page_size)
        first = next(ids, None)
    except UnsupportedFeatureError:
        if node is None:
            raise
        every = index.iter_ids(namespace, page_size=page_size)
        for record in _fetch_pages(index, namespace, every, page_size):
            if matches(node, record.metadata):
                yield record
        return
    if first is None:
        return
    yield from _fetch_pages(index, namespace, _chain(first, ids), page_size)


def _chain(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest

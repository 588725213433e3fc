"""What the three bridges share: opening an index, writing records in one batched path,
and enumerating records by filter.

Haystack's ``filter_documents`` and LlamaIndex's ``get_nodes`` list every record that
matches a filter: that is the contract's ``Index.scan``, which every backend has.

Frameworks hand embeddings over as Python lists of floats. Validating those one float
at a time is most of the cost of a large add, so :func:`dense_rows` turns a whole
batch into one float32 matrix with a single numpy call (its rows are then validated as
arrays), and :func:`write` sends large adds through :meth:`Index.upsert_bulk` (on
pgvector: parallel binary COPY). Either way the records mean what
:meth:`Index.upsert` means: insert or replace, the last of repeated ids kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from vectorport.core.async_store import AsyncIndex
from vectorport.core.filters.ast import Filter
from vectorport.core.store import Index, Store, connect
from vectorport.core.types import Record

DEFAULT_PAGE_SIZE = 500
BULK_MIN_RECORDS = 1_000
"""From this many records a bridge's add takes :meth:`Index.upsert_bulk`: below it, the
bulk path's extra round trips (is the table empty, are these ids stored) cost more
than they save."""


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


def dense_rows(vectors: Sequence[Any]) -> Sequence[Any]:
    """``vectors`` (lists of numbers or arrays, one per record) as the rows of one float32
    matrix, converted in a single numpy call instead of one Python float at a time.

    Anything that does not form a numeric matrix (ragged rows, ``None``, strings, ints
    beyond float) is handed back unchanged, so :meth:`Index.upsert` refuses it with its
    usual message for the record at fault. A value beyond float32 becomes infinity here,
    which the upsert refuses the same way. One difference from validating lists
    element by element: a ``bool`` in a batch that also holds other numbers is read as
    0 or 1, as numpy reads it (a batch of nothing but bools is still refused).
    """
    if not vectors:
        return vectors
    try:
        matrix = np.asarray(vectors)
    except (ValueError, TypeError, OverflowError):
        return vectors
    if matrix.ndim != 2 or matrix.dtype.kind not in "fiu":
        return vectors
    with np.errstate(over="ignore", invalid="ignore"):
        rows = np.ascontiguousarray(matrix, dtype=np.float32)
    return list(rows)  # row views of one buffer: each is validated, then copied, by the upsert


def _packed(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The bridge's own record dicts, their ``vector`` values swapped for :func:`dense_rows`."""
    vectors = [record["vector"] for record in records]
    rows = dense_rows(vectors)
    if rows is not vectors:
        for record, row in zip(records, rows, strict=True):
            record["vector"] = row
    return records


def write(index: Index, records: list[dict[str, Any]], namespace: str = "") -> int:
    """Upsert a bridge's record dicts (built for this call: their vectors are replaced
    in place); large adds take the backend's bulk path."""
    records = _packed(records)
    if len(records) >= BULK_MIN_RECORDS:
        return index.upsert_bulk(records, namespace)
    return index.upsert(records, namespace)


async def awrite(index: AsyncIndex, records: list[dict[str, Any]], namespace: str = "") -> int:
    """:func:`write`, awaited."""
    records = _packed(records)
    if len(records) >= BULK_MIN_RECORDS:
        return await index.upsert_bulk(records, namespace)
    return await index.upsert(records, namespace)


def iter_records(
    index: Index,
    namespace: str = "",
    filter: Mapping[str, Any] | Filter | None = None,
    *,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> Iterator[Record]:
    """Every record of ``namespace`` matching ``filter``, once each, in any order."""
    return index.iter_records(namespace, filter=filter, page_size=page_size)

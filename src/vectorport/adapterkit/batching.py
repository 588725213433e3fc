"""Splitting writes and lookups into requests an engine accepts.

Engines limit a request by count (records or ids) and by cost: body bytes, or the
length of a URL carrying ids. :func:`batches` cuts by both at once, keeping order;
:func:`unique` drops repeated ids first (the facade de-duplicates records, but ids
given to fetch or delete may repeat).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TypeVar
from urllib.parse import quote

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


def unique(items: Iterable[K]) -> list[K]:
    """``items`` without repeats, first occurrences in order."""
    return list(dict.fromkeys(items))


def batches(
    items: Iterable[T],
    max_count: int,
    *,
    cost: Callable[[T], int] | None = None,
    max_cost: int | None = None,
    bound: Callable[[list[T]], int] | None = None,
) -> Iterator[list[T]]:
    """Consecutive runs of at most ``max_count`` items whose ``cost`` sums to at most
    ``max_cost``. An item costlier than ``max_cost`` on its own still goes, alone: the
    engine, not this splitter, is the judge of one item that is too big.

    With ``bound`` (of a run: at least the sum of its items' costs, and cheaper to tell
    than them, one call for a whole run) the items are cut by count first, and ``cost``
    is asked item by item only in a run whose bound exceeds ``max_cost``: most loads are
    far below the limit, and a cost per item before the first write was a tenth of one."""
    if max_count < 1:
        raise ValueError("max_count must be positive")
    if bound is not None and max_cost is not None:
        for run in batches(items, max_count):
            if bound(run) <= max_cost:
                yield run
            else:
                yield from batches(run, max_count, cost=cost, max_cost=max_cost)
        return
    batch: list[T] = []
    total = 0
    for item in items:
        price = cost(item) if cost is not None else 0
        if batch and (len(batch) >= max_count
                      or (max_cost is not None and total + price > max_cost)):
            yield batch
            batch, total = [], 0
        batch.append(item)
        total += price
    if batch:
        yield batch


def url_cost(text: str, separator: int = 5) -> int:
    """Characters ``text`` takes as a percent-encoded URL query value, plus the
    ``&ids=``-style separator around it."""
    return len(quote(text, safe="")) + separator


__all__ = ["batches", "unique", "url_cost"]

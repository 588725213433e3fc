"""Reading a stream one step ahead of its consumer, in a thread.

A scan spends much of each page waiting on the engine (a round trip, the engine's own
work) while the GIL is free; a consumer that hashes or encodes the previous page in the
meantime turns that wait into useful time. At most ``depth`` items are held, so memory
stays bounded by pages, not by the stream.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterable
from queue import Empty, Full, Queue
from typing import TypeVar

T = TypeVar("T")

_POLL = 0.05
"""Seconds between the producer's looks at whether the consumer has gone."""


class _End:
    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


def read_ahead(items: Iterable[T], depth: int = 2) -> Generator[T, None, None]:
    """The items of ``items`` in order, produced by a thread up to ``depth`` ahead.
    An error of the producer is raised here, at the item it stopped at; closing this
    iterator stops the producer after its current item."""
    queue: Queue[T | _End] = Queue(maxsize=depth)
    gone = threading.Event()

    def put(item: T | _End) -> bool:
        while not gone.is_set():
            try:
                queue.put(item, timeout=_POLL)
                return True
            except Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(item):
                    return
        except BaseException as exc:  # handed to the consumer, who raises it
            put(_End(exc))
            return
        put(_End())

    thread = threading.Thread(target=produce, name="vectorport-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            try:
                item = queue.get(timeout=_POLL)
            except Empty:
                if not thread.is_alive() and queue.empty():
                    return  # the producer stopped without a word (it cannot, but never hang)
                continue
            if isinstance(item, _End):
                if item.error is not None:
                    raise item.error
                return
            yield item
    finally:
        gone.set()
        thread.join()

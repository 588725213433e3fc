"""Running a bulk load's chunks (:class:`~vectorport.core.adapter.BulkLoadingAdapter`).

An adapter's ``upsert_bulk`` cuts the records into chunks its engine takes in one
request and sends them over a few threads, so that the client encodes one chunk while
the engine stores the previous one. :func:`send_chunks` is that loop, once for every
adapter: each thread runs in a copy of the caller's context (the call's deadline goes
along), every chunk is tried even when one fails (the others still land: loading again
is always safe), and the first failure is raised at the end — a
:class:`~vectorport.core.errors.BackendError` then lists in ``written_ids`` exactly the
records of the chunks that were stored.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from vectorport.core.operations import settle_writes
from vectorport.core.types import Record


def send_chunks(chunks: Sequence[Sequence[Record]],
                send: Callable[[Sequence[Record]], None], workers: int) -> None:
    """``send`` every chunk, on up to ``workers`` threads at once; the first failure is
    raised after all chunks were tried (see the module docstring)."""
    outcomes: list[BaseException | None] = []
    if workers <= 1 or len(chunks) <= 1:
        for chunk in chunks:
            outcomes.append(_outcome(send, chunk))
    else:
        with ThreadPoolExecutor(max_workers=min(workers, len(chunks))) as pool:
            futures = [pool.submit(contextvars.copy_context().run, _outcome, send, chunk)
                       for chunk in chunks]
            outcomes = [future.result() for future in futures]
    settle_writes(chunks, outcomes)  # the facade's own rule for written_ids


def _outcome(send: Callable[[Sequence[Record]], None],
             chunk: Sequence[Record]) -> BaseException | None:
    try:
        send(chunk)
    except Exception as exc:  # kept for the end: the other chunks still go
        return exc
    return None


__all__ = ["send_chunks"]

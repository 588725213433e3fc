"""Copy an index between any two stores: planned, streamed, resumable, verified.

Memory stays bounded: the source is read a page at a time by :meth:`Index.scan`, and at
most ``2 × workers`` pages are in flight to the destination. Reading and writing overlap
(the scan runs in the calling thread while pool threads write). The checkpoint advances
only over the longest run of consecutive pages whose writes have returned, so a copy
killed at any point and started again re-sends at most the pages that were in flight.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from vectorport.core.errors import ValidationError
from vectorport.core.store import Index, Store
from vectorport.transfer.checkpoint import Checkpoint, default_checkpoint_path
from vectorport.transfer.plan import CopyPlan, destination_handle, plan_copy, precheck
from vectorport.transfer.progress import Progress
from vectorport.transfer.verify import VerifyReport, verify_indexes


@dataclass(frozen=True, slots=True)
class CopyReport:
    plan: CopyPlan
    written: dict[str, int]
    seconds: float
    resumed: bool
    verification: VerifyReport | None = None

    @property
    def records_per_second(self) -> float:
        return sum(self.written.values()) / self.seconds if self.seconds > 0 else 0.0


@dataclass
class _InOrder:
    """Completed pages, released to the checkpoint in scan order."""

    next_seq: int = 0
    finished: dict[int, tuple[str | None, int]] = field(default_factory=dict)

    def complete(self, seq: int, cursor: str | None, count: int) -> list[tuple[str | None, int]]:
        self.finished[seq] = (cursor, count)
        released = []
        while self.next_seq in self.finished:
            released.append(self.finished.pop(self.next_seq))
            self.next_seq += 1
        return released


def copy_identity(source: Index, destination: Store, destination_name: str) -> str:
    """Names the job for its checkpoint, with credentials never part of it."""
    return "|".join((_store_identity(source.store), source.name,
                     _store_identity(destination), destination_name))


def _store_identity(store: Store) -> str:
    # A store opened from a URL is the same store in the next process; one built from an
    # adapter object is not known to be, so its jobs never resume by default.
    return str(store.url) if store.url is not None else f"{store.backend}@{id(store.adapter)}"


def copy_index(
    source: Index,
    destination: Store,
    *,
    destination_name: str | None = None,
    namespaces: Sequence[str] | None = None,
    batch_size: int = 500,
    workers: int = 2,
    checkpoint: str | Path | None = None,
    restart: bool = False,
    precheck_records: bool = True,
    verify: bool = True,
    progress: bool = True,
) -> CopyReport:
    """Copy ``source`` into ``destination`` (an index of the same name unless
    ``destination_name``), every namespace unless ``namespaces``.

    Refuses before writing when the destination cannot hold the source (metric, sparse
    vectors, records outside its limits). Started again after a crash with the same
    arguments, it resumes from its checkpoint (``checkpoint``, by default under the
    user's state folder); ``restart=True`` starts over. With ``verify`` it ends with
    :func:`verify_indexes` and raises if the destination differs.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValidationError(f"workers must be a positive int, got {workers!r}")
    plan = plan_copy(source, destination, destination_name=destination_name,
                     namespaces=namespaces)
    plan.raise_problems()
    name = plan.destination.name
    path = Path(checkpoint) if checkpoint is not None else default_checkpoint_path(
        copy_identity(source, destination, name))
    state = Checkpoint.open(path, copy_identity(source, destination, name), restart=restart)
    if precheck_records and not state.prechecked:
        handle = destination_handle(destination, plan)
        precheck(((ns.name, page.records) for ns in plan.namespaces
                  for page in source.scan(ns.name, page_size=batch_size)), handle)
        state.prechecked = True
    if plan.create:
        spec = plan.destination
        target = destination.create_index(name, spec.dimension, spec.metric, sparse=spec.sparse,
                                          index_type=spec.index_type,
                                          index_params=spec.index_params, exist_ok=True)
    else:
        target = destination.index(name)
    state.save()
    meter = Progress(f"copy {source.name} → {name}", plan.records, enabled=progress)
    for unit in state.positions.values():
        meter.done += int(unit["written"])
    started = time.monotonic()
    written: dict[str, int] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="vectorport-copy") as pool:
        for ns in plan.namespaces:
            written[ns.name] = _copy_namespace(source, target, ns.name, batch_size, workers,
                                               pool, state, meter)
    meter.finish()
    seconds = time.monotonic() - started
    report = CopyReport(plan, written, seconds, state.resumed)
    if verify:
        verification = verify_indexes(source, target, namespaces=[n.name for n in plan.namespaces])
        report = CopyReport(plan, written, seconds, state.resumed, verification)
        verification.raise_if_different()
    state.remove()
    return report


def _copy_namespace(source: Index, target: Index, namespace: str, batch_size: int,
                    workers: int, pool: ThreadPoolExecutor, state: Checkpoint,
                    meter: Progress) -> int:
    unit = state.unit(namespace)
    if unit["done"]:
        return 0
    order = _InOrder()
    in_flight: dict[Future[int], int] = {}
    total = 0

    def settle(done: set[Future[int]]) -> None:
        nonlocal total
        for future in done:
            seq = in_flight.pop(future)
            count = future.result()  # a failed write stops the copy; the checkpoint stays
            cursor = cursors.pop(seq)
            for released_cursor, released_count in order.complete(seq, cursor, count):
                state.advance(namespace, released_cursor, released_count)
                total += released_count
                meter.add(released_count)

    cursors: dict[int, str | None] = {}
    seq = 0
    try:
        for page in source.scan(namespace, page_size=batch_size, cursor=unit["cursor"]):
            records = list(page.records)
            cursors[seq] = page.next_cursor
            # the bulk path: on pgvector a page of ids the target does not hold yet (all of
            # them, copying into a fresh index) is one COPY straight into the table; the
            # copy's own pool gives the parallelism, so one connection per page
            in_flight[pool.submit(target.upsert_bulk, records, namespace, workers=1)] = seq
            seq += 1
            if len(in_flight) >= 2 * workers:
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                settle(done)
        while in_flight:
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            settle(done)
    except BaseException:
        for future in in_flight:
            future.cancel()
        raise
    if not state.unit(namespace)["done"]:
        state.advance(namespace, None, 0)
    return total

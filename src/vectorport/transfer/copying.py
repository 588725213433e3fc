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
from typing import Generic, Literal, TypeVar

from vectorport.core.checked import CheckedRecords, checked_scan
from vectorport.core.errors import ValidationError
from vectorport.core.store import Index, Store
from vectorport.transfer.canonical import Checksum
from vectorport.transfer.checkpoint import Checkpoint, default_checkpoint_path
from vectorport.transfer.finishing import defer_upkeep_for_load, optimize_after_load
from vectorport.transfer.plan import (
    CopyPlan,
    destination_handle,
    plan_copy,
    precheck,
    tighter_rules,
)
from vectorport.transfer.progress import Progress
from vectorport.transfer.readahead import read_ahead
from vectorport.transfer.verify import VerifyReport, verify_indexes

T = TypeVar("T")

DEFAULT_BATCH_SIZE = 2000
"""Records per page read and per bulk write: large enough that a write's fixed costs (a
round trip, a COPY's start) are small beside its records, small enough that the
``2 × workers`` pages in flight stay a few MiB."""


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
class _InOrder(Generic[T]):
    """Completed pages, released to the checkpoint in scan order."""

    next_seq: int = 0
    finished: dict[int, T] = field(default_factory=dict)

    def complete(self, seq: int, outcome: T) -> list[T]:
        self.finished[seq] = outcome
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
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int = 2,
    checkpoint: str | Path | None = None,
    restart: bool = False,
    precheck_records: bool | Literal["full"] = True,
    verify: bool = True,
    progress: bool = True,
) -> CopyReport:
    """Copy ``source`` into ``destination`` (an index of the same name unless
    ``destination_name``), every namespace unless ``namespaces``.

    Refuses before writing when the destination cannot hold the source (metric, sparse
    vectors, records outside its limits: with ``precheck_records`` a read-only pass over
    the source runs the destination's rules tighter than the source's, and none when
    none is; ``"full"`` runs the destination's whole validation, for a source written by
    other tools than vectorport). Started again after a crash with the same arguments, it
    resumes from its checkpoint (``checkpoint``, by default under the user's state
    folder); ``restart=True`` starts over. With ``verify`` it ends with
    :func:`verify_indexes`, given the checksums taken of the source while copying, and
    raises if the destination differs. An index the copy creates has the upkeep of its
    search structures put off while it fills, where its adapter offers that
    (:class:`~vectorport.core.adapter.UpkeepDeferringAdapter`); before verifying, the
    destination is optimized where its adapter offers it
    (:class:`~vectorport.core.adapter.OptimizingAdapter`), which builds them.
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
        rules = None if precheck_records == "full" else tighter_rules(
            source.store.capabilities, destination.capabilities)
        if precheck_records == "full" or rules is not None:
            handle = destination_handle(destination, plan)
            precheck(((ns.name, page.records) for ns in plan.namespaces
                      for page in source.scan(ns.name, page_size=batch_size)), handle, rules)
        state.prechecked = True
    if plan.create:
        spec = plan.destination
        target = destination.create_index(name, spec.dimension, spec.metric, sparse=spec.sparse,
                                          index_type=spec.index_type,
                                          index_params=spec.index_params, exist_ok=True)
        defer_upkeep_for_load(target)  # built once in optimize_after_load, below
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
            if not verify:
                # checksums serve only the verification: not taken (~4 µs a record), and
                # the checkpoint says so, so that a resumed run that verifies reads the
                # source again rather than trusting a partial sum
                state.unit(ns.name)["checksums"] = None
            written[ns.name] = _copy_namespace(source, target, ns.name, batch_size, workers,
                                               pool, state, meter)
    meter.finish()
    optimize_after_load(target)
    seconds = time.monotonic() - started
    report = CopyReport(plan, written, seconds, state.resumed)
    if verify:
        chosen = [n.name for n in plan.namespaces]
        sums = {ns: kept.get(ns, Checksum()) for ns in chosen
                if (kept := state.checksums(ns)) is not None}
        verification = verify_indexes(source, target, namespaces=chosen, page_size=batch_size,
                                      source_checksums=sums)
        report = CopyReport(plan, written, seconds, state.resumed, verification)
        verification.raise_if_different()
    state.remove()
    return report


def _write(target: Index, page: CheckedRecords, namespace: str, keep_sums: bool
           ) -> tuple[int, Checksum]:
    """One page into the destination, and its checksum for the verification (taken here,
    in the writer thread, so the reading thread only reads). The page is the core's own
    scan output, so the write checks only what can refuse it in the destination
    (:mod:`vectorport.core.checked`), not the whole contract again."""
    sums = Checksum()
    if keep_sums:
        sums.add_all(page.records)
    # the bulk path: on pgvector a page of ids the target does not hold yet (all of them,
    # copying into a fresh index) is one COPY straight into the table; the copy's own
    # pool gives the parallelism, so one connection per page
    return target.upsert_bulk(page, namespace, workers=1), sums


def _copy_namespace(source: Index, target: Index, namespace: str, batch_size: int,
                    workers: int, pool: ThreadPoolExecutor, state: Checkpoint,
                    meter: Progress) -> int:
    unit = state.unit(namespace)
    if unit["done"]:
        return 0
    keep_sums = unit.get("checksums") is not None
    order: _InOrder[tuple[str | None, tuple[int, Checksum]]] = _InOrder()
    in_flight: dict[Future[tuple[int, Checksum]], int] = {}
    total = 0

    def settle(done: set[Future[tuple[int, Checksum]]]) -> None:
        nonlocal total
        for future in done:
            seq = in_flight.pop(future)
            count, sums = future.result()  # a failed write stops the copy; the checkpoint stays
            for cursor, (released_count, released_sums) in order.complete(
                    seq, (cursors.pop(seq), (count, sums))):
                state.advance(namespace, cursor, released_count, {namespace: released_sums})
                total += released_count
                meter.add(released_count)

    cursors: dict[int, str | None] = {}
    seq = 0
    # read ahead: the next page is read while the writes in flight are awaited
    pages = read_ahead(checked_scan(source, namespace, page_size=batch_size,
                                    cursor=unit["cursor"]), depth=1)
    try:
        for page in pages:
            cursors[seq] = page.next_cursor
            in_flight[pool.submit(_write, target, page, namespace, keep_sums)] = seq
            seq += 1
            # the first page alone: a bulk load into an empty table may rebuild the
            # table's indexes, which two loads at once would race on (pgvector)
            if seq == 1 or len(in_flight) >= 2 * workers:
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                settle(done)
        while in_flight:
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            settle(done)
    except BaseException:
        for future in in_flight:
            future.cancel()
        state.save()  # what was reached, saved or not by the throttled advance
        raise
    finally:
        pages.close()  # stops the reading thread
    if not state.unit(namespace)["done"]:
        state.advance(namespace, None, 0)
    return total

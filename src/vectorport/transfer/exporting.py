"""``export`` an index to Parquet files and ``import`` them into any store.

Export streams a scan into Parquet parts (a new part every ``rows_per_file`` rows), so
memory stays bounded by a few pages. Import is resumable like a copy: its checkpoint
records, per file, how many batches have been written and their checksums, and it ends
by comparing the destination with the files (counts and checksums per namespace, one
scan of the destination; records fetched by id only when those differ).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vectorport.core.errors import ValidationError
from vectorport.core.store import Index, Store
from vectorport.core.types import Record
from vectorport.transfer.canonical import Checksum
from vectorport.transfer.checkpoint import Checkpoint, default_checkpoint_path
from vectorport.transfer.copying import DEFAULT_BATCH_SIZE
from vectorport.transfer.finishing import defer_upkeep_for_load, optimize_after_load
from vectorport.transfer.parquet_files import (
    PartFile,
    batches,
    namespace_dir,
    part_files,
    require_pyarrow,
    schema,
    to_table,
)
from vectorport.transfer.progress import Progress
from vectorport.transfer.readahead import read_ahead
from vectorport.transfer.verify import NamespaceCheck, tally


@dataclass(frozen=True, slots=True)
class ExportReport:
    path: Path
    files: tuple[Path, ...]
    records: dict[str, int]
    seconds: float


@dataclass(frozen=True, slots=True)
class ImportReport:
    index: str
    records: int
    seconds: float
    resumed: bool
    namespaces: tuple[NamespaceCheck, ...]

    @property
    def ok(self) -> bool:
        return all(n.same for n in self.namespaces)


class _PartWriter:
    """Writes one namespace's parts, starting a new file every ``rows_per_file`` rows."""

    def __init__(self, folder: Path | None, single: Any, spec: Any, rows_per_file: int) -> None:
        self.folder, self.single, self.spec = folder, single, spec
        self.rows_per_file = rows_per_file
        self.files: list[Path] = []
        self._writer: Any = None
        self._rows = 0

    def write(self, table: Any) -> None:
        import pyarrow.parquet as pq

        if self.single is not None:
            self.single.write_table(table)
            return
        assert self.folder is not None
        if self._writer is None or self._rows >= self.rows_per_file:
            self.close()
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"part-{len(self.files):06d}.parquet"
            self._writer = pq.ParquetWriter(path, schema(self.spec))
            self.files.append(path)
            self._rows = 0
        self._writer.write_table(table)
        self._rows += table.num_rows

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def export_index(
    index: Index,
    path: str | Path,
    *,
    namespaces: Sequence[str] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    rows_per_file: int = 1_000_000,
    progress: bool = True,
) -> ExportReport:
    """Write every record of ``index`` (or of ``namespaces``) under ``path``."""
    require_pyarrow()
    import pyarrow.parquet as pq

    target = Path(path)
    chosen = list(namespaces) if namespaces is not None else index.list_namespaces()
    if target.exists() and target.is_dir() and any(target.iterdir()):
        raise ValidationError(f"{target} exists and is not empty; export into a new folder")
    total = sum(index.count(ns) for ns in chosen)
    meter = Progress(f"export {index.name}", total, enabled=progress)
    started = time.monotonic()
    single = None
    if target.suffix == ".parquet":
        target.parent.mkdir(parents=True, exist_ok=True)
        single = pq.ParquetWriter(target, schema(index.spec))
    files: list[Path] = [target] if single is not None else []
    counts: dict[str, int] = {}
    try:
        for ns in chosen:
            folder = None if single is not None else target / namespace_dir(ns)
            writer = _PartWriter(folder, single, index.spec, rows_per_file)
            counts[ns] = 0
            # the next page is read while this one is encoded and written
            for page in read_ahead(index.scan(ns, page_size=batch_size)):
                writer.write(to_table(index.spec, ns, page.records))
                counts[ns] += len(page.records)
                meter.add(len(page.records))
            writer.close()
            files.extend(writer.files)
    finally:
        if single is not None:
            single.close()
    meter.finish()
    return ExportReport(target, tuple(files), counts, time.monotonic() - started)


def import_index(
    path: str | Path,
    store: Store,
    *,
    index_name: str | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int = 2,
    checkpoint: str | Path | None = None,
    restart: bool = False,
    verify: bool = True,
    progress: bool = True,
) -> ImportReport:
    """Load an export into ``store`` (as ``index_name``, else the exported name),
    creating the index from the spec in the files; resumable and verified. An index the
    import creates has the upkeep of its search structures put off while it fills
    (:class:`~vectorport.core.adapter.UpkeepDeferringAdapter`), and every index is
    optimized once loaded where its adapter offers it
    (:class:`~vectorport.core.adapter.OptimizingAdapter`)."""
    require_pyarrow()
    source = Path(path)
    parts = part_files(source)
    spec = parts[0].spec
    name = index_name or spec.name
    identity = f"import|{source.resolve()}|{store.url or store.backend}|{name}"
    ckpt_path = Path(checkpoint) if checkpoint is not None else default_checkpoint_path(identity)
    state = Checkpoint.open(ckpt_path, identity, restart=restart)
    created = name not in store.list_indexes()
    target = store.create_index(name, spec.dimension, spec.metric, sparse=spec.sparse,
                                index_type=spec.index_type
                                if spec.index_type in store.capabilities.index_types else "auto",
                                index_params=spec.index_params
                                if spec.index_type in store.capabilities.index_types else None,
                                exist_ok=True)
    if created:
        defer_upkeep_for_load(target)  # built once in optimize_after_load, below
    state.save()
    meter = Progress(f"import {name}", sum(p.rows for p in parts), enabled=progress)
    for unit in state.positions.values():
        meter.done += int(unit["written"])
    started = time.monotonic()
    written = 0
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="vectorport-import") as pool:
        for part in parts:
            if not verify:  # checksums serve only the verification (see copying.py)
                state.unit(_unit_key(part, source))["checksums"] = None
            written += _import_part(part, source, target, batch_size, workers, pool, state, meter)
    meter.finish()
    optimize_after_load(target)
    seconds = time.monotonic() - started
    checks = verify_against_files(parts, target, batch_size, _file_sums(parts, source, state)
                                  ) if verify else ()
    report = ImportReport(name, written, seconds, state.resumed, tuple(checks))
    if verify and not report.ok:
        lines = [f"{c.namespace or '(default)'}: files {c.source_count} records, index "
                 f"{c.destination_count}" for c in checks if not c.same]
        raise ValidationError("the imported index differs from the files: " + "; ".join(lines))
    state.remove()
    return report


def _unit_key(part: PartFile, root: Path) -> str:
    return str(part.path.relative_to(root)) if part.path != root else part.path.name


def _file_sums(parts: list[PartFile], root: Path, state: Checkpoint) -> dict[str, Checksum] | None:
    """Per namespace, the checksum of every record of the files, as taken while they
    were imported; ``None`` when the checkpoint did not keep them all."""
    merged: dict[str, Checksum] = {}
    for part in parts:
        kept = state.checksums(_unit_key(part, root))
        if kept is None:
            return None
        for ns, sums in kept.items():
            merged.setdefault(ns, Checksum()).merge(sums)
    return merged


def _write_groups(target: Index, groups: list[tuple[str, tuple[Record, ...]]],
                  keep_sums: bool) -> tuple[int, dict[str, Checksum]]:
    """A Parquet batch (it may hold several namespaces) into ``target``, with its
    checksums (when kept), taken here in the writer thread."""
    count, sums = 0, dict[str, Checksum]()
    for namespace, records in groups:
        if keep_sums:
            sums.setdefault(namespace, Checksum()).add_all(records)
        # the bulk path (see copying.py); the import's own pool gives the parallelism
        count += target.upsert_bulk(records, namespace, workers=1)
    return count, sums


def _import_part(part: PartFile, root: Path, target: Index, batch_size: int, workers: int,
                 pool: ThreadPoolExecutor, state: Checkpoint, meter: Progress) -> int:
    key = _unit_key(part, root)
    unit = state.unit(key)
    if unit["done"]:
        return 0
    skip = int(unit["cursor"] or 0)
    keep_sums = unit.get("checksums") is not None
    in_flight: dict[Future[tuple[int, dict[str, Checksum]]], int] = {}
    finished: dict[int, tuple[int, dict[str, Checksum]]] = {}
    next_batch, total = skip, 0

    def settle(done: Iterable[Future[tuple[int, dict[str, Checksum]]]]) -> None:
        nonlocal next_batch, total
        for future in done:
            finished[in_flight.pop(future)] = future.result()
        while next_batch in finished:
            count, sums = finished.pop(next_batch)
            next_batch += 1
            state.advance(key, next_batch, count, sums)
            total += count
            meter.add(count)

    # The checkpoint counts whole batches: each batch's upserts are one future.
    try:
        for number, groups in read_ahead(batches(part, batch_size, skip)):
            in_flight[pool.submit(_write_groups, target, groups, keep_sums)] = number
            # the first batch alone, as a copy's first page (see copying.py)
            if number == skip or len(in_flight) >= 2 * workers:
                settle(wait(in_flight, return_when=FIRST_COMPLETED)[0])
        while in_flight:
            settle(wait(in_flight, return_when=FIRST_COMPLETED)[0])
    except BaseException:
        for future in in_flight:
            future.cancel()
        state.save()  # what was reached, saved or not by the throttled advance
        raise
    state.advance(key, None, 0)
    return total


def verify_against_files(parts: list[PartFile], target: Index, batch_size: int,
                         expected: dict[str, Checksum] | None = None) -> list[NamespaceCheck]:
    """Every record of the files is in ``target`` as written, and each namespace holds
    no more records than the files: one scan of the index against ``expected`` (the
    files' checksums per namespace, read from the files when not given); only when they
    differ is every record of the files fetched by id, to name what differs."""
    if expected is None:
        expected = {}
        for part in parts:
            for _, groups in batches(part, batch_size):
                for ns, records in groups:
                    expected.setdefault(ns, Checksum()).add_all(records)
    checks = []
    for ns in sorted(expected):
        got = Checksum()
        for page in read_ahead(target.scan(ns, page_size=batch_size)):
            got.add_all(page.records)
        want = expected[ns]
        missing = different = 0
        if not want.same_as(got):
            for part in parts:
                for _, groups in batches(part, batch_size):
                    for group_ns, records in groups:
                        if group_ns == ns:
                            missing, different = tally(records, target, ns, missing, different)
        checks.append(NamespaceCheck(ns, want.count, got.count, want.hex, got.hex,
                                     missing, different))
    return checks

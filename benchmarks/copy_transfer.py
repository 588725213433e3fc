"""Moving an index: ``copy_index`` between the embedded store and pgvector, and
``export_index`` / ``import_index`` through Parquet.

Copy, both directions, ``--rows`` × 384 clustered vectors with metadata and a short text:

- **local → pgvector**: a ``memory://`` index copied into a fresh pgvector index with
  ``copy_index`` (its defaults: pages of 2000, 2 writer threads; verify on, then off),
  against the destination's own ingest rate in the same run: ``index.upsert`` of the same
  records, already in hand as Python data, into a fresh index of the spec the copy
  creates (target: copy ≥ 0.8× the ingest rate).
- **pgvector → local**: the same the other way, against ``upsert`` into ``memory://``.
- **into a new pgvector index**: ``copy_index`` of ``min(--rows, 20,000)`` records into
  an index it creates (as ``vectorport copy`` does for a user: the HNSW graph and the
  metadata index put off during the load, built once at the end), verify off, against
  the careful path: ``create_index`` with ``defer_index``, ``upsert_bulk``,
  ``build_index``; both timed from creating the index to its graph built (target: ≥ 0.8×).

The sides alternate (:func:`common.alternating`); each side drops and recreates its
destination outside its timed part. Above 20,000 rows each side runs once (the time
budget), so those figures are single samples taken one right after the other.

**Peak memory**: a child process (:mod:`benchmarks.memory`) builds a local index of a
quarter of the rows, then of all of them, and copies it to pgvector with verification;
the growth of its resident set during the copy is compared between the two sizes (target:
independent of the index size, ≤ 1.2×).

**Export / import**: ``export_index`` of the local index to one Parquet file against
``pq.write_table`` of a table of the same columns built from the same Python data;
``import_index`` of that file into ``memory://`` (verify off, then on) against
``pq.read_table`` of it.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import vectorport
from benchmarks.common import (
    DIM,
    Figure,
    Options,
    Report,
    alternating,
    clustered,
    document,
    for_loads,
    metadata,
    record_id,
)
from benchmarks.memory import PeakRss, run_child
from benchmarks.servers import SERVERS

SECTION = "copy and export"
SCHEMA = "bench_copy"
TARGET = "≥ 0.8×"
MEMORY_TARGET = "≤ 1.2×"


def records(rows: int) -> list[dict[str, Any]]:
    vectors = clustered(rows, DIM)
    return [{"id": record_id(i), "vector": vectors[i], "metadata": metadata(i),
             "document": document(i)} for i in range(rows)]


def _repeats(options: Options, rows: int) -> int:
    """Samples per side: at full size one each (a verified copy of 100k records takes
    about a minute; three of each would break the bench's 15-minute budget)."""
    return options.repeats if rows <= 20_000 else 1


def fresh(store: vectorport.Store, name: str, spec: Any) -> vectorport.Index:
    """An empty index of ``spec``; on pgvector with its ANN index deferred (built once
    after the load, as the ingestion section loads), so that neither the copy nor the
    upsert it is compared with pays for maintaining HNSW row by row."""
    store.delete_index(name, missing_ok=True)
    options = {"pgvector": {"defer_index": True}} if store.backend == "pgvector" else None
    return store.create_index(name, spec.dimension, spec.metric, index_type=spec.index_type,
                              index_params=spec.index_params, backend_options=options)


def _timed_copy(source: vectorport.Index, destination: vectorport.Store, name: str,
                checkpoint: Path, verify: bool) -> float:
    from vectorport.transfer import copy_index

    fresh(destination, name, source.spec)
    start = time.perf_counter()
    report = copy_index(source, destination, destination_name=name, checkpoint=checkpoint,
                        restart=True, verify=verify, progress=False)
    seconds = time.perf_counter() - start
    if sum(report.written.values()) != source.count():
        raise RuntimeError(f"copy wrote {report.written}, the source holds {source.count()}")
    return seconds


def _timed_ingest(store: vectorport.Store, name: str, spec: Any,
                  data: list[dict[str, Any]]) -> float:
    index = fresh(store, name, spec)
    start = time.perf_counter()
    index.upsert(data)
    return time.perf_counter() - start


def _direction(report: Report, options: Options, title: str, source: vectorport.Index,
               destination: vectorport.Store, data: list[dict[str, Any]], scratch: Path) -> None:
    from vectorport.transfer import plan_copy

    rows = len(data)
    spec = plan_copy(source, destination, destination_name="copy_dst").destination
    checkpoint = scratch / f"copy-{destination.backend}.json"
    print(f"  {title}: copy (verify on / off) and upsert, alternately …", flush=True)
    on, off, ingest = alternating([
        lambda: _timed_copy(source, destination, "copy_dst", checkpoint, True),
        lambda: _timed_copy(source, destination, "copy_dst", checkpoint, False),
        lambda: _timed_ingest(destination, "ingest_dst", spec, data),
    ], _repeats(options, rows))
    for label, seconds in (("verify on", on), ("verify off", off)):
        report.add(Figure(SECTION, f"copy {rows:,} records {title}, {label}, vs "
                          f"{destination.backend}'s own upsert of them",
                          rows / seconds, rows / ingest, "records/s", TARGET))
    destination.delete_index("ingest_dst", missing_ok=True)


NEW_INDEX_ROWS = 20_000
"""Records of the copy into a new index: each side builds an HNSW graph (≈ 4 s at this
size here, ≈ 22 s at 100,000), so a smaller load keeps three samples a side in the
bench's budget."""


def _new_index_copy(report: Report, options: Options, data: list[dict[str, Any]],
                    destination: vectorport.Store, scratch: Path) -> None:
    """``copy_index`` into a pgvector index it creates itself (what ``vectorport copy``
    does for a user): its search structures are put off during the load and built once
    at the end (docs/copy.md). Against the careful path of the same records: an index
    created with ``defer_index``, ``upsert_bulk``, then ``build_index``; both timed from
    the index's creation to its HNSW graph built."""
    from vectorport.transfer import copy_index

    rows = min(len(data), NEW_INDEX_ROWS)
    local = vectorport.connect(for_loads("memory://"))
    source = local.create_index("copy_new_src", DIM, "cosine")
    source.upsert(data[:rows])
    checkpoint = scratch / "copy-new.json"
    adapter: Any = destination.adapter

    def vp_copy() -> float:
        destination.delete_index("copy_new", missing_ok=True)
        start = time.perf_counter()
        copy_index(source, destination, destination_name="copy_new", checkpoint=checkpoint,
                   restart=True, verify=False, progress=False)
        seconds = time.perf_counter() - start
        if not adapter.ann_index_built("copy_new"):
            raise RuntimeError("the copy left its new index without its HNSW graph")
        return seconds

    def careful() -> float:
        destination.delete_index("copy_new_raw", missing_ok=True)
        start = time.perf_counter()
        index = destination.create_index("copy_new_raw", DIM, "cosine", backend_options={
            "pgvector": {"defer_index": True}})
        index.upsert_bulk(data[:rows])
        adapter.build_index("copy_new_raw")
        return time.perf_counter() - start

    print(f"  copy into a new index ({rows:,} records) vs upsert_bulk + build_index, "
          "alternately …", flush=True)
    copied, loaded = alternating([vp_copy, careful], _repeats(options, rows))
    report.add(Figure(SECTION, f"copy {rows:,} records local → pgvector into a new HNSW index "
                      "it creates, verify off, vs upsert_bulk into a defer_index index + "
                      "build_index of them (both to the graph built)", rows / copied,
                      rows / loaded, "records/s", TARGET))
    for name in ("copy_new", "copy_new_raw"):
        destination.delete_index(name, missing_ok=True)
    local.close()


def child_copy_memory(rows: int, url: str, checkpoint: str) -> dict[str, Any]:
    """In a child process: a local index of ``rows``, then the peak resident-set growth
    of copying it (verified) into pgvector."""
    from vectorport.transfer import copy_index

    local = vectorport.connect(for_loads("memory://"))
    source = local.create_index("copy_src", DIM, "cosine")
    source.upsert(records(rows))
    destination = vectorport.connect(for_loads(url))
    fresh(destination, "copy_mem", source.spec)
    with PeakRss() as peak:
        copy_index(source, destination, destination_name="copy_mem", checkpoint=checkpoint,
                   restart=True, verify=True, progress=False)
    destination.delete_index("copy_mem", missing_ok=True)
    destination.close()
    return {"growth": peak.growth, "start": peak.start}


def _memory(report: Report, rows: int, url: str, scratch: Path) -> None:
    small = max(1000, rows // 4)
    print(f"  peak memory of a copy: {small:,} then {rows:,} records, each in a child "
          "process …", flush=True)
    grown = {n: run_child("benchmarks.copy_transfer:child_copy_memory", rows=n, url=url,
                          checkpoint=str(scratch / f"copy-mem-{n}.json"))["growth"]
             for n in (small, rows)}
    mib = 1024 * 1024
    report.add(Figure(SECTION, f"peak RSS growth copying {rows:,} vs {small:,} records local → "
                      f"pgvector, verified ({grown[rows] / mib:.0f} vs {grown[small] / mib:.0f} "
                      "MiB)", grown[rows] / mib, max(grown[small], 1) / mib, "MiB",
                      MEMORY_TARGET, higher_is_better=False, chart=False))
    report.note(f"copy: the {rows:,}-record local source alone holds "
                f"{rows * DIM * 4 / mib:.0f} MiB of float32 vectors; the copy's peak growth "
                "is measured in a child process that did nothing else (benchmarks/memory.py)")


def _arrow_table(data: list[dict[str, Any]], spec: Any) -> Any:
    """What a user writes with pyarrow: the export's columns from the same Python data."""
    import numpy as np
    import pyarrow as pa

    from vectorport.transfer.parquet_files import schema

    matrix = np.stack([r["vector"] for r in data]).astype(np.float32, copy=False)
    columns = [
        pa.array([""] * len(data), pa.string()),
        pa.array([r["id"] for r in data], pa.string()),
        pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), DIM),
        pa.nulls(len(data), pa.list_(pa.int32())),
        pa.nulls(len(data), pa.list_(pa.float32())),
        pa.array([json.dumps(r["metadata"]) for r in data], pa.string()),
        pa.array([r["document"] for r in data], pa.string()),
    ]
    return pa.Table.from_arrays(columns, schema=schema(spec))


def _export_import(report: Report, options: Options, source: vectorport.Index,
                   data: list[dict[str, Any]], scratch: Path) -> None:
    import pyarrow.parquet as pq

    from vectorport.transfer import export_index, import_index

    rows = len(data)
    vp_path, raw_path = scratch / "export-vp.parquet", scratch / "export-raw.parquet"

    def vp_export() -> float:
        vp_path.unlink(missing_ok=True)
        start = time.perf_counter()
        export_index(source, vp_path, progress=False)
        return time.perf_counter() - start

    def raw_export() -> float:
        raw_path.unlink(missing_ok=True)
        start = time.perf_counter()
        pq.write_table(_arrow_table(data, source.spec), raw_path)
        return time.perf_counter() - start

    repeats = _repeats(options, rows)
    print("  export vs pq.write_table, alternately …", flush=True)
    vp, raw = alternating([vp_export, raw_export], repeats)
    report.add(Figure(SECTION, f"export {rows:,} records to Parquet vs pq.write_table of the "
                      "same columns from the same Python data", rows / vp, rows / raw,
                      "records/s"))
    store = vectorport.connect(for_loads("memory://"))
    checkpoint = scratch / "import.json"

    def vp_import(verify: bool) -> float:
        store.delete_index(source.name, missing_ok=True)
        start = time.perf_counter()
        done = import_index(vp_path, store, checkpoint=checkpoint, restart=True, verify=verify,
                            progress=False)
        seconds = time.perf_counter() - start
        if done.records != rows:
            raise RuntimeError(f"import wrote {done.records} records, not {rows}")
        return seconds

    def raw_import() -> float:
        start = time.perf_counter()
        table = pq.read_table(vp_path)
        if table.num_rows != rows:
            raise RuntimeError(f"the export holds {table.num_rows} rows, not {rows}")
        return time.perf_counter() - start

    print("  import (verify off / on) vs pq.read_table, alternately …", flush=True)
    off, on, raw = alternating([lambda: vp_import(False), lambda: vp_import(True), raw_import],
                               repeats)
    for label, seconds in (("verify off", off), ("verify on", on)):
        report.add(Figure(SECTION, f"import {rows:,} records from Parquet into memory://, "
                          f"{label}, vs pq.read_table of the file", rows / seconds, rows / raw,
                          "records/s"))
    report.note(f"copy: export writes {os.path.getsize(vp_path) / 2**20:.0f} MiB, pyarrow's "
                f"table of the same columns {os.path.getsize(raw_path) / 2**20:.0f} MiB; the "
                "import figures include writing every record into the store (and, verify on, "
                "reading every one back), which pq.read_table does not do")
    store.close()


def run(report: Report, options: Options) -> None:
    rows = options.rows
    scratch = Path(SERVERS.scratch()) / "copy"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    url = f"{SERVERS.postgres()}&schema={SCHEMA}"
    print(f"  building a local index of {rows:,} records …", flush=True)
    data = records(rows)
    local = vectorport.connect(for_loads("memory://"))
    source = local.create_index("copy_src", DIM, "cosine")
    source.upsert(data)
    pg = vectorport.connect(for_loads(url))
    try:
        _direction(report, options, "local → pgvector", source, pg, data, scratch)
        pg_source = pg.index("copy_dst")
        _direction(report, options, "pgvector → local", pg_source, local, data, scratch)
        report.note("copy: copy_index with its defaults (pages of 2000 records, 2 writer "
                    "threads) into an existing empty index (on pgvector created with "
                    "defer_index, like the upsert it is compared with); the upsert uses the "
                    "backend's default batching, from records already in memory. Into an "
                    "index it creates itself (the figure 'into a new HNSW index'), "
                    "copy_index takes the source's spec and puts the index's upkeep off "
                    "until the last page is in: on pgvector the HNSW graph and the "
                    "metadata index are built once at the end, not row by row")
        _new_index_copy(report, options, data, pg, scratch)
        report.note("copy: the copy writes the source scan's own pages, which the write "
                    "checks only for what can refuse them in the destination (index shape, "
                    "tighter declared rules; docs/copy.md, the write's trust boundary), and "
                    "with verify off takes no checksums; the upsert it is compared with "
                    "validates its records in full, as any caller's records are")
        pg.delete_index("copy_dst", missing_ok=True)
        _memory(report, rows, url, scratch)
        _export_import(report, options, source, data, scratch)
    finally:
        pg.close()
        local.close()

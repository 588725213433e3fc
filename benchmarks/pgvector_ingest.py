"""Ingestion into pgvector: ``--rows`` × 384 clustered vectors with metadata and a short
text each, then the HNSW build.

Loads, each into an empty table on the same server, from the same Python data (ids, a
float32 matrix, metadata dicts, texts), batches of 5,000 for everyone:

- **vectorport**: ``index.upsert(records)`` into an index created with
  ``defer_index`` (its batches: one ``INSERT … SELECT FROM unnest(…) ON CONFLICT`` of
  binary array parameters each, two batches in flight);
- **raw**: what a careful user writes with psycopg and pgvector-python on one
  connection: binary COPY into a temp table, then ``INSERT … ON CONFLICT`` per batch,
  into a table of the same layout (created by vectorport, so the same columns, primary
  key and GIN index on the metadata);
- **LangChain** ``PGVector.add_embeddings`` and **LlamaIndex** ``PGVectorStore.add``
  (with precomputed embeddings, in their own tables with their default layouts), run
  once each in a separate virtualenv (:mod:`benchmarks.competitors`) over the first
  25,000 rows (:data:`benchmarks.competitors.ROWS`), against vectorport's upsert of the
  same rows before, between and after them.

- **upsert_bulk**: ``index.upsert_bulk(records)`` into an index created the same way:
  parallel binary COPY straight into the table over a few connections, the metadata
  index dropped first and built once at the end (:mod:`vectorport.adapters.pgvector.bulk`);
- **the physical limit**: one binary COPY in one transaction into a table with no index
  and no primary key, its stream encoded before the clock starts (the server's time
  alone).

All four alternate ``--repeats`` times (at least 3; the table is dropped and
recreated, untimed, before each load); the median is reported.

Then the HNSW index over the loaded vectorport table (m 16, ef_construction 64, cosine,
both times): PostgreSQL's defaults (``maintenance_work_mem`` 64 MB unless the server
says otherwise) with a plain ``CREATE INDEX``, then vectorport's ``build_index`` (1 GB
``maintenance_work_mem``, 2 parallel workers, and an ``ANALYZE``). Each build runs once.
The table is left loaded with vectorport's index for the recall section. End to end
(the issue's measure: load plus index build) is upsert_bulk plus vectorport's build
against the raw load plus the build with PostgreSQL's defaults.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

import vectorport
from benchmarks import competitors
from benchmarks.common import (
    DIM,
    Figure,
    Options,
    Report,
    Vectors,
    alternating,
    dataset,
    document,
    for_loads,
    metadata,
    record_id,
)
from benchmarks.servers import SERVERS, LoadedTable
from vectorport.core.store import bulk_workers

SECTION = "ingestion (pgvector)"
SCHEMA = "bench_ingest"
VP_INDEX = "ingest_vp"
RAW_INDEX = "ingest_raw"
BULK_INDEX = "ingest_bulk"
SAMPLE_INDEX = "ingest_sample"
BATCH = 5_000

RAW_STAGE = (
    "CREATE TEMP TABLE raw_stage (id text NOT NULL, embedding vector NOT NULL,"
    " metadata jsonb NOT NULL, document text) ON COMMIT DELETE ROWS"
)
RAW_COPY = "COPY raw_stage (id, embedding, metadata, document) FROM STDIN (FORMAT BINARY)"
RAW_MERGE = (
    'INSERT INTO "bench_ingest"."vp_ingest_raw" (namespace, id, embedding, metadata, document)'
    " SELECT '', id, embedding, metadata, document FROM raw_stage"
    " ON CONFLICT (namespace, id) DO UPDATE SET embedding = EXCLUDED.embedding,"
    " metadata = EXCLUDED.metadata, document = EXCLUDED.document"
)


@dataclass(frozen=True)
class _Data:
    vectors: Vectors
    ids: list[str]
    metadata: list[dict[str, Any]]
    texts: list[str]

    @classmethod
    def generated(cls, rows: int) -> _Data:
        return cls(dataset(rows, DIM)[0], [record_id(i) for i in range(rows)],
                   [metadata(i) for i in range(rows)], [document(i) for i in range(rows)])

    def head(self, rows: int) -> _Data:
        """The first ``rows`` records (views and slices, nothing generated again)."""
        return _Data(self.vectors[:rows], self.ids[:rows], self.metadata[:rows],
                     self.texts[:rows])


def _fresh(store: vectorport.Store, name: str) -> vectorport.Index:
    store.delete_index(name, missing_ok=True)
    return store.create_index(name, DIM, "cosine",
                              backend_options={"pgvector": {"defer_index": True}})


def _vectorport_load(store: vectorport.Store, data: _Data, name: str = VP_INDEX) -> float:
    index = _fresh(store, name)
    start = time.perf_counter()
    index.upsert(({"id": i, "vector": v, "metadata": m, "document": t}
                  for i, v, m, t in zip(data.ids, data.vectors, data.metadata, data.texts,
                                        strict=True)), batch_size=BATCH)
    return time.perf_counter() - start


def _bulk_load(store: vectorport.Store, data: _Data) -> float:
    index = _fresh(store, BULK_INDEX)
    start = time.perf_counter()
    index.upsert_bulk({"id": i, "vector": v, "metadata": m, "document": t}
                      for i, v, m, t in zip(data.ids, data.vectors, data.metadata, data.texts,
                                            strict=True))
    return time.perf_counter() - start


def _limit_load(uri: str, data: _Data) -> float:
    """One binary COPY in one transaction into a table with no index at all (not even a
    primary key), the stream encoded before the clock starts: what the server alone
    takes to store the rows, the floor for any load over one connection."""
    import psycopg

    from vectorport.adapters.pgvector import copy_stream
    from vectorport.core.types import Record

    stream = copy_stream.encode(
        [Record(id=i, vector=v, metadata=m, document=t)
         for i, v, m, t in zip(data.ids, data.vectors, data.metadata, data.texts, strict=True)],
        "vector", "")
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f'DROP TABLE IF EXISTS "{SCHEMA}".limit_load')
        conn.execute(f'CREATE TABLE "{SCHEMA}".limit_load (namespace text, id text,'
                     f" embedding vector({DIM}), sparse sparsevec, metadata jsonb,"
                     " document text)")
        start = time.perf_counter()
        with conn.transaction(), conn.cursor() as cur, cur.copy(
                f'COPY "{SCHEMA}".limit_load (namespace, id, embedding, sparse, metadata,'
                " document) FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(stream)
        seconds = time.perf_counter() - start
        conn.execute(f'DROP TABLE "{SCHEMA}".limit_load')
    return seconds


def _raw_load(store: vectorport.Store, uri: str, data: _Data) -> float:
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg.types.json import Jsonb

    _fresh(store, RAW_INDEX)
    with psycopg.connect(uri, autocommit=True) as conn:
        register_vector(conn)
        conn.execute(RAW_STAGE)
        start = time.perf_counter()
        for lo in range(0, len(data.ids), BATCH):
            hi = lo + BATCH
            with conn.transaction():
                with conn.cursor() as cur, cur.copy(RAW_COPY) as copy:
                    copy.set_types(["text", "vector", "jsonb", "text"])
                    for row in zip(data.ids[lo:hi], data.vectors[lo:hi],
                                   map(Jsonb, data.metadata[lo:hi]), data.texts[lo:hi],
                                   strict=True):
                        copy.write_row(row)
                conn.execute(RAW_MERGE)
        return time.perf_counter() - start


def _count(uri: str, table: str) -> int:
    import psycopg
    from psycopg import sql

    with psycopg.connect(uri) as conn:
        query = sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(SCHEMA, table))
        row = conn.execute(query).fetchone()
        return int(row[0]) if row else 0


def _competitors(report: Report, options: Options, store: vectorport.Store, uri: str,
                 data: _Data) -> None:
    """LangChain and LlamaIndex load the first :data:`competitors.ROWS` records once each;
    vectorport loads the same records into an index of its own three times, before,
    between and after them, and its median is their baseline."""
    sample = data.head(min(competitors.ROWS, len(data.ids)))
    rows = len(sample.ids)
    scratch = SERVERS.scratch()
    data_path = os.path.join(scratch, "ingest.npz")
    meta_path = os.path.join(scratch, "ingest-metadata.json")
    np.savez(data_path, vectors=sample.vectors, ids=np.array(sample.ids),
             texts=np.array(sample.texts))
    with open(meta_path, "w", encoding="utf-8") as f:
        json.dump(sample.metadata, f)
    try:
        interpreter = competitors.python(options.competitors_python)
    except Exception as exc:
        report.note(f"ingestion: LangChain / LlamaIndex not measured: no environment for "
                    f"them ({type(exc).__name__}: {exc})")
        return
    vp_samples = [_vectorport_load(store, sample, SAMPLE_INDEX)]
    rates: dict[str, float] = {}
    versions: dict[str, str] = {}
    for library, title in (("langchain", "LangChain PGVector"),
                           ("llamaindex", "LlamaIndex PGVectorStore")):
        print(f"  loading {rows:,} rows with {title} …", flush=True)
        try:
            result = competitors.load(interpreter, library, uri, data_path, meta_path, BATCH,
                                      scratch)
        except Exception as exc:
            report.note(f"ingestion: {title} failed: {exc}")
            continue
        finally:
            vp_samples.append(_vectorport_load(store, sample, SAMPLE_INDEX))
        if result.rows != rows:
            report.note(f"ingestion: {title} left {result.rows} rows, not {rows}")
        rates[title] = rows / result.seconds
        versions[title] = result.version
    store.delete_index(SAMPLE_INDEX, missing_ok=True)
    vp_rate = rows / statistics.median(vp_samples)
    for title, rate in rates.items():
        report.add(Figure(SECTION, f"load {rows:,} rows: vectorport vs {title} "
                          f"({versions[title]})", vp_rate, rate, "rows/s vs the library"))
    if rates:
        fastest = max(rates, key=lambda k: rates[k])
        report.add(Figure(SECTION, f"load {rows:,} rows: vectorport vs the faster of "
                          f"LangChain / LlamaIndex ({fastest})", vp_rate, rates[fastest],
                          "rows/s", "≥ 15×"))
        report.note(f"ingestion: LangChain and LlamaIndex loaded the first {rows:,} rows "
                    "once each, in their own virtualenv (benchmarks/competitors.py), with "
                    "precomputed embeddings, every socket connection and name lookup that "
                    "is not local refused, in batches of 5,000 like the others, into their "
                    "default table layouts (LangChain: jsonb metadata with a GIN index; "
                    "LlamaIndex: json metadata, no metadata index); vectorport's upsert "
                    "loaded the same rows before, between and after them (" + ", ".join(
                        f"{rows / s:,.0f}" for s in vp_samples) + " rows/s; the median is "
                    "the baseline)")


def _validation_seconds(store: vectorport.Store, data: _Data) -> float:
    """What the facade's validation of the records costs alone (no I/O)."""
    from vectorport.core import requests

    target = store.index(VP_INDEX).target
    start = time.perf_counter()
    requests.build_records(target, ({"id": i, "vector": v, "metadata": m, "document": t}
                                    for i, v, m, t in zip(data.ids, data.vectors, data.metadata,
                                                          data.texts, strict=True)))
    return time.perf_counter() - start


def _hnsw(report: Report, options: Options, store: vectorport.Store, uri: str,
          rows: int) -> tuple[float, float] | None:
    """Both builds; their seconds (vectorport's, the defaults') when both ran."""
    import psycopg
    from psycopg import sql

    table = sql.Identifier(SCHEMA, f"vp_{VP_INDEX}")
    default_seconds = None
    if options.slow_baselines:
        with psycopg.connect(uri, autocommit=True) as conn:
            settings = {name: conn.execute("SELECT current_setting(%s)", (name,)).fetchone()[0]  # type: ignore[index]
                        for name in ("maintenance_work_mem",
                                     "max_parallel_maintenance_workers")}
            print(f"  HNSW build with PostgreSQL's defaults ({settings}) …", flush=True)
            start = time.perf_counter()
            conn.execute(sql.SQL("CREATE INDEX bench_default_hnsw ON {} "
                                 "USING hnsw (embedding vector_cosine_ops)").format(table))
            default_seconds = time.perf_counter() - start
            conn.execute(sql.SQL("DROP INDEX {}").format(
                sql.Identifier(SCHEMA, "bench_default_hnsw")))
        report.note(f"ingestion: PostgreSQL's defaults here: maintenance_work_mem "
                    f"{settings['maintenance_work_mem']}, max_parallel_maintenance_workers "
                    f"{settings['max_parallel_maintenance_workers']}; pgvector's HNSW defaults "
                    "m 16, ef_construction 64 equal vectorport's, so both builds make the same "
                    "graph")
    print("  HNSW build with vectorport's settings …", flush=True)
    start = time.perf_counter()
    store.adapter.build_index(VP_INDEX)  # type: ignore[attr-defined]
    vp_seconds = time.perf_counter() - start
    if default_seconds is not None:
        report.add(Figure(SECTION, f"HNSW build after the load, vectorport's settings vs "
                          f"PostgreSQL's defaults ({vp_seconds:.0f} s vs {default_seconds:.0f} s)",
                          rows / vp_seconds, rows / default_seconds, "rows/s indexed",
                          "≥ 3×"))
        return vp_seconds, default_seconds
    report.note(f"ingestion: HNSW build with vectorport's settings took {vp_seconds:.0f} s "
                "(the default build was skipped)")
    return None


def run(report: Report, options: Options) -> None:
    from vectorport.testing.pgvector import libpq_uri

    rows = options.rows
    url = f"{SERVERS.postgres()}&schema={SCHEMA}"
    uri = libpq_uri(url)
    data = _Data.generated(rows)
    store = vectorport.connect(for_loads(url))
    try:
        print(f"  loading {rows:,} rows: vectorport upsert, raw COPY, upsert_bulk and one "
              "COPY into an unindexed table, alternately …", flush=True)
        repeats = max(3, options.repeats if rows <= 20_000 else 3)
        vp_seconds, raw_seconds, bulk_seconds, limit_seconds = alternating(
            [lambda: _vectorport_load(store, data), lambda: _raw_load(store, uri, data),
             lambda: _bulk_load(store, data), lambda: _limit_load(uri, data)],
            repeats)
        for table in (f"vp_{VP_INDEX}", f"vp_{RAW_INDEX}", f"vp_{BULK_INDEX}"):
            if _count(uri, table) != rows:
                report.note(f"ingestion: {table} holds {_count(uri, table)} rows, not {rows}")
        vp_rate = rows / vp_seconds
        report.add(Figure(SECTION, f"load {rows:,} rows: vectorport vs raw COPY → temp table "
                          f"→ INSERT … ON CONFLICT ({vp_rate:,.0f} vs {rows / raw_seconds:,.0f} "
                          "rows/s)", vp_seconds, raw_seconds, "s (lower is better)", "≤ 1.0×",
                          higher_is_better=False))
        report.add(Figure(SECTION, f"bulk load {rows:,} rows: upsert_bulk vs raw COPY → temp "
                          "table → INSERT … ON CONFLICT, the load alone (with the metadata index)",
                          rows / bulk_seconds, rows / raw_seconds, "rows/s"))
        validating = _validation_seconds(store, data)
        report.note(f"ingestion: validating every record before the first write (the facade's "
                    f"guarantee that a bad record never reaches the database) took "
                    f"{validating:.2f} s of upsert_bulk's {bulk_seconds:.2f} s; the raw path "
                    "checks nothing")
        report.add(Figure(SECTION, "bulk load vs the physical limit (one binary COPY in one "
                          f"transaction into an unindexed table, {rows / limit_seconds:,.0f} "
                          "rows/s)", rows / bulk_seconds, rows / limit_seconds, "rows/s"))
        report.note("ingestion: upsert_bulk runs parallel binary COPY over "
                    f"{bulk_workers()} connections straight into the table, then builds the "
                    "GIN index on the metadata once (the ANN index stays deferred, as for the "
                    "others); the physical limit's stream is encoded before its clock starts, "
                    "so it is the server's time alone")
        store.delete_index(RAW_INDEX, missing_ok=True)
        store.delete_index(BULK_INDEX, missing_ok=True)
        if options.slow_baselines:
            _competitors(report, options, store, uri, data)
        built = _hnsw(report, options, store, uri, rows)
        if built is not None:
            vp_build, default_build = built
            report.add(Figure(
                SECTION, f"end to end, load plus HNSW build: upsert_bulk + build_index vs raw "
                f"COPY → temp table → INSERT … ON CONFLICT + CREATE INDEX with PostgreSQL's "
                f"defaults ({bulk_seconds + vp_build:.0f} s vs {raw_seconds + default_build:.0f} s)",
                rows / (bulk_seconds + vp_build), rows / (raw_seconds + default_build),
                "rows/s", "≥ 1.5×"))
        SERVERS.loaded_pgvector = LoadedTable(url, VP_INDEX, rows)
    finally:
        store.close()

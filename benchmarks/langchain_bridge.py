"""LangChain on vectorport: ``VectorportVectorStore`` over pgvector against
``langchain-postgres``' ``PGVector``, each adding ``--rows`` precomputed embeddings.

Both sides load the ingestion section's data (``--rows`` × 384 clustered vectors, a
metadata dict and a short text each) into an empty store on the same PostgreSQL server,
in calls of 5,000 texts:

- **vectorport**: ``VectorportVectorStore.add_embeddings(texts, embeddings, metadatas,
  ids)``, the same call as langchain-postgres', with the embeddings turned into lists
  (``tolist()``, as LangChain embedders return them) inside the timed loop as on the
  other side, over an index created with ``defer_index`` (its HNSW index built once
  after a load; langchain-postgres creates no vector index at all);
- **langchain-postgres**: ``PGVector.add_embeddings`` with the same lists, in its own
  virtualenv (:mod:`benchmarks.competitors`: it pins a pgvector-python older than
  vectorport's). When the ingestion section ran in this run it already measured exactly
  this load, and its figure is reused instead of loading the rows through LangChain again.

Both sides add the first 25,000 rows (:data:`benchmarks.competitors.ROWS`, at most
``--rows``): langchain-postgres adds about 1,400 a second here. The vectorport side runs
``--repeats`` times, half before and half after the single langchain-postgres load, the
table dropped and recreated (untimed) before each, and its median is reported against
that load (target ≥ 8×).
"""

from __future__ import annotations

import json
import os
import statistics
import time
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
    dataset,
    document,
    for_loads,
    metadata,
    record_id,
)
from benchmarks.servers import SERVERS

SECTION = "LangChain bridge (pgvector)"
SCHEMA = "bench_langchain"
INDEX = "langchain_vp"
BATCH = 5_000
TARGET = "≥ 8×"


def never_called() -> Any:
    """A LangChain ``Embeddings`` the load must not call: the embeddings are precomputed."""
    from langchain_core.embeddings import Embeddings

    class Precomputed(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise RuntimeError("the benchmark must not compute embeddings")

        def embed_query(self, text: str) -> list[float]:
            raise RuntimeError("the benchmark must not compute embeddings")

    return Precomputed()


def vectorport_load(store: vectorport.Store, vectors: Vectors, ids: list[str],
                    texts: list[str], metas: list[dict[str, Any]]) -> float:
    from vectorport.integrations.langchain import VectorportVectorStore

    store.delete_index(INDEX, missing_ok=True)
    index = store.create_index(INDEX, DIM, "cosine",
                               backend_options={"pgvector": {"defer_index": True}})
    bridge = VectorportVectorStore(never_called(), index=index)
    start = time.perf_counter()
    for lo in range(0, len(ids), BATCH):
        hi = lo + BATCH
        bridge.add_embeddings(texts[lo:hi], vectors[lo:hi].tolist(), metas[lo:hi], ids[lo:hi])
    seconds = time.perf_counter() - start
    if index.count() != len(ids):
        raise RuntimeError(f"the bridge left {index.count()} records, not {len(ids)}")
    return seconds


def _langchain_postgres(report: Report, options: Options, uri: str, vectors: Vectors,
                        ids: list[str], texts: list[str],
                        metas: list[dict[str, Any]]) -> competitors.Load | None:
    known = competitors.RESULTS.get(("langchain", len(ids)))
    if known is not None:
        report.note("LangChain bridge: the langchain-postgres figure is the ingestion "
                    "section's load of the same data in this run")
        return known
    try:
        interpreter = competitors.python(options.competitors_python)
    except Exception as exc:
        report.note(f"LangChain bridge: langchain-postgres not measured: no environment for "
                    f"it ({type(exc).__name__}: {exc})")
        return None
    scratch = SERVERS.scratch()
    data_path = os.path.join(scratch, "langchain.npz")
    meta_path = os.path.join(scratch, "langchain-metadata.json")
    np.savez(data_path, vectors=vectors, ids=np.array(ids), texts=np.array(texts))
    with open(meta_path, "w", encoding="utf-8") as f:
        json.dump(metas, f)
    print("  loading with langchain-postgres PGVector …", flush=True)
    try:
        return competitors.load(interpreter, "langchain", uri, data_path, meta_path, BATCH,
                                scratch)
    except Exception as exc:
        report.note(f"LangChain bridge: langchain-postgres failed: {exc}")
        return None


def run(report: Report, options: Options) -> None:
    from vectorport.testing.pgvector import libpq_uri

    rows = min(options.rows, competitors.ROWS)
    url = f"{SERVERS.postgres()}&schema={SCHEMA}"
    vectors = dataset(options.rows, DIM)[0][:rows]  # the ingestion section's rows
    ids = [record_id(i) for i in range(rows)]
    texts = [document(i) for i in range(rows)]
    metas = [metadata(i) for i in range(rows)]
    store = vectorport.connect(for_loads(url))
    try:
        repeats = options.repeats
        print(f"  adding {rows:,} precomputed embeddings through VectorportVectorStore "
              f"({repeats} times, around the langchain-postgres load) …", flush=True)
        # half the vectorport loads before the single langchain-postgres load and half
        # after, so on a machine whose load drifts both sides sample the same stretch
        samples = [vectorport_load(store, vectors, ids, texts, metas)
                   for _ in range((repeats + 1) // 2)]
        store.delete_index(INDEX, missing_ok=True)
        baseline = (_langchain_postgres(report, options, libpq_uri(url), vectors, ids, texts,
                                        metas) if options.slow_baselines else None)
        samples += [vectorport_load(store, vectors, ids, texts, metas)
                    for _ in range(repeats // 2)]
        store.delete_index(INDEX, missing_ok=True)
        seconds = statistics.median(samples)
        report.note("LangChain bridge: VectorportVectorStore loads (before, then after the "
                    "langchain-postgres load): "
                    + ", ".join(f"{rows / s:,.0f}" for s in samples) + " embeddings/s")
        if baseline is None:
            report.note(f"LangChain bridge: VectorportVectorStore added {rows / seconds:,.0f} "
                        "embeddings/s (no langchain-postgres figure in this run)")
            return
        if baseline.rows != rows:
            report.note(f"LangChain bridge: langchain-postgres left {baseline.rows} rows")
        report.add(Figure(SECTION, f"add {rows:,} precomputed embeddings: VectorportVectorStore "
                          f"vs {baseline.version} PGVector.add_embeddings", rows / seconds,
                          rows / baseline.seconds, "embeddings/s", TARGET))
    finally:
        store.close()

"""Recall@10 against the exact answer wherever vectorport uses an ANN index.

Data and queries: the Gaussian mixture of :func:`common.dataset` (``--rows`` rows, 200
held-out queries), cosine. The exact top 10 comes from numpy over the same vectors.
Every query goes through vectorport (``index.query(q, top_k=10, ef=… / probes=…)``),
so the figure is what a vectorport user gets, with the ef / probes named in each row.
The baseline is the exact answer (recall 1.0); queries/s are in the row names.

- pgvector HNSW (m 16, ef_construction 64): the table the ingestion section left, or
  a fresh load; also with a filter selecting 10% of the rows (vectorport turns on
  pgvector's iterative scans, so a filtered ANN query still returns 10 rows).
- pgvector IVFFlat (lists = rows / 1000, pgvector's advice): its own load.
- milvus-lite HNSW (faiss underneath) on a smaller table (milvus-lite is an in-process
  Python engine, slow to load), flushed so that its segments are sealed and indexed; the
  adapter searches ``max(ef, top_k + 16)`` deep and rescores exactly.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import vectorport
from benchmarks.common import (
    DIM,
    Figure,
    Options,
    Report,
    Vectors,
    dataset,
    exact_top_k,
    metadata,
    record_id,
)
from benchmarks.servers import SERVERS

SECTION = "recall@10"
K = 10
QUERIES = 200
HNSW_EF = (10, 40, 100, 200)
IVF_PROBES = (1, 5, 10, 20)
MILVUS_ROWS = 20_000
MILVUS_EF = (10, 40, 100)
MILVUS_QUERIES = 100
BATCH = 5_000


def _truth(data: Vectors, queries: Vectors, rows: np.ndarray[Any, Any] | None = None
           ) -> list[set[str]]:
    """Exact top-K ids per query, over all rows or over the given row numbers."""
    if rows is None:
        top = exact_top_k(data, queries, K)
        return [{record_id(int(r)) for r in row} for row in top]
    top = exact_top_k(np.ascontiguousarray(data[rows]), queries, K)
    return [{record_id(int(rows[r])) for r in row} for row in top]


def _recall(found: Sequence[Sequence[str]], truth: Sequence[set[str]]) -> float:
    return float(np.mean([len(set(f) & t) / K for f, t in zip(found, truth, strict=True)]))


def _measure(index: vectorport.Index, queries: Vectors, truth: list[set[str]],
             **kwargs: Any) -> tuple[float, float]:
    index.query(queries[0], top_k=K, include_metadata=False, **kwargs)  # warm
    start = time.perf_counter()
    found = [[m.id for m in index.query(q, top_k=K, include_metadata=False, **kwargs)]
             for q in queries]
    rate = len(queries) / (time.perf_counter() - start)
    return _recall(found, truth), rate


def _load(store: vectorport.Store, name: str, data: Vectors, index_type: str) -> vectorport.Index:
    store.delete_index(name, missing_ok=True)
    index = store.create_index(name, DIM, "cosine", index_type=index_type,
                               backend_options={"pgvector": {"defer_index": True}})
    index.upsert(((record_id(i), data[i], metadata(i)) for i in range(len(data))),
                 batch_size=BATCH)
    store.adapter.build_index(name)  # type: ignore[attr-defined]
    return index


def _pgvector(report: Report, options: Options) -> None:
    rows = options.rows
    data, queries = dataset(rows, DIM)
    queries = queries[:QUERIES]
    truth = _truth(data, queries)
    loaded = SERVERS.loaded_pgvector
    if loaded is not None and loaded.rows == rows:
        store = vectorport.connect(loaded.url)
        hnsw = store.index(loaded.index)
        owned: list[str] = []
    else:
        store = vectorport.connect(f"{SERVERS.postgres()}&schema=bench_recall")
        print(f"  loading {rows:,} rows and building HNSW …", flush=True)
        hnsw = _load(store, "recall_hnsw", data, "hnsw")
        owned = ["recall_hnsw"]
    try:
        for ef in HNSW_EF:
            recall, rate = _measure(hnsw, queries, truth, ef=ef)
            report.add(Figure(SECTION, f"pgvector HNSW, ef {ef} ({rate:.0f} queries/s)",
                              recall, 1.0, "recall vs exact"))
        tenth = np.flatnonzero(np.arange(rows) % 10 == 0)
        filtered_truth = _truth(data, queries, tenth)
        recall, rate = _measure(hnsw, queries, filtered_truth, ef=40, filter={"bucket": 0})
        report.add(Figure(SECTION, f"pgvector HNSW, ef 40, 10% filter, iterative scan "
                          f"({rate:.0f} queries/s)", recall, 1.0, "recall vs exact"))
        print(f"  loading {rows:,} rows and building IVFFlat …", flush=True)
        ivf = _load(store, "recall_ivf", data, "ivf")
        owned.append("recall_ivf")
        lists = max(1, rows // 1000)
        for probes in IVF_PROBES:
            recall, rate = _measure(ivf, queries, truth, probes=probes)
            report.add(Figure(SECTION, f"pgvector IVFFlat, {lists} lists, probes {probes} "
                              f"({rate:.0f} queries/s)", recall, 1.0, "recall vs exact"))
        report.note(f"recall: pgvector over {rows:,} rows × {DIM}, {len(queries)} held-out "
                    "queries from the same mixture")
    finally:
        for name in owned:
            store.delete_index(name, missing_ok=True)
        store.close()


def _milvus(report: Report, options: Options) -> None:
    from pymilvus import MilvusClient

    rows = min(MILVUS_ROWS, options.rows)
    data, queries = dataset(rows, DIM)
    queries = queries[:MILVUS_QUERIES]
    truth = _truth(data, queries)
    url = SERVERS.milvus()
    store = vectorport.connect(url)
    client = MilvusClient(uri=url.removeprefix("milvus://"))
    try:
        print(f"  loading {rows:,} rows into milvus-lite (HNSW) …", flush=True)
        index = store.create_index("recall_hnsw", DIM, "cosine", index_type="hnsw")
        index.upsert(((record_id(i), data[i], metadata(i)) for i in range(rows)),
                     batch_size=1_000)
        client.flush("recall_hnsw")  # seal the data: only sealed segments get the index
        for ef in MILVUS_EF:
            recall, rate = _measure(index, queries, truth, ef=ef)
            depth = max(ef, K + 16)
            report.add(Figure(SECTION, f"milvus-lite HNSW, ef {ef} (searched {depth} deep; "
                              f"{rate:.0f} queries/s)", recall, 1.0, "recall vs exact"))
        report.note(f"recall: milvus-lite over {rows:,} rows and {len(queries)} queries, "
                    "flushed with MilvusClient.flush first: milvus-lite searches unsealed rows "
                    "exhaustively (recall 1.0, about 1 s a query at 20k rows) and builds its "
                    "faiss HNSW index only for sealed segments, as a Milvus server seals them "
                    "on its own")
    finally:
        store.delete_index("recall_hnsw", missing_ok=True)
        client.close()
        store.close()
        SERVERS.release("milvus")


def run(report: Report, options: Options) -> None:
    for name, part in (("pgvector", _pgvector), ("milvus", _milvus)):
        try:
            part(report, options)
        except Exception as exc:
            report.note(f"recall: {name} failed: {type(exc).__name__}: {exc}")

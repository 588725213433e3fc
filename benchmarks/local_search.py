"""Exact search: the ``local`` adapter against plain numpy and faiss-cpu.

100k × 384 clustered float32 vectors, cosine (inner product on normalised vectors).
numpy's matrix product plus ``argpartition`` is the BLAS limit on this machine; faiss
``IndexFlatIP`` uses the same threads. Single queries and batches of 200, with and
without a filter selecting 10% (numpy gets the same boolean mask precomputed; vectorport
gets it as a metadata filter, evaluated once and cached).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

import vectorport
from benchmarks.common import Figure, Report, clustered, median_seconds

N, DIM, K, BATCH, SINGLES = 100_000, 384, 10, 200, 50


def _numpy_topk(data: npt.NDArray[np.float32], queries: npt.NDArray[np.float32],
                k: int) -> npt.NDArray[np.intp]:
    scores = queries @ data.T
    part = np.argpartition(-scores, k, axis=1)[:, :k]
    order = np.take_along_axis(scores, part, 1).argsort(axis=1)[:, ::-1]
    return np.take_along_axis(part, order, 1)


def run(report: Report, n: int = N) -> None:
    data = clustered(n, DIM)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    queries = clustered(BATCH, DIM, seed=1)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    tenth = np.arange(n) % 10 == 0

    store = vectorport.connect("memory://")
    index = store.create_index("bench_local", DIM, "cosine")
    index.upsert(({"id": f"{i:06d}", "vector": data[i], "metadata": {"bucket": i % 10}}
                  for i in range(n)), batch_size=10_000)
    flt = {"bucket": 0}

    try:
        import faiss  # type: ignore[import-untyped]
    except ImportError:
        faiss = None
    flat = None
    if faiss is not None:
        flat = faiss.IndexFlatIP(DIM)
        flat.add(data)

    def per_query(seconds: float, count: int) -> float:
        return count / seconds

    for label, mask in (("no filter", None), ("10% filter", tenth)):
        sub = data if mask is None else np.ascontiguousarray(data[mask])
        f = None if mask is None else flt
        singles = queries[:SINGLES]
        vp_single = median_seconds(lambda f=f, singles=singles: [index.query(q, top_k=K, filter=f,
                                                             include_metadata=False)
                                                 for q in singles], repeats=3)
        np_single = median_seconds(lambda sub=sub, singles=singles: [_numpy_topk(sub, q.reshape(1, -1), K)
                                                    for q in singles], repeats=3)
        report.add(Figure("exact search (local)", f"single queries, {label}",
                          per_query(vp_single, SINGLES), per_query(np_single, SINGLES),
                          "queries/s vs numpy", "≥ 0.9×"))
        vp_batch = median_seconds(lambda f=f: index.query_many(queries, top_k=K, filter=f,
                                                               include_metadata=False),
                                  repeats=3)
        np_batch = median_seconds(lambda sub=sub: _numpy_topk(sub, queries, K), repeats=3)
        report.add(Figure("exact search (local)", f"batches of {BATCH}, {label}",
                          per_query(vp_batch, BATCH), per_query(np_batch, BATCH),
                          "queries/s vs numpy", "≥ 0.9×"))
        if flat is not None and mask is None:
            fa_batch = median_seconds(lambda: flat.search(queries, K), repeats=3)
            report.add(Figure("exact search (local)", f"batches of {BATCH} vs faiss IndexFlatIP",
                              per_query(vp_batch, BATCH), per_query(fa_batch, BATCH),
                              "queries/s vs faiss", "", note="faiss-cpu, same threads"))
    store.close()

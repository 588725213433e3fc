"""Exact search: the ``local`` adapter against plain numpy and faiss-cpu.

``--rows`` × 384 float32 vectors from the Gaussian mixture of :func:`common.dataset`,
queried by held-out points of the same mixture (as real queries land where the data is).
Cosine: the stored vectors are normalised, so numpy's baseline is one matrix product
plus ``argpartition`` (the BLAS limit on this machine) and faiss uses ``IndexFlatIP``;
vectorport's local engine computes the same product (over rows it keeps scaled to unit
length, as it cannot assume them normalised) and rescores exactly in float64 the rows a
proven float32 error bound lets reach the top k (10.5 a query here for the top 10). Euclidean: numpy
uses ``|x|² − 2x·q`` (one product), faiss ``IndexFlatL2``.

Single queries (a 1 × 384 matrix, made with ``reshape(1, -1)`` on every side: a query
made with ``q[None, :]`` has stride 0 and makes numpy skip BLAS) and batches of 200, with
and without a filter selecting 10%: numpy gets that subset as a precomputed contiguous
matrix, vectorport gets a metadata filter (which it evaluates once and caches as a
contiguous subset too, within half the matrix for all cached filters together). numpy and
faiss run with the same number of threads. numpy's side returns float32 row numbers;
vectorport's returns ids with exact float64 scores in the contract's order (ties by id)
as ``Match`` objects: docs/backends/local.md tables what each of those costs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

import vectorport
from benchmarks.common import (
    DIM,
    Figure,
    Options,
    Report,
    Vectors,
    dataset,
    for_loads,
    normalized,
    paired_medians,
)

SECTION = "exact search (local)"
K, BATCH, SINGLES = 10, 200, 50
TARGET = "≥ 0.9×"


def _numpy_topk(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Row numbers of the k best scores per row, best first: ``argpartition`` on the
    scores as they are (no negated copy), then a sort of the k."""
    n = scores.shape[1]
    part = np.argpartition(scores, n - k, axis=1)[:, n - k:]
    order = np.take_along_axis(scores, part, 1).argsort(axis=1)[:, ::-1]
    return np.take_along_axis(part, order, 1)


def _numpy_ip(data: Vectors, queries: Vectors, k: int) -> npt.NDArray[np.intp]:
    return _numpy_topk(queries @ data.T, k)


def _numpy_l2(data: Vectors, norms: npt.NDArray[np.float32], queries: Vectors,
              k: int) -> npt.NDArray[np.intp]:
    """Nearest by ``2x·q − |x|²`` (the query's own norm does not change the order),
    computed in place on the product."""
    scores = queries @ data.T
    scores *= 2
    scores -= norms[None, :]
    return _numpy_topk(scores, k)


def _threads() -> int:
    try:
        from threadpoolctl import threadpool_info

        counts = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"
                  and "scipy_openblas" in i.get("prefix", "")]
        return counts[0] if counts else 0
    except ImportError:
        return 0


def _faiss() -> Any:
    try:
        import faiss
    except ImportError:
        return None
    threads = _threads()
    if threads:
        faiss.omp_set_num_threads(threads)
    return faiss


def run(report: Report, options: Options) -> None:
    n = options.rows
    raw, raw_queries = dataset(n, DIM, BATCH)
    data, queries = normalized(raw), normalized(raw_queries)
    singles = [np.ascontiguousarray(q.reshape(1, -1)) for q in queries[:SINGLES]]
    tenth = np.arange(n) % 10 == 0
    repeats = options.repeats

    store = vectorport.connect(for_loads("memory://"))
    cosine = store.create_index("bench_local", DIM, "cosine")
    cosine.upsert(({"id": f"{i:07d}", "vector": data[i], "metadata": {"bucket": i % 10}}
                   for i in range(n)), batch_size=10_000)
    faiss = _faiss()
    flat_ip = None
    if faiss is not None:
        flat_ip = faiss.IndexFlatIP(DIM)
        flat_ip.add(data)
    else:
        report.note("exact search: faiss-cpu not installed, no faiss baseline")

    def per_second(seconds: float, count: int) -> float:
        return count / seconds

    for label, mask in (("no filter", None), ("10% filter", tenth)):
        sub = data if mask is None else np.ascontiguousarray(data[mask])
        flt = None if mask is None else {"bucket": 0}

        def vp_singles(flt: Any = flt) -> None:
            for q in singles:
                cosine.query(q[0], top_k=K, filter=flt, include_metadata=False)

        def np_singles(sub: Vectors = sub) -> None:
            for q in singles:
                _numpy_ip(sub, q, K)

        vp, base = paired_medians(vp_singles, np_singles, repeats=repeats)
        report.add(Figure(SECTION, f"cosine, single queries, {label}",
                          per_second(vp, SINGLES), per_second(base, SINGLES),
                          "queries/s vs numpy", TARGET))

        def vp_batch(flt: Any = flt) -> None:
            cosine.query_many(queries, top_k=K, filter=flt, include_metadata=False)

        vp, base = paired_medians(vp_batch, lambda sub=sub: _numpy_ip(sub, queries, K),
                                  repeats=repeats)
        report.add(Figure(SECTION, f"cosine, batches of {BATCH}, {label}",
                          per_second(vp, BATCH), per_second(base, BATCH),
                          "queries/s vs numpy", TARGET))
        if flat_ip is not None and mask is None:
            def fa_singles(index: Any = flat_ip) -> None:
                for q in singles:
                    index.search(q, K)

            vp, base = paired_medians(vp_singles, fa_singles, repeats=repeats)
            report.add(Figure(SECTION, "cosine, single queries vs faiss IndexFlatIP",
                              per_second(vp, SINGLES), per_second(base, SINGLES),
                              "queries/s vs faiss"))
            vp, base = paired_medians(vp_batch, lambda index=flat_ip: index.search(queries, K),
                                      repeats=repeats)
            report.add(Figure(SECTION, f"cosine, batches of {BATCH} vs faiss IndexFlatIP",
                              per_second(vp, BATCH), per_second(base, BATCH),
                              "queries/s vs faiss"))
    store.delete_index("bench_local")
    del flat_ip

    # euclidean, batches only: same data, unnormalised
    l2 = store.create_index("bench_local_l2", DIM, "euclidean")
    l2.upsert(({"id": f"{i:07d}", "vector": raw[i]} for i in range(n)), batch_size=10_000)
    norms = np.einsum("ij,ij->i", raw, raw).astype(np.float32)
    raw_q = np.ascontiguousarray(raw_queries)

    def vp_l2() -> None:
        l2.query_many(raw_q, top_k=K, include_metadata=False)

    vp, base = paired_medians(vp_l2, lambda: _numpy_l2(raw, norms, raw_q, K), repeats=repeats)
    report.add(Figure(SECTION, f"euclidean, batches of {BATCH}, no filter",
                      per_second(vp, BATCH), per_second(base, BATCH), "queries/s vs numpy",
                      TARGET))
    if faiss is not None:
        flat_l2 = faiss.IndexFlatL2(DIM)
        flat_l2.add(raw)
        search: Callable[[], object] = lambda: flat_l2.search(raw_q, K)  # noqa: E731
        vp, base = paired_medians(vp_l2, search, repeats=repeats)
        report.add(Figure(SECTION, f"euclidean, batches of {BATCH} vs faiss IndexFlatL2",
                          per_second(vp, BATCH), per_second(base, BATCH),
                          "queries/s vs faiss"))
    store.close()
    threads = _threads()
    coretype = os.environ.get("OPENBLAS_CORETYPE", "unset")
    report.note(f"exact search: {n:,} × {DIM} vectors; numpy (OpenBLAS) and faiss with "
                f"{threads or 'default'} threads; OPENBLAS_CORETYPE={coretype} so that "
                "faiss' bundled OpenBLAS uses the same CPU kernels as numpy's (it does not "
                "recognise this CPU and would fall back to pre-AVX kernels; see "
                "benchmarks/__init__.py)")

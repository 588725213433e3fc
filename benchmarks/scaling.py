"""How cost grows: ingest rate, query latency (p50 / p99) and memory at 10k, 100k and 1M
records × 384 (``--quick``: 10k and 50k), drawn in ``benchmarks/scaling.png``.

Loads and queries run in child processes (:mod:`benchmarks.memory`), so that each
resident set is that work's alone:

1. **load**, one child per (backend, size): the resident set is taken as the base, the
   vectors are generated (a Gaussian mixture like :func:`common.dataset`'s, a chunk at a
   time in float32, so 1M rows never exist in float64) and upserted with one metadata key
   (``bucket``) each, in batches of 5,000 (timed; the peak resident set sampled
   throughout); then the generated matrix is dropped and freed memory handed back to the
   OS (``malloc_trim``): the resident set above the base is what the *store* keeps;
2. **queries**, one child per backend holding every size: rounds of one top-10 query
   (with metadata) against each size in turn, the order reversed every other round, so
   that load from the other processes on this shared machine falls on every size alike;
   p50 and p99 per size. ``memory://`` indexes die with their process, so there the
   child that loaded the largest size, once its figures are taken, loads the smaller
   ones and runs the rounds (loading 1.11M records again in a fresh child took 25–33 s).

Backends: **local** (``memory://``, exact search) and **pgvector** (``index_type="flat"``:
an exact scan; an HNSW build over 1M rows would take most of the time budget) at every
size; **lancedb** (``lancedb:///folder``, exact search) and **qdrant-edge**
(``qdrant+edge:///folder``, Qdrant's HNSW segments, its optimizers run every 10,000
points) up to 100k rows (50k with ``--quick``), the largest the time budget allows. For
pgvector the resident set is the client's only: the rows live in the PostgreSQL server.

Figures, each a ratio in this run: the local store's resident set at the largest size
against the raw bytes of its float32 matrix (target ≤ 1.3×); per backend, the exponent
``b`` of query p50 ∝ rows^b fitted over the sizes against 1 (linear; target ≤ 1.0×), and
the ingest rate at the largest size against the rate at the smallest.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import vectorport
from benchmarks.common import DIM, Figure, Options, Report, Vectors, for_loads, record_id
from benchmarks.memory import PeakRss, rss_bytes, run_child
from benchmarks.servers import SERVERS

SECTION = "scaling"
SCHEMA = "bench_scaling"
FULL = {"local": (10_000, 100_000, 1_000_000), "pgvector": (10_000, 100_000, 1_000_000),
        "lancedb": (10_000, 100_000), "qdrant-edge": (10_000, 100_000)}
QUICK = {"local": (10_000, 50_000), "pgvector": (10_000, 50_000), "lancedb": (10_000, 50_000),
         "qdrant-edge": (10_000, 50_000)}
BATCH = 5_000
QUERIES = 50
PGVECTOR_QUERIES_AT_1M = 15
"""An exact scan of 1M rows takes about a second here: fewer rounds when 1M is a size."""
CHUNK = 100_000
RSS_TARGET = "≤ 1.3×"
EXPONENT_TARGET = "≤ 1.0×"
PNG = Path(__file__).resolve().parent / "scaling.png"


def _centers(seed: int, clusters: int) -> Vectors:
    return np.random.default_rng(seed).normal(size=(clusters, DIM)).astype(np.float32)


def mixture(n: int, seed: int = 0, clusters: int = 64, spread: float = 0.35) -> Vectors:
    """``n`` vectors of a Gaussian mixture like :func:`common.dataset`'s, generated a
    chunk at a time in float32 (1M rows never exist in float64)."""
    centers = _centers(seed, clusters)
    rng = np.random.default_rng(seed + 1)
    out = np.empty((n, DIM), dtype=np.float32)
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        out[lo:hi] = centers[rng.integers(0, clusters, size=hi - lo)]
        out[lo:hi] += spread * rng.standard_normal((hi - lo, DIM), dtype=np.float32)
    return out


def held_out(queries: int, seed: int = 0, clusters: int = 64, spread: float = 0.35) -> Vectors:
    """Queries from the same mixture, the same for every size."""
    centers = _centers(seed, clusters)
    rng = np.random.default_rng(seed + 2)
    points = centers[rng.integers(0, clusters, size=queries)]
    return points + spread * rng.standard_normal((queries, DIM), dtype=np.float32)


def _trim() -> None:
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to hand back
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _records(vectors: Vectors) -> Any:
    return ((record_id(i), vectors[i], {"bucket": i % 10}) for i in range(len(vectors)))


def _load(store: vectorport.Store, backend: str, rows: int, vectors: Vectors) -> float:
    name = f"scale_{rows}"
    store.delete_index(name, missing_ok=True)
    index_type = "flat" if backend == "pgvector" else "auto"
    index = store.create_index(name, DIM, "cosine", index_type=index_type)
    start = time.perf_counter()
    index.upsert(_records(vectors), batch_size=BATCH)
    return time.perf_counter() - start


def _load_again(store: vectorport.Store, backend: str, sizes: list[int]) -> None:
    """Load each of ``sizes`` (untimed), for the query rounds of an in-memory store."""
    for rows in sizes:
        vectors = mixture(rows)
        _load(store, backend, rows, vectors)
        del vectors
        _trim()


def child_load(backend: str, rows: int, url: str, query_sizes: list[int] | None = None,
               queries: int = 0) -> dict[str, Any]:
    """In a child process: load ``rows`` records into ``url`` (timed, peak resident set
    sampled), then free the generated matrix and take what the store keeps. The index is
    left for :func:`child_queries`; with ``query_sizes`` (``memory://``, whose indexes
    die with the child) this child loads the other sizes and runs the rounds itself."""
    store = vectorport.connect(for_loads(url))
    _trim()
    base = rss_bytes()
    vectors = mixture(rows)
    with PeakRss() as peak:
        seconds = _load(store, backend, rows, vectors)
    del vectors
    _trim()
    kept = rss_bytes() - base
    count = store.index(f"scale_{rows}").count()
    result = {"ingest_seconds": seconds, "kept": kept, "peak_growth": peak.growth,
              "count": count}
    if query_sizes:
        _load_again(store, backend, [size for size in query_sizes if size != rows])
        result["latencies"] = _rounds(store, query_sizes, queries)
    store.close()
    return result


def child_queries(backend: str, sizes: list[int], url: str, queries: int) -> dict[str, Any]:
    """In a child process: :func:`_rounds` over the indexes the load children left
    (``memory://`` ones loaded here again: a load child failed before the largest)."""
    store = vectorport.connect(for_loads(url))
    if url == "memory://":
        _load_again(store, backend, sizes)
    latencies = _rounds(store, sizes, queries)
    store.close()
    return {"latencies": latencies}


def _rounds(store: vectorport.Store, sizes: list[int], queries: int) -> dict[str, list[float]]:
    """One top-10 query at a time against every size in turn (the order reversed every
    round), so that load from other processes falls on every size alike; the latencies
    per size. The indexes are dropped afterwards."""
    indexes = {rows: store.index(f"scale_{rows}") for rows in sizes}
    points = held_out(queries + 1)
    for index in indexes.values():
        index.query(points[-1], top_k=10)  # warm: connection, caches
    latencies: dict[int, list[float]] = {rows: [] for rows in sizes}
    for i in range(queries):
        order = sizes if i % 2 == 0 else list(reversed(sizes))
        for rows in order:
            start = time.perf_counter()
            indexes[rows].query(points[i], top_k=10)
            latencies[rows].append(time.perf_counter() - start)
    for rows in sizes:
        store.delete_index(f"scale_{rows}", missing_ok=True)
    return {str(k): v for k, v in latencies.items()}


class _Point:
    def __init__(self, rows: int, load: dict[str, Any], latencies: list[float]) -> None:
        self.rows = rows
        self.rate = rows / load["ingest_seconds"]
        self.p50 = float(np.percentile(latencies, 50))
        self.p99 = float(np.percentile(latencies, 99))
        self.kept = int(load["kept"])
        self.peak = int(load["peak_growth"])


def exponent(rows: list[int], seconds: list[float]) -> float:
    """The least-squares slope of log(seconds) over log(rows)."""
    slope, _ = np.polyfit(np.log(rows), np.log(seconds), 1)
    return float(slope)


def _url(backend: str, folder: Path) -> str:
    if backend == "local":
        return "memory://"
    if backend == "pgvector":
        return f"{SERVERS.postgres()}&schema={SCHEMA}"
    if backend == "qdrant-edge":
        return f"qdrant+edge://{folder}"
    return f"lancedb://{folder}"


def _table(curves: dict[str, list[_Point]]) -> list[str]:
    mib = 2**20
    lines = ["| backend | records | ingest (records/s) | query p50 (ms) | query p99 (ms) | "
             "resident set kept (MiB) | peak growth while loading (MiB) | float32 matrix (MiB) |",
             "|---|---|---|---|---|---|---|---|"]
    for backend, points in curves.items():
        for p in points:
            lines.append(f"| {backend} | {p.rows:,} | {p.rate:,.0f} | {p.p50 * 1e3:.2f} | "
                         f"{p.p99 * 1e3:.2f} | {p.kept / mib:,.0f} | {p.peak / mib:,.0f} | "
                         f"{p.rows * DIM * 4 / mib:,.0f} |")
    return lines


def _draw(curves: dict[str, list[_Point]]) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for backend, points in curves.items():
        rows = [p.rows for p in points]
        axes[0].plot(rows, [p.rate for p in points], marker="o", label=backend)
        line = axes[1].plot(rows, [p.p50 * 1e3 for p in points], marker="o",
                            label=f"{backend} p50")[0]
        axes[1].plot(rows, [p.p99 * 1e3 for p in points], marker="x", linestyle="--",
                     color=line.get_color(), label=f"{backend} p99")
        if backend != "pgvector":  # pgvector's rows live in the server
            axes[2].plot(rows, [max(p.kept, 1) / 2**20 for p in points], marker="o",
                         label=f"{backend}: resident set kept")
    sizes = sorted({p.rows for points in curves.values() for p in points})
    axes[2].plot(sizes, [n * DIM * 4 / 2**20 for n in sizes], color="black", linestyle=":",
                 label="float32 matrix (rows × 384 × 4 B)")
    titles = ("ingest rate (records/s)", "query latency, top 10 (ms)",
              "client memory kept after the load (MiB)")
    for ax, title in zip(axes, titles, strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("records (× 384 dimensions)")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
        ax.grid(True, which="both", linewidth=0.3)
    fig.tight_layout()
    fig.savefig(PNG, dpi=100)
    plt.close(fig)
    return True


def _backend(report: Report, backend: str, sizes: tuple[int, ...], url: str,
             queries: int) -> list[_Point]:
    loads: dict[int, dict[str, Any]] = {}
    in_memory = url == "memory://"
    for rows in sizes:
        rounds: dict[str, Any] = (
            {"query_sizes": list(sizes), "queries": queries}
            if in_memory and rows == sizes[-1] else {})
        then = f", then {queries} rounds of one query per size there" if rounds else ""
        print(f"  {backend}: loading {rows:,} records in a child process{then} …", flush=True)
        try:
            loads[rows] = run_child("benchmarks.scaling:child_load", backend=backend,
                                    rows=rows, url=url, **rounds)
        except Exception as exc:
            report.note(f"scaling: {backend} at {rows:,} failed: {exc}")
            break
        if loads[rows]["count"] != rows:
            report.note(f"scaling: {backend} at {rows:,} held {loads[rows]['count']} records")
    if not loads:
        return []
    latencies = loads[max(loads)].get("latencies")
    if latencies is None:  # not in memory, or a load failed before the largest size
        print(f"  {backend}: {queries} rounds of one query per size, alternately …",
              flush=True)
        latencies = run_child("benchmarks.scaling:child_queries", backend=backend,
                              sizes=list(loads), url=url, queries=queries)["latencies"]
    points = [_Point(rows, loads[rows], latencies[str(rows)]) for rows in loads]
    for p in points:
        print(f"    {p.rows:,}: {p.rate:,.0f} records/s, p50 {p.p50 * 1e3:.2f} ms, p99 "
              f"{p.p99 * 1e3:.2f} ms, kept {p.kept / 2**20:,.0f} MiB", flush=True)
    return points


def run(report: Report, options: Options) -> None:
    measure(report, QUICK if options.quick else FULL)


def measure(report: Report, plan: dict[str, tuple[int, ...]], queries: int | None = None,
            draw: bool = True) -> None:
    """The scaling curves of ``plan`` (backend → sizes); ``queries`` rounds per backend
    (default :data:`QUERIES`, fewer on pgvector when 1M is a size)."""
    curves: dict[str, list[_Point]] = {}
    folder = Path(tempfile.mkdtemp(prefix="vp-bench-scaling-"))
    try:
        for backend, sizes in plan.items():
            big = max(sizes) >= 1_000_000
            rounds = queries or (PGVECTOR_QUERIES_AT_1M if backend == "pgvector" and big
                                 else QUERIES)
            try:
                points = _backend(report, backend, sizes, _url(backend, folder / backend),
                                  rounds)
            except Exception as exc:
                report.note(f"scaling: {backend} failed: {type(exc).__name__}: {exc}")
                continue
            if points:
                curves[backend] = points
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    _figures(report, curves)
    drawn = draw and _draw(curves)
    block = _table(curves)
    if drawn:
        block += ["", "![How cost grows with the number of records](benchmarks/scaling.png)"]
    report.sections["How cost grows (scaling)"] = block


def _figures(report: Report, curves: dict[str, list[_Point]]) -> None:
    for backend, points in curves.items():
        if len(points) < 2:
            continue
        first, last = points[0], points[-1]
        report.add(Figure(SECTION, f"{backend}: ingest rate at {last.rows:,} vs at "
                          f"{first.rows:,} records", last.rate, first.rate,
                          "records/s vs the smallest size", chart=False))
        slope = exponent([p.rows for p in points], [p.p50 for p in points])
        report.add(Figure(SECTION, f"{backend}: query p50 growth exponent over "
                          f"{first.rows:,}–{last.rows:,} records (p50 {first.p50 * 1e3:.2f} → "
                          f"{last.p50 * 1e3:.2f} ms)", slope, 1.0, "exponent vs linear (1)",
                          EXPONENT_TARGET, higher_is_better=False, chart=False))
        if backend == "local":
            raw = last.rows * DIM * 4
            report.add(Figure(SECTION, f"local: resident set kept at {last.rows:,} records vs "
                              f"the raw float32 matrix ({last.kept / 2**20:,.0f} vs "
                              f"{raw / 2**20:,.0f} MiB)", last.kept / 2**20, raw / 2**20, "MiB",
                              RSS_TARGET, higher_is_better=False, chart=False))
    report.note("scaling: every load runs in a child process of its own, and the queries of "
                "a backend in one more (memory://: in the largest size's load child, after "
                "its figures, with the smaller sizes loaded there), alternating between the "
                "sizes; records carry an id "
                "and one metadata key; 'kept' is the client's resident set after the load less "
                "before it, with the generated matrix freed (pgvector keeps its rows in the "
                "server, so its client figure is only the connection's)")

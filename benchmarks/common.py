"""Timing, data and reporting shared by the benchmark sections.

Timing: this machine is shared (other test suites run while we measure), so a figure and
its baseline are measured *alternately* (:func:`paired_medians`: A B B A A B …), and the
median of each side is reported. Load that comes and goes then falls on both sides
alike, and the ratio stays meaningful even when the absolute numbers move.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

REPEATS = 5
DIM = 384
ROWS = 100_000

Vectors = npt.NDArray[np.float32]


# -- options -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """What the command line says; every section reads what it needs."""

    rows: int = ROWS
    """Rows of the large tables (exact search, ingestion, recall)."""
    repeats: int = REPEATS
    """Samples per side of a paired measurement (the median is reported)."""
    competitors_python: str | None = None
    """A Python with langchain-postgres and LlamaIndex installed (see ``competitors``)."""
    slow_baselines: bool = True
    """Run the slow baselines (PostgreSQL's default HNSW build, the competitors)."""
    quick: bool = False
    """Development sizes: 10,000 rows, and the scaling curve at 10k / 50k only."""


# -- stores ------------------------------------------------------------------------------

LOAD_SECONDS = 3600
"""The deadline of the sections' stores that load large tables in one call. Every call
has one deadline for all its batches (30 s by default, docs/contract.md): a million rows
into pgvector took 30 s on a slow run, and 50,000 into Qdrant Edge longer on a loaded
machine, so with the default such a load fails where it is merely slow."""


def for_loads(url: str) -> str:
    """``url`` with the ``timeout`` of :data:`LOAD_SECONDS`."""
    return f"{url}{'&' if '?' in url else '?'}timeout={LOAD_SECONDS}"


# -- timing ------------------------------------------------------------------------------


def median_seconds(fn: Callable[[], object], repeats: int = REPEATS, warmup: int = 1) -> float:
    """Median wall time of ``fn`` over ``repeats`` runs after ``warmup`` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timed(fn: Callable[[], object]) -> float:
    """Wall time of one call."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def paired_medians(
    measured: Callable[[], object],
    baseline: Callable[[], object],
    repeats: int = REPEATS,
    warmup: int = 1,
    before: Callable[[], object] | None = None,
) -> tuple[float, float]:
    """Median wall times of ``measured`` and ``baseline``, run alternately in the order
    A B B A A B B A … (so neither side always goes first), after ``warmup`` runs of each.
    ``before`` (untimed) runs ahead of every timed call, e.g. to reset a table."""
    for _ in range(warmup):
        for fn in (measured, baseline):
            if before is not None:
                before()
            fn()
    samples: dict[int, list[float]] = {0: [], 1: []}
    fns = (measured, baseline)
    for i in range(repeats):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        for side in order:
            if before is not None:
                before()
            samples[side].append(timed(fns[side]))
    return statistics.median(samples[0]), statistics.median(samples[1])


def alternating(sides: list[Callable[[], float]], repeats: int) -> list[float]:
    """Median of each side over ``repeats`` rounds, the sides taking turns (the order
    reversed every other round). Each side measures itself and returns seconds, so that
    it can reset state (drop and recreate a table) outside its timed part."""
    samples: list[list[float]] = [[] for _ in sides]
    for i in range(repeats):
        order = range(len(sides)) if i % 2 == 0 else reversed(range(len(sides)))
        for side in order:
            samples[side].append(sides[side]())
    return [statistics.median(s) for s in samples]


# -- data --------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def dataset(n: int, dim: int = DIM, queries: int = 200, seed: int = 0,
            clusters: int = 64, spread: float = 0.35) -> tuple[Vectors, Vectors]:
    """``n`` stored vectors and ``queries`` held-out query vectors from one Gaussian
    mixture: realistic neighbourhoods, so ANN recall means something (on uniform random
    384-d data every point is about equally far from every other), and queries that
    land where the data is, as real queries do. Read-only; cached per arguments."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(clusters, dim)).astype(np.float32)
    total = n + queries
    labels = rng.integers(0, clusters, size=total)
    points = centers[labels] + spread * rng.normal(size=(total, dim)).astype(np.float32)
    points = np.ascontiguousarray(points, dtype=np.float32)
    data, held_out = np.ascontiguousarray(points[:n]), np.ascontiguousarray(points[n:])
    data.setflags(write=False)
    held_out.setflags(write=False)
    return data, held_out


def clustered(n: int, dim: int, clusters: int = 64, seed: int = 0,
              spread: float = 0.35) -> Vectors:
    """``n`` vectors of the mixture of :func:`dataset` (a writable copy)."""
    return dataset(n, dim, 0, seed, clusters, spread)[0].copy()


def normalized(vectors: Vectors) -> Vectors:
    out = np.ascontiguousarray(vectors, dtype=np.float32).copy()
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


LANGS = ("en", "de", "fr", "es")
TAGS = ("news", "blog", "paper", "forum", "docs", "code")


def metadata(i: int) -> dict[str, Any]:
    """Typical chunk metadata: a source, a year, a rating, a language, tags, a bucket
    (``bucket == 0`` selects exactly 10% of the rows)."""
    return {
        "source": f"doc-{i // 8:06d}",
        "year": 2000 + i % 25,
        "rating": (i % 50) / 10,
        "lang": LANGS[i % 4],
        "tags": [TAGS[i % 6], TAGS[(i // 6) % 6]],
        "bucket": i % 10,
    }


def record_id(i: int) -> str:
    return f"rec-{i:07d}"


def document(i: int) -> str:
    return f"chunk {i} of document {i // 8}: a short passage of text."


def exact_top_k(data: Vectors, queries: Vectors, k: int, metric: str = "cosine"
                ) -> npt.NDArray[np.intp]:
    """Row numbers of the exact top ``k`` per query (ground truth for recall)."""
    if metric == "cosine":
        scores = normalized(queries) @ normalized(data).T
    elif metric == "dotproduct":
        scores = queries @ data.T
    else:
        scores = -(np.sum(queries**2, axis=1)[:, None] + np.sum(data**2, axis=1)[None, :]
                   - 2 * queries @ data.T)
    part = np.argpartition(-scores, k, axis=1)[:, :k]
    order = np.take_along_axis(scores, part, 1).argsort(axis=1)[:, ::-1]
    return np.take_along_axis(part, order, 1)


# -- reporting ---------------------------------------------------------------------------

TARGET_RE = re.compile(r"^(≥|≤)\s*([0-9.]+)\s*×$")


@dataclass
class Figure:
    """One reported figure: a ratio ``value / baseline`` and, optionally, its target,
    written ``"≥ 15×"`` or ``"≤ 1.05×"`` (a bound on the ratio)."""

    section: str
    name: str
    value: float
    baseline: float
    unit: str
    target: str = ""
    higher_is_better: bool = True
    note: str = ""
    chart: bool = True
    """Whether the chart shows it (only vectorport-against-a-baseline comparisons)."""

    def __post_init__(self) -> None:
        if self.target and not TARGET_RE.match(self.target):
            raise ValueError(f"target {self.target!r} must look like '≥ 0.9×' or '≤ 1.05×'")

    @property
    def ratio(self) -> float:
        if self.baseline == 0:
            return float("nan")
        return self.value / self.baseline

    @property
    def status(self) -> str:
        """How far the ratio is from its target: ``met (12% margin)`` or ``missed by 24%``."""
        match = TARGET_RE.match(self.target)
        if match is None:
            return "-"
        op, bound = match.group(1), float(match.group(2))
        ratio = self.ratio
        if ratio != ratio:
            return "no data"
        if op == "≥":
            gap = ratio / bound - 1
            return f"met ({gap:.1%} margin)" if gap >= 0 else f"missed by {-gap:.1%}"
        gap = 1 - ratio / bound
        return f"met ({gap:.1%} margin)" if gap >= 0 else f"missed by {-gap:.1%}"

    @property
    def met(self) -> bool | None:
        return None if self.status == "-" else self.status.startswith("met")


@dataclass
class Report:
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    sections: dict[str, list[str]] = field(default_factory=dict)
    """Extra Markdown blocks for BENCHMARKS.md, by heading (e.g. the scaling table)."""

    def add(self, figure: Figure) -> None:
        self.figures.append(figure)
        print(f"  {figure.section} | {figure.name}: {figure.value:.4g} vs {figure.baseline:.4g}"
              f" {figure.unit} → ratio {figure.ratio:.3f} (target {figure.target or '-'}: "
              f"{figure.status})", flush=True)

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"  note: {text}", flush=True)

"""Timing, data and reporting shared by the benchmark sections."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

REPEATS = 5


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


def clustered(n: int, dim: int, clusters: int = 64, seed: int = 0,
              spread: float = 0.35) -> npt.NDArray[np.float32]:
    """A Gaussian mixture: realistic neighbourhoods, so ANN recall means something
    (on uniform random 384-d data every point is about equally far from every other)."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(clusters, dim)).astype(np.float32)
    labels = rng.integers(0, clusters, size=n)
    data = centers[labels] + spread * rng.normal(size=(n, dim)).astype(np.float32)
    return np.ascontiguousarray(data, dtype=np.float32)


@dataclass
class Figure:
    """One reported figure: a ratio against a baseline, with its target."""

    section: str
    name: str
    value: float
    baseline: float
    unit: str
    target: str = ""
    higher_is_better: bool = True
    note: str = ""

    @property
    def ratio(self) -> float:
        if self.baseline == 0:
            return float("nan")
        return self.value / self.baseline


@dataclass
class Report:
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, figure: Figure) -> None:
        self.figures.append(figure)
        print(f"  {figure.section} | {figure.name}: {figure.value:.4g} vs {figure.baseline:.4g}"
              f" {figure.unit} → ratio {figure.ratio:.3f} (target {figure.target or '-'})",
              flush=True)

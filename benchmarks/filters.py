"""Filter compilation: median microseconds for a 10-clause filter, cold and cached.

Cold: parse the dict and compile the AST for a backend. Cached: compile an AST that has
been compiled before (the AST is hashable, so compiled forms can be memoised).
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.common import Figure, Report
from vectorport import parse_filter

TEN_CLAUSES: dict[str, Any] = {
    "year": {"$gte": 2019, "$lt": 2025},
    "genre": {"$in": ["drama", "comedy", "horror"]},
    "rating": {"$gt": 3.5},
    "active": True,
    "tags": {"$all": ["a", "b"]},
    "$or": [{"lang": "en"}, {"lang": {"$exists": False}}],
    "code": {"$ne": "007"},
    "$nor": [{"deleted": True}],
    "score": {"$lte": 99},
}

COMPILERS = {
    "pgvector": "vectorport.adapters.pgvector.filters",
    "chroma": "vectorport.adapters.chroma.filters",
    "milvus": "vectorport.adapters.milvus.filters",
    "pinecone": "vectorport.adapters.pinecone.filters",
    "turbopuffer": "vectorport.adapters.turbopuffer.filters",
}


def _median_us(fn: Callable[[], object], runs: int = 2000) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


def run(report: Report) -> None:
    parse_us = _median_us(lambda: parse_filter(TEN_CLAUSES))
    report.notes.append(f"filter compilation: parsing the 10-clause filter takes {parse_us:.1f} µs "
                        "(median), shared by every backend")
    for backend, module_name in COMPILERS.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            report.notes.append(f"filter compilation: {backend} compiler not installed")
            continue
        compile_fn = getattr(module, "compile_filter", None)
        if compile_fn is None:
            report.notes.append(f"filter compilation: {backend} has no compile_filter()")
            continue
        node = parse_filter(TEN_CLAUSES)
        try:
            compile_fn(node)
        except Exception as exc:  # a backend may refuse an operator: say so
            report.notes.append(f"filter compilation: {backend} refuses the filter: {exc}")
            continue
        cold = _median_us(lambda cf=compile_fn: cf(parse_filter(TEN_CLAUSES)))
        cached = _median_us(lambda cf=compile_fn, n=node: cf(n))
        report.add(Figure("filter compilation", f"{backend}: cold (parse+compile) vs cached",
                          cold, cached, "µs", higher_is_better=False))

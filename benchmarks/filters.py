"""Filter compilation: median microseconds per backend for a 10-clause filter.

*Parse* turns the Mongo-style dict into the AST (shared by every backend, done once per
call by the facade). *Compile (cold)* turns that AST into the backend's native form with
nothing memoised: for every backend it is the figure against the parse time of the same
filter, so the ratio says how heavy each compiler is next to the shared front end.
*Cached* is reported only where an adapter memoises compiled filters (today: pinecone
and pgvector); the others compile on every query, and the notes say so rather than
reporting a cached figure that no query would ever see.
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.common import Figure, Options, Report
from vectorport import parse_filter
from vectorport.core.filters.ast import Filter

SECTION = "filter compilation"
RUNS = 3000

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


def _median_us(fn: Callable[[], object], runs: int = RUNS) -> float:
    for _ in range(50):
        fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


def _turbopuffer() -> Callable[[Filter], object]:
    from vectorport.adapters.turbopuffer.filters import FilterCompiler
    from vectorport.adapters.turbopuffer.naming import KINDS, column
    from vectorport.core.filters.ast import fields_used

    def compile_filter(node: Filter) -> object:
        # what the adapter does once it knows the namespace's columns (cached per
        # namespace after one metadata request): every kind of every field exists here
        columns = {column(k, f) for f in fields_used(node) for k in KINDS}
        return FilterCompiler(columns).compile(node)

    return compile_filter


def _module_compiler(module_name: str) -> Callable[[Filter], object]:
    module = importlib.import_module(module_name)
    compile_filter: Callable[[Filter], object] = module.compile_filter
    return compile_filter


COMPILERS: dict[str, Callable[[], Callable[[Filter], object]]] = {
    "pgvector": lambda: _module_compiler("vectorport.adapters.pgvector.filters"),
    "chroma": lambda: _module_compiler("vectorport.adapters.chroma.filters"),
    "milvus": lambda: _module_compiler("vectorport.adapters.milvus.filters"),
    "pinecone": lambda: _module_compiler("vectorport.adapters.pinecone.filters"),
    "turbopuffer": _turbopuffer,
}


def run(report: Report, options: Options) -> None:
    parse_us = _median_us(lambda: parse_filter(TEN_CLAUSES))
    node = parse_filter(TEN_CLAUSES)
    assert node is not None
    uncached: list[str] = []
    for backend, load in COMPILERS.items():
        try:
            compile_filter = load()
        except ImportError as exc:
            report.note(f"filter compilation: {backend} compiler not importable: {exc}")
            continue
        try:
            compile_filter(node)
        except Exception as exc:  # a backend may refuse an operator: say so
            report.note(f"filter compilation: {backend} refuses the filter: "
                        f"{type(exc).__name__}: {exc}")
            continue
        clear = _cache_clearer(importlib.import_module(compile_filter.__module__))
        if clear is not None:
            def cold(cf: Callable[[Filter], object] = compile_filter,
                     c: Callable[[], object] = clear) -> None:
                c()
                cf(node)

            clear_us = _median_us(clear)
            cold_us = _median_us(cold) - clear_us
            cached_us = _median_us(lambda cf=compile_filter: cf(node))
            report.add(Figure(SECTION, f"{backend}: compile, cold", cold_us, parse_us,
                              "µs vs parsing the dict", higher_is_better=False, chart=False))
            report.add(Figure(SECTION, f"{backend}: compile, cached (memoised)",
                              cached_us, cold_us, "µs vs cold", higher_is_better=False, chart=False))
        else:
            cold_us = _median_us(lambda cf=compile_filter: cf(node))
            report.add(Figure(SECTION, f"{backend}: compile, cold", cold_us, parse_us,
                              "µs vs parsing the dict", higher_is_better=False, chart=False))
            uncached.append(backend)
    report.note(f"filter compilation: parsing the 10-clause filter takes {parse_us:.1f} µs "
                "(median), once per call for every backend")
    if uncached:
        report.note(f"filter compilation: {', '.join(uncached)} do not memoise compiled "
                    "filters: every query pays the cold figure, so no cached figure is "
                    "reported for them")


def _cache_clearer(module: Any) -> Callable[[], object] | None:
    """How to empty an adapter's compiled-filter cache: a module-level ``_cache`` dict,
    or a ``functools.lru_cache``-wrapped function in the module."""
    cache = getattr(module, "_cache", None)
    if cache is not None and hasattr(cache, "clear"):
        clear: Callable[[], object] = cache.clear
        return clear
    for value in vars(module).values():
        if callable(getattr(value, "cache_clear", None)):
            found: Callable[[], object] = value.cache_clear
            return found
    return None

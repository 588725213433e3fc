"""Async: 32 concurrent queries through ``AsyncStore`` against the same 32 queries awaited
one after another, on pgvector (whose adapter has native async: psycopg's async
connections from a pool, ``pool_max_size`` 4 by default).

Also the same sequential queries through the sync ``Store``: what the async path costs
per query when nothing runs concurrently.
"""

from __future__ import annotations

import asyncio

import vectorport
from benchmarks.common import (
    DIM,
    Figure,
    Options,
    Report,
    dataset,
    metadata,
    paired_medians,
    record_id,
)
from benchmarks.servers import SERVERS

SECTION = "async (pgvector)"
ROWS = 20_000
CONCURRENT = 32
TOP_K = 10


def run(report: Report, options: Options) -> None:
    rows = min(ROWS, options.rows)
    data, queries = dataset(rows, DIM, CONCURRENT)
    url = f"{SERVERS.postgres()}&schema=bench_async"
    store = vectorport.connect(url)
    index = store.create_index("async_bench", DIM, "cosine",
                               backend_options={"pgvector": {"defer_index": True}})
    index.upsert([(record_id(i), data[i], metadata(i)) for i in range(rows)])
    store.adapter.build_index("async_bench")  # type: ignore[attr-defined]
    astore = vectorport.AsyncStore(store)
    if not astore.native:
        report.note("async: the pgvector adapter is not native async here; AsyncStore runs "
                    "it in worker threads")
    loop = asyncio.new_event_loop()
    try:
        aindex = loop.run_until_complete(astore.index("async_bench"))

        async def concurrent() -> None:
            await asyncio.gather(*(aindex.query(q, top_k=TOP_K) for q in queries))

        async def sequential() -> None:
            for q in queries:
                await aindex.query(q, top_k=TOP_K)

        def sync_sequential() -> None:
            for q in queries:
                index.query(q, top_k=TOP_K)

        samples = max(7, 2 * options.repeats)
        together, one_by_one = paired_medians(lambda: loop.run_until_complete(concurrent()),
                                              lambda: loop.run_until_complete(sequential()),
                                              repeats=samples)
        report.add(Figure(SECTION, f"{CONCURRENT} concurrent queries vs one after another",
                          CONCURRENT / together, CONCURRENT / one_by_one,
                          "queries/s vs sequential awaits"))
        awaited, plain = paired_medians(lambda: loop.run_until_complete(sequential()),
                                        sync_sequential, repeats=samples)
        report.add(Figure(SECTION, "sequential awaits vs sync Store, one after another",
                          CONCURRENT / awaited, CONCURRENT / plain, "queries/s vs sync"))
        report.note(f"async: {rows:,} rows, HNSW (m 16, ef_construction 64), top {TOP_K} "
                    f"with metadata; the async pool holds up to 4 connections, the server "
                    f"has {_cores()} cores")
        loop.run_until_complete(astore.close())
    finally:
        loop.close()
        cleanup = vectorport.connect(url)
        cleanup.delete_index("async_bench", missing_ok=True)
        cleanup.close()


def _cores() -> int:
    import os

    return os.cpu_count() or 1

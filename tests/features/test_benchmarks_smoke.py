"""The benchmark sections added for copy, the LangChain bridge, the embedded engines and
scaling, run at tiny sizes so that CI keeps them working.

Nothing here times anything or checks a figure against its target (the figures of a
tiny run mean nothing): each section must run to the end on real engines, report the
figures it promises with finite positive values, and leave no note saying it stopped.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterator

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("langchain_core")

from benchmarks.common import Options, Report
from benchmarks.servers import SERVERS

TINY = Options(rows=1000, repeats=1, slow_baselines=False, quick=True)
SAME_UPSERT = ("upsert of 100 records, vs the raw SDK sending the adapter's own rows "
               "(vectorport's own cost)")


@pytest.fixture(scope="module", autouse=True)
def servers() -> Iterator[None]:
    yield
    SERVERS.close()


def _figures(report: Report, section: str) -> dict[str, float]:
    found = {f.name: f.ratio for f in report.figures if f.section == section}
    for name, ratio in found.items():
        assert math.isfinite(ratio), (name, ratio)
        # a growth exponent over two tiny sizes is timing noise and may be ≤ 0; every
        # other figure is a ratio of two positive measurements
        assert "exponent" in name or ratio > 0, (name, ratio)
    return found


def _no_failure(report: Report) -> None:
    assert not [n for n in report.notes if "failed" in n or "stopped" in n], report.notes


def test_copy_section() -> None:
    from benchmarks import copy_transfer

    report = Report()
    copy_transfer.run(report, TINY)
    names = _figures(report, copy_transfer.SECTION)
    _no_failure(report)
    for direction in ("local → pgvector", "pgvector → local"):
        for verify in ("verify on", "verify off"):
            assert any(direction in n and verify in n for n in names), (direction, verify)
    assert any(n.startswith("peak RSS growth") for n in names)
    assert any(n.startswith("export") for n in names)
    assert sum(n.startswith("import") for n in names) == 2


def test_langchain_section_runs_the_bridge() -> None:
    from benchmarks import langchain_bridge

    report = Report()
    langchain_bridge.run(report, TINY)  # langchain-postgres lives in its own venv: skipped
    _no_failure(report)
    assert any("VectorportVectorStore added" in n for n in report.notes), report.notes


def test_embedded_engines_section() -> None:
    from benchmarks import embedded_engines

    report = Report()
    embedded_engines.run(report, TINY)
    names = _figures(report, embedded_engines.SECTION)
    _no_failure(report)
    assert "lancedb: query, top 10 with metadata" in names
    assert f"lancedb: {SAME_UPSERT}" in names
    assert "qdrant (Edge)" not in " ".join(names) or f"qdrant (Edge): {SAME_UPSERT}" in names
    assert not [n for n in report.notes if "does not read back" in n], report.notes
    recalls = [f.value for f in report.figures if "recall@10: lancedb" in f.name]
    assert recalls and all(0.0 <= r <= 1.0 for r in recalls)


def test_scaling_section() -> None:
    from benchmarks import scaling

    report = Report()
    plan = {"local": (1000, 2000)}
    if importlib.util.find_spec("qdrant_edge") is not None:
        plan["qdrant-edge"] = (500, 1000)
    scaling.measure(report, plan, queries=3, draw=False)
    names = _figures(report, scaling.SECTION)
    _no_failure(report)
    assert any("query p50 growth exponent" in n for n in names)
    assert any("resident set kept" in n for n in names)
    table = report.sections["How cost grows (scaling)"]
    assert table[2].startswith("| local | 1,000 |")
    assert len(table) == 2 + sum(len(sizes) for sizes in plan.values())


def test_overhead_upsert_sends_the_adapters_own_rows_on_chroma() -> None:
    """The upsert's second figure (chroma, in process): the raw SDK's write of the
    adapter's own rows reads back through vectorport exactly as written, and the figure
    is reported beside the first."""
    from benchmarks import overhead
    from benchmarks.common import DIM, dataset

    report = Report()
    data, queries = dataset(300, DIM, 5)
    batches = overhead._batches(data, overhead.UPSERT_BATCH)
    with overhead._chroma(data, batches) as sides:
        overhead._measure(report, "chroma", sides, queries, batches, 1)
    names = _figures(report, overhead.SECTION)
    assert "chroma: upsert of 100 records" in names
    assert f"chroma: {SAME_UPSERT}" in names
    assert not [n for n in report.notes if "does not read back" in n], report.notes


def test_wake_penalty_times_the_check_warm_and_after_a_wait() -> None:
    """The note on what a µs of the facade costs in place: both timings are of the real
    check, and a wait of :data:`~benchmarks.overhead.WAKE_PAUSE` each round makes the
    run last at least that long per round."""
    import time

    from benchmarks import overhead
    from benchmarks.common import DIM, dataset

    _, queries = dataset(50, DIM, 5)
    start = time.perf_counter()
    warm, woken = overhead.wake_penalty(queries, rounds=20)
    assert time.perf_counter() - start >= 20 * overhead.WAKE_PAUSE
    assert 0 < warm < 1e6 and 0 < woken < 1e6


def test_same_rows_check_notices_rows_that_are_not_written() -> None:
    """The check behind the note above: a "same" side whose write leaves the stored
    records as they were is reported."""
    from benchmarks import overhead
    from benchmarks.common import DIM, dataset

    import vectorport

    data, _ = dataset(200, DIM, 1)
    batches = overhead._batches(data, overhead.UPSERT_BATCH)
    store = vectorport.connect("chroma+memory://")
    try:
        index = store.create_index("check", DIM, "cosine")
        for batch in batches:
            index.upsert(batch.records())
        notes = overhead.same_rows_check(index, batches, lambda batch: batch,
                                         lambda rows: None)
        assert len(notes) == 1 and "does not read back" in notes[0]
        assert overhead.same_rows_check(
            index, batches, lambda batch: batch.records(), index.upsert) == ()
    finally:
        store.close()


@pytest.mark.parametrize("backend", ["pgvector", "milvus", "turbopuffer", "pinecone", "chroma"])
def test_overhead_upserts_the_adapters_own_rows(backend: str) -> None:
    """Every backend of the overhead section has the upsert's second side, and its raw
    write of the adapter's own rows reads back through vectorport as written (the check
    its setup runs; nothing is timed here)."""
    from benchmarks import overhead
    from benchmarks.common import DIM, dataset

    data, _ = dataset(200, DIM, 1)
    batches = overhead._batches(data, overhead.UPSERT_BATCH)
    with overhead.BACKENDS[backend](data, batches) as sides:
        assert sides.same_rows is not None and sides.same_upsert is not None
        assert not [n for n in sides.notes if "does not read back" in n], sides.notes

"""The bulk-load section and the real-text corpus of the recall section, at tiny sizes,
so that CI keeps them working (no figure is checked against its target: a tiny run's
figures mean nothing; they must only be there, finite and positive)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from benchmarks.common import Options, Report
from benchmarks.servers import SERVERS


@pytest.fixture(scope="module", autouse=True)
def servers() -> Iterator[None]:
    yield
    SERVERS.close()


def test_bulk_section_measures_every_backend() -> None:
    from benchmarks import bulk_loads

    report = Report()
    bulk_loads.run(report, Options(rows=300, repeats=1, quick=True))
    assert not [n for n in report.notes if "failed" in n or "holds" in n], report.notes
    names = [f.name for f in report.figures if f.section == bulk_loads.SECTION]
    for backend in bulk_loads.BACKENDS:
        assert sum(n.startswith(f"{backend}: ") for n in names) == 2, (backend, names)
    assert all(math.isfinite(f.ratio) and f.ratio > 0 for f in report.figures)


def test_stdlib_corpus_is_distinct_fixed_and_holds_its_queries_out() -> None:
    from benchmarks import text_corpus

    chunks = text_corpus.stdlib_chunks(500)
    assert len(chunks) == 500 == len(set(chunks))
    assert all(text_corpus.MIN_CHARS <= len(c) <= text_corpus.MAX_CHARS for c in chunks)
    assert text_corpus.stdlib_chunks.__wrapped__(500) == chunks  # the same on every read
    corpus, queries = text_corpus.split(chunks, 20)
    assert len(queries) == 20 and len(corpus) == 480
    assert not set(corpus) & set(queries)

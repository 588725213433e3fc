"""The conformance suite on Chroma: in process (persistent, in a temp folder) and
against a real ``chroma run`` server started for the class (or the server named by
``VECTORPORT_TEST_CHROMA_URL``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import pytest

pytest.importorskip("chromadb")

import vectorport
from vectorport.adapters.chroma.filters import refuses
from vectorport.conformance import ConformanceSuite
from vectorport.core.filters.ast import Filter
from vectorport.testing.chroma import running_chroma_server

STRING_RANGE_CASES = frozenset({"gt_str", "lt_str_codepoint", "gte_list_str", "lt_mixed_str"})
"""Chroma compares only numbers with $gt/$gte/$lt/$lte: string ranges raise
UnsupportedFeatureError (vectorport/adapters/chroma/filters.py)."""


SEARCH_LOSES_RECORDS = (
    "Chroma's search can stop reaching live records after deletes and upserts while "
    "get() and count() still hold them (chroma-core/chroma#7758, open for 1.5.9; "
    "docs/backends/chroma.md, 'Records search no longer reaches')")


class ChromaBinding(ConformanceSuite):
    ann = True  # Chroma searches an HNSW graph
    known_filter_deviations: ClassVar[frozenset[str]] = STRING_RANGE_CASES
    search_loses_records = SEARCH_LOSES_RECORDS

    def filter_deviation(self, node: Filter) -> bool:
        return refuses(node)


class TestChromaPersistent(ChromaBinding):
    matrix_label = "chroma (in-process)"
    @pytest.fixture(scope="class")
    @classmethod
    def store(cls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[vectorport.Store]:
        path = tmp_path_factory.mktemp("chroma")
        with vectorport.connect(f"chroma://{path}") as store:
            yield store


class TestChromaServer(ChromaBinding):
    matrix_label = "chroma (chroma run)"
    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with running_chroma_server() as url, vectorport.connect(url) as store:
            yield store

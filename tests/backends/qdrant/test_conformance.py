"""The conformance suite on Qdrant: Qdrant Edge (Qdrant's Rust engine, embedded, through
qdrant-edge-py), qdrant-client's local mode, and a Qdrant server when
``VECTORPORT_TEST_QDRANT_URL`` is set (for example ``qdrant://127.0.0.1:6333``) or Qdrant's
release binary is found (``QDRANT_BINARY`` or ``qdrant`` on ``PATH``, see
:mod:`vectorport.testing.qdrant`).

Deviations, declared and checked to raise: ranges over strings (Qdrant's range is
numeric) and number operands of magnitude 2^53 or more (Qdrant compares as float64).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import ClassVar

import pytest

pytest.importorskip("qdrant_client")

from tests.support.deviations import inexact_number, string_range

import vectorport
from vectorport.conformance import ConformanceSuite
from vectorport.conformance.protocols import NavigableConformance, PatchableConformance
from vectorport.core.filters.ast import Filter
from vectorport.testing import url_from_env
from vectorport.testing.qdrant import find_binary, server_url

QDRANT_FILTER_DEVIATIONS = frozenset({
    # Qdrant's range condition compares numbers only: ranges over strings are refused.
    "gt_str",
    "lt_str_codepoint",
    "gte_list_str",
    "lt_mixed_str",
    # Qdrant compares numbers as float64: operands of magnitude >= 2^53 are refused.
    "eq_big_int",
    "gt_big_int",
})


class QdrantBinding(ConformanceSuite):
    known_filter_deviations: ClassVar[frozenset[str]] = QDRANT_FILTER_DEVIATIONS

    def filter_deviation(self, node: Filter) -> bool:
        """The shapes the adapter refuses, stated independently of its code: ranges
        over strings, numbers of magnitude >= 2^53."""
        return string_range(node) or inexact_number(node)


def edge_store() -> Iterator[vectorport.Store]:
    pytest.importorskip("qdrant_edge")
    with tempfile.TemporaryDirectory(prefix="vp-qdrant-edge-") as tmp, vectorport.connect(
        f"qdrant+edge://{tmp}/edge"
    ) as store:
        yield store


def local_store() -> Iterator[vectorport.Store]:
    with tempfile.TemporaryDirectory(prefix="vp-qdrant-local-") as tmp, vectorport.connect(
        f"qdrant+local://{tmp}/local"
    ) as store:
        yield store


class TestQdrantEdge(QdrantBinding):
    matrix_label = "qdrant (Qdrant Edge)"

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        yield from edge_store()


class TestQdrantLocal(QdrantBinding):
    matrix_label = "qdrant (qdrant-client local mode)"

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        yield from local_store()


@pytest.mark.skipif(url_from_env("qdrant") is None and find_binary() is None,
                    reason="no Qdrant server: set VECTORPORT_TEST_QDRANT_URL or QDRANT_BINARY")
class TestQdrantServer(QdrantBinding):
    matrix_label = "qdrant (server)"

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with server_url() as url:
            assert url is not None
            with vectorport.connect(url) as store:
                yield store


class TestQdrantEdgeProtocols(NavigableConformance, PatchableConformance):
    """The chunk protocols over Qdrant Edge: navigable through the (sorted) id listing,
    natively patchable (compare-and-swap with Qdrant's conditional update)."""

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        yield from edge_store()


class TestQdrantLocalProtocols(NavigableConformance, PatchableConformance):
    """The same over qdrant-client's local mode."""

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        yield from local_store()

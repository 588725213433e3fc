"""The conformance suite on Milvus: milvus-lite 3 in process, as a fresh
``pip install "vectorport[milvus]"`` gives it (or ``VECTORPORT_TEST_MILVUS_URL``).

With milvus-lite 2 installed (the C++ engine line, ``tests/backends/milvus/legacy_session.sh``)
the same classes run against it: the adapter then declares that line's capabilities,
and ``$exists: false`` (the one negation inside a declared operator) is refused."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import ClassVar

import pytest

import vectorport
from vectorport.conformance import ConformanceSuite
from vectorport.conformance.protocols import NavigableConformance, PatchableConformance
from vectorport.core.filters.ast import Condition, Filter, Not

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

from tests.support.deviations import inexact_number

from vectorport.testing.milvus import lite_major_version, milvus_url

LEGACY = lite_major_version() < 3 and not os.environ.get("VECTORPORT_TEST_MILVUS_URL")


def _has_exists_false(node: Filter) -> bool:
    if isinstance(node, Condition):
        return node.op == "$exists" and node.value is False
    if isinstance(node, Not):
        return _has_exists_false(node.child)
    return any(_has_exists_false(c) for c in node.children)


BIG_INT_CASES = frozenset({"eq_big_int", "gt_big_int"})


class TestMilvus(ConformanceSuite):
    matrix_label = "milvus (milvus-lite 2, C++ engine)" if LEGACY else "milvus (milvus-lite)"
    known_filter_deviations = (frozenset({"exists_false"}) | BIG_INT_CASES if LEGACY
                               else frozenset())
    inexact_numbers: ClassVar[bool] = LEGACY
    """Whether the engine compares JSON numbers as float64 (milvus-lite 2 here; a Milvus
    server given by ``VECTORPORT_TEST_MILVUS_URL``, as the store tells)."""

    def filter_deviation(self, node: Filter) -> bool:
        """On milvus-lite 2, filters with ``$exists: false`` anywhere are refused; there
        and on a Milvus server, number operands of magnitude 2^53 or more."""
        return (LEGACY and _has_exists_false(node)) or (
            self.inexact_numbers and inexact_number(node))

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with milvus_url() as url, vectorport.connect(url) as store:
            if not store.adapter.engine.exact_numbers and not LEGACY:
                # a Milvus server from VECTORPORT_TEST_MILVUS_URL
                cls.inexact_numbers = True
                cls.known_filter_deviations = cls.known_filter_deviations | BIG_INT_CASES
            yield store


class TestMilvusProtocols(NavigableConformance, PatchableConformance):
    """The chunk protocols over Milvus: navigable through ordered id listing; patching
    is the generic read-modify-write one (the adapter declares no native patch)."""

    expect_patchable = False

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with milvus_url() as url, vectorport.connect(url) as store:
            yield store

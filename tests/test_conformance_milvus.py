"""The conformance suite on Milvus: milvus-lite 3 in process, as a fresh
``pip install "vectorport[milvus]"`` gives it (or ``VECTORPORT_TEST_MILVUS_URL``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import vectorport
from vectorport.conformance import ConformanceSuite
from vectorport.conformance.protocols import NavigableConformance, PatchableConformance

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

from vectorport.testing.milvus import milvus_url


class TestMilvus(ConformanceSuite):
    matrix_label = "milvus (milvus-lite)"
    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with milvus_url() as url, vectorport.connect(url) as store:
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

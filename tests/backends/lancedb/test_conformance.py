"""The conformance suite on LanceDB: the embedded engine, as a fresh
``pip install "vectorport[lancedb]"`` gives it (or ``VECTORPORT_TEST_LANCEDB_URL``)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

pytest.importorskip("lancedb")

import vectorport
from vectorport.conformance import ConformanceSuite
from vectorport.conformance.protocols import NavigableConformance, PatchableConformance


@contextmanager
def lancedb_url() -> Iterator[str]:
    override = os.environ.get("VECTORPORT_TEST_LANCEDB_URL")
    if override:
        yield override
        return
    with tempfile.TemporaryDirectory(prefix="vp-lancedb-") as folder:
        yield f"lancedb://{folder}/db"


class TestLanceDB(ConformanceSuite):
    matrix_label = "lancedb (embedded)"

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with lancedb_url() as url, vectorport.connect(url) as store:
            yield store


class TestLanceDBProtocols(NavigableConformance, PatchableConformance):
    """The chunk protocols over LanceDB: navigable through ordered id listing; patching
    is the generic read-modify-write one (the adapter declares no native patch)."""

    expect_patchable = False

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with lancedb_url() as url, vectorport.connect(url) as store:
            yield store

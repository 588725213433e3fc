"""The chunk-protocol conformance tests (navigation, patching) on Chroma: the generic
chunk layer over the adapter's filters and native patch, in process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("chromadb")

import vectorport
from vectorport.conformance.protocols import NavigableConformance, PatchableConformance


class TestChromaProtocols(NavigableConformance, PatchableConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def store(cls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[vectorport.Store]:
        with vectorport.connect(f"chroma://{tmp_path_factory.mktemp('chroma')}") as store:
            yield store

"""The chunk-protocol conformance tests on the reference adapter, and on restricted
variants of it that declare less, so that every path of the generic implementation runs
and an ability that is not declared is shown not to be offered."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import vectorport
from vectorport.adapters.local.adapter import LocalAdapter
from vectorport.adapters.local.capabilities import LOCAL_CAPABILITIES
from vectorport.chunks import ChunkedIndex, NavigableIndex, PatchableChunks, chunk_support
from vectorport.conformance.protocols import NavigableConformance, PatchableConformance
from vectorport.core.capabilities import Capabilities
from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters.ast import Filter
from vectorport.core.types import IdPage, IndexSpec


class TestMemoryProtocols(NavigableConformance, PatchableConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with vectorport.connect("memory://") as store:
            yield store


class TestDurableLocalProtocols(NavigableConformance, PatchableConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def store(cls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[vectorport.Store]:
        path: Path = tmp_path_factory.mktemp("protocols") / "store.db"
        with vectorport.connect(f"local://{path}") as store:
            yield store


class QueryOnlyAdapter(LocalAdapter):
    """Declares neither patch nor list_ids: navigation has to count and query."""

    @property
    def capabilities(self) -> Capabilities:
        return replace(LOCAL_CAPABILITIES, patch=False, list_ids=False)


class NoEnumerationAdapter(LocalAdapter):
    """Patches, but can neither list ids nor count with a filter: a source's chunks
    cannot be read exactly, so neither navigation nor document patches are offered."""

    @property
    def capabilities(self) -> Capabilities:
        return replace(LOCAL_CAPABILITIES, list_ids=False, count_by_filter=False)


class PrefixListingAdapter(LocalAdapter):
    """Lists by prefix only (as Pinecone does) and filters with ``$eq`` alone: no
    offset ranges are pushed down, and listing falls back to the bare prefix."""

    @property
    def capabilities(self) -> Capabilities:
        return replace(LOCAL_CAPABILITIES, filter_operators=frozenset({"$eq"}))

    def list_ids(self, index: IndexSpec, namespace: str, *, prefix: str | None,
                 filter: Filter | None, limit: int, cursor: str | None) -> IdPage:
        if filter is not None:
            raise UnsupportedFeatureError(self.backend, "filters when listing ids")
        return super().list_ids(index, namespace, prefix=prefix, filter=None, limit=limit,
                                cursor=cursor)


class TestQueryOnlyProtocols(NavigableConformance, PatchableConformance):
    matrix_include = False  # a cut-down adapter, not a column of the matrix
    expect_patchable = False

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with vectorport.Store(QueryOnlyAdapter(None)) as store:
            yield store


class TestNoEnumerationProtocols(NavigableConformance, PatchableConformance):
    matrix_include = False  # a cut-down adapter, not a column of the matrix
    expect_navigable = False
    expect_patchable = False

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with vectorport.Store(NoEnumerationAdapter(None)) as store:
            yield store


class TestPrefixListingProtocols(NavigableConformance, PatchableConformance):
    matrix_include = False  # a cut-down adapter, not a column of the matrix
    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with vectorport.Store(PrefixListingAdapter(None)) as store:
            yield store


def test_the_support_each_variant_gets() -> None:
    """Which strategy the generic implementation picks, and why it declines."""
    cases = {
        LocalAdapter(None): ("listing", True, "native"),
        QueryOnlyAdapter(None): ("query", True, None),
        NoEnumerationAdapter(None): (None, True, None),
        PrefixListingAdapter(None): ("listing", False, "native"),
    }
    for adapter, (enumeration, pushdown, patch) in cases.items():
        index = vectorport.Store(adapter).create_index("docs", 4)
        support = chunk_support(index)
        assert (support.enumeration, support.pushdown, support.patch) == (
            enumeration, pushdown, patch), type(adapter).__name__
        chunked = ChunkedIndex(index)
        assert isinstance(chunked, ChunkedIndex)
        assert isinstance(chunked, NavigableIndex) is (enumeration is not None)
        assert isinstance(chunked, PatchableChunks) is (patch is not None)
        if patch is None and enumeration is not None:
            relaxed = ChunkedIndex(index, allow_non_atomic_patch=True)
            assert isinstance(relaxed, PatchableChunks) and relaxed.atomic is False
        if enumeration is None:
            assert support.missing and "listing ids" in support.missing[0]


def test_documents_are_required_to_navigate() -> None:
    class NoDocumentsAdapter(LocalAdapter):
        @property
        def capabilities(self) -> Capabilities:
            return replace(LOCAL_CAPABILITIES, documents=False)

    index = vectorport.Store(NoDocumentsAdapter(None)).create_index("docs", 4)
    chunked = ChunkedIndex(index)
    assert not isinstance(chunked, NavigableIndex)
    assert isinstance(chunked, PatchableChunks)
    with pytest.raises(UnsupportedFeatureError):
        chunked.ingest("a", "some text", lambda texts: [[1, 0, 0, 0] for _ in texts])

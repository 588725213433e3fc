"""Unit tests of chunking, chunk ids, patches, embedding batches and ingestion paths."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vectorport
from vectorport.adapters.local.adapter import LocalAdapter
from vectorport.adapters.local.capabilities import LOCAL_CAPABILITIES
from vectorport.chunks import (
    RESERVED_KEYS,
    ChunkedIndex,
    Chunker,
    ChunkPatch,
    ChunkResult,
    DocumentPatch,
    NavigableIndex,
    ingest,
    split_text,
)
from vectorport.chunks.ingest import embed_function, embed_in_batches
from vectorport.chunks.model import check_source_id, chunk_id
from vectorport.chunks.splitting import TOKEN_RE, token_spans
from vectorport.core.capabilities import Capabilities
from vectorport.core.errors import (
    BackendError,
    SourceNotFoundError,
    UnsupportedFeatureError,
    ValidationError,
)
from vectorport.core.types import Match, QueryRequest

TEXTS = st.text(alphabet=st.sampled_from("ab c.\n,é'-"), max_size=300)


def unit_embed(texts: list[str]) -> list[list[float]]:
    return [[1.0, float(len(t)), 0.0, 0.0] for t in texts]


# -- splitting --------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, size=st.integers(1, 40), overlap_ratio=st.floats(0, 0.95))
def test_char_windows_cover_the_text(text: str, size: int, overlap_ratio: float) -> None:
    overlap = min(int(size * overlap_ratio), size - 1)
    spans = Chunker(size, overlap).split(text)
    if not text:
        assert spans == []
        return
    assert spans[0].start == 0 and spans[-1].end == len(text)
    for n, span in enumerate(spans):
        assert span.index == n
        assert span.text == text[span.start:span.end]
        assert 0 < span.end - span.start <= size
    for prev, nxt in itertools.pairwise(spans):
        assert nxt.start == prev.start + size - overlap
        assert prev.end - nxt.start == overlap and prev.end < nxt.end


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, size=st.integers(1, 12), overlap_ratio=st.floats(0, 0.95))
def test_token_windows_hold_whole_tokens(text: str, size: int, overlap_ratio: float) -> None:
    overlap = min(int(size * overlap_ratio), size - 1)
    spans = Chunker(size, overlap, "tokens").split(text)
    tokens = token_spans(text)
    if not tokens:
        assert spans == []
        return
    starts = {a: i for i, (a, _) in enumerate(tokens)}
    ends = {b: i for i, (_, b) in enumerate(tokens)}
    windows = []
    for span in spans:
        assert span.text == text[span.start:span.end]
        first, last = starts[span.start], ends[span.end]
        assert 1 <= last - first + 1 <= size
        windows.append((first, last))
    assert windows[0][0] == 0 and windows[-1][1] == len(tokens) - 1
    for (f1, l1), (f2, l2) in itertools.pairwise(windows):
        assert f2 == f1 + size - overlap and l1 - f2 + 1 == overlap and l2 > l1


def test_token_regex_and_shorthand() -> None:
    assert TOKEN_RE.findall("Hello, world!  l'été") == ["Hello", ",", "world", "!", "l", "'", "été"]
    spans = split_text("one two three four five", size=2, overlap=1, unit="tokens")
    assert [s.text for s in spans] == ["one two", "two three", "three four", "four five"]
    assert [(s.start, s.end) for s in spans] == [(0, 7), (4, 13), (8, 18), (14, 23)]


@pytest.mark.parametrize(
    "kwargs", [{"size": 0}, {"size": 3, "overlap": 3}, {"size": 3, "overlap": -1},
               {"unit": "words"}, {"size": True}, {"size": 2.5}],
)
def test_bad_chunkers(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Chunker(**kwargs)  # type: ignore[arg-type]


# -- ids, results and patches ------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(a=st.text(min_size=1, max_size=12), b=st.text(min_size=1, max_size=12),
       i=st.integers(0, 2_000_000), j=st.integers(0, 2_000_000))
def test_chunk_ids_are_one_to_one(a: str, b: str, i: int, j: int) -> None:
    if (a, i) != (b, j):
        assert chunk_id(a, i) != chunk_id(b, j)
    assert re.fullmatch(r".*#\d{6,}", chunk_id(a, i), re.DOTALL)


def test_source_ids_must_make_valid_record_ids() -> None:
    assert check_source_id("a#b") == "a#b"
    for bad in ("", None, 3, "x" * 510, "nul\x00"):
        with pytest.raises(ValidationError):
            check_source_id(bad)


def test_chunk_result_parse_refuses_non_chunks() -> None:
    full: dict[str, Any] = {"source_id": "s", "start_offset": 0, "end_offset": 3, "chunk_index": 0, "k": "v"}
    parsed = ChunkResult.parse("s#000000", full, "abc", 0.5)
    assert parsed is not None and parsed.metadata == {"k": "v"} and parsed.score == 0.5
    assert parsed.span == (0, 3)
    assert ChunkResult.parse("x", full, None) is None
    assert ChunkResult.parse("x", {"k": "v"}, "abc") is None
    assert ChunkResult.parse("x", {**full, "start_offset": "0"}, "abc") is None
    assert ChunkResult.parse("x", {**full, "chunk_index": True}, "abc") is None
    match = Match(id="s#000000", score=1.0, metadata=full, document="abc")
    assert ChunkResult.from_match(match) == replace(parsed, score=1.0)


def test_patches_validate_and_freeze() -> None:
    patch = ChunkPatch(metadata={"tags": ["a"], "gone": None}, vector=np.ones(3))
    assert patch.metadata == {"tags": ("a",), "gone": None}
    with pytest.raises(AttributeError):
        patch.metadata = {}  # type: ignore[misc]
    for key in RESERVED_KEYS:
        with pytest.raises(ValidationError):
            ChunkPatch(metadata={key: 1})
        with pytest.raises(ValidationError):
            DocumentPatch(metadata={key: None})
    with pytest.raises(ValidationError):
        ChunkPatch(metadata={"x": {"nested": 1}})  # type: ignore[dict-item]
    assert DocumentPatch(vectors=np.ones((2, 3))).vectors is not None


# -- embedding ---------------------------------------------------------------------------


class CountingEmbedder:
    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return np.asarray(unit_embed(texts))


def test_embedders_callables_and_objects() -> None:
    embedder = CountingEmbedder()
    assert embed_function(embedder) == embedder.embed
    assert embed_function(unit_embed) is unit_embed
    vectors = embed_in_batches(embedder, [str(i) for i in range(10)], 4)
    assert embedder.calls == [4, 4, 2] and len(vectors) == 10
    with pytest.raises(ValidationError):
        embed_function(42)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        embed_in_batches(unit_embed, ["a"], 0)
    with pytest.raises(ValidationError):
        embed_in_batches(lambda texts: unit_embed(texts)[:-1], ["a", "b"], 8)


# -- ingestion ---------------------------------------------------------------------------


@pytest.fixture
def index() -> Iterator[vectorport.Index]:
    with vectorport.connect("memory://") as store:
        yield store.create_index("docs", 4)


def test_ingest_records_and_batches(index: vectorport.Index) -> None:
    embedder = CountingEmbedder()
    text = "abcdefghij" * 10
    result = ingest(index, "s", text, embedder, chunker=Chunker(10), metadata={"lang": "x"},
                    embed_batch_size=3, namespace="n1")
    assert len(result) == 10 and embedder.calls == [3, 3, 3, 1]
    assert result.chunk_ids == tuple(chunk_id("s", i) for i in range(10))
    record = index.fetch([chunk_id("s", 4)], "n1")[chunk_id("s", 4)]
    assert dict(record.metadata) == {"lang": "x", "source_id": "s", "start_offset": 40,
                                     "end_offset": 50, "chunk_index": 4}
    assert record.document == text[40:50]
    np.testing.assert_allclose(record.vector, [1, 10, 0, 0])
    assert index.count("") == 0


def test_failed_embedding_leaves_the_source_as_it_was(index: vectorport.Index) -> None:
    docs = ChunkedIndex(index)
    docs.ingest("s", "old text here", unit_embed, chunker=Chunker(4))

    def broken(texts: list[str]) -> list[list[float]]:
        if len(texts) < 3:
            raise RuntimeError("embedding service down")
        return unit_embed(texts)

    with pytest.raises(RuntimeError):
        docs.ingest("s", "a much longer new text, with seven chunks", broken, chunker=Chunker(4),
                    embed_batch_size=3)
    assert isinstance(docs, NavigableIndex)
    assert "".join(c.text for c in docs.read("s", 0, 100)) == "old text here"
    with pytest.raises(ValidationError):
        docs.ingest("s", "text", lambda texts: [[1.0, 2.0]] * len(texts))
    assert "".join(c.text for c in docs.read("s", 0, 100)) == "old text here"


class NoFilteredDeleteAdapter(LocalAdapter):
    """No delete by filter: stale chunks are found by reading the source."""

    @property
    def capabilities(self) -> Capabilities:
        return replace(LOCAL_CAPABILITIES, delete_by_filter=False)


def test_reingest_without_filtered_delete() -> None:
    index = vectorport.Store(NoFilteredDeleteAdapter(None)).create_index("docs", 4)
    docs = ChunkedIndex(index)
    docs.ingest("s", "x" * 100, unit_embed, chunker=Chunker(10))
    docs.ingest("s#2", "y" * 30, unit_embed, chunker=Chunker(10))
    docs.ingest("s", "z" * 25, unit_embed, chunker=Chunker(10))
    assert index.count() == 3 + 3
    docs.delete_source("s")
    assert index.count() == 3
    assert isinstance(docs, NavigableIndex)
    with pytest.raises(SourceNotFoundError):
        docs.read("s", 0, 10)


class TruncatingAnnAdapter(LocalAdapter):
    """Behaves like an ANN engine whose filtered search stops early, with no listing."""

    @property
    def capabilities(self) -> Capabilities:
        return replace(LOCAL_CAPABILITIES, list_ids=False, max_top_k=50)

    def query(self, index: vectorport.IndexSpec, request: QueryRequest) -> list[Match]:
        found = super().query(index, request)
        return found[:3] if request.filter is not None else found


def test_query_path_refuses_truncated_and_oversized_sources() -> None:
    index = vectorport.Store(TruncatingAnnAdapter(None)).create_index("docs", 4)
    docs = ChunkedIndex(index)
    assert docs.support.enumeration == "query"
    assert isinstance(docs, NavigableIndex)
    docs.ingest("small", "abc", unit_embed, chunker=Chunker(1))
    assert [c.text for c in docs.read("small", 0, 3)] == ["a", "b", "c"]
    docs.ingest("medium", "abcdefgh", unit_embed, chunker=Chunker(1))
    with pytest.raises(BackendError, match="truncated"):
        docs.read("medium", 0, 8)
    assert [c.text for c in docs.read("medium", 0, 3)] == ["a", "b", "c"], "narrowed: exact"
    docs.ingest("large", "x" * 60, unit_embed, chunker=Chunker(1))
    with pytest.raises(UnsupportedFeatureError):
        docs.grep("large", "x")


def test_subclasses_refuse_what_the_index_cannot_back() -> None:
    class QueryOnly(LocalAdapter):
        @property
        def capabilities(self) -> Capabilities:
            return replace(LOCAL_CAPABILITIES, list_ids=False, count_by_filter=False)

    index = vectorport.Store(QueryOnly(None)).create_index("docs", 4)
    navigable_class = type(ChunkedIndex(vectorport.connect("memory://").create_index("d2x", 4)))
    with pytest.raises(UnsupportedFeatureError):
        navigable_class(index)
    with pytest.raises(ValidationError):
        ChunkedIndex("not an index")  # type: ignore[arg-type]
    assert "abilities=[]" in repr(ChunkedIndex(index))


def test_wraps_an_async_index_and_offers_async_forms() -> None:
    async def run() -> None:
        async with vectorport.AsyncStore(vectorport.connect("memory://")) as store:
            aindex = await store.create_index("docs", 4)
            docs = ChunkedIndex(aindex, namespace="n")
            assert docs.index is aindex.sync
            await docs.aingest("s", "one two three", unit_embed, chunker=Chunker(4))
            hits = await docs.asearch([1, 4, 0, 0], top_k=1)
            assert hits and hits[0].source_id == "s"
            assert [c.text for c in await docs.aread("s", 0, 20)] == ["one ", "two ", "thre", "e"]
            await docs.adelete_source("s")
            assert await aindex.count("n") == 0

    asyncio.run(run())

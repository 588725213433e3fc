"""Conformance tests of the chunk protocols: navigable and patchable indexes.

Bind them like the main suite, with a class-scoped ``store`` fixture::

    import pytest, vectorport
    from vectorport.conformance.protocols import NavigableConformance, PatchableConformance

    class TestMyBackendProtocols(NavigableConformance, PatchableConformance):
        @pytest.fixture(scope="class")
        def store(self):
            with vectorport.connect("mydb://...") as store:
                yield store

Class attributes a binding may set:

- ``expect_navigable`` / ``expect_patchable`` (default ``True``): whether the generic
  :class:`~vectorport.chunks.ChunkedIndex` over this backend must be a
  :class:`~vectorport.chunks.NavigableIndex` / a natively patchable
  :class:`~vectorport.chunks.PatchableChunks`. Both directions are checked: a binding
  that expects ``False`` gets a test that the wrapper is *not* an instance. Without
  native patching, the read-modify-write variant is tested instead (``atomic`` false).
- ``expect_vector_patch`` (default ``True``): whether the backend's native patch can
  replace a vector. Where it cannot (turbopuffer's ``patch_rows``), a vector patch must
  raise :class:`UnsupportedFeatureError` and write nothing, which is then tested.
- ``chunked(index, **kwargs)``: override to test a native implementation of the
  protocols instead of the generic wrapper. It is called with ``namespace=`` (and
  ``allow_non_atomic_patch=``), and what it returns must also offer the wrapper's
  ``ingest``, ``search`` and ``delete_source``, with which the tests write their data.

Expected answers are computed here from the chunker's spans and the definitions in
:mod:`vectorport.chunks.protocols`, never from a previous run. Every test works in a
namespace of its own inside one class-scoped index, so a remote backend creates one
index per class.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
import pytest

from vectorport.chunks import (
    ChunkedIndex,
    Chunker,
    ChunkPatch,
    ChunkResult,
    DocumentPatch,
    GrepMode,
    NavigableIndex,
    NavigationDirection,
    PatchableChunks,
    TextSpan,
    chunk_id,
)
from vectorport.chunks.protocols import AsyncNavigableIndex, AsyncPatchableChunks
from vectorport.core.errors import SourceNotFoundError, UnsupportedFeatureError, ValidationError
from vectorport.core.store import Index, ListableIndex, PatchableIndex, Store
from vectorport.core.types import Metric

DIMENSION = 8
SOURCE_TEXT = (
    "Alpha harbour opens at dawn, and the lighthouse keeper logs every ship that passes. "
    "Fishing boats leave before the tide turns; the cannery waits for their return. "
    "In the afternoon the market square fills with traders selling rope, nets and salt. "
    "A storm warning reaches the harbour master by radio around four o'clock. "
    "Shipwrights haul the smaller boats ashore while the Lighthouse Keeper trims the lamp. "
    "By nightfall the beam sweeps the rocks every twelve seconds, as it has for a century. "
    "Morning brings calm water, gulls over the shipyard, and a ledger of ships counted."
)
CHUNKERS: dict[str, Chunker] = {
    "chars": Chunker(size=90),
    "chars_overlap": Chunker(size=90, overlap=30),
    "tokens_overlap": Chunker(size=16, overlap=5, unit="tokens"),
}
SPECIAL = [0.0] * (DIMENSION - 1) + [1.0]
"""A direction no toy embedding uses, so a chunk patched to it is found first."""


def toy_embed(texts: list[str]) -> list[list[float]]:
    """A deterministic bag-of-words embedding; the last dimension is always 0."""
    out = []
    for text in texts:
        vector = [1.0] + [0.0] * (DIMENSION - 1)
        for word in re.findall(r"\w+", text.lower()):
            vector[1 + sum(map(ord, word)) % (DIMENSION - 2)] += 1.0
        out.append(vector)
    return out


def expected_chunk(source_id: str, span: TextSpan, metadata: dict[str, Any]) -> ChunkResult:
    return ChunkResult(chunk_id(source_id, span.index), source_id, span.start, span.end,
                       span.index, span.text, metadata)


def ids(results: Sequence[ChunkResult]) -> list[str]:
    return [r.chunk_id for r in results]


class _ProtocolBase:
    expect_navigable: ClassVar[bool] = True
    expect_patchable: ClassVar[bool] = True
    expect_vector_patch: ClassVar[bool] = True

    def chunked(self, index: Index, **kwargs: Any) -> Any:
        """The object under test; override to test a native implementation."""
        return ChunkedIndex(index, **kwargs)

    @pytest.fixture(scope="class")
    @classmethod
    def chunk_index(cls, store: Store) -> Iterator[Index]:
        name = f"vp_chunks_{uuid.uuid4().hex[:10]}"
        metrics = store.capabilities.metrics
        metric: Metric = "cosine" if "cosine" in metrics else sorted(metrics)[0]
        index = store.create_index(name, DIMENSION, metric)
        yield index
        store.delete_index(name, missing_ok=True)

    @pytest.fixture
    def namespace(self) -> str:
        return f"ns{uuid.uuid4().hex[:12]}"


class NavigableConformance(_ProtocolBase):
    """:class:`~vectorport.chunks.NavigableIndex` and ingestion, to the protocol's words."""

    @pytest.fixture
    def docs(self, chunk_index: Index, namespace: str) -> Any:
        docs = self.chunked(chunk_index, namespace=namespace)
        if not isinstance(docs, NavigableIndex):
            pytest.skip("this binding declares no navigation (see test_navigable_declaration)")
        return docs

    def write_source(self, docs: Any, chunker_name: str = "chars", source_id: str = "harbour",
               text: str = SOURCE_TEXT, **kwargs: Any) -> list[TextSpan]:
        docs.ingest(source_id, text, toy_embed, chunker=CHUNKERS[chunker_name], **kwargs)
        return CHUNKERS[chunker_name].split(text)

    def test_navigable_declaration(self, chunk_index: Index, namespace: str) -> None:
        docs = self.chunked(chunk_index, namespace=namespace)
        assert isinstance(docs, NavigableIndex) is self.expect_navigable
        assert isinstance(docs, AsyncNavigableIndex) is self.expect_navigable
        if not self.expect_navigable:
            for method in ("navigate", "read", "get_chunk", "grep"):
                assert not hasattr(docs, method), f"undeclared ability still has {method}"

    @pytest.mark.parametrize("chunker_name", sorted(CHUNKERS))
    def test_ingest_then_read_everything(self, docs: Any, chunker_name: str) -> None:
        spans = self.write_source(docs, chunker_name, metadata={"lang": "en", "year": 2024})
        got = docs.read("harbour", 0, len(SOURCE_TEXT), top_k=len(spans) + 5)
        want = [expected_chunk("harbour", s, {"lang": "en", "year": 2024}) for s in spans]
        assert got == want
        for chunk in got:
            assert chunk.text == SOURCE_TEXT[chunk.start_offset:chunk.end_offset]
            assert chunk.score is None

    @pytest.mark.parametrize("chunker_name", sorted(CHUNKERS))
    def test_walk_next_and_previous(self, docs: Any, chunker_name: str) -> None:
        spans = self.write_source(docs, chunker_name)
        chunk_ids = [chunk_id("harbour", s.index) for s in spans]
        for i, span in enumerate(spans):
            after = docs.navigate("harbour", span.start, span.end, NavigationDirection.NEXT)
            before = docs.navigate("harbour", span.start, span.end, NavigationDirection.PREVIOUS)
            assert ids(after) == chunk_ids[i + 1:i + 2], f"NEXT from chunk {i}"
            assert ids(before) == chunk_ids[max(i - 1, 0):i], f"PREVIOUS from chunk {i}"

    @pytest.mark.parametrize("chunker_name", sorted(CHUNKERS))
    def test_navigate_top_k_from_any_span(self, docs: Any, chunker_name: str) -> None:
        spans = self.write_source(docs, chunker_name)
        probes = [(0, 0), (100, 100), (95, 260), (len(SOURCE_TEXT), len(SOURCE_TEXT))]
        for start, end in probes:
            nxt = sorted((s for s in spans if s.start >= start and s.end > end),
                         key=lambda s: (s.start, s.end))
            prv = sorted((s for s in spans if s.start < start and s.end <= end),
                         key=lambda s: (s.start, s.end), reverse=True)
            for k in (1, 3):
                got_next = docs.navigate("harbour", start, end, NavigationDirection.NEXT, top_k=k)
                got_prev = docs.navigate("harbour", start, end, "previous", top_k=k)
                assert ids(got_next) == [chunk_id("harbour", s.index) for s in nxt[:k]]
                assert ids(got_prev) == [chunk_id("harbour", s.index) for s in prv[:k]]

    @pytest.mark.parametrize("chunker_name", ["chars_overlap", "tokens_overlap"])
    def test_read_window(self, docs: Any, chunker_name: str) -> None:
        spans = self.write_source(docs, chunker_name)
        for start, end in [(0, 200), (50, 400), (120, 121), (0, len(SOURCE_TEXT))]:
            inside = [s for s in spans if s.start >= start and s.end <= end]
            for k in (1, 2, 20):
                got = docs.read("harbour", start, end, top_k=k)
                assert ids(got) == [chunk_id("harbour", s.index) for s in inside[:k]]

    def test_edges_give_empty_lists(self, docs: Any) -> None:
        spans = self.write_source(docs)
        first, last = spans[0], spans[-1]
        assert docs.navigate("harbour", last.start, last.end, NavigationDirection.NEXT) == []
        assert docs.navigate("harbour", first.start, first.end,
                             NavigationDirection.PREVIOUS, top_k=5) == []
        assert docs.read("harbour", 1, 2) == []
        assert docs.read("harbour", len(SOURCE_TEXT) + 10, len(SOURCE_TEXT) + 20) == []
        assert docs.grep("harbour", "zeppelin") == []

    def test_unknown_source_raises(self, docs: Any) -> None:
        self.write_source(docs)
        calls: list[Callable[[], object]] = [
            lambda: docs.navigate("nowhere", 0, 10, NavigationDirection.NEXT),
            lambda: docs.navigate("nowhere", 0, 10, NavigationDirection.PREVIOUS),
            lambda: docs.read("nowhere", 0, 10),
            lambda: docs.grep("nowhere", "harbour"),
            lambda: docs.navigate("harbou", 0, 10, NavigationDirection.NEXT),
        ]
        for call in calls:
            with pytest.raises(SourceNotFoundError):
                call()
        assert docs.get_chunk("nowhere#000000") is None
        assert docs.get_chunk(chunk_id("harbour", 10_000)) is None

    def test_toolkit_calling_pattern(self, docs: Any) -> None:
        """Mistral's search toolkit pattern: keep an opaque chunk id from a search, resolve it."""
        spans = self.write_source(docs)
        target = spans[3]
        query = toy_embed([target.text])[0]
        hits = docs.search(query, top_k=1)
        assert hits and hits[0].score is not None
        chunk_id_kept = hits[0].chunk_id
        result = None
        if isinstance(docs, NavigableIndex):
            result = docs.get_chunk(chunk_id_kept)
        assert result is not None
        assert result.chunk_id == chunk_id_kept
        assert result.text == SOURCE_TEXT[result.start_offset:result.end_offset]
        assert docs.get_chunk(chunk_id("harbour", 3)) == expected_chunk("harbour", target, {})

    @pytest.mark.parametrize(
        ("pattern", "mode"),
        [("lighthouse KEEPER", GrepMode.PHRASE), ("harbour", GrepMode.PHRASE),
         (r"\bship\w*", GrepMode.REGEX), (r"(?i)^a", GrepMode.REGEX), ("(", GrepMode.PHRASE),
         ("twelve seconds", "phrase"), (r"[0-9]+|o'clock", "regex")],
    )
    def test_grep(self, docs: Any, pattern: str, mode: GrepMode | str) -> None:
        spans = self.write_source(docs, "chars_overlap")
        regex = (re.compile(re.escape(pattern), re.IGNORECASE)
                 if GrepMode(mode) is GrepMode.PHRASE else re.compile(pattern))
        hits = []
        for s in spans:
            found = tuple((s.start + m.start(), s.start + m.end()) for m in regex.finditer(s.text))
            if found:
                hits.append((chunk_id("harbour", s.index), found))
        for k in (1, 5, 50):
            got = docs.grep("harbour", pattern, mode=mode, top_k=k)
            assert [(r.chunk_id, r.spans) for r in got] == hits[:k]
            for r in got:
                assert all(SOURCE_TEXT[a:b] for a, b in r.spans)

    def test_reingest_replaces_old_chunks(self, docs: Any, chunk_index: Index,
                                          namespace: str) -> None:
        long_spans = self.write_source(docs, "chars")
        short_text = SOURCE_TEXT[:200]
        short_spans = self.write_source(docs, "chars", text=short_text, metadata={"v": 2})
        assert len(short_spans) < len(long_spans)
        got = docs.read("harbour", 0, len(SOURCE_TEXT), top_k=100)
        assert got == [expected_chunk("harbour", s, {"v": 2}) for s in short_spans]
        assert chunk_index.count(namespace) == len(short_spans)
        assert docs.get_chunk(chunk_id("harbour", len(long_spans) - 1)) is None
        self.write_source(docs, "chars", text="")
        with pytest.raises(SourceNotFoundError):
            docs.read("harbour", 0, 10)
        assert chunk_index.count(namespace) == 0

    def test_sources_and_namespaces_do_not_mix(self, docs: Any, chunk_index: Index,
                                               namespace: str) -> None:
        texts = {"doc": SOURCE_TEXT[:300], "doc#x": SOURCE_TEXT[300:], "do": SOURCE_TEXT[100:250]}
        for source, text in texts.items():
            self.write_source(docs, "chars", source_id=source, text=text)
        other = self.chunked(chunk_index, namespace=namespace + "b")
        other.ingest("doc", "a different text in another namespace", toy_embed)
        for source, text in texts.items():
            got = docs.read(source, 0, 10_000, top_k=100)
            assert {c.source_id for c in got} == {source}
            assert "".join(c.text for c in got) == text
        assert [c.text for c in other.read("doc", 0, 10_000)] == [
            "a different text in another namespace"]
        with pytest.raises(SourceNotFoundError):
            other.read("doc#x", 0, 10)
        docs.delete_source("doc")
        with pytest.raises(SourceNotFoundError):
            docs.read("doc", 0, 10)
        assert docs.read("doc#x", 0, 10_000, top_k=100)
        assert other.read("doc", 0, 10_000)

    def test_listing_cursors_are_bound_to_their_listing(self, docs: Any, chunk_index: Index,
                                                        namespace: str) -> None:
        """Chunk navigation pages ids by prefix: a cursor from another source's listing,
        or one made up, must be refused rather than silently restart the listing."""
        if not isinstance(chunk_index, ListableIndex):
            pytest.skip("this backend does not list ids")
        self.write_source(docs, "chars")
        self.write_source(docs, "chars", source_id="other")
        page = chunk_index.list_ids(namespace, prefix="harbour", limit=2)
        assert page.next_cursor is not None
        rest = chunk_index.list_ids(namespace, prefix="harbour", limit=10_000,
                                    cursor=page.next_cursor)
        assert not set(page.ids) & set(rest.ids)
        for bad in (page.ids[-1], "garbage"):
            with pytest.raises(ValidationError):
                chunk_index.list_ids(namespace, prefix="harbour", limit=2, cursor=bad)
        with pytest.raises(ValidationError):
            chunk_index.list_ids(namespace, prefix="other", limit=2, cursor=page.next_cursor)

    def test_bad_arguments_raise_validation_errors(self, docs: Any) -> None:
        self.write_source(docs)
        bad_calls: list[Callable[[], object]] = [
            lambda: docs.navigate("harbour", 10, 5, NavigationDirection.NEXT),
            lambda: docs.navigate("harbour", -1, 5, NavigationDirection.NEXT),
            lambda: docs.navigate("harbour", 0, 5, "sideways"),
            lambda: docs.navigate("harbour", 0, 5, NavigationDirection.NEXT, top_k=0),
            lambda: docs.read("harbour", 0, 5.5),
            lambda: docs.read("", 0, 5),
            lambda: docs.grep("harbour", "(unclosed", mode=GrepMode.REGEX),
            lambda: docs.grep("harbour", ""),
            lambda: docs.get_chunk(""),
            lambda: docs.ingest("harbour", "text", toy_embed, metadata={"source_id": "x"}),
            lambda: docs.ingest("harbour", "text", lambda texts: []),
        ]
        for call in bad_calls:
            with pytest.raises(ValidationError):
                call()

    def test_navigation_async_forms(self, docs: Any) -> None:
        spans = self.write_source(docs)

        sync_hits = ids(docs.grep("harbour", "cannery"))

        async def run() -> None:
            assert isinstance(docs, AsyncNavigableIndex)
            got = await docs.aread("harbour", 0, len(SOURCE_TEXT), top_k=100)
            assert len(got) == len(spans)
            nxt = await docs.anavigate("harbour", spans[0].start, spans[0].end,
                                       NavigationDirection.NEXT)
            assert ids(nxt) == [chunk_id("harbour", 1)]
            assert (await docs.aget_chunk(chunk_id("harbour", 0))) == got[0]
            assert ids(await docs.agrep("harbour", "cannery")) == sync_hits
            with pytest.raises(SourceNotFoundError):
                await docs.aread("nowhere", 0, 1)

        asyncio.run(run())


class PatchableConformance(_ProtocolBase):
    """:class:`~vectorport.chunks.PatchableChunks`: partial updates without re-chunking."""

    def vector_patch_expected(self, patcher: Any) -> bool:
        """Read-modify-write always replaces vectors; a native patch only where the
        binding says its backend can (``expect_vector_patch``)."""
        return self.expect_vector_patch or not patcher.atomic

    @pytest.fixture
    def patcher(self, chunk_index: Index, namespace: str) -> Any:
        if self.expect_patchable:
            return self.chunked(chunk_index, namespace=namespace)
        fallback = self.chunked(chunk_index, namespace=namespace, allow_non_atomic_patch=True)
        if not isinstance(fallback, PatchableChunks):
            pytest.skip("no native patching, and no way to read a source for read-modify-write")
        return fallback

    def write_patch_source(self, patcher: Any) -> list[TextSpan]:
        chunker = CHUNKERS["chars_overlap"]
        patcher.ingest("harbour", SOURCE_TEXT, toy_embed, chunker=chunker,
                       metadata={"lang": "en", "draft": True})
        return chunker.split(SOURCE_TEXT)

    def stored(self, chunk_index: Index, namespace: str, spans: Sequence[TextSpan]) -> list[Any]:
        fetched = chunk_index.fetch([chunk_id("harbour", s.index) for s in spans], namespace)
        return list(fetched.values())

    def test_patchable_declaration(self, chunk_index: Index, namespace: str) -> None:
        chunked = self.chunked(chunk_index, namespace=namespace)
        assert isinstance(chunked, PatchableChunks) is self.expect_patchable
        assert isinstance(chunked, AsyncPatchableChunks) is self.expect_patchable
        if self.expect_patchable:
            assert chunked.atomic is True
            assert isinstance(chunk_index, PatchableIndex) and chunk_index.store.capabilities.patch
        else:
            for method in ("patch_chunk", "patch_document", "atomic"):
                assert not hasattr(chunked, method), f"undeclared ability still has {method}"
            relaxed = self.chunked(chunk_index, namespace=namespace, allow_non_atomic_patch=True)
            if isinstance(relaxed, PatchableChunks):
                assert relaxed.atomic is False

    def test_patch_chunk_merges_and_deletes_metadata(self, patcher: Any, chunk_index: Index,
                                                     namespace: str) -> None:
        spans = self.write_patch_source(patcher)
        before = self.stored(chunk_index, namespace, spans)
        target = chunk_id("harbour", 2)
        assert patcher.patch_chunk(target, ChunkPatch(metadata={"draft": None, "score": 0.5,
                                                                "tags": ["a", "b"]})) is True
        after = self.stored(chunk_index, namespace, spans)
        assert [r.id for r in after] == [r.id for r in before], "patching re-chunked the source"
        for old, new in zip(before, after, strict=True):
            assert new.document == old.document
            np.testing.assert_allclose(new.vector, old.vector, rtol=1e-6, atol=1e-6)
            want = dict(old.metadata)
            if old.id == target:
                del want["draft"]
                want.update({"score": 0.5, "tags": ("a", "b")})
            assert dict(new.metadata) == want, old.id
        assert chunk_index.count(namespace) == len(spans)

    def test_patch_chunk_replaces_vector_only(self, patcher: Any, chunk_index: Index,
                                              namespace: str) -> None:
        spans = self.write_patch_source(patcher)
        target = chunk_id("harbour", 4)
        before = chunk_index.fetch([target], namespace)[target]
        if not self.vector_patch_expected(patcher):
            with pytest.raises(UnsupportedFeatureError):
                patcher.patch_chunk(target, ChunkPatch(vector=SPECIAL, metadata={"x": 1}))
            assert chunk_index.fetch([target], namespace)[target] == before
            return
        assert patcher.patch_chunk(target, ChunkPatch(vector=SPECIAL)) is True
        after = chunk_index.fetch([target], namespace)[target]
        np.testing.assert_allclose(after.vector, SPECIAL, atol=1e-6)
        assert dict(after.metadata) == dict(before.metadata)
        assert after.document == before.document
        hits = patcher.search(SPECIAL, top_k=1)
        assert [h.chunk_id for h in hits] == [target]
        assert chunk_index.count(namespace) == len(spans)

    def test_patch_missing_chunk_returns_false(self, patcher: Any, chunk_index: Index,
                                               namespace: str) -> None:
        spans = self.write_patch_source(patcher)
        assert patcher.patch_chunk(chunk_id("harbour", 999), ChunkPatch(metadata={"x": 1})) is False
        assert chunk_index.count(namespace) == len(spans)

    def test_bad_patches_are_refused(self, patcher: Any, chunk_index: Index,
                                     namespace: str) -> None:
        spans = self.write_patch_source(patcher)
        bad_calls: list[Callable[[], object]] = [
            lambda: ChunkPatch(metadata={"start_offset": 3}),
            lambda: ChunkPatch(metadata={"source_id": None}),
            lambda: ChunkPatch(),
            lambda: ChunkPatch(metadata={"bad-key": 1}),
            lambda: DocumentPatch(),
            lambda: patcher.patch_chunk(chunk_id("harbour", 0), ChunkPatch(vector=[1.0, 2.0])),
            lambda: patcher.patch_chunk(chunk_id("harbour", 0), {"metadata": {"x": 1}}),
            lambda: patcher.patch_document("harbour", DocumentPatch(vectors=[SPECIAL])),
        ]
        for bad in bad_calls:
            with pytest.raises(ValidationError):
                bad()
        stored = self.stored(chunk_index, namespace, spans)
        assert all("x" not in r.metadata for r in stored), "a refused patch wrote something"

    def test_patch_document(self, patcher: Any, chunk_index: Index, namespace: str) -> None:
        spans = self.write_patch_source(patcher)
        patcher.ingest("other", "an unrelated source", toy_embed)
        changed = patcher.patch_document("harbour", DocumentPatch(metadata={"draft": None,
                                                                            "reviewed": "yes"}))
        assert changed == len(spans)
        for record in self.stored(chunk_index, namespace, spans):
            assert "draft" not in record.metadata and record.metadata["reviewed"] == "yes"
            assert record.metadata["lang"] == "en"
        untouched = chunk_index.fetch([chunk_id("other", 0)], namespace)[chunk_id("other", 0)]
        assert "reviewed" not in untouched.metadata
        vectors = [[float(i + 1)] + [0.0] * (DIMENSION - 2) + [1.0] for i in range(len(spans))]
        with pytest.raises(SourceNotFoundError):
            patcher.patch_document("nowhere", DocumentPatch(metadata={"x": 1}))
        if not self.vector_patch_expected(patcher):
            before = self.stored(chunk_index, namespace, spans)
            with pytest.raises(UnsupportedFeatureError):
                patcher.patch_document("harbour", DocumentPatch(vectors=vectors,
                                                                metadata={"x": 1}))
            assert self.stored(chunk_index, namespace, spans) == before
            return
        assert patcher.patch_document("harbour", DocumentPatch(vectors=vectors)) == len(spans)
        for record, vector in zip(self.stored(chunk_index, namespace, spans), vectors,
                                  strict=True):
            np.testing.assert_allclose(record.vector, vector, atol=1e-6)
            assert record.metadata["reviewed"] == "yes"

    def test_patch_async_forms(self, patcher: Any, chunk_index: Index, namespace: str) -> None:
        spans = self.write_patch_source(patcher)

        async def run() -> None:
            assert isinstance(patcher, AsyncPatchableChunks)
            target = chunk_id("harbour", 0)
            assert await patcher.apatch_chunk(target, ChunkPatch(metadata={"k": 1}))
            assert await patcher.apatch_document("harbour",
                                                 DocumentPatch(metadata={"m": "x"})) == len(spans)
            got = chunk_index.fetch([target], namespace)[target]
            assert got.metadata["k"] == 1 and got.metadata["m"] == "x"

        asyncio.run(run())

"""Workspace: indexing a folder, re-indexing, removal, and the three search modes.

Every test with a vector store runs on each store of ``BACKENDS`` (add a backend by
adding a URL factory). Expected vector scores are cosines computed here with numpy
from the test embedder; expected BM25 scores come from :class:`BM25Index`, whose
numbers are checked by hand in ``test_workspace_bm25.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

import vectorport
from vectorport.chunks import Chunker
from vectorport.core.errors import ConfigError, ValidationError
from vectorport.embedders import HashingEmbedder
from vectorport.workspace import BM25Index, LocalFilesystem, Workspace

BACKENDS: dict[str, Callable[[Path], str]] = {
    "memory": lambda tmp: "memory://",
    "local": lambda tmp: f"local://{tmp / 'store.db'}",
}


@pytest.fixture(params=sorted(BACKENDS))
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    return BACKENDS[request.param](tmp_path_factory.mktemp("store"))  # outside the workspace


@pytest.fixture
def store(store_url: str) -> Iterator[vectorport.Store]:
    with vectorport.connect(store_url) as opened:
        yield opened


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


FILES: dict[str, str | bytes] = {
    "docs/guide.md": "# Guide\n\nInstall the package.\nThen create an index.\n",
    "docs/api/auth.md": "Authentication flow\n\nTokens expire after one hour.\nRefresh tokens rotate.\n",
    "docs/notes.txt": "Plain notes about deployment.\n",
    "support/faq/password.txt": "How do I reset my password?\nOpen Settings, then Reset password.\n",
    "support/other.md": "Contact support by email.\n",
    "docs/.hidden.md": "secret password\n",
    ".git/config": "password = hunter2\n",
}


class Recorder:
    """A batch embedder (Mastra's ``batch: true``) recording every call's size."""

    def __init__(self, max_batch_size: int | None = None) -> None:
        self.inner = HashingEmbedder(64)
        self.calls: list[int] = []
        self.texts: list[str] = []
        self.batch = True
        self.max_batch_size = max_batch_size

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        self.texts.extend(texts)
        return [list(v) for v in self.inner.embed(texts)]


# -- auto indexing ----------------------------------------------------------------------

def test_auto_index_paths_take_folders_and_globs(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    ws = Workspace(LocalFilesystem(tmp_path), bm25=True,
                   auto_index_paths=["docs", "support/**/*.txt", "missing"])
    report = ws.init()
    assert report.indexed == ("/docs/api/auth.md", "/docs/guide.md", "/docs/notes.txt",
                              "/support/faq/password.txt")
    assert report.skipped == (("missing", "matches no file"),)
    assert ws.indexed_paths() == list(report.indexed)
    assert [r.id for r in ws.search("password")] == ["/support/faq/password.txt"]  # not hidden


def test_glob_selects_by_extension_and_whole_folder(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    ws = Workspace(tmp_path, bm25=True, auto_index_paths=["docs/**/*.md"])
    assert ws.init().indexed == ("/docs/.hidden.md", "/docs/api/auth.md", "/docs/guide.md")
    everything = Workspace(tmp_path, bm25=True, auto_index_paths=["."]).init()
    assert "/support/other.md" in everything.indexed and "/.git/config" not in everything.indexed


def test_unreadable_files_are_skipped_and_never_outside(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, {"a.txt": "fine text", "b.bin": b"\x00\x01\x02", "c.txt": b"\xff\xfe bad",
                 "big.txt": "x" * 200})
    (tmp_path / "outside.txt").write_text("outside password")
    (root / "link.txt").symlink_to(tmp_path / "outside.txt")
    ws = Workspace(root, bm25=True, auto_index_paths=["."], max_file_bytes=100)
    report = ws.init()
    assert report.indexed == ("/a.txt",)
    assert dict(report.skipped) == {"/b.bin": "binary", "/c.txt": "not UTF-8 text",
                                    "/big.txt": "larger than 100 bytes"}
    with pytest.raises(ConfigError):
        Workspace(root, bm25=True, auto_index_paths=["../"]).init()


def test_batch_embedder_respects_max_batch_size(tmp_path: Path, store: vectorport.Store) -> None:
    write(tmp_path, {f"f{n:02d}.txt": f"file number {n}" for n in range(10)})
    embedder = Recorder(max_batch_size=3)
    ws = Workspace(tmp_path, vector_store=store, embedder=embedder, auto_index_paths=["."])
    assert len(ws.init().indexed) == 10
    assert sorted(embedder.calls) == [1, 3, 3, 3]
    assert len(embedder.texts) == 10
    embedder.calls.clear()
    ws.search("file number 4", mode="vector")
    assert embedder.calls == [1]


def test_single_text_embedder(tmp_path: Path, store: vectorport.Store) -> None:
    seen: list[str] = []

    def embed(text: str) -> list[float]:
        seen.append(text)
        return [float(len(text)), 1.0]

    ws = Workspace(vector_store=store, embedder=embed)
    ws.index("/a", "one")
    ws.index("/b", "three")
    assert seen == ["one", "three"]
    assert ws.default_mode == "vector"


def test_progress_is_reported_per_file(tmp_path: Path) -> None:
    write(tmp_path, {"a.txt": "a", "b.bin": b"\x00", "c.txt": "c"})
    calls: list[tuple[int, int, str]] = []
    Workspace(tmp_path, bm25=True, auto_index_paths=["."]).init(
        lambda done, total, path: calls.append((done, total, path)))
    assert [done for done, _, _ in calls] == [1, 2, 3]
    assert {total for _, total, _ in calls} == {3}
    assert sorted(path for _, _, path in calls) == ["/a.txt", "/b.bin", "/c.txt"]


# -- re-indexing and removal ------------------------------------------------------------

def entries_of(store: vectorport.Store, ws: Workspace, path: str) -> int:
    return store.index(ws.vector_index_name).count(filter={"ws_path": path})  # type: ignore[arg-type]


def test_changed_file_replaces_its_entries(tmp_path: Path, store: vectorport.Store) -> None:
    long = "\n".join(f"line {n} about apples" for n in range(40))
    write(tmp_path, {"fruit.txt": long, "other.txt": "bananas"})
    embedder = Recorder()
    ws = Workspace(tmp_path, bm25=True, vector_store=store, embedder=embedder,
                   auto_index_paths=["."], chunker=Chunker(size=200))
    ws.init()
    before = entries_of(store, ws, "/fruit.txt")
    assert before == math.ceil(len(long) / 200)
    write(tmp_path, {"fruit.txt": "now only cherries\nand plums"})
    embedder.texts.clear()
    report = ws.sync()
    assert report.indexed == ("/fruit.txt",) and report.unchanged == ("/other.txt",)
    assert embedder.texts == ["now only cherries\nand plums"]  # the unchanged file is not re-embedded
    assert entries_of(store, ws, "/fruit.txt") == 1
    for mode in ("bm25", "vector", "hybrid"):
        hits = ws.search("apples", mode=mode, top_k=10)  # type: ignore[arg-type]
        assert all("apples" not in h.content for h in hits)
    [hit] = ws.search("cherries", mode="bm25")
    assert hit.content == "now only cherries\nand plums"


def test_deleted_file_leaves_the_index_on_sync_and_on_reinit(tmp_path: Path, store_url: str) -> None:
    tmp_path = tmp_path / "ws"
    write(tmp_path, {"keep.txt": "keep me", "gone.txt": "gone soon", "later.txt": "later removed"})
    with vectorport.connect(store_url) as store:
        ws = Workspace(tmp_path, bm25=True, vector_store=store, embedder=HashingEmbedder(64),
                       auto_index_paths=["."])
        ws.index("/manual.txt", "manual gone text")  # manual entries are not the folder's
        ws.init()
        (tmp_path / "gone.txt").unlink()
        report = ws.sync()
        assert report.removed_entries == 1
        assert [r.id for r in ws.search("gone", mode="bm25")] == ["/manual.txt"]
        assert entries_of(store, ws, "/gone.txt") == 0
        (tmp_path / "later.txt").unlink()
        if store_url.startswith("memory"):
            fresh = Workspace(tmp_path, bm25=True, vector_store=store, embedder=HashingEmbedder(64),
                              auto_index_paths=["."])
            assert fresh.init().removed_entries == 1
            assert entries_of(store, fresh, "/later.txt") == 0
            return
    with vectorport.connect(store_url) as reopened:  # a new process, in effect
        fresh = Workspace(tmp_path, bm25=True, vector_store=reopened, embedder=HashingEmbedder(64),
                          auto_index_paths=["."])
        report = fresh.init()
        assert report.unchanged == ("/keep.txt",) and report.removed_entries == 1
        assert {r.id for r in fresh.search("gone", mode="vector", top_k=10)} == {
            "/keep.txt", "/manual.txt"}


def test_reopened_workspace_embeds_nothing_unchanged(tmp_path: Path) -> None:
    url = f"local://{tmp_path / 'persist.db'}"
    write(tmp_path / "ws", {"a.md": "alpha text", "b.md": "beta text"})
    first = Recorder()
    with vectorport.connect(url) as store:
        Workspace(tmp_path / "ws", vector_store=store, embedder=first, auto_index_paths=["."]).init()
        assert len(first.texts) == 2
    again = Recorder()
    with vectorport.connect(url) as store:
        ws = Workspace(tmp_path / "ws", vector_store=store, embedder=again, auto_index_paths=["."])
        assert ws.init().unchanged == ("/a.md", "/b.md")
        assert again.texts == []
        assert ws.search("alpha text", top_k=1)[0].id == "/a.md"


def test_unindex_and_manual_metadata(store: vectorport.Store) -> None:
    ws = Workspace(bm25=True, vector_store=store, embedder=HashingEmbedder(64))
    ws.index("/docs/guide.md", "Content of the guide about indexes")
    ws.index("/docs/api.md", "API reference for indexes", metadata={"category": "api", "version": "2.0"})
    for mode in ("bm25", "vector", "hybrid"):
        hits = ws.search("indexes", mode=mode, filter={"category": "api"})  # type: ignore[arg-type]
        assert [(h.id, dict(h.metadata)) for h in hits] == [
            ("/docs/api.md", {"category": "api", "version": "2.0"})]
    ws.index("/docs/api.md", "API reference for indexes", metadata={"category": "ref"})
    assert ws.search("indexes", mode="vector", filter={"category": "api"}) == []
    ws.unindex("docs/api.md")
    for mode in ("bm25", "vector", "hybrid"):
        assert [h.id for h in ws.search("indexes", mode=mode)] == ["/docs/guide.md"]  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="reserved"):
        ws.index("/x", "y", metadata={"ws_path": "/z"})
    with pytest.raises(ValidationError):
        ws.index("/x", "y", metadata={"nested": {"a": 1}})


# -- search -----------------------------------------------------------------------------

def test_line_range_points_at_the_matching_lines(tmp_path: Path) -> None:
    text = "\n".join(["intro", "nothing", "the token expires", "more", "token refresh", "end"])
    ws = Workspace(bm25=True, chunker=None)
    ws.index("/auth.md", text)
    [hit] = ws.search("token")
    assert (hit.line_range.start, hit.line_range.end) == (3, 5)  # type: ignore[union-attr]
    chunked = Workspace(bm25=True, chunker=Chunker(size=3, unit="tokens"))
    chunked.index("/auth.md", text)
    ranges = {(h.line_range.start, h.line_range.end) for h in chunked.search("token", top_k=10)}  # type: ignore[union-attr]
    assert ranges == {(3, 3), (5, 5)}


def test_vector_scores_are_clamped_cosines(store: vectorport.Store) -> None:
    vectors = {"q": [1.0, 0.0, 0.0], "same": [2.0, 0.0, 0.0], "diag": [1.0, 1.0, 0.0],
               "opposite": [-1.0, 0.2, 0.0], "orth": [0.0, 0.0, 3.0]}
    ws = Workspace(vector_store=store, embedder=lambda text: vectors[text])
    for name in ("same", "diag", "opposite", "orth"):
        ws.index(f"/{name}", name)
    hits = ws.search("q", top_k=10)
    assert [h.id for h in hits] == ["/same", "/diag", "/opposite", "/orth"]
    assert [h.score for h in hits] == pytest.approx([1.0, 1 / math.sqrt(2), 0.0, 0.0], abs=1e-6)
    assert all(0.0 <= h.score <= 1.0 and h.score_details is None for h in hits)
    assert [h.id for h in ws.search("q", top_k=10, min_score=0.5)] == ["/same", "/diag"]
    assert [h.id for h in ws.search("q", top_k=1)] == ["/same"]


def hybrid_corpus() -> tuple[dict[str, str], dict[str, list[float]]]:
    """Text and vector per document: "lex" wins on words, "sem" on meaning."""
    texts = {"lex": "zebra zebra zebra crossing", "sem": "striped horse of africa",
             "both": "a zebra in the savanna grass", "none": "cooking pasta at home"}
    vectors = {"zebra": [1.0, 0.0, 0.0], "lex": [0.2, 1.0, 0.0], "sem": [1.0, 0.1, 0.0],
               "both": [0.7, 0.7, 0.1], "none": [0.0, 0.0, 1.0]}
    return texts, vectors


def test_hybrid_is_the_weighted_mix(store: vectorport.Store) -> None:
    texts, vectors = hybrid_corpus()
    by_text = {**{t: vectors[k] for k, t in texts.items()}, "zebra": vectors["zebra"]}
    ws = Workspace(bm25=True, vector_store=store, embedder=lambda text: by_text[text])
    bm25 = BM25Index()
    for key, text in texts.items():
        ws.index(f"/{key}", text)
        bm25.add(key, text)
    raw = bm25.scores("zebra")
    expected_bm25 = {k: raw.get(k, 0.0) / max(raw.values()) for k in texts}
    q = np.array(vectors["zebra"])
    expected_cos = {k: max(0.0, float(q @ np.array(v) / np.linalg.norm(q) / np.linalg.norm(v)))
                    for k, v in vectors.items() if k in texts}
    assert expected_bm25["lex"] == 1.0 and expected_bm25["sem"] == 0.0
    for weight in (0.0, 0.3, 0.5, 0.8, 1.0):
        hits = ws.search("zebra", mode="hybrid", vector_weight=weight, top_k=4)
        expected = {k: weight * expected_cos[k] + (1 - weight) * expected_bm25[k] for k in texts}
        assert {h.id[1:]: h.score for h in hits} == pytest.approx(expected, abs=1e-6)
        assert [h.id[1:] for h in hits] == sorted(expected, key=lambda k: (-expected[k], k))
        for h in hits:
            assert h.score_details is not None
            assert h.score_details.vector == pytest.approx(expected_cos[h.id[1:]], abs=1e-6)
            assert h.score_details.bm25 == pytest.approx(expected_bm25[h.id[1:]], abs=1e-9)
    assert ws.search("zebra", mode="hybrid", vector_weight=0.0)[0].id == "/lex"
    assert ws.search("zebra", mode="hybrid", vector_weight=1.0)[0].id == "/sem"
    assert ws.default_mode == "hybrid"


def test_hybrid_finds_a_winner_ranked_low_in_both_lists(store: vectorport.Store) -> None:
    """30 documents best by vector only, 30 best by words only, and one document 31st in
    both rankings that beats them all on the mix: a search that only merged the first
    candidates of each list would miss it."""
    texts: dict[str, str] = {}
    vectors: dict[str, list[float]] = {"zebra": [1.0, 0.0]}
    for n in range(30):
        texts[f"vec{n:02d}"] = f"filler text number {n}"
        vectors[f"filler text number {n}"] = [1.0, 0.0]
        texts[f"word{n:02d}"] = f"zebra {n}"
        vectors[f"zebra {n}"] = [0.0, 1.0]
    texts["mixed"] = "zebra on a long long long road"
    vectors["zebra on a long long long road"] = [0.9, math.sqrt(1 - 0.81)]
    ws = Workspace(bm25=True, vector_store=store, embedder=lambda text: vectors[text])
    for key, text in texts.items():
        ws.index(f"/{key}", text)
    bm = {h.id for h in ws.search("zebra", mode="bm25", top_k=30)}
    vec = {h.id for h in ws.search("zebra", mode="vector", top_k=30)}
    assert "/mixed" not in bm and "/mixed" not in vec
    [best] = ws.search("zebra", mode="hybrid", vector_weight=0.5, top_k=1)
    assert best.id == "/mixed"
    assert best.score_details is not None and best.score_details.vector == pytest.approx(0.9, abs=1e-6)
    assert 0.5 < best.score < 1.0


def test_modes_must_be_configured(store: vectorport.Store) -> None:
    with pytest.raises(ConfigError, match="no search"):
        Workspace().index("/a", "b")
    with pytest.raises(ConfigError, match="both vector_store and embedder"):
        Workspace(vector_store=store)
    ws = Workspace(bm25=True)
    ws.index("/a", "b")
    with pytest.raises(ConfigError, match="not configured"):
        ws.search("b", mode="vector")
    with pytest.raises(ValidationError):
        ws.search("b", mode="fuzzy")  # type: ignore[arg-type]
    for bad in ({"top_k": 0}, {"min_score": 1.5}, {"vector_weight": -0.1}):
        with pytest.raises(ValidationError):
            ws.search("b", **bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Workspace(bm25=True, auto_index_paths=["docs"])  # no filesystem


def test_bm25_min_score_and_no_match() -> None:
    ws = Workspace(bm25={"k1": 1.5, "b": 0.75})
    ws.index("/a", "apple apple banana")
    ws.index("/b", "apple cherry cherry cherry cherry")
    assert ws.search("durian") == []
    scores = [h.score for h in ws.search("apple banana")]
    assert scores[0] == 1.0 and len(scores) == 2
    assert len(ws.search("apple banana", min_score=scores[1] + 1e-9)) == 1


def test_default_index_name_is_stable_per_folder(tmp_path: Path, store: vectorport.Store) -> None:
    a = Workspace(tmp_path, vector_store=store, embedder=HashingEmbedder(8))
    b = Workspace(str(tmp_path), vector_store=store, embedder=HashingEmbedder(8))
    c = Workspace(tmp_path / "other", vector_store=store, embedder=HashingEmbedder(8))
    assert a.search_index_name == b.search_index_name != c.search_index_name
    custom = Workspace(tmp_path, bm25=True, vector_store=store, embedder=HashingEmbedder(8),
                       search_index_name="My_Workspace_Vectors")
    custom.index("/a", "text")
    assert custom.vector_index_name in store.list_indexes()
    assert custom.vector_index_name.startswith("my_workspace_vectors_")  # type: ignore[union-attr]

"""Embedders are part of an index's identity (Workspace).

Switching the embedder of a workspace used to report "0 indexed, N unchanged" and then
return unrelated results. Now the index records which embedder built it; another one
is refused with :class:`EmbedderMismatchError`, or re-embeds everything when asked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.backends import EMBEDDED, Backend, open_backend

import vectorport
from vectorport.embedders.hashing import HashingEmbedder
from vectorport.embedders.identity import EmbedderIdentity, EmbedderMismatchError, identity_of
from vectorport.workspace import Workspace

TEXTS = {f"/note{i}.txt": f"note {i} about {topic}" for i, topic in enumerate(
    ["harbour cranes", "violin strings", "tax forms", "mountain trails", "sourdough bread"])}


@pytest.fixture(params=EMBEDDED, ids=lambda b: b.name)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[vectorport.Store]:
    backend: Backend = request.param
    with open_backend(backend, tmp_path / "store") as url, vectorport.connect(url) as store:
        yield store


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name, text in TEXTS.items():
        (root / name.lstrip("/")).write_text(text)
    return root


def workspace(folder: Path, store: vectorport.Store, embedder: object, **kw: object) -> Workspace:
    return Workspace(folder, vector_store=store, embedder=embedder,  # type: ignore[arg-type]
                     auto_index_paths=["."], **kw)  # type: ignore[arg-type]


def test_identity_is_stable_and_distinguishes_settings() -> None:
    a, b = identity_of(HashingEmbedder(64)), identity_of(HashingEmbedder(64))
    assert a == b and a.fingerprint == b.fingerprint and len(a.fingerprint) == 16
    assert identity_of(HashingEmbedder(64, ngram_range=(2, 3))).fingerprint != a.fingerprint
    assert identity_of(HashingEmbedder(32)).fingerprint != a.fingerprint
    assert EmbedderIdentity.from_metadata(a.as_metadata()) == a
    with pytest.raises(AttributeError):
        a.name = "x"  # type: ignore[misc]


def test_the_same_embedder_reopens_unchanged(folder: Path, store: vectorport.Store) -> None:
    first = workspace(folder, store, HashingEmbedder(64)).sync()
    assert sorted(first.indexed) == sorted(TEXTS)
    again = workspace(folder, store, HashingEmbedder(64)).sync()
    assert again.indexed == () and sorted(again.unchanged) == sorted(TEXTS)


@pytest.mark.parametrize("other", [HashingEmbedder(64, ngram_range=(2, 3)), HashingEmbedder(32)],
                         ids=["other-options", "other-dimension"])
def test_another_embedder_is_refused(folder: Path, store: vectorport.Store,
                                     other: HashingEmbedder) -> None:
    workspace(folder, store, HashingEmbedder(64)).sync()
    switched = workspace(folder, store, other)
    with pytest.raises(EmbedderMismatchError, match="reembed"):
        switched.sync()
    with pytest.raises(EmbedderMismatchError):
        switched.search("violin", mode="vector")
    assert isinstance(EmbedderMismatchError("x"), vectorport.ConfigError)


@pytest.mark.parametrize("other", [HashingEmbedder(64, ngram_range=(2, 3)), HashingEmbedder(32)],
                         ids=["other-options", "other-dimension"])
def test_reembed_embeds_everything_again(folder: Path, store: vectorport.Store,
                                         other: HashingEmbedder) -> None:
    workspace(folder, store, HashingEmbedder(64)).sync()
    report = workspace(folder, store, other, reembed=True).sync()
    assert sorted(report.indexed) == sorted(TEXTS) and report.unchanged == ()
    reopened = workspace(folder, store, other)
    assert reopened.sync().indexed == ()
    hits = reopened.search("violin strings", mode="vector", top_k=1)
    assert hits[0].id == "/note1.txt"
    # the records in the index are exactly this embedder's vectors
    index = store.index(reopened.vector_index_name or "")
    for record in index.iter_records():
        assert record.vector.shape == (other.dimension,)
    with pytest.raises(EmbedderMismatchError):  # and the old one is refused now
        workspace(folder, store, HashingEmbedder(64)).sync()

"""WordLlama: offline semantic embeddings (model inside the wheel), against the hashing
embedder, both through a real store (the reference adapter)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import vectorport
from vectorport.embedders import Embedder, HashingEmbedder

pytest.importorskip("wordllama")

from vectorport.embedders import WordLlamaEmbedder, auto_embedder

QUESTION = "What coffee do I like?"
DOCUMENTS = {
    "espresso": "I order a double espresso every morning",
    "books": "Which books do I like? Mostly old novels.",
    "music": "What music do I like? Jazz records.",
    "tax": "The quarterly tax report is due in April",
    "cat": "My cat sleeps on the windowsill",
}
"""One document answers the question with no word in common ("espresso" for "coffee");
two share its wording ("What … do I like?") and answer something else."""


def ranking(embedder: Embedder) -> list[str]:
    dimension = embedder.dimension
    assert dimension is not None
    with vectorport.connect("memory://") as store:
        index = store.create_index("paraphrase", dimension, "cosine")
        ids = list(DOCUMENTS)
        index.upsert([{"id": i, "vector": v}
                      for i, v in zip(ids, embedder.embed(list(DOCUMENTS.values())), strict=True)])
        return [m.id for m in index.query(embedder.embed([QUESTION])[0], top_k=len(ids))]


def test_wordllama_finds_the_paraphrase_the_hashing_embedder_cannot() -> None:
    semantic = ranking(WordLlamaEmbedder())
    assert semantic[0] == "espresso", semantic
    lexical = ranking(HashingEmbedder())
    assert lexical[0] != "espresso", lexical
    assert lexical.index("espresso") > lexical.index("music"), "shared wording wins lexically"


def test_vectors_are_unit_length_at_every_size() -> None:
    for dimension in (64, 128, 256):
        embedder = WordLlamaEmbedder(dimension)
        vectors = embedder.embed(["hello world", "vector databases"])
        assert embedder.dimension == dimension
        assert all(v.shape == (dimension,) for v in vectors)
        assert np.allclose([np.linalg.norm(v) for v in vectors], 1.0, atol=1e-5)
    assert WordLlamaEmbedder().embed([]) == []


def test_auto_embedder_prefers_wordllama(capsys: pytest.CaptureFixture[str]) -> None:
    chosen = auto_embedder(64)
    assert isinstance(chosen, WordLlamaEmbedder) and chosen.dimension == 64
    assert capsys.readouterr().err == ""


def test_auto_embedder_falls_back_with_one_line_notice() -> None:
    # a Python where wordllama cannot be imported (None in sys.modules hides it)
    code = ("import sys; sys.modules['wordllama'] = None\n"
            "from vectorport.embedders import auto_embedder\n"
            "e = auto_embedder(32); print(type(e).__name__, e.dimension)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.split() == ["HashingEmbedder", "32"]
    notice = done.stderr.strip().splitlines()
    assert len(notice) == 1 and "WordLlama is not installed" in notice[0]
    assert "vectorport[wordllama]" in notice[0]


def test_using_wordllama_leaves_the_applications_logging_as_it_was() -> None:
    # wordllama's modules call logging.basicConfig(level=INFO) when imported: without the
    # guard, an application that never configured logging would find every library's
    # INFO lines (an HTTP client's line per request) on its stderr after one embedding
    code = ("import logging, sys\n"
            "from vectorport.embedders import WordLlamaEmbedder\n"
            "WordLlamaEmbedder().embed(['coffee'])\n"
            "assert 'wordllama.inference' in sys.modules\n"
            "root = logging.getLogger()\n"
            "print(root.handlers, logging.getLevelName(root.level))\n"
            "logging.getLogger('some.library').info('a line nobody asked for')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] WARNING"
    assert "nobody asked for" not in done.stderr

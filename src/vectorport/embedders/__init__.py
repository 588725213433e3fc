"""Embedders: text → vectors, for indexing chunks and for the agent query tool.

- :class:`Embedder` — the one protocol (``embed(texts)`` and ``dimension``); optional
  :class:`AsyncEmbedder` and :class:`ConfigurableEmbedder` protocols.
- :class:`FunctionEmbedder` / :func:`as_embedder` — any function of one text or of a
  batch (``batch=True``, ``max_batch_size``), sync or async, chunks sent concurrently.
- :class:`CachedEmbedder` — an LRU cache in front of any embedder.
- :class:`HashingEmbedder` — the offline, deterministic default (no download).
- :class:`BM25Encoder` — sparse BM25 vectors for hybrid queries.
- :class:`OpenAICompatibleEmbedder` — any OpenAI-style ``/embeddings`` endpoint (httpx).
- :class:`SentenceTransformerEmbedder` — local models (``[sentence-transformers]``).
- :class:`WordLlamaEmbedder` — offline semantic embeddings, model inside the wheel
  (``[wordllama]``); :func:`auto_embedder` picks it when installed, else hashing.

The optional real embedders load their dependencies only when created.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vectorport.embedders.base import (
    AsyncEmbedder,
    ConfigurableEmbedder,
    Embedder,
    ProviderOptions,
    SparseEncoder,
    Vector,
    aembed,
    embed_one,
)
from vectorport.embedders.bm25 import BM25Encoder, term_id
from vectorport.embedders.cache import CachedEmbedder, CacheInfo
from vectorport.embedders.function import FunctionEmbedder, as_embedder
from vectorport.embedders.hashing import HashingEmbedder, default_embedder

if TYPE_CHECKING:
    from vectorport.embedders.openai_http import OpenAICompatibleEmbedder
    from vectorport.embedders.sbert import SentenceTransformerEmbedder
    from vectorport.embedders.wordllama import WordLlamaEmbedder, auto_embedder

_LAZY = {
    "OpenAICompatibleEmbedder": "vectorport.embedders.openai_http",
    "SentenceTransformerEmbedder": "vectorport.embedders.sbert",
    "WordLlamaEmbedder": "vectorport.embedders.wordllama",
    "auto_embedder": "vectorport.embedders.wordllama",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'vectorport.embedders' has no attribute {name!r}")


__all__ = [
    "AsyncEmbedder",
    "BM25Encoder",
    "CacheInfo",
    "CachedEmbedder",
    "ConfigurableEmbedder",
    "Embedder",
    "FunctionEmbedder",
    "HashingEmbedder",
    "OpenAICompatibleEmbedder",
    "ProviderOptions",
    "SentenceTransformerEmbedder",
    "SparseEncoder",
    "Vector",
    "WordLlamaEmbedder",
    "aembed",
    "as_embedder",
    "auto_embedder",
    "default_embedder",
    "embed_one",
    "term_id",
]

"""An offline semantic embedder: WordLlama (the ``[wordllama]`` extra).

WordLlama's wheel ships its 256-dimension ``l2_supercat`` model (token embeddings
distilled from a large language model, average-pooled), so it gives real semantic
similarity ("coffee" near "espresso") with numpy, ``tokenizers`` and ``safetensors``
only: no torch, no model hub, no network. That makes it the default of the quickstart
and the Workspace CLI when installed (:func:`auto_embedder`), with the lexical
:class:`~vectorport.embedders.hashing.HashingEmbedder` as the fallback.

The model files are read from the installed package directly: ``WordLlama.load()`` of
wordllama 0.4 looks for its bundled tokenizer under a folder name the wheel does not
use and then tries to download it, which fails offline. ``WordLlama.load`` remains the
path for other configurations (``config=``), which may need a download.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from vectorport.core.errors import ConfigError
from vectorport.embedders.base import Embedder, Vector, as_vectors, check_texts

INSTALL_HINT = "pip install 'vectorport[wordllama]'"
BUNDLED_CONFIG = "l2_supercat"
BUNDLED_DIMENSION = 256


def _import(name: str) -> Any:
    """Import ``name`` without letting it configure the application's logging: wordllama
    0.4's ``__init__`` and ``inference`` modules call ``logging.basicConfig(level=INFO)``
    at import, which, in a process that had not configured logging, put a stderr handler
    at INFO on the root logger (every library's INFO lines, an HTTP client's one per
    request, then reached the terminal). ``basicConfig`` does nothing while the root
    logger has a handler, so one stands there for the import."""
    root = logging.getLogger()
    guard = logging.NullHandler()
    root.addHandler(guard)
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ConfigError(f"wordllama is not installed: {INSTALL_HINT}") from exc
    finally:
        root.removeHandler(guard)


def installed() -> bool:
    """Whether the ``wordllama`` package can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("wordllama") is not None


@lru_cache(maxsize=4)
def _load(config: str, dimension: int) -> Any:
    """The inference model, loaded once per process (loading reads ~30 MB)."""
    package = _import("wordllama")
    root = Path(package.__file__).parent
    weights = root / "weights" / f"{config}_{dimension}.safetensors"
    tokenizer_file = root / "tokenizers" / f"{config}_tokenizer_config.json"
    if weights.exists() and tokenizer_file.exists():
        inference = _import("wordllama.inference")
        safetensors = _import("safetensors")
        tokenizers = _import("tokenizers")
        with safetensors.safe_open(str(weights), framework="np") as f:
            matrix = f.get_tensor("embedding.weight")
        return inference.WordLlamaInference(matrix, tokenizers.Tokenizer.from_file(
            str(tokenizer_file)))
    return package.WordLlama.load(config=config, dim=dimension)


class WordLlamaEmbedder:
    """Embeddings from WordLlama: unit vectors of ``dimension`` floats (256 by default;
    64, 128 and 512 where the configuration offers them, truncated Matryoshka-style)."""

    def __init__(self, dimension: int = BUNDLED_DIMENSION, *, config: str = BUNDLED_CONFIG,
                 batch_size: int = 64) -> None:
        self.config = config
        self._dimension = dimension
        self.batch_size = batch_size
        if dimension < BUNDLED_DIMENSION and config == BUNDLED_CONFIG:
            # the bundled 256-d model truncates to the smaller Matryoshka sizes
            self._model = _load(config, BUNDLED_DIMENSION)
            self._truncate: int | None = dimension
        else:
            self._model = _load(config, dimension)
            self._truncate = None

    def __repr__(self) -> str:
        return f"WordLlamaEmbedder({self.config!r}, dimension={self._dimension})"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        import numpy as np

        clean = check_texts(texts)
        if not clean:
            return []
        raw = self._model.embed(clean, norm=self._truncate is None, batch_size=self.batch_size)
        if self._truncate is not None:
            raw = raw[:, : self._truncate]
            norms = np.linalg.norm(raw, axis=1, keepdims=True)
            raw = raw / np.where(norms == 0, 1, norms)
        return as_vectors(list(raw), clean, f"WordLlama {self.config!r}", self._dimension)


def auto_embedder(dimension: int | None = None, *, notice: bool = True) -> Embedder:
    """WordLlama when installed, else the hashing embedder with a one-line notice on
    stderr (so a user sees why results are lexical, and how to get semantic ones)."""
    from vectorport.embedders.hashing import HashingEmbedder

    if installed():
        try:
            return WordLlamaEmbedder(dimension or BUNDLED_DIMENSION)
        except (ConfigError, OSError, ValueError) as exc:
            reason = f"WordLlama failed to load ({type(exc).__name__})"
    else:
        reason = f"WordLlama is not installed ({INSTALL_HINT})"
    if notice:
        print(f"note: {reason}; using the lexical hashing embedder", file=sys.stderr)
    return HashingEmbedder(dimension) if dimension else HashingEmbedder()

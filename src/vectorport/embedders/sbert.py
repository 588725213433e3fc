"""Local models through sentence-transformers (the ``[sentence-transformers]`` extra).

The import happens when the embedder is created, never when vectorport is imported, so
the heavy dependency (torch) is only needed by those who use it. An already loaded
model can be passed as ``model=`` to share it between embedders.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from vectorport.core.errors import ConfigError
from vectorport.embedders.base import Vector, as_vectors, check_texts
from vectorport.extras import install_hint

INSTALL_HINT = install_hint("sentence-transformers")


def load_sentence_transformers() -> Any:
    try:
        return importlib.import_module("sentence_transformers")
    except ImportError as exc:
        raise ConfigError(f"sentence-transformers is not installed: {INSTALL_HINT}") from exc


class SentenceTransformerEmbedder:
    """Embeddings from a sentence-transformers model, such as ``all-MiniLM-L6-v2``.

    ``normalize`` returns unit vectors (cosine and dot product then agree);
    ``prompt`` is prepended by models that want one (e5: ``"query: "``).
    """

    def __init__(
        self,
        model_name: str | None = None,
        *,
        model: Any = None,
        device: str | None = None,
        normalize: bool = True,
        batch_size: int = 32,
        prompt: str | None = None,
        **model_kwargs: Any,
    ) -> None:
        if (model_name is None) == (model is None):
            raise ConfigError("give a model_name or a loaded model=, exactly one of them")
        if model is None:
            library = load_sentence_transformers()
            model = library.SentenceTransformer(model_name, device=device, **model_kwargs)
        self.model = model
        self.name = model_name or type(model).__name__
        self.normalize = normalize
        self.batch_size = batch_size
        self.prompt = prompt

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.name!r}, normalize={self.normalize})"

    @property
    def dimension(self) -> int | None:
        size = self.model.get_sentence_embedding_dimension()
        return int(size) if size is not None else None

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        clean = check_texts(texts)
        if not clean:
            return []
        inputs = [self.prompt + t for t in clean] if self.prompt else clean
        raw = self.model.encode(inputs, batch_size=self.batch_size,
                                normalize_embeddings=self.normalize, convert_to_numpy=True,
                                show_progress_bar=False)
        return as_vectors(list(raw), clean, f"model {self.name!r}", self.dimension)

"""Embedders in both directions between vectorport and LangChain.

:class:`LangChainEmbeddings` lets a vectorport embedder (``HashingEmbedder``, the
OpenAI-compatible or sentence-transformers ones) serve where LangChain wants an
``Embeddings``; :class:`EmbeddingsEmbedder` lets any LangChain ``Embeddings`` serve
where vectorport wants an :class:`~vectorport.embedders.Embedder` (chunk ingestion,
the agent query tool), with LangChain's own async method used for ``aembed``.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.embeddings import Embeddings

from vectorport.embedders.base import (
    AsyncEmbedder,
    Embedder,
    Vector,
    as_vectors,
    check_texts,
)


class LangChainEmbeddings(Embeddings):
    """A vectorport :class:`Embedder` as a LangChain ``Embeddings``."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def __repr__(self) -> str:
        return f"LangChainEmbeddings({self.embedder!r})"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [vector.tolist() for vector in self.embedder.embed(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        if isinstance(self.embedder, AsyncEmbedder):
            return [vector.tolist() for vector in await self.embedder.aembed(texts)]
        return await super().aembed_documents(texts)  # LangChain's worker-thread default

    async def aembed_query(self, text: str) -> list[float]:
        return (await self.aembed_documents([text]))[0]


class EmbeddingsEmbedder:
    """A LangChain ``Embeddings`` as a vectorport :class:`Embedder` (and
    :class:`~vectorport.embedders.AsyncEmbedder`). The dimension is learnt from the
    first answer unless given."""

    def __init__(self, embeddings: Embeddings, *, dimension: int | None = None) -> None:
        self.embeddings = embeddings
        self._dimension = dimension

    def __repr__(self) -> str:
        return f"EmbeddingsEmbedder({type(self.embeddings).__name__})"

    @property
    def dimension(self) -> int | None:
        return self._dimension

    def _checked(self, raw: Sequence[Sequence[float]], texts: list[str]) -> list[Vector]:
        vectors = as_vectors(raw, texts, repr(self), self._dimension)
        if vectors and self._dimension is None:
            self._dimension = len(vectors[0])
        return vectors

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        clean = check_texts(texts)
        if not clean:
            return []
        return self._checked(self.embeddings.embed_documents(clean), clean)

    async def aembed(self, texts: Sequence[str]) -> list[Vector]:
        clean = check_texts(texts)
        if not clean:
            return []
        return self._checked(await self.embeddings.aembed_documents(clean), clean)

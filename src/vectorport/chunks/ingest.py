"""Ingestion: split a text, embed the chunks in batches, upsert them with their offsets.

Re-ingesting a source replaces it: its chunks are written under the same ids (position
``i`` is always ``chunk_id(source_id, i)``), then any older chunk beyond the new last
position is deleted. Readers therefore never see the source vanish, but may see the old
tail until the delete lands. Everything is embedded before the first write, so an
embedding failure leaves the stored source as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from vectorport.chunks.access import (
    SourceReader,
    chunk_support,
    delete_chunks_from,
    deletes_by_filter,
)
from vectorport.chunks.model import (
    CHUNK_INDEX,
    END_OFFSET,
    SOURCE_ID,
    START_OFFSET,
    check_source_id,
    check_user_metadata,
    chunk_id,
)
from vectorport.chunks.splitting import Chunker, TextSpan
from vectorport.core import validation
from vectorport.core.errors import UnsupportedFeatureError, ValidationError
from vectorport.core.store import Index

EmbedFunction: TypeAlias = Callable[[list[str]], Sequence[Sequence[float]] | Any]
"""Texts in, one vector per text out (a list of lists, or a 2-d numpy array)."""


@runtime_checkable
class Embedder(Protocol):
    """An object that embeds a batch of texts, as embedding packages provide."""

    def embed(self, texts: list[str]) -> Sequence[Sequence[float]] | Any: ...


def embed_function(embed: EmbedFunction | Embedder) -> EmbedFunction:
    """Accept a callable or any object with ``.embed(texts)`` (preferred when both)."""
    method = getattr(embed, "embed", None)
    if callable(method):
        return method  # type: ignore[no-any-return]
    if callable(embed):
        return embed
    raise ValidationError(
        f"embed must be a callable or have an .embed(texts) method, got {type(embed).__name__}"
    )


def embed_in_batches(
    embed: EmbedFunction | Embedder, texts: Sequence[str], batch_size: int
) -> list[Any]:
    """One vector per text, asking the embedder for at most ``batch_size`` at a time."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValidationError(f"embed_batch_size must be a positive int, got {batch_size!r}")
    fn = embed_function(embed)
    vectors: list[Any] = []
    for start in range(0, len(texts), batch_size):
        batch = list(texts[start:start + batch_size])
        got = list(fn(batch))
        if len(got) != len(batch):
            raise ValidationError(f"the embedder returned {len(got)} vectors for {len(batch)} texts")
        vectors.extend(got)
    return vectors


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What one ingestion wrote: the source's chunk ids and spans, in order."""

    source_id: str
    chunk_ids: tuple[str, ...]
    spans: tuple[TextSpan, ...]

    def __len__(self) -> int:
        return len(self.chunk_ids)


def chunk_records(
    source_id: str,
    spans: Sequence[TextSpan],
    vectors: Sequence[Any],
    metadata: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """The records of a source's chunks: user metadata plus the reserved position keys,
    the chunk text as the record's document."""
    return [
        {
            "id": chunk_id(source_id, span.index),
            "vector": vector,
            "metadata": {
                **metadata,
                SOURCE_ID: source_id,
                START_OFFSET: span.start,
                END_OFFSET: span.end,
                CHUNK_INDEX: span.index,
            },
            "document": span.text,
        }
        for span, vector in zip(spans, vectors, strict=True)
    ]


def ingest(
    index: Index,
    source_id: str,
    text: str,
    embed: EmbedFunction | Embedder,
    *,
    namespace: str = "",
    chunker: Chunker | None = None,
    metadata: Mapping[str, Any] | None = None,
    embed_batch_size: int = 64,
    batch_size: int | None = None,
) -> IngestResult:
    """Split ``text`` with ``chunker`` (default: 1,000 characters, no overlap), embed the
    chunks ``embed_batch_size`` at a time, upsert them into ``namespace`` with
    ``metadata`` on each, and delete the source's older chunks beyond the new ones."""
    source = check_source_id(source_id)
    ns = validation.namespace(namespace)
    user = check_user_metadata(metadata)
    spans = (chunker or Chunker()).split(text)
    caps = index.store.capabilities
    if not caps.documents:
        raise UnsupportedFeatureError(index.store.backend, "documents",
                                      "chunks keep their text as the record's document")
    support = chunk_support(index)
    reader = SourceReader(index, ns, support) if support.enumeration is not None else None
    if reader is None and not deletes_by_filter(index):
        raise UnsupportedFeatureError(index.store.backend, "replacing a source's chunks",
                                      "needs delete by filter, or reading a source's chunks")
    vectors = embed_in_batches(embed, [s.text for s in spans], embed_batch_size)
    records = chunk_records(source, spans, vectors, user)
    if records:
        index.upsert(records, namespace=ns, batch_size=batch_size)
    delete_chunks_from(index, ns, source, len(spans), reader)
    return IngestResult(source, tuple(r["id"] for r in records), tuple(spans))

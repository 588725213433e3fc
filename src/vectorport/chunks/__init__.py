"""Chunked documents: ingestion, and the optional navigable and patchable abilities.

>>> import vectorport
>>> from vectorport.chunks import ChunkedIndex, Chunker, NavigableIndex
>>> index = vectorport.connect("memory://").create_index("notes", dimension=2)
>>> docs = ChunkedIndex(index)
>>> docs.ingest("memo", "one two three four", lambda texts: [[1, len(t)] for t in texts],
...             chunker=Chunker(size=2, unit="tokens")).chunk_ids
('memo#000000', 'memo#000001')
>>> if isinstance(docs, NavigableIndex):
...     print(docs.get_chunk("memo#000001").text)
three four

See ``docs/protocols.md`` for what each backend needs to offer which ability.
"""

from vectorport.chunks.access import ChunkSupport, chunk_support
from vectorport.chunks.chunked import ChunkedIndex
from vectorport.chunks.ingest import (
    Embedder,
    EmbedFunction,
    IngestResult,
    chunk_records,
    embed_function,
    ingest,
)
from vectorport.chunks.model import (
    CHUNK_INDEX,
    END_OFFSET,
    RESERVED_KEYS,
    SOURCE_ID,
    START_OFFSET,
    ChunkPatch,
    ChunkResult,
    DocumentPatch,
    GrepMode,
    NavigationDirection,
    chunk_id,
)
from vectorport.chunks.protocols import (
    AsyncNavigableIndex,
    AsyncPatchableChunks,
    NavigableIndex,
    PatchableChunks,
)
from vectorport.chunks.splitting import Chunker, TextSpan, split_text
from vectorport.core.errors import SourceNotFoundError

__all__ = [
    "CHUNK_INDEX",
    "END_OFFSET",
    "RESERVED_KEYS",
    "SOURCE_ID",
    "START_OFFSET",
    "AsyncNavigableIndex",
    "AsyncPatchableChunks",
    "ChunkPatch",
    "ChunkResult",
    "ChunkSupport",
    "ChunkedIndex",
    "Chunker",
    "DocumentPatch",
    "EmbedFunction",
    "Embedder",
    "GrepMode",
    "IngestResult",
    "NavigableIndex",
    "NavigationDirection",
    "PatchableChunks",
    "SourceNotFoundError",
    "TextSpan",
    "chunk_id",
    "chunk_records",
    "chunk_support",
    "embed_function",
    "ingest",
    "split_text",
]

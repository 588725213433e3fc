"""Bulk loads (:meth:`vectorport.Index.upsert_bulk`) on Chroma.

The ordinary upsert reads the stored metadata and documents of each batch's ids, so
that its merging ``upsert`` can clear the keys that go (see the adapter's docstring).
A bulk load does that read only where something can be stored: when the namespace's
collection holds no record at the start (``count()``, under the write lock that every
vectorport writer of this Chroma takes), each chunk goes straight to ``upsert`` with
nothing to clear. Chunks are as large as the client's ``max_batch_size`` (5,461 on
Chroma 1.5), not the facade's 1,000.

Into an empty collection of an in-process Chroma (``chroma:///path``,
``chroma+memory://``) the chunks go to ``add``, about a tenth cheaper than ``upsert``
(Chroma 1.5, 4,000 × 384 with metadata and documents): every writer there takes the
write lock, so no record can appear between the ``count()`` and the last chunk. Over
``chroma+http://`` it stays ``upsert``: ``add`` silently keeps a stored record when its
id already exists, so a writer this lock cannot see (another process on the same
server) would leave the old record in place; ``upsert`` at worst merges, as the
ordinary path does there. One chunk at a time: Chroma's HNSW insert is the cost, and
writers of one Chroma take turns anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from chromadb.api.models.Collection import Collection

from vectorport.adapterkit import Record, batches
from vectorport.adapterkit.bulk import send_chunks
from vectorport.adapters.chroma.errors import chroma_errors
from vectorport.adapters.chroma.layout import layout_of
from vectorport.adapters.chroma.written import extend, written_of


def upsert_new(collection: Collection, records: Sequence[Record], *,
               add: bool = False) -> None:
    """Write records none of whose ids is stored: no keys to clear, no document to flag;
    with ``add`` when no other writer can store one of them meanwhile."""
    encode = layout_of(collection.metadata).encode
    metadatas = [encode(r.metadata) or None for r in records]
    documents = [r.document for r in records]
    known = written_of(collection.metadata)
    if known is not None:  # the keys listed before they are written (see .written)
        extend(collection, known, metadatas, any(d is not None for d in documents))
    write = collection.add if add else collection.upsert
    write(
        ids=[r.id for r in records],
        embeddings=np.stack([r.vector for r in records]),
        metadatas=metadatas if any(m is not None for m in metadatas) else None,  # type: ignore[arg-type]
        documents=documents if any(d is not None for d in documents) else None,  # type: ignore[arg-type]
    )


def load(collection: Collection, records: Sequence[Record], chunk_size: int,
         replace: Callable[[Collection, Sequence[Record]], None], *,
         locked_out: bool) -> None:
    """Load ``records`` (validated, unique ids) into ``collection``; the caller holds
    the write lock, which every writer of this Chroma takes if ``locked_out``.
    ``replace`` is the ordinary read-then-upsert of a batch."""
    empty = collection.count() == 0

    def send(chunk: Sequence[Record]) -> None:
        with chroma_errors("upsert"):  # a BackendError, to carry the written ids
            if empty:
                upsert_new(collection, chunk, add=locked_out)
            else:
                replace(collection, chunk)

    send_chunks(list(batches(records, chunk_size)), send, 1)


__all__ = ["load", "upsert_new"]

"""Patch chunks in place: change metadata or an embedding without re-chunking.

Run: ``python examples/custom_store/patch.py [URL]``

With no URL: ``$VECTORPORT_URL``, else the embedded default (``local://``). On a backend
without native patching, the generic wrapper offers patching only when asked for the
read-modify-write variant, which says ``atomic = False``.
"""

from __future__ import annotations

import sys
import uuid

from sample import DIMENSION, TEXT, embed

import vectorport
from vectorport.chunks import (
    ChunkedIndex,
    Chunker,
    ChunkPatch,
    DocumentPatch,
    PatchableChunks,
    chunk_id,
)


def main(url: str | None) -> None:
    with vectorport.connect(url) as db:
        name = f"example_patch_{uuid.uuid4().hex[:8]}"
        index = db.create_index(name, DIMENSION)
        try:
            store = ChunkedIndex(index)
            if not isinstance(store, PatchableChunks):
                store = ChunkedIndex(index, allow_non_atomic_patch=True)
            if not isinstance(store, PatchableChunks):
                print(f"backend {db.backend} offers no chunk patching")
                return
            print(f"backend {db.backend}: patchable, atomic={store.atomic}")
            result = store.ingest("harbour", TEXT, embed, chunker=Chunker(size=120),
                                  metadata={"status": "draft"})
            before = index.count()

            first = chunk_id("harbour", 0)
            store.patch_chunk(first, ChunkPatch(metadata={"status": None, "pinned": True}))
            print("chunk 0 metadata:", dict(index.fetch([first])[first].metadata))

            special = [0.0] * (DIMENSION - 1) + [1.0]
            store.patch_chunk(first, ChunkPatch(vector=special))
            print("nearest to the new vector:", [h.chunk_id for h in store.search(special, top_k=1)])

            changed = store.patch_document("harbour", DocumentPatch(metadata={"reviewed": "yes"}))
            print(f"patched {changed} of {len(result)} chunks; records before {before}, "
                  f"after {index.count()}")
            print("reviewed chunks:", index.count(filter={"reviewed": "yes"}))
            print("unknown chunk:", store.patch_chunk("harbour#999999",
                                                     ChunkPatch(metadata={"x": 1})))
        finally:
            db.delete_index(name)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)

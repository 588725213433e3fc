"""Ingest a text into any vectorport backend, search it, then navigate from a hit.

Run: ``python examples/custom_store/navigate.py [URL]``

With no URL: ``$VECTORPORT_URL``, else the embedded default (``local://``). The script
works in an index of its own and deletes it at the end. On a backend that cannot read a
source's chunks exactly, ``isinstance(store, NavigableIndex)`` is false and the script
says so instead of failing.
"""

from __future__ import annotations

import sys
import uuid

from sample import DIMENSION, TEXT, embed

import vectorport
from vectorport.chunks import (
    ChunkedIndex,
    Chunker,
    GrepMode,
    NavigableIndex,
    NavigationDirection,
)


def main(url: str | None) -> None:
    with vectorport.connect(url) as db:
        name = f"example_nav_{uuid.uuid4().hex[:8]}"
        index = db.create_index(name, DIMENSION)
        try:
            store = ChunkedIndex(index)
            print(f"backend {db.backend}: navigable={isinstance(store, NavigableIndex)}")
            result = store.ingest("harbour", TEXT, embed, chunker=Chunker(size=24, overlap=6,
                                                                         unit="tokens"))
            print(f"ingested {len(result)} chunks")

            hits = store.search(embed(["a storm warning for the harbour master"])[0], top_k=1)
            chunk_id = hits[0].chunk_id  # the opaque id an agent keeps from a search
            print(f"search hit: {chunk_id} score={hits[0].score:.3f}")

            # Mistral's search toolkit calling pattern, as written:
            if isinstance(store, NavigableIndex):
                chunk = store.get_chunk(chunk_id)
                assert chunk is not None
                print(f"open {chunk.chunk_id} [{chunk.start_offset}:{chunk.end_offset}]: "
                      f"{chunk.text!r}")
                for direction in (NavigationDirection.PREVIOUS, NavigationDirection.NEXT):
                    near = store.navigate("harbour", chunk.start_offset, chunk.end_offset,
                                          direction)
                    print(f"{direction.name.lower()}: {[c.chunk_id for c in near]}")
                window = store.read("harbour", 0, 150)
                print(f"read [0:150): {[c.chunk_id for c in window]}")
                matches = store.grep("harbour", r"\bboats?\b", mode=GrepMode.REGEX)
                print(f"grep boats: {[(c.chunk_id, c.spans) for c in matches]}")
                last = store.read("harbour", 0, len(TEXT), top_k=100)[-1]
                print("next after the last chunk:",
                      store.navigate("harbour", last.start_offset, last.end_offset,
                                     NavigationDirection.NEXT))
            else:
                print("this backend offers no navigation; search results only")
        finally:
            db.delete_index(name)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)

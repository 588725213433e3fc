"""A small knowledge base shared by the query-tool examples.

Every example runs offline against the embedded store (``memory://`` or a temporary
``local://`` path), with the deterministic HashingEmbedder, so it prints the same
answers on every machine and never touches your own data.
"""

from __future__ import annotations

import vectorport
from vectorport.embedders import HashingEmbedder

CHUNKS = [
    ("install", "Install vectorport with pip install vectorport; each database has an extra.",
     {"category": "guide", "version": 1.0, "status": "published"}),
    ("create-index", "Create an index with store.create_index(name, dimension, metric).",
     {"category": "technical", "version": 2.0, "status": "published"}),
    ("filters", "Filters use a Mongo-style language: $eq, $gt, $in, $and, $or and more.",
     {"category": "technical", "version": 2.1, "status": "published"}),
    ("namespaces", "Namespaces isolate data sets, such as tenants, inside one index.",
     {"category": "technical", "version": 2.5, "status": "published"}),
    ("hybrid", "Hybrid search adds a sparse BM25 vector to the dense query vector.",
     {"category": "technical", "version": 3.0, "status": "draft"}),
    ("deploy", "Deploy to production by pointing VECTORPORT_URL at your database.",
     {"category": "operations", "version": 3.0, "status": "published"}),
    ("policy", "Company policy: API keys live in environment variables, never in code.",
     {"category": "policy", "version": 1.0, "status": "published"}),
]

EMBEDDER = HashingEmbedder(dimension=384)


def load(index: vectorport.Index, chunks: list[tuple[str, str, dict[str, object]]] = CHUNKS,
         namespace: str = "") -> None:
    """Embed and store ``chunks`` (id, text, metadata) with their text as the document."""
    vectors = EMBEDDER.embed([text for _, text, _ in chunks])
    index.upsert(
        [{"id": cid, "vector": vec, "metadata": meta, "document": text}
         for (cid, text, meta), vec in zip(chunks, vectors, strict=True)],
        namespace=namespace,
    )


def knowledge_base(url: str = "memory://", name: str = "docs") -> vectorport.Store:
    """A store holding index ``name`` with :data:`CHUNKS`."""
    store = vectorport.connect(url)
    load(store.create_index(name, dimension=EMBEDDER.dimension))
    return store


def show(result: object) -> None:
    """Print the sources of a tool result, one line each."""
    for source in result.sources:  # type: ignore[attr-defined]
        print(f"  {source.id:<13} score={source.score:.3f}  {source.document}")

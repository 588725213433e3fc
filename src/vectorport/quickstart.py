"""The quickstart: a small corpus, a filtered, a hybrid and a namespaced query.

Runs on any store (the embedded default unless told otherwise), so the same script shows
that the same calls mean the same thing on every backend. Embeddings come from WordLlama
when installed (``vectorport[wordllama]``: semantic, its model ships inside its wheel),
else from the lexical hashing embedder; keyword vectors from BM25. Nothing needs a
download either way.
"""

from __future__ import annotations

from collections.abc import Callable

from vectorport.core.store import Store
from vectorport.core.types import Match
from vectorport.embedders import BM25Encoder, Embedder, embed_one
from vectorport.embedders.wordllama import auto_embedder

DIMENSION = 64
INDEX_NAME = "quickstart"

CORPUS: list[dict[str, object]] = [
    {"id": "pg-1", "text": "PostgreSQL with pgvector stores embeddings next to relational rows",
     "metadata": {"topic": "database", "year": 2023, "tags": ["sql", "open-source"]}},
    {"id": "pg-2", "text": "HNSW indexes in pgvector trade recall for speed with ef_search",
     "metadata": {"topic": "database", "year": 2024, "tags": ["sql", "ann"]}},
    {"id": "ml-1", "text": "Sentence embeddings map text to vectors for semantic search",
     "metadata": {"topic": "ml", "year": 2022, "tags": ["nlp"]}},
    {"id": "ml-2", "text": "BM25 sparse vectors capture exact keyword matches in hybrid search",
     "metadata": {"topic": "ml", "year": 2024, "tags": ["nlp", "hybrid"]}},
    {"id": "ops-1", "text": "Namespaces isolate tenants so one index can serve many customers",
     "metadata": {"topic": "ops", "year": 2024}},
    {"id": "ops-2", "text": "Strong consistency means a read sees every write that returned",
     "metadata": {"topic": "ops", "year": 2021, "tags": ["consistency"]}},
]



def _show(title: str, matches: list[Match], say: Callable[[str], None]) -> None:
    say(f"\n{title}")
    for m in matches:
        meta = dict(m.metadata or {})
        say(f"  {m.score:6.3f}  {m.id:6}  {meta.get('topic', '-'):9} {m.document or ''}")
    if not matches:
        say("  (no results)")


def run(store: Store, say: Callable[[str], None] = print,
        embedder: Embedder | None = None) -> None:
    """``embedder`` defaults to WordLlama (64 dimensions) when installed, else hashing."""
    embedder = embedder if embedder is not None else auto_embedder(DIMENSION)
    caps = store.capabilities
    use_sparse = caps.sparse and caps.hybrid != "none" and "dotproduct" in caps.metrics
    metric = "dotproduct" if use_sparse else "cosine"
    say(f"backend: {store.backend}, embedder: {type(embedder).__name__}")
    index = store.create_index(INDEX_NAME, embedder.dimension or DIMENSION, metric,
                               sparse=use_sparse, exist_ok=True)
    texts = [str(doc["text"]) for doc in CORPUS]
    vectors = embedder.embed(texts)
    bm25 = BM25Encoder().fit(texts)
    keywords = bm25.encode_documents(texts)
    records = [
        {"id": doc["id"], "vector": vector, "metadata": doc["metadata"], "document": doc["text"],
         **({"sparse": sparse} if use_sparse and sparse is not None else {})}
        for doc, vector, sparse in zip(CORPUS, vectors, keywords, strict=True)
    ]
    index.upsert(records)
    index.upsert(records[:2], namespace="tenant-b")
    say(f"upserted {len(records)} records, and 2 more in namespace 'tenant-b'")

    question = "how do vector indexes trade speed and recall"
    asked = embed_one(embedder, question)
    _show(f"dense query: {question!r}", index.query(asked, top_k=3), say)
    flt = {"topic": {"$in": ["database", "ml"]}, "year": {"$gte": 2024}}
    _show(f"filtered query {flt}", index.query(asked, top_k=3, filter=flt), say)
    keyword_query = "bm25 keyword hybrid"
    sparse_query = bm25.encode_query(keyword_query)
    if use_sparse and sparse_query is not None:
        _show(f"hybrid query (dense + BM25 {keyword_query!r})",
              index.query(embed_one(embedder, keyword_query), sparse=sparse_query, top_k=3), say)
    else:
        say(f"\n(hybrid skipped: {store.backend} declares no sparse/hybrid support)")
    _show("namespaced query in 'tenant-b'",
          index.query(asked, top_k=3, namespace="tenant-b"), say)
    say(f"\nrecords: {index.count()} in the default namespace, "
        f"{index.count('tenant-b')} in 'tenant-b'")

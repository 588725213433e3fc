"""The quickstart: a small corpus, a filtered, a hybrid and a namespaced query.

Runs on any store (the embedded default unless told otherwise), so the same script shows
that the same calls mean the same thing on every backend. Embeddings come from the
offline hashing embedder and keyword vectors from BM25, so nothing needs a download.
"""

from __future__ import annotations

from collections.abc import Callable

from vectorport.core.store import Store
from vectorport.core.types import Match
from vectorport.embedders import BM25Encoder, HashingEmbedder

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

EMBEDDER = HashingEmbedder(dimension=DIMENSION)
"""The offline default embedder: hashed n-grams, so nothing needs a download."""


def _show(title: str, matches: list[Match], say: Callable[[str], None]) -> None:
    say(f"\n{title}")
    for m in matches:
        meta = dict(m.metadata or {})
        say(f"  {m.score:6.3f}  {m.id:6}  {meta.get('topic', '-'):9} {m.document or ''}")
    if not matches:
        say("  (no results)")


def run(store: Store, say: Callable[[str], None] = print) -> None:
    caps = store.capabilities
    use_sparse = caps.sparse and caps.hybrid != "none" and "dotproduct" in caps.metrics
    metric = "dotproduct" if use_sparse else "cosine"
    say(f"backend: {store.backend}")
    index = store.create_index(INDEX_NAME, DIMENSION, metric, sparse=use_sparse, exist_ok=True)
    texts = [str(doc["text"]) for doc in CORPUS]
    vectors = EMBEDDER.embed(texts)
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
    asked = EMBEDDER.embed_text(question)
    _show(f"dense query: {question!r}", index.query(asked, top_k=3), say)
    flt = {"topic": {"$in": ["database", "ml"]}, "year": {"$gte": 2024}}
    _show(f"filtered query {flt}", index.query(asked, top_k=3, filter=flt), say)
    keyword_query = "bm25 keyword hybrid"
    sparse_query = bm25.encode_query(keyword_query)
    if use_sparse and sparse_query is not None:
        _show(f"hybrid query (dense + BM25 {keyword_query!r})",
              index.query(EMBEDDER.embed_text(keyword_query), sparse=sparse_query, top_k=3), say)
    else:
        say(f"\n(hybrid skipped: {store.backend} declares no sparse/hybrid support)")
    _show("namespaced query in 'tenant-b'",
          index.query(asked, top_k=3, namespace="tenant-b"), say)
    say(f"\nrecords: {index.count()} in the default namespace, "
        f"{index.count('tenant-b')} in 'tenant-b'")

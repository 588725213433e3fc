"""The quickstart: a small corpus, a filtered, a hybrid and a namespaced query.

Runs on any store (the embedded default unless told otherwise), so the same script shows
that the same calls mean the same thing on every backend. The text features are a tiny
offline stand-in for an embedding model, so that nothing needs a download.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable

from vectorport.core.store import Store
from vectorport.core.types import Match, SparseVector

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

_WORD = re.compile(r"[a-z0-9_]+")


def _bucket(token: str, size: int) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "little") % size


def embed(text: str) -> list[float]:
    """Hashed word and character-trigram features, L2-normalised."""
    vector = [0.0] * DIMENSION
    for word in _WORD.findall(text.lower()):
        vector[_bucket(word, DIMENSION)] += 1.0
        padded = f" {word} "
        for i in range(len(padded) - 2):
            vector[_bucket(padded[i:i + 3], DIMENSION)] += 0.3
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def sparse(text: str) -> SparseVector:
    """Term counts hashed to int32 ids: a keyword signal for hybrid search."""
    counts = Counter(_bucket(w, 2**31 - 1) for w in _WORD.findall(text.lower()))
    ordered = sorted(counts.items())
    return SparseVector(tuple(i for i, _ in ordered), tuple(float(c) for _, c in ordered))


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
    records = [
        {"id": doc["id"], "vector": embed(str(doc["text"])), "metadata": doc["metadata"],
         "document": doc["text"], **({"sparse": sparse(str(doc["text"]))} if use_sparse else {})}
        for doc in CORPUS
    ]
    index.upsert(records)
    index.upsert(records[:2], namespace="tenant-b")
    say(f"upserted {len(records)} records, and 2 more in namespace 'tenant-b'")

    question = "how do vector indexes trade speed and recall"
    _show(f"dense query: {question!r}", index.query(embed(question), top_k=3), say)
    flt = {"topic": {"$in": ["database", "ml"]}, "year": {"$gte": 2024}}
    _show(f"filtered query {flt}", index.query(embed(question), top_k=3, filter=flt), say)
    if use_sparse:
        keywords = "bm25 keyword hybrid"
        _show(f"hybrid query (dense + sparse {keywords!r})",
              index.query(embed(keywords), sparse=sparse(keywords), top_k=3), say)
    else:
        say(f"\n(hybrid skipped: {store.backend} declares no sparse/hybrid support)")
    _show("namespaced query in 'tenant-b'",
          index.query(embed(question), top_k=3, namespace="tenant-b"), say)
    say(f"\nrecords: {index.count()} in the default namespace, "
        f"{index.count('tenant-b')} in 'tenant-b'")

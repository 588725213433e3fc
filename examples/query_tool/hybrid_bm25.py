"""Hybrid search: the dense query plus a BM25 sparse query, in one tool.

``BM25Encoder`` is fitted on the corpus; documents are stored with their BM25 sparse
vectors, and the tool adds the query's sparse vector to every search
(``sparse_encoder=``), weighted against the dense part by ``hybrid_alpha``. Exact terms
such as identifiers then count, which character n-gram or semantic embeddings blur.

Run: python examples/query_tool/hybrid_bm25.py
"""

from _corpus import CHUNKS, EMBEDDER, show

import vectorport
from vectorport.agent import create_vector_query_tool
from vectorport.embedders import BM25Encoder

texts = [text for _, text, _ in CHUNKS]
bm25 = BM25Encoder().fit(texts)

store = vectorport.connect("memory://")
index = store.create_index("docs", dimension=EMBEDDER.dimension, sparse=True)
index.upsert([
    {"id": cid, "vector": dense, "sparse": sparse, "metadata": meta, "document": text}
    for (cid, text, meta), dense, sparse in zip(CHUNKS, EMBEDDER.embed(texts),
                                                bm25.encode_documents(texts), strict=True)
])

query_tool = create_vector_query_tool(vector_store=store, index_name="docs", model=EMBEDDER,
                                      sparse_encoder=bm25, hybrid_alpha=0.5)
result = query_tool.execute({"query_text": "VECTORPORT_URL", "top_k": 3})
print("hybrid results:")
show(result)
assert result.sources[0].id == "deploy"
print("ok")

"""Database-specific configuration (Mastra's "Database-Specific Configuration Examples").

``database_config`` holds one section per database; only the section of the backend in
use is applied, mapped onto vectorport's generic query options. This prints what each
Mastra configuration becomes, then runs a multi-database tool on the embedded store,
where the ``local`` section applies and the others are ignored.

Run: python examples/query_tool/database_configs.py
"""

from _corpus import CHUNKS, EMBEDDER, load

import vectorport
from vectorport.agent import create_vector_query_tool, options_for_backend

MASTRA_CONFIGS = {
    "pinecone": {"pinecone": {
        "namespace": "production",
        "sparse_vector": {"indices": [0, 1, 2, 3], "values": [0.1, 0.2, 0.15, 0.05]},
    }},
    "pgvector": {"pgvector": {"min_score": 0.7, "ef": 200, "probes": 10}},
    "chroma": {"chroma": {
        "where": {"category": "technical", "status": "published"},
        "where_document": {"$contains": "API"},
    }},
    "turbopuffer": {"turbopuffer": {"consistency": "eventual"}},
    "milvus": {"milvus": {"consistency": "strong", "ef": 64, "nprobe": 16}},
}
for backend, config in MASTRA_CONFIGS.items():
    options = options_for_backend(config, backend)
    print(f"{backend:<12} -> {options.query_kwargs()}"
          + (f" filter={options.filter}" if options.filter else "")
          + (f" sparse={options.sparse}" if options.sparse else ""))

# One tool for several databases: each backend reads its own section.
multi_db_config = {
    "pinecone": {"namespace": "default"},
    "pgvector": {"min_score": 0.8, "ef": 150},
    "chroma": {"where": {"type": "documentation"}},
    "local": {"namespace": "v3", "min_score": 0.05},
}
print("on a pgvector store:", options_for_backend(multi_db_config, "pgvector").query_kwargs())
print("on the local store: ", options_for_backend(multi_db_config, "local").query_kwargs())

store = vectorport.connect("memory://")
index = store.create_index("docs", dimension=EMBEDDER.dimension)
load(index)  # the default namespace
load(index, [c for c in CHUNKS if c[2]["version"] >= 3.0], namespace="v3")
query_tool = create_vector_query_tool(
    vector_store=store, index_name="docs", model=EMBEDDER, database_config=multi_db_config,
)
result = query_tool.execute({"query_text": "search and deployment", "top_k": 10})
print("results from namespace 'v3' with score >= 0.05:", [s.id for s in result.sources])
assert {s.id for s in result.sources} <= {"hybrid", "deploy"}
assert all(s.score >= 0.05 for s in result.sources)

try:
    create_vector_query_tool(vector_store=store, index_name="docs", model=EMBEDDER,
                             database_config={"local": {"minScore": 0.5}})
except vectorport.ConfigError as exc:
    print("rejected:", exc)
print("ok")

"""Overriding the database configuration at runtime (Mastra's "Runtime Configuration
Override").

The tool's ``database_config`` is a default; a request context may replace it per
request, for example to switch from the development to the production namespace.

Run: python examples/query_tool/runtime_override.py
"""

from _corpus import CHUNKS, EMBEDDER, load

import vectorport
from vectorport.agent import RequestContext, create_vector_query_tool

store = vectorport.connect("memory://")
index = store.create_index("docs", dimension=EMBEDDER.dimension)
load(index, CHUNKS[:3], namespace="development")
load(index, CHUNKS, namespace="production")

query_tool = create_vector_query_tool(
    vector_store=store,
    index_name="docs",
    model=EMBEDDER,
    database_config={
        "pinecone": {"namespace": "development"},  # used when the store is Pinecone
        "local": {"namespace": "development"},     # used here, on the embedded store
    },
)
question = {"query_text": "Find information about deployment", "top_k": 3}

default = query_tool.execute(question)
print("development:", [s.id for s in default.sources])

request_context = RequestContext()
request_context.set("database_config", {
    "pinecone": {"namespace": "production"},
    "local": {"namespace": "production"},  # switch to the production namespace
})
overridden = query_tool.execute(question, request_context=request_context)
print("production: ", [s.id for s in overridden.sources])

assert "deploy" not in {s.id for s in default.sources}
assert overridden.sources[0].id == "deploy"
print("ok")

"""Providing the parameters at runtime through a request context (Mastra's "Example:
Using Request Context").

The tool is created with only its model; the store name, index, top_k, an enforced
filter and the database configuration come from the request context. Keys are
snake_case. A required setting missing from both creation and context is a clear error.

Run: python examples/query_tool/request_context.py
"""

from _corpus import EMBEDDER, knowledge_base, show

from vectorport import ConfigError
from vectorport.agent import RequestContext, create_vector_query_tool

stores = {"my-store": knowledge_base(name="my_index")}  # named stores to pick from

query_tool = create_vector_query_tool(vector_store=stores, model=EMBEDDER)
print("tool id:", query_tool.id)

try:
    query_tool.execute({"query_text": "documentation"})
except ConfigError as exc:
    print("without a context:", exc)

request_context = RequestContext()
request_context.set("vector_store_name", "my-store")
request_context.set("index_name", "my_index")
request_context.set("top_k", 5)
request_context.set("filter", {"category": "technical"})
request_context.set("database_config", {"local": {"min_score": 0.0}})
request_context.set("model", "openai/text-embedding-3-small")  # creation-only: not used here

result = query_tool.execute({"query_text": "Find documentation from the knowledge base."},
                            request_context=request_context)
print("results:")
show(result)
assert 0 < len(result.sources) <= 5
assert all(s.metadata["category"] == "technical" for s in result.sources)
print("ok")

"""Basic usage: a vector query tool over one index (Mastra's "Basic Usage").

Run: python examples/query_tool/basic.py
"""

from _corpus import EMBEDDER, knowledge_base, show

from vectorport.agent import create_vector_query_tool

store = knowledge_base()  # memory://, index "docs"

query_tool = create_vector_query_tool(
    vector_store=store,
    vector_store_name="local",
    index_name="docs",
    model=EMBEDDER,
)
print("tool id:  ", query_tool.id)
print("tool name:", query_tool.name)
print("description:", query_tool.description)
print("input keys:", sorted(query_tool.input_schema["properties"]))

result = query_tool.execute({"query_text": "How do I create an index?", "top_k": 3})
print("sources:")
show(result)
print("relevant_context:")
print(result.relevant_context)
assert result.sources[0].id == "create-index"
print("ok")

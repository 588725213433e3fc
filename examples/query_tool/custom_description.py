"""A custom tool description (Mastra's "Example with Custom Description").

The description is what the model reads to decide when to call the tool; it is fixed
at creation. Here it is shown as an Anthropic tool definition.

Run: python examples/query_tool/custom_description.py
"""

import json

from _corpus import EMBEDDER, knowledge_base

from vectorport.agent import create_vector_query_tool

store = knowledge_base()
query_tool = create_vector_query_tool(
    vector_store=store,
    index_name="docs",
    model=EMBEDDER,
    description=(
        "Search through document archives to find relevant information for answering "
        "questions about company policies and procedures"
    ),
)
definition = query_tool.to_anthropic_tool()
print(json.dumps(definition, indent=2)[:400])
assert definition["description"].startswith("Search through document archives")
result = query_tool.execute({"query_text": "company policy on API keys", "top_k": 1})
print("top source:", result.sources[0].id)
assert result.sources[0].id == "policy"
print("ok")

"""Agent-built metadata filters (Mastra's "Example with Filters").

With ``enable_filter=True`` the tool's input schema gains a ``filter`` property, and
the model turns "content where version is greater than 2.0" into
``{"version": {"$gt": 2.0}}``. Here a scripted model stands in for the LLM.

Run: python examples/query_tool/filters.py
"""

import json

from _corpus import EMBEDDER, knowledge_base, show

from vectorport.agent import create_vector_query_tool

store = knowledge_base()
query_tool = create_vector_query_tool(
    vector_store=store,
    index_name="docs",
    model=EMBEDDER,
    enable_filter=True,
)
print("filter property:", json.dumps(query_tool.input_schema["properties"]["filter"])[:120], "...")

# What a model would send for: "Find content where the 'version' field is greater than 2.0"
arguments = {"query_text": "vectorport features", "filter": {"version": {"$gt": 2.0}}}
result = query_tool.execute(arguments)
print(f"results for {json.dumps(arguments['filter'])}:")
show(result)
assert result.sources and all(s.metadata["version"] > 2.0 for s in result.sources)

# Filters combine with $and / $or; models often send them as JSON text, which works too.
arguments_json = json.dumps({"query_text": "technical docs",
                             "filter": json.dumps({"$and": [{"category": "technical"},
                                                            {"status": "published"}]})})
result = query_tool.execute(arguments_json)
print("published technical chunks:", sorted(s.id for s in result.sources))
assert all(s.metadata["category"] == "technical" and s.metadata["status"] == "published"
           for s in result.sources)
print("ok")

"""Using the tool by itself, without an agent framework (Mastra's "Usage Without a
Mastra Server").

The store is a durable ``local://`` file in a temporary folder here; point the URL at
``pgvector://...`` (or any backend) and nothing else changes.

Run: python examples/query_tool/without_server.py
"""

import json
import tempfile
from pathlib import Path

from _corpus import EMBEDDER, load

import vectorport
from vectorport.agent import RequestContext, create_vector_query_tool

with tempfile.TemporaryDirectory() as folder:
    url = f"local://{Path(folder) / 'vectors.db'}"
    with vectorport.connect(url) as store:
        load(store.create_index("embeddings", dimension=EMBEDDER.dimension))

    with vectorport.connect(url) as store:  # reopen: the data is on disk
        vector_query_tool = create_vector_query_tool(
            vector_store_name="local",  # optional since we're passing in a store
            vector_store=store,
            index_name="embeddings",
            model=EMBEDDER,
        )
        request_context = RequestContext()
        query_result = vector_query_tool.execute({"query_text": "foo", "top_k": 1},
                                                 request_context=request_context)
        print(json.dumps([s.to_dict() for s in query_result.sources], indent=2))
        assert len(query_result.sources) == 1

        query_result = vector_query_tool.execute(
            {"query_text": "isolate tenants with namespaces", "top_k": 1}, request_context)
        print("best match:", query_result.sources[0].id)
        assert query_result.sources[0].id == "namespaces"
print("ok")

"""Manual indexing (Mastra's ``workspace.index(path, content, { metadata })``).

The path is the document id; metadata is stored with the document and can filter a
search (with vectorport's filter language, the same in every mode). Useful for
content that is not a file, content preprocessed or chunked by hand, or documents
that need extra metadata.

Run: python examples/workspace/manual_index.py
"""

from _sample import show

import vectorport
from vectorport.embedders import HashingEmbedder
from vectorport.workspace import Workspace

workspace = Workspace(bm25=True, vector_store=vectorport.connect("memory://"),
                      embedder=HashingEmbedder())

# Basic indexing
workspace.index("/docs/guide.md", "Content of the guide: install, then create an index.")

# Index with metadata for filtering or context
api_doc_content = "API reference: create_index(name, dimension) creates an index."
workspace.index("/docs/api.md", api_doc_content, metadata={"category": "api", "version": "2.0"})

# Not a file at all: a database record, indexed under a path of your choosing
workspace.index("/records/ticket-42", "Customer cannot create an index on the free plan.",
                metadata={"category": "support"})

everything = workspace.search("create an index", top_k=5)
print("all documents:")
show(everything)
only_api = workspace.search("create an index", filter={"category": "api"})
print("category = api:")
show(only_api)
assert [r.id for r in only_api] == ["/docs/api.md"]
assert dict(only_api[0].metadata) == {"category": "api", "version": "2.0"}
assert len(everything) == 3

workspace.index("/docs/guide.md", "Replaced: the guide now covers namespaces.")  # re-index
assert workspace.search("namespaces", mode="bm25")[0].id == "/docs/guide.md"
workspace.unindex("/records/ticket-42")
assert "/records/ticket-42" not in {r.id for r in workspace.search("create an index")}
print("ok")

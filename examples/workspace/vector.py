"""Vector search (Mastra's ``vectorStore`` + ``embedder`` of one text at a time).

    const workspace = new Workspace({ filesystem, vectorStore: new PineconeVector({...}),
      embedder: async (text) => (await embed({ model, value: text })).embedding })

Any vectorport store works as the vector store (``vectorport.connect("pinecone://…")``
in production); here the embedded ``memory://`` store and a function wrapping the
offline hashing embedder. Scores are cosine similarities.

Run: python examples/workspace/vector.py
"""

from _sample import sample_workspace, show

import vectorport
from vectorport.embedders import HashingEmbedder
from vectorport.workspace import LocalFilesystem, Workspace

model = HashingEmbedder()
calls = []


def embedder(text: str) -> list[float]:
    """One text in, one embedding out (the function signature stays as simple as that)."""
    calls.append(text)
    return list(model.embed([text])[0])


workspace = Workspace(
    filesystem=LocalFilesystem(base_path=sample_workspace()),
    vector_store=vectorport.connect("memory://"),
    embedder=embedder,
    auto_index_paths=["docs", "support"],
)
report = workspace.init()
print(f"indexed {len(report.indexed)} files with {len(calls)} embedder calls")
results = workspace.search("how do I reset my password", top_k=3)
show(results)
assert workspace.default_mode == "vector"
assert results[0].id == "/support/faq/password.txt"
assert all(0.0 <= r.score <= 1.0 for r in results)
print("ok")

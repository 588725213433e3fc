"""Searching (Mastra's ``workspace.search(query)`` and its options).

    const results = await workspace.search('authentication flow',
      { topK: 10, mode: 'hybrid', minScore: 0.5, vectorWeight: 0.5 })

Each result has ``id`` (the path), ``content``, ``score`` in [0, 1], ``line_range``
(the lines where the query terms occur), ``metadata`` and, in hybrid mode,
``score_details``.

Run: python examples/workspace/search.py
"""

from _sample import sample_workspace

import vectorport
from vectorport.embedders import HashingEmbedder
from vectorport.workspace import LocalFilesystem, Workspace

workspace = Workspace(filesystem=LocalFilesystem(base_path=sample_workspace()), bm25=True,
                      vector_store=vectorport.connect("memory://"), embedder=HashingEmbedder(),
                      auto_index_paths=["docs", "support", "notes"])
workspace.init()

results = workspace.search("password reset")
for result in results:
    print(f"{result.id}: {result.score:.3f}")
print(results[0].content)
assert results[0].id == "/support/faq/password.txt"

results = workspace.search("authentication flow", top_k=10, mode="hybrid", min_score=0.5,
                           vector_weight=0.5)
print("with options:")
for r in results:
    print(f"  {r.id}  score={r.score:.3f}  lines={r.line_range}  details={r.score_details}")
assert [r.id for r in results] == ["/docs/auth/flow.md"]
assert all(r.score >= 0.5 for r in results)

for mode, query in (("bm25", "config.yaml"), ("vector", "how to handle user authentication"),
                    ("hybrid", "404 error")):
    best = workspace.search(query, mode=mode, top_k=1)[0]  # type: ignore[arg-type]
    print(f"{mode:6} {query!r:40} -> {best.id}")
print("ok")

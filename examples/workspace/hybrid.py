"""Hybrid search (Mastra's ``bm25: true`` with a ``vectorStore`` and ``embedder``).

With both configured, ``mode="hybrid"`` is the default: the score is
``vector_weight · cosine + (1 − vector_weight) · bm25`` (BM25 normalised to its best
hit), and ``score_details`` shows the two parts. ``vector_weight`` 0 is BM25 only,
1 vectors only, 0.5 an even mix.

Run: python examples/workspace/hybrid.py
"""

from _sample import sample_workspace, show

import vectorport
from vectorport.embedders import HashingEmbedder
from vectorport.workspace import LocalFilesystem, Workspace

workspace = Workspace(
    filesystem=LocalFilesystem(base_path=sample_workspace()),
    bm25=True,
    vector_store=vectorport.connect("memory://"),
    embedder=HashingEmbedder(),
    auto_index_paths=["docs", "support", "notes"],
)
workspace.init()
print("modes:", workspace.modes, "default:", workspace.default_mode)

for weight in (0.0, 0.5, 1.0):
    results = workspace.search("token expired", top_k=3, vector_weight=weight)
    print(f"vector_weight={weight}:")
    show(results)
    for r in results:
        assert r.score_details is not None
        mixed = weight * r.score_details.vector + (1 - weight) * r.score_details.bm25
        assert abs(r.score - mixed) < 1e-9
assert workspace.search("token expired", vector_weight=0.0)[0].score_details.bm25 == 1.0  # type: ignore[union-attr]
print("ok")

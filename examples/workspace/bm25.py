"""BM25 keyword search (Mastra's ``bm25: true`` and ``bm25: { k1: 1.5, b: 0.75 }``).

    const workspace = new Workspace({
      filesystem: new LocalFilesystem({ basePath: './workspace' }), bm25: true })

BM25 scores documents by term frequency and document length; it suits exact words,
technical terms and code. Scores are divided by the best hit's, so the best hit scores 1.

Run: python examples/workspace/bm25.py
"""

from _sample import sample_workspace, show

from vectorport.workspace import LocalFilesystem, Workspace

base_path = sample_workspace()

workspace = Workspace(filesystem=LocalFilesystem(base_path=base_path), bm25=True,
                      auto_index_paths=["docs", "support", "notes"])
workspace.init()
results = workspace.search("404 error")
print("bm25 (k1=1.2, b=0.75) for '404 error':")
show(results)
assert results[0].id == "/notes/todo.txt" and results[0].score == 1.0

# k1: how fast term frequency saturates; b: how much document length counts.
tuned = Workspace(filesystem=LocalFilesystem(base_path=base_path),
                  bm25={"k1": 1.5, "b": 0.75}, auto_index_paths=["docs", "support", "notes"])
tuned.init()
print("bm25 (k1=1.5, b=0.75) for 'token expired':")
show(tuned.search("token expired"))
assert tuned.search("token expired")[0].id == "/docs/auth/flow.md"
assert (tuned.bm25_index.k1, tuned.bm25_index.b) == (1.5, 0.75)  # type: ignore[union-attr]
print("ok")

"""Batch embedding (Mastra's ``batch: true`` and ``maxBatchSize``).

    embedder: Object.assign(async (texts) => (await embedMany({ model, values: texts })).embeddings,
                            { batch: true, maxBatchSize: 2048 })

A function marked ``batch = True`` takes a list of texts and returns their embeddings
in order; ``max_batch_size`` is the provider's limit, and bigger requests are split into
chunks of that size, sent concurrently. Without the mark, the function gets one text
per call, as before.

Run: python examples/workspace/batch_embedder.py
"""

from _sample import sample_workspace

import vectorport
from vectorport.embedders import HashingEmbedder
from vectorport.workspace import LocalFilesystem, Workspace

model = HashingEmbedder()
batches: list[int] = []


def embed_many(texts: list[str]) -> list[list[float]]:
    batches.append(len(texts))
    return [list(v) for v in model.embed(texts)]


embed_many.batch = True  # type: ignore[attr-defined]
embed_many.max_batch_size = 4  # type: ignore[attr-defined]  (OpenAI: 2048, Cohere: 96, ...)

root = sample_workspace()
for n in range(10):  # a few more files, so that the batches show
    (root / "docs" / f"changelog-{n}.md").write_text(f"Release 1.{n}: bug fixes and speedups.\n")

workspace = Workspace(filesystem=LocalFilesystem(base_path=root),
                      vector_store=vectorport.connect("memory://"), embedder=embed_many,
                      auto_index_paths=["docs"])
report = workspace.init()
print(f"indexed {len(report.indexed)} files in batches of {sorted(batches, reverse=True)}")
assert sum(batches) == 13 and max(batches) <= 4 and len(batches) == 4
top = workspace.search("release 1.7 bug fixes", top_k=1)[0]
print("best match:", top.id)
assert top.id == "/docs/changelog-7.md"
print("ok")

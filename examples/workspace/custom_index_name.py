"""A custom search index name (Mastra's ``searchIndexName``).

By default the name comes from the workspace id (itself derived from the folder, so a
re-opened workspace finds its index again). A custom name must be a valid SQL
identifier: a letter or underscore first, then letters, digits and underscores, at
most 63 characters. vectorport maps it onto a valid index name of every backend.

Run: python examples/workspace/custom_index_name.py
"""

from _sample import sample_workspace

import vectorport
from vectorport import ValidationError
from vectorport.embedders import HashingEmbedder
from vectorport.workspace import LocalFilesystem, Workspace

store = vectorport.connect("memory://")
filesystem = LocalFilesystem(base_path=sample_workspace())

default = Workspace(filesystem=filesystem, bm25=True, vector_store=store, embedder=HashingEmbedder())
print("default name:", default.search_index_name.startswith("workspace_"))

workspace = Workspace(filesystem=filesystem, bm25=True, vector_store=store,
                      embedder=HashingEmbedder(), search_index_name="my_workspace_vectors")
workspace.index("/docs/guide.md", "Content of the guide...")
print("search index:", workspace.search_index_name, "-> vectorport index:", workspace.vector_index_name)
assert store.list_indexes() == ["my_workspace_vectors"]

for bad in ("my-workspace", "1st_index", "x" * 64):
    try:
        Workspace(bm25=True, search_index_name=bad)
    except ValidationError as exc:
        print("refused:", str(exc).split(":")[0])
    else:
        raise AssertionError(f"{bad!r} was accepted")
mixed_case = Workspace(bm25=True, search_index_name="MyWorkspace", vector_store=store,
                       embedder=HashingEmbedder())
print("MyWorkspace ->", mixed_case.vector_index_name[:12] + "...")  # type: ignore[index]
print("ok")

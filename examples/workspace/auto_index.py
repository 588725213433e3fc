"""Automatic indexing (Mastra's ``autoIndexPaths`` with ``init()``).

Each entry is a folder (indexed recursively) or a glob pattern. ``init()`` reads the
matching files and indexes them, the path being the document id. With a durable
vector store, running it again embeds only new and changed files, and removes the
entries of deleted ones.

Run: python examples/workspace/auto_index.py
"""

from _sample import sample_workspace

import vectorport
from vectorport.embedders import HashingEmbedder
from vectorport.workspace import LocalFilesystem, Workspace

root = sample_workspace()
filesystem = LocalFilesystem(base_path=root)

# Folders
folders = Workspace(filesystem=filesystem, bm25=True, auto_index_paths=["docs", "support/faq"])
report = folders.init()
print("folders:", report.indexed)
assert "/docs/auth/flow.md" in report.indexed and "/notes/todo.txt" not in report.indexed

# Globs
globs = Workspace(filesystem=filesystem, bm25=True, auto_index_paths=["docs/**/*.md", "support/**/*.txt"])
print("globs:  ", globs.init().indexed)

# With a durable store (a temporary local:// file here): a second run is incremental.
url = f"local://{root / '.index' / 'vectors.db'}"


def open_workspace(store: vectorport.Store) -> Workspace:
    return Workspace(filesystem=filesystem, vector_store=store, embedder=HashingEmbedder(),
                     auto_index_paths=["docs", "support"])


with vectorport.connect(url) as store:
    print("first run: ", len(open_workspace(store).init().indexed), "indexed")
(root / "docs" / "api.md").write_text("# API reference\n\nEverything changed.\n")
(root / "support" / "faq" / "billing.txt").unlink()
with vectorport.connect(url) as store:
    report = open_workspace(store).init()
    print("second run:", report.indexed, "indexed,", len(report.unchanged), "unchanged,",
          report.removed_entries, "removed")
    assert report.indexed == ("/docs/api.md",) and report.removed_entries == 1
print("ok")

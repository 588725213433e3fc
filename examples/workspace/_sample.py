"""A small sample workspace folder, created in a temporary directory for each example.

    docs/guide.md            docs/api.md            docs/auth/flow.md
    support/faq/password.txt support/faq/billing.txt
    notes/todo.txt
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from vectorport.workspace import SearchResult

FILES = {
    "docs/guide.md": (
        "# Getting started\n\n"
        "Install the package, then create an index.\n"
        "Indexes hold vectors and their metadata.\n"
    ),
    "docs/api.md": (
        "# API reference\n\n"
        "connect(url) opens a store.\n"
        "Store.create_index(name, dimension) creates an index.\n"
        "Index.query(vector, top_k) returns the nearest records.\n"
    ),
    "docs/auth/flow.md": (
        "# Authentication flow\n\n"
        "The client sends credentials and receives an access token.\n"
        "Tokens expire after one hour; a refresh token renews them.\n"
        "A 401 error means the token expired.\n"
    ),
    "support/faq/password.txt": (
        "How do I reset my password?\n"
        "Open Settings, choose Security, then Reset password.\n"
        "A reset link is sent by email and expires after 30 minutes.\n"
    ),
    "support/faq/billing.txt": (
        "When am I billed?\n"
        "Invoices are sent on the first day of each month.\n"
    ),
    "notes/todo.txt": "Write the config.yaml loader.\nFix the 404 error on the status page.\n",
}


def sample_workspace() -> Path:
    """A fresh copy of the sample folder; removed when the example ends."""
    root = Path(tempfile.mkdtemp(prefix="workspace-example-"))
    atexit.register(shutil.rmtree, root, True)
    for name, content in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


def show(results: Sequence[SearchResult]) -> None:
    for r in results:
        lines = f"{r.line_range.start}-{r.line_range.end}" if r.line_range else "-"
        details = ""
        if r.score_details is not None:
            details = f"  (vector {r.score_details.vector:.3f}, bm25 {r.score_details.bm25:.3f})"
        print(f"  {r.score:.3f}  {r.id}  lines {lines}{details}")

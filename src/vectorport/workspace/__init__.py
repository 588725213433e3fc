"""Workspace search: BM25, vector and hybrid search over the files of a folder.

>>> from vectorport.workspace import Workspace
>>> ws = Workspace(bm25=True)
>>> ws.index("/docs/reset.md", "To reset your password, open Settings.")
>>> ws.index("/docs/billing.md", "Invoices are sent monthly.")
>>> [(r.id, r.score) for r in ws.search("password reset")]
[('/docs/reset.md', 1.0)]

See ``docs/workspace.md``.
"""

from vectorport.workspace.bm25 import BM25Index, bm25_settings
from vectorport.workspace.filesystem import LocalFilesystem
from vectorport.workspace.naming import (
    check_search_index_name,
    normalize_path,
    store_index_name,
)
from vectorport.workspace.progress import ProgressBar
from vectorport.workspace.results import LineRange, ScoreDetails, SearchResult, SyncReport
from vectorport.workspace.workspace import SearchMode, Workspace, resolve_embedder

__all__ = [
    "BM25Index",
    "LineRange",
    "LocalFilesystem",
    "ProgressBar",
    "ScoreDetails",
    "SearchMode",
    "SearchResult",
    "SyncReport",
    "Workspace",
    "bm25_settings",
    "check_search_index_name",
    "normalize_path",
    "resolve_embedder",
    "store_index_name",
]

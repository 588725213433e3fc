"""``vectorport workspace``: index a folder into a store, and search it.

``vectorport workspace index PATH`` embeds the files of ``PATH`` (all of them, or the
``--include`` folders and globs) into the store given by ``--url`` (default:
``$VECTORPORT_URL`` or the embedded local store), with progress (rate, time left) on
stderr. The default embedder is WordLlama when installed (offline, semantic), else the
lexical hashing embedder, with a one-line notice saying so.
Running it again embeds only new and changed files and removes the entries of
deleted ones. ``vectorport workspace search PATH QUERY`` brings the index up to date
the same way, builds the BM25 index, and searches (hybrid by default).

The main CLI registers this with ``add_parser(subparsers)``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from vectorport.chunks.splitting import Chunker
from vectorport.core.errors import ConfigError, ValidationError
from vectorport.core.store import Store, connect
from vectorport.embedders.base import Embedder
from vectorport.embedders.hashing import HashingEmbedder
from vectorport.terminal import Progress
from vectorport.workspace.results import SyncReport
from vectorport.workspace.workspace import Workspace

EMBEDDERS_HELP = ("auto (WordLlama when installed, else hashing), wordllama[:DIM], "
                  "hashing[:DIM], openai:MODEL (OPENAI_API_KEY; any OpenAI-compatible server "
                  "via --base-url or OPENAI_BASE_URL) or sentence-transformers:NAME")


def make_embedder(spec: str, *, base_url: str | None = None) -> Embedder:
    """``auto`` (WordLlama when installed, else hashing with a notice), ``wordllama`` or
    ``wordllama:DIM`` (offline, semantic), ``hashing`` or ``hashing:DIM`` (offline,
    lexical), ``openai:MODEL`` (any OpenAI-compatible endpoint: ``OPENAI_API_KEY``, and
    ``base_url`` or ``OPENAI_BASE_URL`` for vLLM, Ollama, LM Studio),
    ``sentence-transformers:NAME``."""
    kind, _, arg = spec.partition(":")
    if kind == "auto":
        from vectorport.embedders.wordllama import auto_embedder

        return auto_embedder(int(arg) if arg else None)
    if kind == "wordllama":
        from vectorport.embedders.wordllama import WordLlamaEmbedder

        return WordLlamaEmbedder(int(arg)) if arg else WordLlamaEmbedder()
    if kind == "hashing":
        return HashingEmbedder(int(arg)) if arg else HashingEmbedder()
    if kind == "openai" and arg:
        from vectorport.embedders.openai_http import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder(arg, base_url=base_url)
    if kind == "sentence-transformers" and arg:
        from vectorport.embedders.sbert import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(arg)
    raise ConfigError(f"unknown embedder {spec!r}: use {EMBEDDERS_HELP}")


def _folder(path: str) -> str:
    """The workspace folder, which must exist: a typo must not index nothing and succeed."""
    if not Path(path).exists():
        raise ValidationError(f"no such folder: {path}")
    if not Path(path).is_dir():
        raise ValidationError(f"not a folder: {path}")
    return path


def _workspace(args: argparse.Namespace, store: Store, *, bm25: bool) -> Workspace:
    chunker = Chunker(args.chunk_size, args.chunk_overlap) if args.chunk_size else None
    embedder = make_embedder(args.embedder, base_url=args.base_url)

    def build(model: Embedder) -> Workspace:
        return Workspace(_folder(args.path), bm25=bm25, vector_store=store, embedder=model,
                         search_index_name=args.index_name,
                         auto_index_paths=args.include or ["."], chunker=chunker,
                         reembed=getattr(args, "reembed", False))

    workspace = build(embedder)
    if args.embedder == "auto":
        # an index built before WordLlama was installed keeps its embedder: switching
        # silently would mix vectors of two models (and of two sizes) in one index
        name = workspace.vector_index_name
        existing = (store.describe_index(name).spec.dimension
                    if name is not None and store.has_index(name) else None)
        if existing is not None and existing != embedder.dimension:
            print(f"note: index {name!r} holds {existing}-dimension vectors; keeping the "
                  "hashing embedder it was built with (--embedder to choose)", file=sys.stderr)
            workspace = build(HashingEmbedder(existing))
    return workspace


def _sync(workspace: Workspace, quiet: bool) -> SyncReport:
    bar = None if quiet else Progress("indexing", "files")
    try:
        return workspace.sync(bar)
    finally:
        if bar is not None:
            bar.close()


def _summary(report: SyncReport, workspace: Workspace, store: Store) -> None:
    for path, reason in report.skipped:
        print(f"skipped {path}: {reason}", file=sys.stderr)
    print(f"indexed {len(report.indexed)}, unchanged {len(report.unchanged)}, "
          f"skipped {len(report.skipped)}, removed {report.removed_entries} entries "
          f"-> index {workspace.vector_index_name!r} on {store.backend}")


def cmd_index(args: argparse.Namespace) -> int:
    _folder(args.path)
    with connect(args.url) as store:
        workspace = _workspace(args, store, bm25=False)
        _summary(_sync(workspace, args.quiet), workspace, store)
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    _folder(args.path)
    with connect(args.url) as store:
        workspace = _workspace(args, store, bm25=True)
        _sync(workspace, quiet=True)
        results = workspace.search(args.query, top_k=args.top_k, mode=args.mode,
                                   min_score=args.min_score, vector_weight=args.vector_weight)
    rows: list[dict[str, Any]] = []
    for r in results:
        lines = f"{r.line_range.start}-{r.line_range.end}" if r.line_range else ""
        rows.append({"id": r.id, "score": round(r.score, 6), "lines": lines,
                     "content": r.content})
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        for row in rows:
            first = row["content"].strip().splitlines()[:1]
            print(f"{row['score']:.4f}  {row['id']}:{row['lines']}  {first[0][:80] if first else ''}")
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="the workspace folder")
    p.add_argument("--url", default=None,
                   help="store URL (default: $VECTORPORT_URL or the embedded local store)")
    p.add_argument("--include", action="append", metavar="PATTERN",
                   help="a folder, file or glob under PATH to index (repeatable; default: all)")
    p.add_argument("--index-name", default=None,
                   help="search index name (default: derived from the folder)")
    p.add_argument("--embedder", default="auto", help=EMBEDDERS_HELP)
    p.add_argument("--base-url", default=None,
                   help="OpenAI-compatible server for openai:MODEL, e.g. "
                        "http://127.0.0.1:11434/v1 (default: $OPENAI_BASE_URL or OpenAI)")
    p.add_argument("--chunk-size", type=int, default=0,
                   help="split files into chunks of this many characters (default: whole files)")
    p.add_argument("--chunk-overlap", type=int, default=0,
                   help="characters shared by consecutive chunks")


def add_parser(subparsers: Any) -> None:
    """Register ``workspace index`` and ``workspace search`` on the main CLI."""
    workspace = subparsers.add_parser("workspace", help="index a folder and search it")
    actions = workspace.add_subparsers(dest="workspace_action", required=True)

    p = actions.add_parser("index", help="embed the files of a folder into a store (progress bar)")
    _common(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--reembed", action="store_true",
                   help="the index was built by another embedder: embed everything again")
    p.set_defaults(func=cmd_index)

    p = actions.add_parser("search", help="search a folder (BM25, vector or hybrid)")
    _common(p)
    p.add_argument("query", help="what to search for")
    p.add_argument("--mode", choices=["bm25", "vector", "hybrid"], default=None,
                   help="how to rank (default: hybrid)")
    p.add_argument("--top-k", type=int, default=5, help="how many results")
    p.add_argument("--min-score", type=float, default=None, help="drop results scoring below")
    p.add_argument("--vector-weight", type=float, default=0.5,
                   help="share of the vector score in hybrid mode")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=cmd_search)

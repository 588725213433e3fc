"""``vectorport mcp URL --index NAME``: serve the agent tools of a store over MCP.

The main CLI registers this with ``add_parser(subparsers)``; the flags narrow what a
config file (``--config``) sets, never widen it (see :mod:`vectorport.mcp.config`).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from vectorport.core.errors import ConfigError
from vectorport.core.store import connect
from vectorport.extras import install_hint
from vectorport.mcp.config import (
    Scope,
    ServerConfig,
    from_file,
    parse_namespace,
    parse_scope_filter,
    read_config_file,
)
from vectorport.mcp.ingest import IngestSpec, ingest_folder
from vectorport.workspace.cli import make_embedder


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    base = (from_file(read_config_file(args.config), f"config file {args.config!r}")
            if args.config else ServerConfig(url="", indexes=()))
    url = args.url or base.url
    if not url:
        raise ConfigError("give the store URL (vectorport mcp URL …, or url = in --config)")
    flags = Scope(parse_namespace(args.namespace, "--namespace") if args.namespace else "",
                  parse_scope_filter(args.filter, "--filter") if args.filter else None)
    config = replace(base, url=url, indexes=tuple(dict.fromkeys([*base.indexes, *args.index])),
                     scope=base.scope.narrowed(flags))
    for key in ("embedder", "workspace", "top_k", "max_top_k"):
        value = getattr(args, key)
        if value is not None:
            config = replace(config, **{key: value})
    return config


def cmd_mcp(args: argparse.Namespace) -> int:
    try:
        from vectorport.mcp.server import serve  # the SDK is imported only when serving
    except ImportError as exc:
        raise ConfigError(f'vectorport mcp needs the MCP SDK ({exc.name} is missing): '
                          + install_hint("mcp")) from None

    config = config_from_args(args)
    specs = [IngestSpec.parse(text) for text in args.ingest]
    config = replace(config, indexes=tuple(dict.fromkeys(
        [*config.indexes, *(s.index for s in specs)])))
    embedder = make_embedder(config.embedder)  # once: a real model is slow to load
    with connect(config.url) as store:
        for spec in specs:
            ingest_folder(store, spec, embedder, namespace=config.scope.namespace)
        print(f"vectorport mcp: starting on {len(config.indexes)} index(es) of {store.backend} "
              f"over {args.transport} ({config.scope.describe()})", file=sys.stderr, flush=True)
        serve(store, config, args.transport, host=args.host, port=args.port,
              embedder=embedder)
    return 0


def add_parser(subparsers: Any) -> None:
    """Register ``vectorport mcp`` on the main CLI."""
    p = subparsers.add_parser(
        "mcp", help="serve the query, navigation and workspace tools over MCP "
                    '(pip install ".[mcp]")')
    p.add_argument("url", nargs="?", default=None, help="store URL (or url = in --config)")
    p.add_argument("--index", action="append", default=[], metavar="NAME",
                   help="an index to serve (repeatable)")
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                   help="stdio for a client that starts the server, http to listen")
    p.add_argument("--host", default="127.0.0.1", help="http only")
    p.add_argument("--port", type=int, default=8000, help="http only (path /mcp)")
    p.add_argument("--embedder", default=None,
                   help="hashing[:DIM] (default), openai:MODEL or sentence-transformers:NAME")
    p.add_argument("--namespace", default=None, help="serve this namespace only")
    p.add_argument("--filter", default=None, metavar="JSON",
                   help="a filter AND-ed under every query and navigation (tenant scope)")
    p.add_argument("--workspace", default=None, metavar="PATH",
                   help="also offer workspace_search over the files of this folder")
    p.add_argument("--ingest", action="append", default=[], metavar="INDEX=FOLDER",
                   help="first chunk and embed the text files of FOLDER into INDEX (created "
                        "if missing; for memory:// stores), then serve it (repeatable)")
    p.add_argument("--top-k", type=int, default=None, help="default top_k (default 10)")
    p.add_argument("--max-top-k", type=int, default=None,
                   help="the largest top_k a client may ask (default 100)")
    p.add_argument("--config", default=None, metavar="TOML",
                   help="a config file with an [mcp] table; flags narrow it")
    p.set_defaults(func=cmd_mcp)

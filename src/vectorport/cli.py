"""The ``vectorport`` command: backends, quickstart, emulators, copy/verify/export/import."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from vectorport.core.errors import VectorportError
from vectorport.core.plugin import default_registry
from vectorport.core.store import connect
from vectorport.explain_cli import add_parser as add_explain_parser
from vectorport.mcp.cli import add_parser as add_mcp_parser
from vectorport.serve import add_parser as add_serve_parser
from vectorport.transfer.cli import add_parsers as add_transfer_parsers
from vectorport.transfer.cli import configure_logging
from vectorport.workspace.cli import add_parser as add_workspace_parser

_CAPABILITY_COLUMNS = ("metrics", "sparse", "hybrid", "hints", "consistency", "patch",
                       "list_ids", "max_top_k", "max_batch_size")


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cmd_backends(args: argparse.Namespace) -> int:
    registry = default_registry()
    rows = [["backend", "schemes", "installed", *_CAPABILITY_COLUMNS]]
    for name, entry in sorted(registry.entries.items()):
        described = entry.capabilities.describe()
        installed = "yes" if entry.installed else f"no: pip install \".[{entry.extra}]\""
        rows.append([name, " ".join(f"{s}://" for s in entry.schemes), installed,
                     *(described[c] for c in _CAPABILITY_COLUMNS)])
    print(_table(rows))
    for name, operators in sorted(
        (n, " ".join(sorted(e.capabilities.filter_operators))) for n, e in registry.entries.items()
    ):
        print(f"\n{name} filter operators: {operators}")
    for name, error in sorted(registry.broken.items()):
        print(f"\nplugin {name!r} failed to load: {error}", file=sys.stderr)
    return 0


def cmd_quickstart(args: argparse.Namespace) -> int:
    from vectorport.quickstart import run

    with connect(args.url) as store:
        run(store)
    return 0


def cmd_emulator(args: argparse.Namespace) -> int:
    from vectorport.testing.emulators import EMULATORS
    from vectorport.testing.emulators.http import Faults

    module = importlib.import_module(EMULATORS[args.name])
    faults = Faults(error_rate=args.error_rate, latency_seconds=args.latency,
                    lag_seconds=args.lag, drop_rate=args.drop_rate, stall=args.stall)
    print(f"{args.name} emulator on http://{args.host}:{args.port} (Ctrl-C to stop)", flush=True)
    module.serve(args.host, args.port, faults, api_key=os.environ.get(args.api_key_env) or
                 "emulator-key")
    return 0


def cmd_matrix(args: argparse.Namespace) -> int:
    from pathlib import Path

    from vectorport.matrix import run_matrix

    root = Path(args.root)
    paths = args.paths or sorted(
        str(p) for p in [*root.glob("tests/backends/*/test_conformance.py"),
                         *root.glob("tests/backends/*/test_protocols.py"),
                         *root.glob("examples/*/tests/test_conformance*.py")]
    )
    return run_matrix(paths, root / args.output, root / "README.md", args.pytest_args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vectorport", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("backends", help="list installed adapters, URL schemes, capabilities")
    p.set_defaults(func=cmd_backends)

    p = sub.add_parser("quickstart", help="run the quickstart (embedded default store)")
    p.add_argument("--url", default=None,
                   help="store URL (default: $VECTORPORT_URL or the embedded local store)")
    p.set_defaults(func=cmd_quickstart)

    p = sub.add_parser("emulator", help="serve a hosted service's API emulator locally")
    p.add_argument("name", choices=["pinecone", "turbopuffer"])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5080)
    p.add_argument("--error-rate", type=float, default=0.0, help="share of 429/503 answers")
    p.add_argument("--latency", type=float, default=0.0, help="seconds added to each request")
    p.add_argument("--lag", type=float, default=0.0,
                   help="seconds before a write becomes visible to eventual reads")
    p.add_argument("--drop-rate", type=float, default=0.0,
                   help="share of requests handled (writes applied) but never answered: "
                        "the connection closes instead")
    p.add_argument("--stall", action="store_true",
                   help="accept connections and read requests, never answer")
    p.add_argument("--api-key-env", default="VECTORPORT_EMULATOR_API_KEY",
                   help="environment variable holding the API key the emulator accepts "
                        "(default key when unset: emulator-key)")
    p.set_defaults(func=cmd_emulator)

    p = sub.add_parser("matrix", help="run the conformance suite on every locally runnable "
                       "backend and write docs/capabilities.md (from a checkout)")
    p.add_argument("paths", nargs="*", help="conformance test files (default: all bindings)")
    p.add_argument("--root", default=".", help="the repository checkout")
    p.add_argument("--output", default="docs/capabilities.md")
    p.add_argument("--pytest-args", nargs=argparse.REMAINDER, default=[])
    p.set_defaults(func=cmd_matrix)

    add_workspace_parser(sub)
    add_transfer_parsers(sub)
    add_mcp_parser(sub)
    add_explain_parser(sub)
    add_serve_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in ("copy", "export", "import"):
        configure_logging()
    try:
        code: int = args.func(args)
    except VectorportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())

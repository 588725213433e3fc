"""The ``vectorport`` command: check a server, list backends, run the quickstart and the
emulators, index a folder, move indexes (copy/verify/export/import), serve MCP."""

from __future__ import annotations

import argparse
import errno
import importlib
import importlib.metadata
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from vectorport.core.errors import VectorportError
from vectorport.core.plugin import default_registry
from vectorport.core.store import connect
from vectorport.explain_cli import add_parser as add_explain_parser
from vectorport.mcp.cli import add_parser as add_mcp_parser
from vectorport.serve import add_parser as add_serve_parser
from vectorport.terminal import table as fit_table
from vectorport.transfer.cli import add_parsers as add_transfer_parsers
from vectorport.transfer.cli import configure_logging
from vectorport.workspace.cli import add_parser as add_workspace_parser

_CAPABILITY_COLUMNS = ("metrics", "sparse", "hybrid", "hints", "consistency", "patch",
                       "list_ids", "max_top_k", "max_batch_size")


EMULATOR_PORTS = {"pinecone": 5080, "turbopuffer": 5081}
"""Default ports, distinct so that both emulators run side by side."""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Shows each option's default, except where there is none to show (``None``, a
    flag: ``--quiet``'s ``False``, ``--no-verify``'s ``True``) or the help already says
    it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        # a flag (no argument: --quiet, --no-verify) has only the value of its absence,
        # which "(default: True)" after "--no-verify" would misstate
        if (default is None or default is argparse.SUPPRESS or action.nargs == 0
                or default == [] or "default" in text):
            return text
        return super()._get_help_string(action) or text


class Parser(argparse.ArgumentParser):
    """Every parser and subparser of the command uses :class:`HelpFormatter`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def version() -> str:
    try:
        return importlib.metadata.version("vectorport")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def cmd_backends(args: argparse.Namespace) -> int:
    registry = default_registry()
    if args.json:
        out: dict[str, Any] = {"backends": {}, "broken_plugins": dict(sorted(
            (n, str(e)) for n, e in registry.broken.items()))}
        for name, entry in sorted(registry.entries.items()):
            out["backends"][name] = {
                "schemes": list(entry.schemes), "installed": entry.installed,
                "extra": entry.extra, "capabilities": entry.capabilities.describe(),
                "filter_operators": sorted(entry.capabilities.filter_operators)}
        print(json.dumps(out, indent=2, sort_keys=True))
        return 0
    rows = [["backend", "schemes", "installed", *_CAPABILITY_COLUMNS]]
    for name, entry in sorted(registry.entries.items()):
        described = entry.capabilities.describe()
        installed = "yes" if entry.installed else f"no: pip install \".[{entry.extra}]\""
        rows.append([name, " ".join(f"{s}://" for s in entry.schemes), installed,
                     *(described[c] for c in _CAPABILITY_COLUMNS)])
    print(fit_table(rows))
    for name, operators in sorted(
        (n, " ".join(sorted(e.capabilities.filter_operators))) for n, e in registry.entries.items()
    ):
        print(f"\n{name} filter operators: {operators}")
    for name, error in sorted(registry.broken.items()):
        print(f"\nplugin {name!r} failed to load: {error}", file=sys.stderr)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from vectorport.check import run_check

    try:
        result = run_check(args.url, quick=args.quick, progress=not args.no_progress,
                           pytest_args=args.pytest_args, verbose=args.verbose)
    except KeyboardInterrupt:  # outside the suite's run; run_check has swept already
        print("interrupted: the check's temporary indexes were deleted", file=sys.stderr)
        return 130
    rows = result.rows()
    if args.json:
        print(json.dumps({"url": result.url, "exit_code": result.exit_code,
                          "passed": result.passed, "failed": result.failed,
                          "skipped": result.skipped, "features": dict(rows),
                          "failures": [{"test": t, "error": e} for t, e in result.failures],
                          "leftover_indexes_deleted": result.leftover}, indent=2))
    else:
        print(f"vectorport check {result.url}" + (" (quick)" if args.quick else ""))
        if rows:
            print(fit_table([["feature", "result"], *[list(r) for r in rows]]))
        print(f"\n{result.passed} passed, {result.failed} failed, {result.skipped} skipped")
        if args.quick and any(cell.startswith("not run") for _, cell in rows):
            print("rows 'not run' are proven by the full check (without --quick)")
        for test, error in result.failures:
            print(f"FAIL {test}: {error}")
        if result.leftover:
            print(f"deleted {len(result.leftover)} index(es) the run left behind: "
                  + ", ".join(result.leftover), file=sys.stderr)
        else:
            print("no index left behind")
    if result.binding is None:
        print("error: the suite did not run against this URL (rerun with --verbose)",
              file=sys.stderr)
        return 1
    return 1 if result.exit_code or result.leftover else 0


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
    port = args.port if args.port is not None else EMULATOR_PORTS[args.name]
    try:
        module.serve(args.host, port, faults, api_key=os.environ.get(args.api_key_env) or
                     "emulator-key")
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            print(f"error: port {port} on {args.host} is already in use (another emulator?); "
                  "pick another with --port, or --port 0 for a free one", file=sys.stderr)
            return 2
        print(f"error: cannot serve on {args.host}:{port}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
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
    if args.html_only:
        from vectorport.matrix_html import write_html_from_markdown

        write_html_from_markdown(root / args.output)
        return 0
    return run_matrix(paths, root / args.output, root / "README.md", args.pytest_args)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="vectorport", description="One API in front of many vector "
                    "databases. Start with: vectorport quickstart; vectorport check URL.")
    parser.add_argument("--version", action="version", version=f"vectorport {version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser,
                                metavar="COMMAND")

    p = sub.add_parser("check", help="run the conformance suite against your server or service "
                       "and print what it proved",
                       description="Run vectorport's conformance suite against URL, inside "
                       "temporary uniquely named indexes (vp_<tag>_<hex>) that are always "
                       "deleted, and print a capability table of what was proven. Example: "
                       "vectorport check 'pinecone://?api_key_env=PINECONE_API_KEY' --quick")
    p.add_argument("url", help="the store URL to check (credentials through *_env options)")
    p.add_argument("--quick", action="store_true",
                   help="a subset creating few indexes: under a minute on a hosted service")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    p.add_argument("--verbose", action="store_true", help="show pytest's own output")
    p.add_argument("--pytest-args", nargs=argparse.REMAINDER, default=[],
                   help="further pytest arguments (everything after this flag)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("backends", help="list installed adapters, URL schemes, capabilities")
    p.add_argument("--json", action="store_true", help="print the registry as JSON")
    p.set_defaults(func=cmd_backends)

    p = sub.add_parser("quickstart", help="run the quickstart (embedded default store)")
    p.add_argument("--url", default=None,
                   help="store URL (default: $VECTORPORT_URL or the embedded local store)")
    p.set_defaults(func=cmd_quickstart)

    p = sub.add_parser("emulator", help="serve a hosted service's API emulator locally "
                       "(pinecone on port 5080, turbopuffer on 5081)")
    p.add_argument("name", choices=sorted(EMULATOR_PORTS), help="which service to emulate")
    p.add_argument("--host", default="127.0.0.1", help="address to bind")
    p.add_argument("--port", type=int, default=None,
                   help="port to bind (default: pinecone 5080, turbopuffer 5081; 0: a free one)")
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
                        "(when unset the key is: emulator-key)")
    p.set_defaults(func=cmd_emulator)

    # maintainers' command (`nox -s matrix`): users run `vectorport check URL` instead
    p = sub.add_parser("matrix", help="maintainers only: regenerate docs/capabilities.* from a "
                       "checkout (users: vectorport check URL)",
                       description="Maintainers only (nox -s matrix): run the conformance suite "
                       "on every locally runnable backend of a checkout and write "
                       "docs/capabilities.md, docs/capabilities.html and README's matrix.")
    p.add_argument("paths", nargs="*", help="conformance test files (default: all bindings)")
    p.add_argument("--root", default=".", help="the repository checkout")
    p.add_argument("--output", default="docs/capabilities.md", help="the markdown page to write")
    p.add_argument("--html-only", action="store_true",
                   help="only render docs/capabilities.html from the existing markdown page")
    p.add_argument("--pytest-args", nargs=argparse.REMAINDER, default=[],
                   help="further pytest arguments (everything after this flag)")
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
    except BrokenPipeError:  # `vectorport backends | head`: the reader left, not an error
        sys.stderr.close()
        return 0
    except VectorportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())

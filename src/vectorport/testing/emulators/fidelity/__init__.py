"""Run a vendor's own SDK test suite against its vectorport emulator.

Pinecone's and turbopuffer's SDK repositories hold the tests they run against their live
services. This runner starts the emulator on a free local port, points the tests at it
the way the vendors do (environment variables their conftest files read), deselects the
tests listed in ``out_of_scope.toml`` (features the emulators declare they do not
implement) and runs the rest with pytest::

    python -m vectorport.testing.emulators.fidelity pinecone PATH/TO/pinecone-checkout
    python -m vectorport.testing.emulators.fidelity turbopuffer PATH/TO/turbopuffer-checkout

or ``nox -s emulator-fidelity -- pinecone=PATH turbopuffer=PATH``. The vendor checkout is
not part of this repository (nor fetched by it): pass the path of one, at the tag of the
installed SDK. The exit status is pytest's.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

OUT_OF_SCOPE = Path(__file__).with_name("out_of_scope.toml")
ENV_PATHS = {"pinecone": "VECTORPORT_PINECONE_SDK_TESTS",
             "turbopuffer": "VECTORPORT_TURBOPUFFER_SDK_TESTS"}
"""Environment variables naming a vendor checkout, when no path is given."""


@dataclass(frozen=True)
class Suite:
    vendor: str
    files: tuple[str, ...]
    out_of_scope: tuple[tuple[str, str], ...]  # (node-id pattern, reason): deselected
    expected_failures: tuple[tuple[str, str], ...] = ()  # run, must fail (strict xfail)


def load_suite(vendor: str, path: Path = OUT_OF_SCOPE) -> Suite:
    table = tomllib.loads(path.read_text())[vendor]
    entries = table.get("out_of_scope", [])
    return Suite(
        vendor, tuple(table["files"]),
        tuple((e["pattern"], e["reason"]) for e in entries if not e.get("xfail")),
        tuple((e["pattern"], e["reason"]) for e in entries if e.get("xfail")),
    )


def checkout_version(root: Path) -> str | None:
    """The SDK version a vendor checkout (a git tree or an sdist) is at."""
    for name in ("PKG-INFO", "pyproject.toml"):
        candidate = root / name
        if candidate.is_file():
            found = re.search(r'(?m)^(?:Version: |version = ")([^"\s]+)', candidate.read_text())
            if found:
                return found.group(1)
    return None


@contextmanager
def _emulator(vendor: str) -> Iterator[dict[str, str]]:
    """The running emulator, as the environment the vendor's tests read."""
    if vendor == "pinecone":
        from vectorport.testing.emulators import pinecone

        with pinecone.running() as server:
            yield {"PINECONE_API_KEY": "emulator-key", "PINECONE_CONTROLLER_HOST": server.url}
    else:
        from vectorport.testing.emulators import turbopuffer

        with turbopuffer.running() as server:
            yield {"TURBOPUFFER_API_KEY": "emulator-key", "TURBOPUFFER_BASE_URL": server.url}


def run(vendor: str, root: Path, pytest_args: list[str]) -> int:
    suite = load_suite(vendor)
    wanted = checkout_version(root)
    installed = importlib.metadata.version(vendor)
    print(f"{vendor}: vendor tests at {wanted or 'an unknown version'} from {root}; "
          f"installed SDK {installed}", flush=True)
    if wanted and wanted != installed:
        print(f"WARNING: the checkout's tests are for {vendor} {wanted}, the installed SDK is "
              f"{installed}; results measure both the emulator and the version drift",
              flush=True)
    files = [f for f in suite.files if (root / f).exists()]
    if not files:
        print(f"no vendor test files found under {root} (expected {', '.join(suite.files)})")
        return 2
    with _emulator(vendor) as env:
        # A region would make the SDK build a hosted URL around the base URL.
        inherited = {k: v for k, v in os.environ.items() if k != "TURBOPUFFER_REGION"}
        environment = {**inherited, **env,
                       "VECTORPORT_FIDELITY_VENDOR": vendor,
                       "VECTORPORT_FIDELITY_OUT_OF_SCOPE": str(OUT_OF_SCOPE)}
        # The vendors' own pytest options (xdist, 5 s timeouts meant for mocks) are
        # replaced: one process, a generous per-test timeout, our deselection plugin.
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                   "-p", "vectorport.testing.emulators.fidelity.plugin",
                   "-o", "addopts=", "-q", "-rfE", *files, *pytest_args]
        return subprocess.call(command, cwd=root, env=environment)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vectorport.testing.emulators.fidelity",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("vendor", choices=sorted(ENV_PATHS))
    parser.add_argument("checkout", nargs="?", help=f"the vendor SDK checkout "
                        f"(default: ${ENV_PATHS['pinecone']} / ${ENV_PATHS['turbopuffer']})")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    from vectorport.extras import MissingExtraError, require_testing

    try:
        require_testing("running the vendors' SDK tests")
    except MissingExtraError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    raw = args.checkout or os.environ.get(ENV_PATHS[args.vendor])
    if not raw or not Path(raw).is_dir():
        print(f"No {args.vendor} SDK test checkout: pass its path, or set "
              f"{ENV_PATHS[args.vendor]}. This repository does not ship or fetch vendor "
              f"code; check out the SDK's public repository at the installed version's "
              f"tag (or unpack its sdist) and point at it.", file=sys.stderr)
        return 2
    return run(args.vendor, Path(raw).resolve(), args.pytest_args)


__all__ = ["OUT_OF_SCOPE", "Suite", "checkout_version", "load_suite", "main", "run"]

"""Developer sessions: ``nox -s tests``, ``lint``, ``typecheck``, ``bench``, ``conformance-<b>``.

Every session installs the project into its own virtualenv, so each one proves that the
packaging (extras, entry points) works from scratch.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True



def _backends() -> list[str]:
    """The backends with a conformance session: those whose plugin entry names a test
    launcher (and that have a binding under tests/). Read from the registry when
    vectorport is importable where nox runs; otherwise from the entry points this
    project declares in pyproject.toml, the registry's source for the built-ins."""
    try:
        from vectorport import default_registry

        names = [n for n, e in default_registry().entries.items() if e.test_launcher]
    except ImportError:
        with open("pyproject.toml", "rb") as file:
            names = list(tomllib.load(file)["project"]["entry-points"]["vectorport"])
    return sorted(n for n in names if Path(f"tests/backends/{n}/test_conformance.py").exists())


BACKENDS = _backends()
TEST_INSTALL = ("-e", ".[all,test]", "-e", "examples/third_party_adapter")


@nox.session
def tests(session: nox.Session) -> None:
    """The whole suite, starting every local backend itself (the README's command)."""
    session.install(*TEST_INSTALL)
    session.run("pytest", *session.posargs)


def _conformance_session(backend: str) -> None:
    def run(session: nox.Session) -> None:
        session.install(*TEST_INSTALL)
        session.run("pytest", f"tests/backends/{backend}/test_conformance.py", *session.posargs)

    run.__doc__ = f"The conformance suite on {backend}."
    nox.session(name=f"conformance-{backend}")(run)


for _backend in BACKENDS:
    _conformance_session(_backend)


@nox.session(name="milvus_legacy", python=False)
def milvus_legacy(session: nox.Session) -> None:
    """The milvus tests on the Milvus C++ engine line (milvus-lite 2.5 + pymilvus 2.6),
    with the capabilities that line has; the script manages its own virtualenv."""
    session.run("bash", "tests/backends/milvus/legacy_session.sh", *session.posargs, external=True)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff>=0.6")
    session.run("ruff", "check", "src", "tests", "examples", "benchmarks", "noxfile.py")


@nox.session
def typecheck(session: nox.Session) -> None:
    session.install("-e", ".[all]", "mypy>=1.11")
    session.run("mypy", "--strict", "src")


@nox.session
def matrix(session: nox.Session) -> None:
    """Regenerate docs/capabilities.md and the README's matrix from a conformance run."""
    session.install(*TEST_INSTALL)
    session.run("vectorport", "matrix", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks as ratios against baselines in the same run; writes BENCHMARKS.md.

    LangChain and LlamaIndex run in a virtualenv of their own (created on first use
    under .bench/), since installing them here would downgrade pgvector."""
    session.install("-e", ".[bench]")
    session.run("python", "-m", "benchmarks", *session.posargs)



def _fidelity_checkouts(posargs: list[str]) -> dict[str, str]:
    import os

    found = {vendor: os.environ.get(f"VECTORPORT_{vendor.upper()}_SDK_TESTS", "")
             for vendor in ("pinecone", "turbopuffer")}
    for arg in posargs:
        vendor, _, path = arg.partition("=")
        if vendor not in found or not path:
            raise SystemExit(f"emulator-fidelity: expected pinecone=PATH or turbopuffer=PATH, "
                             f"got {arg!r}")
        found[vendor] = path
    return {vendor: path for vendor, path in found.items() if path}


@nox.session(name="emulator-fidelity")
def emulator_fidelity(session: nox.Session) -> None:
    """The vendors' own SDK tests against the emulators (docs/emulators/fidelity.md).

    Posargs ``pinecone=PATH`` and/or ``turbopuffer=PATH`` (or the environment variables
    VECTORPORT_PINECONE_SDK_TESTS / VECTORPORT_TURBOPUFFER_SDK_TESTS) name a checkout of
    the SDK's public repository at a release tag, or its unpacked sdist: CI has no
    network to fetch one, and this repository ships no vendor code. The SDK installed is
    the checkout's own version, so that its tests match it."""
    import re
    from pathlib import Path

    checkouts = _fidelity_checkouts(session.posargs)
    if not checkouts:
        session.skip("no vendor SDK test checkout given: pass pinecone=PATH and/or "
                     "turbopuffer=PATH (or set VECTORPORT_PINECONE_SDK_TESTS / "
                     "VECTORPORT_TURBOPUFFER_SDK_TESTS); nothing is fetched")
    session.install("-e", ".[pinecone,turbopuffer]", "pytest", "pytest-asyncio",
                    "pytest-timeout", "pytest-anyio", "anyio", "python-dotenv", "respx",
                    "dirty-equals", "time-machine", "numpy", "pytest-xdist")
    failed = []
    for vendor, path in checkouts.items():
        root = Path(path)
        text = "".join(p.read_text() for p in (root / "PKG-INFO", root / "pyproject.toml")
                       if p.is_file())
        version = re.search(r'(?m)^(?:Version: |version = ")([^"\s]+)', text)
        if version:
            session.install(f"{vendor}=={version.group(1)}")
        try:
            session.run("python", "-m", "vectorport.testing.emulators.fidelity", vendor,
                        str(root.resolve()), "--timeout", "60")
        except Exception:  # nox raises on a non-zero exit; run the other vendor anyway
            failed.append(vendor)
    if failed:
        session.error(f"vendor tests failed against the emulators: {', '.join(failed)}")

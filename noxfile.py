"""Developer sessions: ``nox -s tests``, ``lint``, ``typecheck``, ``bench``, ``conformance-<b>``.

Every session installs the project into its own virtualenv, so each one proves that the
packaging (extras, entry points) works from scratch.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True

BACKENDS = ["local", "pgvector", "chroma", "milvus", "pinecone", "turbopuffer", "qdrant"]
TEST_INSTALL = ("-e", ".[all,test]", "-e", "examples/third_party_adapter")


@nox.session
def tests(session: nox.Session) -> None:
    """The whole suite, starting every local backend itself (the README's command)."""
    session.install(*TEST_INSTALL)
    session.run("pytest", *session.posargs)


def _conformance_session(backend: str) -> None:
    def run(session: nox.Session) -> None:
        session.install(*TEST_INSTALL)
        session.run("pytest", f"tests/test_conformance_{backend}.py", *session.posargs)

    run.__doc__ = f"The conformance suite on {backend}."
    nox.session(name=f"conformance-{backend}")(run)


for _backend in BACKENDS:
    _conformance_session(_backend)


@nox.session(name="milvus_legacy", python=False)
def milvus_legacy(session: nox.Session) -> None:
    """The milvus tests on the Milvus C++ engine line (milvus-lite 2.5 + pymilvus 2.6),
    with the capabilities that line has; the script manages its own virtualenv."""
    session.run("bash", "tests/milvus_legacy_session.sh", *session.posargs, external=True)


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

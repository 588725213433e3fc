"""Developer sessions: ``nox -s tests``, ``lint``, ``typecheck``, ``bench``, ``conformance-<b>``,
``lowest-<b>`` (a backend's suite on the lowest SDK versions allowed).

Every session installs the project into its own virtualenv, so each one proves that the
packaging (extras, entry points) works from scratch.
"""

from __future__ import annotations

import os
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


# The extras whose SDKs each backend's conformance suite runs on, for `lowest-<backend>`.
LOWEST_EXTRAS = {
    "chroma": ("chroma",),
    "lancedb": ("lancedb",),
    "milvus": ("milvus-lite",),
    "pgvector": ("pgvector-binary", "pgserver"),
    "pinecone": ("pinecone",),
    "qdrant": ("qdrant",),
    "turbopuffer": ("turbopuffer",),
}
LOWEST_TOOLS = ("pytest>=8", "pytest-asyncio>=0.24", "hypothesis>=6.100")


def lowest_pins(extras: tuple[str, ...]) -> list[str]:
    """Every requirement of ``extras`` (following ``vectorport[...]`` references) pinned
    to its lower bound: ``pinecone>=10.1,<11`` → ``pinecone==10.1``. pip has no
    lowest-resolution mode, and uv's ``--resolution lowest-direct`` would also lower the
    test tools, so the pins are made here from pyproject.toml, the one source of bounds."""
    import re

    with open("pyproject.toml", "rb") as file:
        table = tomllib.load(file)["project"]["optional-dependencies"]
    from packaging.version import Version

    found_bounds: dict[str, tuple[str, set[str], str | None]] = {}
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen or extra not in table:
            continue
        seen.add(extra)
        for line in table[extra]:
            nested = re.fullmatch(r"vectorport\[([^\]]+)\]", line)
            if nested:
                todo.extend(nested.group(1).split(","))
                continue
            found = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*(.*)", line)
            assert found, line
            name, spec = found.group(1), found.group(3)
            features = {f.strip() for f in (found.group(2) or "[]")[1:-1].split(",") if f.strip()}
            bound = re.search(r">=\s*([^,\s]+)", spec)
            lower = bound.group(1) if bound else None
            _, had, before = found_bounds.get(name.lower(), (name, set(), None))
            if before is not None and (lower is None or Version(before) > Version(lower)):
                lower = before  # two extras name it: the higher lower bound holds for both
            found_bounds[name.lower()] = (name, had | features, lower)
    pins = []
    for name, features, lower in found_bounds.values():
        extra_part = f"[{','.join(sorted(features))}]" if features else ""
        pins.append(f"{name}{extra_part}=={lower}" if lower else f"{name}{extra_part}")
    return sorted(pins)


def _lowest_session(backend: str) -> None:
    def run(session: nox.Session) -> None:
        pins = lowest_pins(LOWEST_EXTRAS[backend])
        session.install("-e", ".", *LOWEST_TOOLS, *pins)
        session.run("pytest", f"tests/test_conformance_{backend}.py", "-x", "-q",
                    "-p", "no:cacheprovider", *session.posargs)

    run.__doc__ = (f"The conformance suite on {backend} with the lowest SDK versions "
                   "pyproject.toml allows (posargs go to pytest, e.g. -k 'score').")
    nox.session(name=f"lowest-{backend}", venv_backend="uv|virtualenv")(run)


for _backend in BACKENDS:
    if _backend in LOWEST_EXTRAS and lowest_pins(LOWEST_EXTRAS[_backend]):
        _lowest_session(_backend)


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

    LangChain and LlamaIndex run in a virtualenv of their own (under .bench/), since
    installing them here would downgrade pgvector; it is made here, with the other
    installs, so that the benchmark's own run time does not include a pip install."""
    session.install("-e", ".[bench]")
    chosen = os.environ.get("VECTORPORT_BENCH_COMPETITORS_PYTHON") or any(
        arg.startswith("--competitors-python") for arg in session.posargs)
    if not chosen and "--skip-slow-baselines" not in session.posargs:
        session.run("python", "-m", "benchmarks.competitors")
    session.run("python", "-m", "benchmarks", *session.posargs)



def _fidelity_checkouts(posargs: list[str]) -> dict[str, str]:
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
    # the testing extra brings pytest, pytest-asyncio and hypothesis (the runner needs them)
    session.install("-e", ".[pinecone,turbopuffer,testing]", "pytest-timeout", "pytest-anyio",
                    "anyio", "python-dotenv", "respx", "dirty-equals", "time-machine", "numpy",
                    "pytest-xdist")
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

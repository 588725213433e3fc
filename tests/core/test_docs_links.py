"""Every relative link in the README and the docs leads somewhere: to a file of the
checkout and, where it names one, to a heading of that file (as GitHub makes anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#+\s+(.*?)\s*$", re.M)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {anchor(h) for h in _HEADING.findall(_FENCE.sub("", path.read_text()))}


def links(path: Path) -> list[str]:
    return [link for link in _LINK.findall(_FENCE.sub("", path.read_text()))
            if not re.match(r"^[a-z][a-z0-9+.-]*:", link)]  # http:, mailto: …


def test_anchors_are_githubs() -> None:
    assert anchor("Bulk loads: `upsert_bulk`") == "bulk-loads-upsert_bulk"
    assert anchor("What a call costs in place") == "what-a-call-costs-in-place"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    for link in links(doc):
        target, _, fragment = link.partition("#")
        path = (doc.parent / target).resolve() if target else doc
        if not path.exists():
            broken.append(f"{link}: no such file")
        elif fragment and path.suffix == ".md" and fragment not in anchors(path):
            broken.append(f"{link}: no such heading")
    assert not broken, broken

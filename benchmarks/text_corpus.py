"""A corpus of real text available offline: the Python standard library's docstrings.

The docstrings are read from the standard library's source files with :mod:`ast`
(``ast.get_docstring`` of every module, class and function), not by importing the
modules as ``pydoc`` does: importing all of them has side effects (``antigravity``
opens a browser, ``this`` prints, GUI toolkits look for a display) and takes far
longer. Each docstring is cut into paragraphs and those into sentences; sentences of 30
to 600 characters, whitespace-normalised and de-duplicated, are the chunks (whole
paragraphs gave only about 12,000 on Python 3.11), in a fixed order (sorted file paths,
source order), so every run on one Python version gets the same corpus. Test suites
(``test``, ``idlelib/idle_test``, ``lib2to3/tests``, …) and ``site-packages`` are left
out: they repeat one another's docstrings.

The queries are chunks held out of the corpus (every ``len // queries``-th), so they
come from the same distribution as the data, as the Gaussian section's queries do.
"""

from __future__ import annotations

import ast
import re
import sysconfig
import warnings
from functools import lru_cache
from pathlib import Path

MIN_CHARS = 30
MAX_CHARS = 600
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_SKIP_PARTS = {"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__"}
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _docstrings(path: Path) -> list[str]:
    try:
        with warnings.catch_warnings():  # invalid escape sequences in old sources
            warnings.simplefilter("ignore")
            tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED):
            text = ast.get_docstring(node)
            if text:
                found.append(text)
    return found


@lru_cache(maxsize=2)
def stdlib_chunks(limit: int) -> tuple[str, ...]:
    """Up to ``limit`` distinct docstring sentences of the standard library."""
    root = Path(sysconfig.get_paths()["stdlib"])
    seen: dict[str, None] = {}
    for path in sorted(root.rglob("*.py")):
        if _SKIP_PARTS & set(path.relative_to(root).parts):
            continue
        for doc in _docstrings(path):
            for paragraph in doc.split("\n\n"):
                for sentence in _SENTENCE_END.split(_SPACE.sub(" ", paragraph).strip()):
                    if MIN_CHARS <= len(sentence) <= MAX_CHARS:
                        seen.setdefault(sentence)
                        if len(seen) >= limit:
                            return tuple(seen)
    return tuple(seen)


def split(chunks: tuple[str, ...], queries: int) -> tuple[list[str], list[str]]:
    """The corpus and the held-out queries (every ``len // queries``-th chunk)."""
    step = max(2, len(chunks) // queries)
    held = [c for i, c in enumerate(chunks) if i % step == step - 1][:queries]
    held_set = set(held)
    return [c for c in chunks if c not in held_set], held


__all__ = ["split", "stdlib_chunks"]

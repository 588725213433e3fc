"""Cutting a text into chunks with half-open character offsets.

Offsets are always in characters of the source text (``text[start:end]`` is the chunk),
whether windows are counted in characters or in tokens, so navigation means the same
for every chunker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, TypeAlias

from vectorport.core.errors import ValidationError

ChunkUnit: TypeAlias = Literal["chars", "tokens"]

TOKEN_RE = re.compile(r"\w+|[^\w\s]")
"""A simple tokenizer: runs of word characters, and each other non-space character."""


@dataclass(frozen=True, slots=True)
class TextSpan:
    """One chunk of a text: its position among the chunks and its ``[start, end)``."""

    index: int
    start: int
    end: int
    text: str


def token_spans(text: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` of every token of ``text``."""
    return [m.span() for m in TOKEN_RE.finditer(text)]


def _windows(count: int, size: int, step: int) -> list[tuple[int, int]]:
    """Windows ``[i, j)`` over ``count`` units; the last one ends at ``count``, and no
    window lies entirely inside the one before it."""
    out: list[tuple[int, int]] = []
    first = 0
    while first < count:
        last = min(first + size, count)
        out.append((first, last))
        if last == count:
            break
        first += step
    return out


@dataclass(frozen=True, slots=True)
class Chunker:
    """Fixed-size windows of ``size`` units, each sharing ``overlap`` units with the one
    before it. ``unit`` is ``"chars"`` or ``"tokens"`` (see :data:`TOKEN_RE`); with
    tokens, a chunk runs from its first token's start to its last token's end."""

    size: int = 1000
    overlap: int = 0
    unit: ChunkUnit = "chars"

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 1:
            raise ValidationError(f"chunk size must be a positive int, got {self.size!r}")
        if (
            isinstance(self.overlap, bool) or not isinstance(self.overlap, int)
            or not 0 <= self.overlap < self.size
        ):
            raise ValidationError(
                f"overlap must be an int in [0, size), got {self.overlap!r} for size {self.size}"
            )
        if self.unit not in ("chars", "tokens"):
            raise ValidationError(f"unit must be 'chars' or 'tokens', got {self.unit!r}")

    def split(self, text: str) -> list[TextSpan]:
        if not isinstance(text, str):
            raise ValidationError(f"text must be a str, got {type(text).__name__}")
        step = self.size - self.overlap
        if self.unit == "chars":
            bounds = _windows(len(text), self.size, step)
        else:
            tokens = token_spans(text)
            bounds = [
                (tokens[i][0], tokens[j - 1][1]) for i, j in _windows(len(tokens), self.size, step)
            ]
        return [TextSpan(n, start, end, text[start:end]) for n, (start, end) in enumerate(bounds)]


def split_text(
    text: str, size: int = 1000, overlap: int = 0, unit: ChunkUnit = "chars"
) -> list[TextSpan]:
    """Shorthand for ``Chunker(size, overlap, unit).split(text)``."""
    return Chunker(size, overlap, unit).split(text)

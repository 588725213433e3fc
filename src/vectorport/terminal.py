"""What the command line prints: tables that fit the terminal, progress with rate and ETA.

No dependency: ``rich`` (the ``[cli]`` extra) draws the progress bar when installed and
stderr is a terminal; otherwise one plain line per tenth of the way, so logs and CI
output stay short.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
import time
from collections.abc import Sequence
from typing import Any, TextIO

BAR = 20
"""Characters of the plain progress bar."""
MIN_COLUMN = 8
"""No column is squeezed below this many characters."""
MAX_WORD = 24
"""Words longer than this may be broken to fit; shorter ones never are."""


def terminal_width(default: int = 100) -> int:
    return shutil.get_terminal_size((default, 24)).columns


def _widths(rows: Sequence[Sequence[str]], width: int, gap: int) -> list[int] | None:
    """Column widths that fit ``width``, shrinking the widest column first; ``None``
    when even each column's longest word (capped at :data:`MAX_WORD`) cannot fit."""
    columns = range(len(rows[0]))
    natural = [max(len(line) for r in rows for line in (r[i].splitlines() or [""]))
               for i in columns]
    floor = [max(MIN_COLUMN if natural[i] > MIN_COLUMN else natural[i],
                 min(MAX_WORD, max((len(w) for r in rows for w in r[i].split()), default=0)))
             for i in columns]
    budget = width - gap * (len(natural) - 1)
    if sum(floor) > budget:
        return None
    widths = list(natural)
    while sum(widths) > budget:
        widest = max(columns, key=lambda i: widths[i] - floor[i])
        widths[widest] -= 1
    return widths


def _records(rows: Sequence[Sequence[str]], width: int) -> str:
    """One block per row (``header: value`` lines): the layout of last resort, for a
    table too wide for the terminal even with every cell wrapped."""
    header, *body = rows
    key_width = max(len(h) for h in header[1:]) if len(header) > 1 else 0
    out: list[str] = []
    for row in body:
        out.append(row[0])
        for key, value in zip(header[1:], row[1:], strict=True):
            lines = textwrap.wrap(value, max(MIN_COLUMN, width - key_width - 4)) or [""]
            out.append(f"  {key.ljust(key_width)}  {lines[0]}")
            out.extend(" " * (key_width + 4) + more for more in lines[1:])
        out.append("")
    return "\n".join(out).rstrip()


def table(rows: Sequence[Sequence[str]], width: int | None = None, gap: int = 2) -> str:
    """``rows[0]`` is the header. Cells wrap at spaces so that the whole table fits
    ``width`` columns (default: the terminal's width); a table that cannot fit even so
    is printed as one block per row instead."""
    if not rows:
        return ""
    width = width if width is not None else terminal_width()
    widths = _widths(rows, width, gap)
    if widths is None:
        return _records(rows, width)
    out: list[str] = []
    for n, row in enumerate(rows):
        cells = [textwrap.wrap(cell, w, break_long_words=True, break_on_hyphens=False) or [""]
                 for cell, w in zip(row, widths, strict=True)]
        for k in range(max(len(c) for c in cells)):
            parts = [(c[k] if k < len(c) else "").ljust(w)
                     for c, w in zip(cells, widths, strict=True)]
            out.append((" " * gap).join(parts).rstrip())
        if n == 0:
            out.append((" " * gap).join("-" * w for w in widths))
    return "\n".join(out)


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}:{seconds % 60:02d}"


class Progress:
    """``progress(done, total, detail="")`` from any loop; ``close()`` at the end.

    Shows done/total, the rate (``unit`` per second) and the time left at that rate.
    """

    def __init__(self, label: str, unit: str = "items", *, stream: TextIO | None = None,
                 use_rich: bool | None = None) -> None:
        self.label = label
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        interactive = bool(isatty and isatty())
        self._rich: Any = None
        self._task: Any = None
        if use_rich if use_rich is not None else interactive:
            self._rich = _rich_progress(self.stream)
        self._started = time.monotonic()
        self._last_tenth = -1

    def line(self, done: int, total: int, detail: str = "") -> str:
        elapsed = time.monotonic() - self._started
        rate = done / elapsed if elapsed > 0 else 0.0
        left = f"ETA {_duration((total - done) / rate)}" if rate > 0 and total > done else (
            f"in {_duration(elapsed)}" if done >= total else "ETA ?")
        share = done / total if total else 1.0
        filled = round(BAR * share)
        tail = f"  {detail}" if detail else ""
        return (f"{self.label} [{'#' * filled}{'.' * (BAR - filled)}] {done}/{total} {self.unit} "
                f"{share:4.0%}  {rate:.1f} {self.unit}/s  {left}{tail}")

    def __call__(self, done: int, total: int, detail: str = "") -> None:
        if self._rich is not None:
            if self._task is None:
                self._rich.start()
                self._task = self._rich.add_task(self.label, total=total, detail=detail)
            self._rich.update(self._task, completed=done, total=total, detail=detail[:40])
            return
        tenth = int(10 * done / total) if total else 10
        if tenth == self._last_tenth and done != total:
            return
        self._last_tenth = tenth
        self.stream.write(self.line(done, total, detail)[: terminal_width()] + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._rich is not None and self._task is not None:
            self._rich.stop()
            self._task = None


def _rich_progress(stream: TextIO) -> Any:
    try:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            ProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress
        from rich.text import Text
    except ImportError:
        return None

    class RateColumn(ProgressColumn):
        """Items per second (rich's own speed column formats bytes)."""

        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:.1f}/s" if speed else "?/s")

    return RichProgress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
        TimeRemainingColumn(), TextColumn("{task.fields[detail]}"),
        console=Console(file=stream), transient=False)

"""A small progress bar for indexing many files, written to stderr.

On a terminal it redraws one line (``\\r``); elsewhere (a log, a pipe, CI) it writes a
line at every tenth of the way, so logs stay short. No dependency.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """Call it as a workspace ``progress`` callback: ``bar(done, total, path)``."""

    def __init__(self, label: str = "indexing", *, stream: TextIO | None = None,
                 width: int = 30, interactive: bool | None = None) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        isatty = getattr(self.stream, "isatty", None)
        self.interactive = interactive if interactive is not None else bool(isatty and isatty())
        self._started = time.monotonic()
        self._last_tenth = -1
        self._drawn = False

    def render(self, done: int, total: int, path: str = "") -> str:
        share = done / total if total else 1.0
        filled = round(self.width * share)
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.monotonic() - self._started
        tail = f" {path}" if path else ""
        return f"{self.label} [{bar}] {done}/{total} files {share:4.0%} {elapsed:5.1f}s{tail}"

    def __call__(self, done: int, total: int, path: str = "") -> None:
        line = self.render(done, total, path)
        if self.interactive:
            columns = 120
            self.stream.write("\r" + line[:columns].ljust(columns))
            self._drawn = True
        else:
            tenth = int(10 * done / total) if total else 10
            if tenth == self._last_tenth and done != total:
                return
            self._last_tenth = tenth
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the redrawn line (interactive mode)."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False

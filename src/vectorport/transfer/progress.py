"""Progress of long transfers: a live line on a terminal, one log line per interval
elsewhere, with records per second and the time left."""

from __future__ import annotations

import logging
import sys
import time
from typing import TextIO

log = logging.getLogger("vectorport.transfer")


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Counts records done out of ``total`` (``None`` when unknown)."""

    def __init__(self, label: str, total: int | None, *, stream: TextIO | None = None,
                 interval: float = 5.0, enabled: bool = True) -> None:
        self.label, self.total, self.done = label, total, 0
        self.stream = stream if stream is not None else sys.stderr
        self.live = enabled and self.stream.isatty()
        self.enabled = enabled
        self.interval = 0.2 if self.live else interval
        self.started = time.monotonic()
        self._last = 0.0

    def add(self, count: int) -> None:
        self.done += count
        now = time.monotonic()
        if self.enabled and now - self._last >= self.interval:
            self._last = now
            self._emit(self.line())

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        if self.total:
            left = max(self.total - self.done, 0)
            eta = _duration(left / rate) if rate > 0 else "?"
            return (f"{self.label}: {self.done}/{self.total} records "
                    f"({100 * self.done / self.total:.0f}%), {rate:,.0f} records/s, ETA {eta}")
        return f"{self.label}: {self.done} records, {rate:,.0f} records/s"

    def _emit(self, text: str) -> None:
        if self.live:
            self.stream.write("\r" + text.ljust(79)[:200])
            self.stream.flush()
        else:
            log.info("%s", text)

    def finish(self) -> None:
        if self.enabled:
            if self.live:
                self._emit(self.line())
                self.stream.write("\n")
            else:
                log.info("%s (done)", self.line())

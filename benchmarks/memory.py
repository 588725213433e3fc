"""Peak memory of one piece of work, measured in a child process of its own.

A figure such as "peak memory of a copy" only means something in a process that did
nothing else: the parent has loaded every section's data, and ``ru_maxrss`` never comes
down. So the work runs in a fresh interpreter (``python -m benchmarks.memory
module:function JSON``); the function prepares what it needs (untimed, unmeasured), then
wraps the measured part in :class:`PeakRss`, which samples the resident set every few
milliseconds from ``/proc/self/statm`` and reports the growth above where it started.
The child prints one JSON line, which :func:`run_child` returns.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_PAGE = os.sysconf("SC_PAGE_SIZE")
TIMEOUT_SECONDS = 1800


def rss_bytes() -> int:
    """The resident set of this process now."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * _PAGE


def max_rss_bytes() -> int:
    """The largest resident set this process ever had (``getrusage``; KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class PeakRss:
    """``with PeakRss() as peak: work()`` then ``peak.growth``: the highest resident set
    seen during the block, less the resident set when it began (after a collection)."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.start = 0
        self.peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, rss_bytes())

    def __enter__(self) -> PeakRss:
        gc.collect()
        self.start = self.peak = rss_bytes()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.peak = max(self.peak, rss_bytes())

    @property
    def growth(self) -> int:
        return self.peak - self.start


def run_child(target: str, **kwargs: Any) -> dict[str, Any]:
    """Run ``module:function(**kwargs)`` in a fresh interpreter; return its dict."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "benchmarks.memory", target, json.dumps(kwargs)],
                          capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=TIMEOUT_SECONDS, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"child {target} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    target, arguments = sys.argv[1], json.loads(sys.argv[2])
    module, function = target.split(":")
    started = time.perf_counter()
    result = getattr(importlib.import_module(module), function)(**arguments)
    result["child_seconds"] = time.perf_counter() - started
    result["max_rss"] = max_rss_bytes()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()

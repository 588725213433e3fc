"""vectorport's benchmarks: every figure a ratio against a baseline measured in the same run.

Run ``nox -s bench`` (or ``python -m benchmarks [section …] [--rows N]``). Results go to
``BENCHMARKS.md`` and ``benchmarks/chart.png``. Nothing here is a test: targets are
reported with how far each figure is from them, never asserted.

One thing happens at import, before numpy or faiss load: ``OPENBLAS_CORETYPE`` is set to
the kernel family this CPU supports (unless you set it). faiss-cpu's wheel bundles an
older OpenBLAS that does not recognise some CPUs (a generic "Intel Xeon Processor" in a
VM) and falls back to its slowest, pre-AVX kernels, while numpy's OpenBLAS picks AVX-512.
Comparing the two that way would measure a CPU-detection bug, not the libraries.
"""

from __future__ import annotations

import os


def _coretype() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
            else:
                return None
    except OSError:
        return None
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return None


if "OPENBLAS_CORETYPE" not in os.environ:
    _detected = _coretype()
    if _detected:
        os.environ["OPENBLAS_CORETYPE"] = _detected

"""vectorport's benchmarks: every figure a ratio against a baseline measured in the same run.

Run ``nox -s bench`` (or ``python -m benchmarks [section …]``). Results go to
``BENCHMARKS.md`` and ``benchmarks/chart.png``. Nothing here is a test: targets are
reported with how far each figure is from them, never asserted.
"""

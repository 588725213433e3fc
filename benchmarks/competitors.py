"""What users load pgvector with today: LangChain's ``PGVector`` and LlamaIndex's
``PGVectorStore``, run in a virtualenv of their own.

They cannot share vectorport's environment: ``langchain-postgres`` pins ``pgvector`` below
0.4 (vectorport's environment has 0.5), so installing them there would downgrade it. The
benchmark drives them as a subprocess (:mod:`benchmarks.competitors_worker`) with the
Python given by ``--competitors-python`` / ``VECTORPORT_BENCH_COMPETITORS_PYTHON``, or, by
default, one it makes on first use in ``.bench/competitors`` (ignored by git) with
``pip install`` of :data:`PACKAGES`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".bench" / "competitors"
PACKAGES = ("langchain-postgres", "llama-index-vector-stores-postgres", "psycopg[binary]")
WORKER = Path(__file__).resolve().parent / "competitors_worker.py"
TIMEOUT_SECONDS = 3600
ROWS = 25_000
"""Rows each library loads (the first of the ingestion data, at most ``--rows``): they
load about 1,400 rows/s here, so 100,000 rows took over two minutes a library, a sixth
of the whole benchmark. Their rate is a rate at any size past a few batches, and
vectorport is timed loading the same rows (:func:`benchmarks.pgvector_ingest`), so the
comparison stays like for like."""


@dataclass(frozen=True)
class Load:
    seconds: float
    rows: int
    version: str


RESULTS: dict[tuple[str, int], Load] = {}
"""Loads already measured in this run, by (library, rows): the ingestion section and the
LangChain-bridge section load the same data, so the slow baseline runs once."""


def python(configured: str | None) -> str:
    """The competitors' Python: the configured one, else ``.bench/competitors``, made
    (or completed, after an install that did not finish) here."""
    if configured:
        return configured
    return str(install())


def install() -> Path:
    """Make ``.bench/competitors`` with :data:`PACKAGES` unless a finished install is
    there (its stamp names the packages): ``nox -s bench`` calls this before the timed
    run, as it installs vectorport's own dependencies, so that a fresh checkout's run
    does not time a pip install."""
    interpreter = VENV / "bin" / "python"
    stamp = VENV / "installed.json"
    wanted = json.dumps(sorted(PACKAGES))
    if interpreter.exists() and stamp.exists() and stamp.read_text() == wanted:
        return interpreter
    print(f"  making {VENV} for LangChain and LlamaIndex (pip install, once)", flush=True)
    if not interpreter.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(interpreter), "-m", "pip", "install", "--quiet", *PACKAGES],
                   check=True)
    stamp.write_text(wanted)
    return interpreter


def offline_environment(scratch: str) -> dict[str, str]:
    """Environment for the worker: every library told to stay offline, caches empty."""
    env = dict(os.environ)
    empty = tempfile.mkdtemp(prefix="offline-", dir=scratch)
    env.update({
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TIKTOKEN_CACHE_DIR": empty,
        "NLTK_DATA": empty,
        "LLAMA_INDEX_CACHE_DIR": empty,
        "LANGCHAIN_TRACING_V2": "false",
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING": "false",
        "DO_NOT_TRACK": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "PYTHONPATH": "",
    })
    env.pop("VIRTUAL_ENV", None)
    return env


def load(interpreter: str, library: str, uri: str, data_path: str, meta_path: str,
         batch: int, scratch: str) -> Load:
    """Run one load in the worker; raise with its output if it fails."""
    done = subprocess.run(
        [interpreter, str(WORKER), library, uri, data_path, meta_path, str(batch)],
        capture_output=True, text=True, env=offline_environment(scratch),
        timeout=TIMEOUT_SECONDS, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{library} worker failed ({done.returncode}):\n"
                           f"{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    measured = Load(float(result["seconds"]), int(result["rows"]), str(result["version"]))
    RESULTS[(library, measured.rows)] = measured
    return measured


if __name__ == "__main__":  # nox -s bench: the competitors' virtualenv, before the timing
    print(install())

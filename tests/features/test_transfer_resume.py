"""A copy or an import killed with SIGKILL and started again with the same command ends
with exactly the source's records: nothing lost, nothing duplicated."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from tests.support.jobs import kill_once_under_way, run_to_the_end

import vectorport

RECORDS, DIMENSION = 6000, 64


def _source(path: Path) -> dict[str, dict[str, object]]:
    rng = np.random.default_rng(3)
    written: dict[str, dict[str, object]] = {}
    with vectorport.connect(f"local://{path}") as store:
        index = store.create_index("big", DIMENSION, "cosine")
        for ns in ("", "other"):
            rows = [{"id": f"{ns}-{i:05d}", "vector": rng.normal(size=DIMENSION),
                     "metadata": {"i": i, "f": i / 4, "b": i % 2 == 0}} for i in range(RECORDS)]
            index.upsert(rows, namespace=ns)
            written.update({f"{ns}|{r['id']}": r for r in rows})
    return written


def _run_killed_then_whole(command: list[str], checkpoint: Path) -> str:
    """Start ``command``, SIGKILL it once its checkpoint shows progress, then run it
    again to the end; returns the second run's output."""
    kill_once_under_way(command, checkpoint)
    return run_to_the_end(command)


def _assert_exactly(url: str, name: str, written: dict[str, dict[str, object]]) -> None:
    with vectorport.connect(url) as store:
        index = store.index(name)
        for ns in ("", "other"):
            ids = [r.id for r in index.iter_records(ns, page_size=1000)]
            assert len(ids) == len(set(ids)) == RECORDS, ns
            got = index.fetch(ids, namespace=ns)
            for rid, record in got.items():
                want = written[f"{ns}|{rid}"]
                assert dict(record.metadata) == want["metadata"]
                np.testing.assert_allclose(record.vector, np.asarray(want["vector"], np.float32))


def test_copy_killed_and_resumed(tmp_path: Path) -> None:
    written = _source(tmp_path / "src.db")
    checkpoint = tmp_path / "copy.json"
    command = [sys.executable, "-m", "vectorport.cli", "copy", f"local://{tmp_path}/src.db/big",
               f"local://{tmp_path}/dst.db/big", "--batch-size", "50", "--workers", "2",
               "--checkpoint", str(checkpoint)]
    out = _run_killed_then_whole(command, checkpoint)
    assert "resumed from a checkpoint" in out
    assert "verified: the destination holds exactly the source's records" in out
    assert not checkpoint.exists()
    _assert_exactly(f"local://{tmp_path}/dst.db", "big", written)


def test_import_killed_and_resumed(tmp_path: Path) -> None:
    written = _source(tmp_path / "src.db")
    export = subprocess.run([sys.executable, "-m", "vectorport.cli", "export",
                             f"local://{tmp_path}/src.db/big", str(tmp_path / "dump"), "--quiet"],
                            capture_output=True, text=True, timeout=300)
    assert export.returncode == 0, export.stderr
    checkpoint = tmp_path / "import.json"
    command = [sys.executable, "-m", "vectorport.cli", "import", str(tmp_path / "dump"),
               f"local://{tmp_path}/dst.db/restored", "--batch-size", "50",
               "--checkpoint", str(checkpoint)]
    out = _run_killed_then_whole(command, checkpoint)
    assert "resumed from a checkpoint" in out
    assert "DIFFERENT" not in out
    _assert_exactly(f"local://{tmp_path}/dst.db", "restored", written)

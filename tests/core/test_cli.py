"""The ``vectorport`` command as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vectorport.cli import main


def test_quickstart_on_the_embedded_default(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "vectorport.cli", "quickstart"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "backend: local" in out
    assert "filtered query" in out and "hybrid query" in out and "namespaced query" in out
    filtered = out.split("filtered query", 1)[1].split("\n\n", 1)[0]
    assert "ops" not in filtered, "the filter keeps only database and ml topics"
    hybrid = out.split("hybrid query", 1)[1].split("\n\n", 1)[0].splitlines()[1]
    assert "ml-2" in hybrid, "the BM25 keywords put the hybrid-search chunk first"
    assert "records: 6 in the default namespace, 2 in 'tenant-b'" in out
    assert (tmp_path / "vectorport" / "vectorport.sqlite3").exists(), "durable by default"


def test_backends_lists_every_builtin(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backends"]) == 0
    out = capsys.readouterr().out
    for name in ("local", "pgvector", "chroma", "milvus", "pinecone", "turbopuffer"):
        assert f"\n{name} " in out or out.startswith(name)
    assert "memory://" in out and "pgvector://" in out


def test_bad_url_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["quickstart", "--url", "nosuch://x"]) == 1
    err = capsys.readouterr().err
    assert "no backend handles nosuch://" in err and "local" in err

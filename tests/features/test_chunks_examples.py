"""The custom-store examples run as written: as scripts, on the embedded default store
(``connect()`` with no URL, pointed at a temporary data folder) and on ``memory://``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "custom_store"


def run(script: str, tmp_path: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "VECTORPORT_URL"}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_my_store(tmp_path: Path) -> None:
    out = run("my_store.py", tmp_path)
    assert "NotebookStore navigable: True" in out
    assert "NotebookStore patchable: True" in out
    assert "SearchOnlyStore navigable: False" in out
    assert "SearchOnlyStore patchable: False" in out
    assert "this store cannot open chunks" in out
    assert "unknown source: no chunks of source 'no-such-notes'" in out


@pytest.mark.parametrize("url", [None, "memory://"])
def test_navigate(tmp_path: Path, url: str | None) -> None:
    out = run("navigate.py", tmp_path, *([url] if url else []))
    assert "backend local: navigable=True" in out
    assert "open harbour#" in out
    assert "next after the last chunk: []" in out
    if url is None:
        assert (tmp_path / "data" / "vectorport" / "vectorport.sqlite3").exists()


@pytest.mark.parametrize("url", [None, "memory://"])
def test_patch(tmp_path: Path, url: str | None) -> None:
    out = run("patch.py", tmp_path, *([url] if url else []))
    assert "backend local: patchable, atomic=True" in out
    assert "nearest to the new vector: ['harbour#000000']" in out
    assert "patched 4 of 4 chunks; records before 4, after 4" in out
    assert "unknown chunk: False" in out

"""``vectorport workspace index|search`` (registered by ``add_parser``) and the progress bar."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

import vectorport
from vectorport.core.errors import ConfigError
from vectorport.workspace.cli import add_parser, make_embedder
from vectorport.workspace.progress import ProgressBar


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="vectorport")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    for n in range(12):
        (root / "docs" / f"note{n:02d}.md").write_text(f"Note {n}: nothing special here.\n")
    (root / "docs" / "reset.md").write_text("Intro\nTo reset your password open Settings.\n")
    (root / "image.png").write_bytes(b"\x89PNG\x00\x00")
    return root


def test_index_then_search(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"local://{tmp_path / 'store.db'}"
    assert run(["workspace", "index", str(folder), "--url", url]) == 0
    out, err = capsys.readouterr()
    assert "indexed 13, unchanged 0, skipped 1, removed 0 entries" in out
    assert "skipped /image.png: binary" in err
    assert "indexing [" in err and "14/14 files 100%" in err

    (folder / "docs" / "note00.md").unlink()
    assert run(["workspace", "index", str(folder), "--url", url, "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "indexed 0, unchanged 12, skipped 1, removed 1 entries" in out
    assert "indexing [" not in err

    assert run(["workspace", "search", str(folder), "password reset", "--url", url,
                "--json", "--top-k", "2"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["id"] == "/docs/reset.md" and rows[0]["lines"] == "2-2"
    with vectorport.connect(url) as store:
        [name] = store.list_indexes()
        assert store.index(name).count() == 12


def test_include_patterns_and_index_name(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["workspace", "index", str(folder), "--url", "memory://", "--include", "docs/reset.md",
                "--index-name", "my_docs", "--chunk-size", "20", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "indexed 1," in out and "-> index 'my_docs' on local" in out


def test_embedder_specs() -> None:
    assert make_embedder("hashing").dimension == 384
    assert make_embedder("hashing:32").dimension == 32
    with pytest.raises(ConfigError, match="unknown embedder"):
        make_embedder("magic")


def test_progress_bar_lines() -> None:
    stream = io.StringIO()
    bar = ProgressBar("indexing", stream=stream, width=10)
    for done in range(1, 101):
        bar(done, 100, f"/f{done}")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 11  # the first file, then a line per tenth, not one per file
    assert lines[-1].startswith("indexing [##########] 100/100 files 100%")
    assert lines[0].startswith("indexing [..........] 1/100 files")
    assert lines[1].startswith("indexing [#.........] 10/100 files")
    tty = io.StringIO()
    live = ProgressBar(stream=tty, width=4, interactive=True)
    live(1, 2, "/a")
    live(2, 2, "/b")
    live.close()
    assert tty.getvalue().count("\r") == 2 and tty.getvalue().endswith("\n")
    assert "[####] 2/2 files" in tty.getvalue()

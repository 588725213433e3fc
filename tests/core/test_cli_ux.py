"""The command line as a person meets it: version, JSON, help with defaults, emulator
ports, clean errors and exit codes, tables that fit, progress with rate and ETA."""

from __future__ import annotations

import argparse
import io
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vectorport.cli import EMULATOR_PORTS, build_parser, main, version
from vectorport.terminal import Progress, table


def vectorport(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vectorport", *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"vectorport {version()}"


def test_backends_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backends", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    local = data["backends"]["local"]
    assert local["installed"] is True and "memory" in local["schemes"]
    assert "$eq" in local["filter_operators"] and "metrics" in local["capabilities"]


def test_help_shows_defaults_and_the_emulator_ports() -> None:
    parser = build_parser()
    top = parser.format_help()
    assert "5080" in top and "5081" in top and "check" in top
    sub = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    emulator = " ".join(sub["emulator"].format_help().split())
    assert "pinecone 5080, turbopuffer 5081" in emulator
    assert "(default: 127.0.0.1)" in emulator and "(default: 0.0)" in emulator
    index_help = " ".join(
        sub["workspace"]._subparsers._group_actions[0].choices["index"].format_help().split())
    assert "(default: auto)" in index_help and "--base-url" in index_help


def _commands(parser: argparse.ArgumentParser, name: str = "vectorport"
              ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, subparser in action.choices.items():
                yield from _commands(subparser, f"{name} {sub_name}")


def test_every_command_explains_every_option_and_no_flag_shows_a_default() -> None:
    """All commands, nested ones included: each option and argument has help text, and a
    flag's help never ends in "(default: True)" (``--no-verify`` said that, as if
    skipping were the default)."""
    commands = dict(_commands(build_parser()))
    assert {"vectorport copy", "vectorport verify", "vectorport explain",
            "vectorport workspace index"} <= set(commands)
    for name, parser in commands.items():
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue  # its commands, each with its help, are listed instead
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"
        text = " ".join(parser.format_help().split())
        assert "(default: True)" not in text and "(default: False)" not in text, name


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_a_taken_port_is_a_one_line_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = vectorport("emulator", "turbopuffer", "--port", str(port))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert f"port {port}" in line and "already in use" in line and "--port" in line


@pytest.mark.parametrize("name", sorted(EMULATOR_PORTS))
def test_each_emulator_prints_its_key_and_url(name: str) -> None:
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "vectorport", "emulator", name,
                                "--port", str(port)], stdout=subprocess.PIPE, text=True,
                               stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
    finally:
        process.terminate()
        process.wait(timeout=30)
    text = "".join(lines)
    assert f"{name} emulator on http://127.0.0.1:{port}" in text
    assert "api key: 'emulator-key'" in text and f"127.0.0.1:{port}" in lines[2]


def test_bad_paths_exit_non_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "nonexistent")
    assert main(["workspace", "index", missing, "--url", "memory://", "--quiet"]) == 1
    assert f"no such folder: {missing}" in capsys.readouterr().err
    (tmp_path / "file.txt").write_text("x")
    assert main(["workspace", "search", str(tmp_path / "file.txt"), "q",
                 "--url", "memory://"]) == 1
    assert "not a folder" in capsys.readouterr().err


def test_tables_fit_the_width() -> None:
    rows = [["backend", "installed", "notes"],
            ["pgvector", "no: pip install \"vectorport[pgvector]\"",
             "a long cell that must wrap onto several lines to fit a narrow terminal"],
            ["local", "yes", "short"]]
    for width in (40, 60, 200):
        text = table(rows, width=width)
        assert max(len(line) for line in text.splitlines()) <= max(width, 3 * 8 + 4)
        assert "narrow" in text.replace("\n", " ")  # wrapped, not cut
    assert len(table(rows, width=200).splitlines()) == 4  # header, rule, 2 rows


def test_backends_table_fits_the_terminal(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["backends"]) == 0
    table_part = capsys.readouterr().out.split("\n\n")[0]
    assert max(len(line) for line in table_part.splitlines()) <= 100


def test_plain_progress_shows_rate_and_eta() -> None:
    stream = io.StringIO()
    bar = Progress("copying", "records", stream=stream, use_rich=False)
    for done in range(0, 101, 5):
        bar(done, 100)
        time.sleep(0.002)
    bar.close()
    lines = stream.getvalue().splitlines()
    assert 2 <= len(lines) <= 12, "one line per tenth, not per call"
    assert "records/s" in lines[1] and "ETA" in lines[1]
    assert lines[-1].startswith("copying [####################] 100/100 records 100%")
    assert " in 0:0" in lines[-1]


def test_rich_progress_when_installed() -> None:
    pytest.importorskip("rich")
    stream = io.StringIO()
    bar = Progress("check", "tests", stream=stream, use_rich=True)
    for done in range(11):
        bar(done, 10, f"test_{done}")
    bar.close()
    assert "10/10" in stream.getvalue()


def test_capabilities_html_from_the_markdown_page(tmp_path: Path) -> None:
    from vectorport.matrix_html import cell_class, parse_markdown_table, write_html_from_markdown

    source = Path(__file__).resolve().parents[2] / "docs" / "capabilities.md"
    page = tmp_path / "docs" / "capabilities.md"
    page.parent.mkdir()
    page.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    rows = parse_markdown_table(page.read_text(encoding="utf-8"))
    assert main(["matrix", "--html-only", "--root", str(tmp_path)]) == 0
    html = (tmp_path / "docs" / "capabilities.html").read_text(encoding="utf-8")
    assert html.count("<tr>") == len(rows) + 1  # legend, header, one per feature
    cells = [c for row in rows[1:] for c in row[1:]]
    for kind in ("pass", "refuses", "unsupported", "fail"):  # + 1: the legend's entry
        assert html.count(f'<td class="{kind}">') == sum(cell_class(c) == kind
                                                         for c in cells) + 1, kind
    assert cell_class("pass, refuses gt_str") == "refuses" and cell_class("FAIL") == "fail"
    assert cell_class("pass (sum)") == "pass" and cell_class("not offered") == "not"
    assert write_html_from_markdown(page) == page.with_suffix(".html")


def test_auto_embedder_keeps_the_embedder_an_index_was_built_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("wordllama")
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.md").write_text("I order a double espresso every morning\n")
    url = f"local://{tmp_path / 'store.db'}"
    assert main(["workspace", "index", str(folder), "--url", url, "--embedder", "hashing",
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["workspace", "search", str(folder), "coffee", "--url", url, "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)[0]["id"] == "/a.md"
    assert "holds 384-dimension vectors; keeping the hashing embedder" in err

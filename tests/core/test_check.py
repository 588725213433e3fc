"""``vectorport check URL``: the shipped suite against a server, in temporary indexes it
always deletes, against a fresh Pinecone emulator and a local:// file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import vectorport
from vectorport.check import run_check, sweep
from vectorport.cli import main
from vectorport.conformance.base import unique_name
from vectorport.matrix import BindingResult, feature_rows

KEY_VARIABLE = "VECTORPORT_TEST_CHECK_PINECONE_KEY"


def table_features(out: str) -> list[str]:
    """The feature column of the printed capability table."""
    every = [f for f, _ in feature_rows(BindingResult("x"))]
    return [f for f in every if any(line.startswith(f) for line in out.splitlines())]


def assert_full_table(out: str) -> None:
    expected = [f for f, _ in feature_rows(BindingResult("x")) if not f.startswith("chunk ")]
    assert table_features(out) == expected
    assert "FAIL" not in out and " 0 failed" in out
    assert "no index left behind" in out


def test_quick_check_on_a_fresh_pinecone_emulator(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pinecone")
    from vectorport.testing.emulators import pinecone as emulator

    with emulator.running() as server:
        monkeypatch.setenv(KEY_VARIABLE, "emulator-key")
        url = f"pinecone://?api_key_env={KEY_VARIABLE}&host={server.url}"
        assert main(["check", url, "--quick", "--no-progress"]) == 0
        out = capsys.readouterr().out
        assert_full_table(out)
        # Pinecone compares numbers only: the check found string ranges refused, not wrong
        gt_row = next(line for line in out.splitlines() if line.startswith("filter $gt "))
        assert "refuses" in gt_row and "gt_str" in gt_row
        assert "emulator-key" not in out
        with vectorport.connect(url) as store:
            assert store.list_indexes() == []


def test_quick_check_on_a_local_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"local://{tmp_path / 'store.db'}"
    with vectorport.connect(url) as store:
        store.create_index("mine", 4, "cosine")  # the user's own index: never touched
    assert main(["check", url, "--quick", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert_full_table(out)
    assert "refuses" not in out, "the reference adapter refuses no declared filter"
    with vectorport.connect(url) as store:
        assert store.list_indexes() == ["mine"]


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["check", "memory://", "--quick", "--no-progress", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["failed"] == 0 and result["passed"] > 50
    assert result["features"]["index lifecycle"] == "pass"
    assert result["leftover_indexes_deleted"] == []


def test_sweep_deletes_only_what_a_check_left(tmp_path: Path) -> None:
    url = f"local://{tmp_path / 'store.db'}"
    with vectorport.connect(url) as store:
        store.create_index("vp_mine_0123456789", 4, "cosine")  # existed before: kept
        before = store.list_indexes()
        left = unique_name("crashed")
        store.create_index(left, 4, "cosine")
        store.create_index("mine_after", 4, "cosine")  # not a check's name: kept
    assert sweep(url, before) == [left]
    with vectorport.connect(url) as store:
        assert store.list_indexes() == ["mine_after", "vp_mine_0123456789"]


def test_ctrl_c_leaves_no_index(tmp_path: Path) -> None:
    url = f"local://{tmp_path / 'store.db'}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen([sys.executable, "-m", "vectorport", "check", url], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the progress display says tests are running
        line = process.stderr.readline()
        if "check [" in line and "tests" in line:
            break
    with vectorport.connect(url) as store:
        assert any(n.startswith("vp_") for n in store.list_indexes()), "a run in progress"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode != 0
    # Ctrl-C between two tests leaves nothing; during one, the sweep deletes that test's
    # index and says so on stderr; outside the suite's run, the CLI says "interrupted"
    assert ("no index left behind" in out or "index(es) the run left behind" in err
            or "interrupted" in err), (out, err)
    with vectorport.connect(url) as store:
        assert store.list_indexes() == []


def test_result_counts_match_the_suite() -> None:
    result = run_check("memory://", quick=True, progress=False)
    assert result.exit_code == 0 and result.failed == 0 and not result.failures
    assert result.binding is not None and result.binding.backend == "local"

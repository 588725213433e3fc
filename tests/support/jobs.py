"""A resumable job (``vectorport copy`` / ``import``) run in a child process and killed
with SIGKILL part-way, once its checkpoint shows progress: what a crash leaves."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

JOB_ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def kill_once_under_way(command: list[str], checkpoint: Path) -> None:
    """Start ``command`` and SIGKILL it once its checkpoint records written records
    (and before it has finished every unit)."""
    first = subprocess.Popen(command, env=JOB_ENV, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if checkpoint.exists():
                try:
                    state = json.loads(checkpoint.read_text())
                except ValueError:
                    state = {}
                done = sum(u.get("written", 0) for u in state.get("positions", {}).values())
                if done > 0:
                    break
            if first.poll() is not None:
                pytest.fail("the first run ended before it could be killed")
            time.sleep(0.01)
        else:
            pytest.fail("the first run made no progress")
        first.send_signal(signal.SIGKILL)
    finally:
        first.wait(30)
    assert first.returncode == -signal.SIGKILL
    state = json.loads(checkpoint.read_text())
    assert not all(u["done"] for u in state["positions"].values()), "killed too late"


def run_to_the_end(command: list[str]) -> str:
    """Run ``command`` (again) to completion; its output."""
    done = subprocess.run(command, env=JOB_ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout

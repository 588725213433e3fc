"""A real Chroma server for tests: the official image, or ``chroma run`` in a subprocess.

``running_chroma_server()`` yields a ``chroma+http://HOST:PORT`` URL (a
:class:`~vectorport.testing.containers.LaunchedURL` that tells which way it was made). It
honours ``VECTORPORT_TEST_CHROMA_URL`` first (a server you already run, used as is and
left alone); then, where a Docker daemon answers, the official ``chromadb/chroma``
image; otherwise it starts ``chroma run --path <fresh temp dir> --port <free port>``
from the installed ``chromadb`` (no Docker, no network), waits for the heartbeat, and on
exit stops the server and removes its data.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vectorport.extras import install_hint
from vectorport.testing import url_from_env
from vectorport.testing.containers import (
    CHROMA_IMAGE,
    LaunchedURL,
    launched,
    probe_docker,
    running_container,
)

HEARTBEAT_PATH = "/api/v2/heartbeat"
START_TIMEOUT_SECONDS = 60.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def chroma_command() -> list[str]:
    """The ``chroma`` CLI of the running interpreter's environment."""
    beside = Path(sys.executable).with_name("chroma")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("chroma")
    if found:
        return [found]
    raise RuntimeError(f'the "chroma" command is not installed: {install_hint("chroma")}')


def wait_for_heartbeat(base: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"chroma run exited with code {process.returncode} before it "
                               "answered its heartbeat")
        try:
            with urllib.request.urlopen(base + HEARTBEAT_PATH, timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"chroma run did not answer {base}{HEARTBEAT_PATH} "
                               f"within {timeout:.0f} s")
        time.sleep(0.1)


@contextmanager
def running_chroma_server(timeout: float = START_TIMEOUT_SECONDS,
                          docker: bool | None = None) -> Iterator[LaunchedURL]:
    """A Chroma server's ``chroma+http://`` URL for the duration of the block.
    ``docker=None`` uses Docker when a daemon answers; ``False`` never does."""
    existing = url_from_env("chroma")
    if existing is not None:
        yield launched(existing, "chroma", "configured", "VECTORPORT_TEST_CHROMA_URL")
        return
    probe = probe_docker() if docker is not False else None
    if probe is not None and probe.available:
        with running_container(CHROMA_IMAGE) as server:
            yield launched(f"chroma+http://{server.host}:{server.port}", "chroma", "docker",
                           server.image)
        return
    why = probe.reason if probe else "Docker not asked for"
    data = tempfile.mkdtemp(prefix="vectorport-chroma-")
    port = free_port()
    log_path = Path(data) / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [*chroma_command(), "run", "--path", str(Path(data) / "db"),
             "--host", "127.0.0.1", "--port", str(port)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
        try:
            wait_for_heartbeat(f"http://127.0.0.1:{port}", process, timeout)
            yield launched(f"chroma+http://127.0.0.1:{port}", "chroma", "embedded",
                           f"chroma run; {why}")
        finally:
            _stop(process)
            shutil.rmtree(data, ignore_errors=True)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


__all__ = ["free_port", "running_chroma_server", "wait_for_heartbeat"]

"""A Qdrant server to test against, without Docker.

:func:`server_url` yields a ``qdrant://`` URL, or ``None`` when there is no server:

1. ``VECTORPORT_TEST_QDRANT_URL`` if set (a server, or Qdrant Cloud, of your own);
2. otherwise Qdrant's release binary, if one is found (``QDRANT_BINARY``, or ``qdrant``
   on ``PATH``), started on free local ports with its storage in a fresh temporary
   folder, and stopped (the folder removed) when the context exits;
3. otherwise ``None``: the embedded engines (``qdrant+edge://``, ``qdrant+local://``)
   need no launcher.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

from vectorport.testing import url_from_env

_START_TIMEOUT = 60.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def find_binary() -> str | None:
    """Qdrant's server binary: ``QDRANT_BINARY``, else ``qdrant`` on ``PATH``."""
    return os.environ.get("QDRANT_BINARY") or shutil.which("qdrant")


def _wait_ready(port: int, process: subprocess.Popen[bytes], log_path: str) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            with open(log_path, encoding="utf-8", errors="replace") as log:
                raise RuntimeError(f"qdrant exited early:\n{log.read()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"qdrant was not ready on port {port} within {_START_TIMEOUT:.0f} s")


@contextmanager
def running_binary(binary: str) -> Iterator[str]:
    """Run ``binary`` on 127.0.0.1 (free HTTP and gRPC ports, temporary storage)."""
    folder = tempfile.mkdtemp(prefix="vp-qdrant-")
    http_port, grpc_port = _free_port(), _free_port()
    env = {
        **os.environ,
        "QDRANT__SERVICE__HOST": "127.0.0.1",
        "QDRANT__SERVICE__HTTP_PORT": str(http_port),
        "QDRANT__SERVICE__GRPC_PORT": str(grpc_port),
        "QDRANT__STORAGE__STORAGE_PATH": os.path.join(folder, "storage"),
        "QDRANT__STORAGE__SNAPSHOTS_PATH": os.path.join(folder, "snapshots"),
        "QDRANT__TELEMETRY_DISABLED": "true",
    }
    log_path = os.path.join(folder, "qdrant.log")
    with open(log_path, "wb") as log:
        process = subprocess.Popen([binary], cwd=folder, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    try:
        _wait_ready(http_port, process, log_path)
        yield f"qdrant://127.0.0.1:{http_port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def server_url() -> Iterator[str | None]:
    """A Qdrant server URL (see the module docstring), or ``None``."""
    url = url_from_env("qdrant")
    if url is not None:
        yield url
        return
    binary = find_binary()
    if binary is None:
        yield None
        return
    with running_binary(binary) as started:
        yield started


__all__ = ["find_binary", "running_binary", "server_url"]

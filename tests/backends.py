"""Every backend the conformance suite runs, as URL launchers for the feature tests
(query tool, recall, workspace), so that those run everywhere too.

Each entry is a name and a context manager factory giving a URL (starting and stopping
what the backend needs). ``VECTORPORT_TEST_<NAME>_URL`` overrides an entry.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

EMULATOR_KEY_ENV = "VECTORPORT_TEST_EMULATOR_KEY"


@dataclass(frozen=True)
class Backend:
    name: str
    open: Callable[[Path], AbstractContextManager[str]]


@contextmanager
def _postgres(tmp: Path) -> Iterator[str]:
    from vectorport.testing.pgvector import running_postgres

    with running_postgres() as url:
        yield url


@contextmanager
def _milvus(tmp: Path) -> Iterator[str]:
    from vectorport.testing.milvus import milvus_url

    with milvus_url() as url:
        yield url


@contextmanager
def _turbopuffer(tmp: Path) -> Iterator[str]:
    from vectorport.testing.emulators.turbopuffer import running

    os.environ.setdefault(EMULATOR_KEY_ENV, "emulator-key")
    with running(api_key=os.environ[EMULATOR_KEY_ENV]) as server:
        yield f"turbopuffer://?base_url={server.url}&api_key_env={EMULATOR_KEY_ENV}"


@contextmanager
def _pinecone(tmp: Path) -> Iterator[str]:
    from vectorport.testing.emulators.pinecone import running

    os.environ.setdefault(EMULATOR_KEY_ENV, "emulator-key")
    with running(api_key=os.environ[EMULATOR_KEY_ENV]) as server:
        yield f"pinecone://?api_key_env={EMULATOR_KEY_ENV}&host={server.url}"


def _url(make: Callable[[Path], str]) -> Callable[[Path], AbstractContextManager[str]]:
    return lambda tmp: nullcontext(make(tmp))


EMBEDDED: list[Backend] = [
    Backend("memory", _url(lambda tmp: "memory://")),
    Backend("local", _url(lambda tmp: f"local://{tmp / 'store.db'}")),
]
ALL: list[Backend] = [
    *EMBEDDED,
    Backend("pgvector", _postgres),
    Backend("chroma", _url(lambda tmp: f"chroma://{tmp / 'chroma'}")),
    Backend("milvus", _milvus),
    Backend("turbopuffer", _turbopuffer),
    Backend("pinecone", _pinecone),
    Backend("qdrant", _url(lambda tmp: f"qdrant+edge://{tmp / 'qdrant'}")),
]


def open_backend(backend: Backend, tmp: Path) -> AbstractContextManager[str]:
    override = os.environ.get(f"VECTORPORT_TEST_{backend.name.upper()}_URL")
    return nullcontext(override) if override else backend.open(tmp)

"""The store every framework bridge test runs on: each backend named in
``VECTORPORT_BRIDGE_BACKENDS`` (default: memory, local, pgvector, pinecone, chroma), one
store per module. Every test in this folder gets it as ``store``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
from tests.support import backends

import vectorport

_WANTED = os.environ.get("VECTORPORT_BRIDGE_BACKENDS", "memory,local,pgvector,pinecone,chroma")
BACKENDS = [b for b in backends.ALL if b.name in _WANTED.split(",")]


@pytest.fixture(scope="module", params=BACKENDS, ids=lambda b: b.name)
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[vectorport.Store]:
    backend: backends.Backend = request.param
    with backends.open_backend(backend, tmp_path_factory.mktemp(backend.name)) as url, \
            vectorport.connect(url) as opened:
        yield opened


@pytest.fixture(scope="module")
def pgvector_and_pinecone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[vectorport.Store]]:
    """A pgvector store and a Pinecone-emulator store, for the same pipeline on both."""
    wanted = [b for b in backends.ALL if b.name in ("pgvector", "pinecone")]
    with ExitStack() as stack:
        stores = []
        for backend in wanted:
            url = stack.enter_context(backends.open_backend(backend, tmp_path_factory.mktemp(backend.name)))
            stores.append(stack.enter_context(vectorport.connect(url)))
        yield stores

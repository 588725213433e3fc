"""The test tree, laid out like the code:

- ``core/``: the facade, the filter language, the adapter kit, the CLI;
- ``features/``: what is built on the public API (query tool, chunks, recall, workspace,
  embedders, copy/export, the framework bridges, MCP, tracing, fault tests);
- ``emulators/``: the Pinecone and turbopuffer emulators against their official SDKs;
- ``backends/<name>/``: each backend's conformance binding, adapter and filter tests;
- ``support/``: shared helpers (``tests.support.backends`` lists every backend with a
  launcher, from the registry).

One PostgreSQL serves the whole run (``running_postgres(shared=True)``, started on first
use); tests that stop or break a server start their own. ``VECTORPORT_TEST_<BACKEND>_URL``
points any backend at a running server instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The run's one PostgreSQL with pgvector, as a ``pgvector://`` URL."""
    from vectorport.testing.pgvector import running_postgres

    with running_postgres(shared=True) as url:
        yield url

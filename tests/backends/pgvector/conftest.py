"""The pgvector tests' connection: the run's one PostgreSQL (see tests/conftest.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

import vectorport
from vectorport.testing.pgvector import running_postgres


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with running_postgres(shared=True) as url:
        yield url


@pytest.fixture(scope="module")
def store(pg_url: str) -> Iterator[vectorport.Store]:
    with vectorport.connect(pg_url) as opened:
        yield opened


@pytest.fixture
def name(store: vectorport.Store) -> Iterator[str]:
    """A fresh index name, its index deleted after the test."""
    index_name = f"t_{uuid.uuid4().hex[:12]}"
    yield index_name
    store.delete_index(index_name, missing_ok=True)

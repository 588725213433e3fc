"""The pgvector tests' connection: the run's one PostgreSQL (see tests/conftest.py)."""

from __future__ import annotations

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

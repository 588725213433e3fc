"""The chunk-protocol conformance tests (navigation, patching) on pgvector: the generic
chunk layer over the adapter's native patch and id listing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("pgvector")

import vectorport
from vectorport.conformance.protocols import NavigableConformance, PatchableConformance
from vectorport.testing.pgvector import running_postgres


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with running_postgres(shared=True) as url:
        yield url


class TestPgvectorProtocols(NavigableConformance, PatchableConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def store(cls, pg_url: str) -> Iterator[vectorport.Store]:
        with vectorport.connect(pg_url) as store:
            yield store

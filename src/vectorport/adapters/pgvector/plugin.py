"""Registers the ``pgvector`` adapter (``pgvector://user@host:5432/db?schema=app``)."""

from vectorport.adapters.pgvector.capabilities import PGVECTOR_CAPABILITIES
from vectorport.core.registry import AdapterEntry, register_adapter_function

vectorport_register_adapters = register_adapter_function(
    lambda: AdapterEntry(
        name="pgvector",
        schemes=("pgvector",),
        adapter="vectorport.adapters.pgvector.adapter:PgvectorAdapter",
        capabilities=PGVECTOR_CAPABILITIES,
        summary="PostgreSQL + pgvector: HNSW/IVFFlat, jsonb filters, sparse, hybrid",
        requires=("psycopg", "psycopg_pool", "pgvector"),
        extra="pgvector",
    )
)

"""The pgvector adapter: PostgreSQL with the pgvector extension, through psycopg 3.

``adapter`` (the adapter and how namespaces map), ``options`` (URL and backend options),
``schema`` (DDL and names), ``statements`` (the data SQL), ``filters`` (the filter
compiler), ``jsonb`` (metadata encoding), ``codecs`` (vector wire formats), ``errors``.
Only ``plugin`` and ``capabilities`` are imported without psycopg installed.
"""

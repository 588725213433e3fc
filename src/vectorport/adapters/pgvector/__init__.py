"""The pgvector adapter: PostgreSQL with the pgvector extension, through psycopg 3.

``adapter`` (the adapter and how namespaces map), ``options`` (URL and backend options),
``schema`` (DDL, names and the catalog's copy of a spec), ``statements`` (the data SQL),
``filters`` (the filter compiler), ``jsonb`` (metadata encoding), ``codec`` (vector wire
formats, rows in and out), ``errors``, ``loop_pool`` (async pools per event loop).
Only ``plugin`` and ``capabilities`` are imported without psycopg installed.
"""

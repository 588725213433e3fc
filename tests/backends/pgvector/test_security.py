"""Hostile input on the inputs the pgvector adapter itself turns into SQL: the schema
name from the URL, the names handed to its own methods, id prefixes and cursors, and
backend options; run against the real server, which must be unchanged afterwards.

(Hostile filter keys and values, ids, documents, index names and namespaces through the
facade are covered by the conformance suite on the same server.)
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import psycopg
import pytest

pytest.importorskip("pgvector")

import vectorport
from vectorport.adapters.pgvector.adapter import PgvectorAdapter
from vectorport.conformance.dataset import HOSTILE_FIELD_NAMES, HOSTILE_STRINGS
from vectorport.core.errors import ConfigError, ValidationError
from vectorport.core.store import Store
from vectorport.testing.pgvector import as_pgvector_url, libpq_uri, running_postgres

HOSTILE_SCHEMAS = (*HOSTILE_STRINGS, *HOSTILE_FIELD_NAMES, "pg_catalog", "pg_temp",
                   "PG_TOAST", "x" * 64, "public; DROP SCHEMA public CASCADE")


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with running_postgres(shared=True) as url:
        yield url


@pytest.fixture(scope="module")
def store(pg_url: str) -> Iterator[Store]:
    with vectorport.connect(pg_url) as store:
        yield store


def relations(pg_url: str) -> list[tuple[str, str]]:
    """Every schema and relation outside the system schemas."""
    with psycopg.connect(libpq_uri(pg_url), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT n.nspname, coalesce(c.relname, '') FROM pg_namespace n"
            " LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relpersistence <> 't'"
            " WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'"
            " ORDER BY 1, 2"
        ).fetchall()
    return [(a, b) for a, b in rows]


def url_with_schema(pg_url: str, schema: str) -> str:
    base = as_pgvector_url(pg_url, schema="PLACEHOLDER")
    return base.replace("schema=PLACEHOLDER", "schema=" + quote(schema, safe=""))


@pytest.mark.parametrize("schema", HOSTILE_SCHEMAS)
def test_hostile_schema_names_are_refused(pg_url: str, store: Store, schema: str) -> None:
    before = relations(pg_url)
    with pytest.raises(ConfigError, match="schema"):
        vectorport.connect(url_with_schema(pg_url, schema))
    assert relations(pg_url) == before


@pytest.mark.parametrize("schema", ["Select", "_", "MiXeD_Case_9", "a" * 63])
def test_awkward_but_valid_schemas_are_quoted_identifiers(pg_url: str, schema: str) -> None:
    with vectorport.connect(url_with_schema(pg_url, schema)) as store:
        index = store.create_index("drop_table_x", 2, "cosine")
        index.upsert([("O'Brien", [1, 0], {"k": "'; DROP TABLE x; --"})])
        assert [m.id for m in index.query([1, 0], filter={"k": "'; DROP TABLE x; --"})] == [
            "O'Brien"]
        assert (schema, "vp_drop_table_x") in relations(pg_url)
        assert store.list_indexes() == ["drop_table_x"]
        store.delete_index("drop_table_x")
    assert (schema, "vp_drop_table_x") not in relations(pg_url)


@pytest.fixture(scope="module")
def hostile_index(store: Store) -> Iterator[Any]:
    name = f"hostile_{uuid.uuid4().hex[:8]}"
    index = store.create_index(name, 2, "cosine")
    index.upsert([{"id": s, "vector": [1, 0], "metadata": {"s": s}, "document": s}
                  for s in HOSTILE_STRINGS])
    yield index
    store.delete_index(name, missing_ok=True)


@pytest.mark.parametrize("value", HOSTILE_STRINGS)
def test_hostile_prefixes_and_cursors_are_literal(
    pg_url: str, hostile_index: Any, value: str
) -> None:
    before = relations(pg_url)
    got = hostile_index.list_ids(prefix=value, limit=100).ids
    assert list(got) == sorted(s for s in HOSTILE_STRINGS if s.startswith(value))
    with pytest.raises(ValidationError):  # users pass only cursors vectorport made
        hostile_index.list_ids(cursor=value, limit=100)
    # ... and the adapter still takes its own cursor (the last id) as a literal
    adapter = hostile_index.store.adapter
    after_cursor = adapter.list_ids(hostile_index.spec, "", prefix=None, filter=None,
                                    limit=100, cursor=value).ids
    assert list(after_cursor) == sorted(s for s in HOSTILE_STRINGS if s > value)
    assert hostile_index.count(filter={"s": {"$gte": value}}) == sum(
        s >= value for s in HOSTILE_STRINGS)
    assert hostile_index.patch(value, metadata={"p": value}, document=value)
    assert relations(pg_url) == before
    assert hostile_index.count() == len(HOSTILE_STRINGS)


@pytest.mark.parametrize("value", [*HOSTILE_STRINGS[:6], "ALL", "2; SET x = 1"])
def test_hostile_option_values_are_refused(store: Store, hostile_index: Any, value: str) -> None:
    for options in ({"iterative_scan": value}, {"max_probes": value}):
        with pytest.raises(ValidationError):
            hostile_index.query([1, 0], backend_options={"pgvector": options})
    with pytest.raises(ValidationError):
        store.create_index("never_made", 2,
                           backend_options={"pgvector": {"maintenance_work_mem": value}})
    assert "never_made" not in store.list_indexes()


@pytest.mark.parametrize("name", ["x'; DROP TABLE vectorport_catalog; --", "A", "a b c",
                                  "vectorport_catalog\"", "ab"])
def test_adapter_methods_check_index_names(pg_url: str, store: Store, name: str) -> None:
    adapter = store.adapter
    assert isinstance(adapter, PgvectorAdapter)
    before = relations(pg_url)
    with pytest.raises(ValidationError):
        adapter.build_index(name)
    with pytest.raises(ValidationError):
        adapter.ann_index_built(name)
    assert relations(pg_url) == before

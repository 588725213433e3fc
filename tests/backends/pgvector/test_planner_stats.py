"""Planner statistics after loads (:mod:`vectorport.adapters.pgvector.planner_stats`).

A table that has just received many rows has no statistics until autovacuum analyzes
it, and the planner then reads a ``flat`` index through the primary key, about twice as
slowly as by the scan it picks with statistics. The writer analyzes it instead. Each
test reads ``pg_class.reltuples`` (``-1`` until a table's first analysis; autovacuum
looks once a minute, so within a test a value set is the writer's) and the planner's
estimate of the rows a query reads; the answers are checked against the reference query.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import psycopg
import pytest
from psycopg import sql

pytest.importorskip("pgvector")

from vectorport.adapters.pgvector.planner_stats import MIN_ROWS
from vectorport.conformance.base import assert_same_matches
from vectorport.conformance.reference import reference_query
from vectorport.core.async_store import connect_async
from vectorport.core.store import Store
from vectorport.core.types import Record
from vectorport.testing.pgvector import libpq_uri

DIM = 8


def records(count: int, start: int = 0) -> list[Record]:
    vectors = np.random.default_rng(start).normal(size=(count, DIM)).astype(np.float32)
    return [Record(id=f"id{start + i:06d}", vector=vectors[i], metadata={"n": start + i})
            for i in range(count)]


def analyzed_rows(pg_url: str, store: Store, name: str) -> float:
    """The table's ``reltuples``: ``-1`` while it was never analyzed."""
    table = f'"{store.adapter.schema}"."vp_{name}"'  # type: ignore[attr-defined]
    with psycopg.connect(libpq_uri(pg_url)) as conn:
        row = conn.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass",
                           (table,)).fetchone()
    assert row is not None
    return float(row[0])


def estimated_rows(pg_url: str, store: Store, name: str) -> float:
    """The planner's estimate of the rows of namespace '' (what a flat query reads)."""
    table = sql.Identifier(store.adapter.schema, f"vp_{name}")  # type: ignore[attr-defined]
    with psycopg.connect(libpq_uri(pg_url)) as conn:
        row = conn.execute(sql.SQL("EXPLAIN (FORMAT JSON) SELECT id FROM {} "
                                   "WHERE namespace = %s").format(table), ("",)).fetchone()
    assert row is not None
    plan = row[0] if isinstance(row[0], list) else json.loads(row[0])
    return float(plan[0]["Plan"]["Plan Rows"])


def assert_answers(store: Store, name: str, loaded: list[Record]) -> None:
    index = store.index(name)
    query = loaded[7].vector
    want = reference_query(loaded, "cosine", vector=query.tolist(), top_k=5)
    assert_same_matches(index.query(query, top_k=5), want, 1e-6, "after the load")


def test_a_load_through_plain_upserts_leaves_the_table_analyzed(
        pg_url: str, store: Store, name: str) -> None:
    index = store.create_index(name, DIM, "cosine", index_type="flat")
    loaded = records(MIN_ROWS + 500)
    index.upsert(loaded, batch_size=1_000)
    assert analyzed_rows(pg_url, store, name) >= MIN_ROWS
    # with statistics, the planner knows the namespace holds every row (without them it
    # assumed half a percent of the table)
    assert estimated_rows(pg_url, store, name) >= 0.9 * len(loaded)
    assert_answers(store, name, loaded)


async def test_a_load_through_native_async_upserts_leaves_the_table_analyzed(
        pg_url: str, store: Store, name: str) -> None:
    astore = await connect_async(pg_url)
    try:
        index = await astore.create_index(name, DIM, "cosine", index_type="flat")
        loaded = records(MIN_ROWS + 500)
        await index.upsert(loaded, batch_size=1_000)
    finally:
        await astore.close()
    assert analyzed_rows(pg_url, store, name) >= MIN_ROWS
    assert estimated_rows(pg_url, store, name) >= 0.9 * len(loaded)
    assert_answers(store, name, loaded)


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_a_bulk_load_leaves_the_table_analyzed(pg_url: str, store: Store, name: str,
                                               index_type: str) -> None:
    options = {"pgvector": {"defer_index": True}} if index_type == "hnsw" else {}
    index = store.create_index(name, DIM, "cosine", index_type=index_type,
                               backend_options=options)
    loaded = records(MIN_ROWS + 500)
    index.upsert_bulk(loaded, workers=2)
    assert analyzed_rows(pg_url, store, name) >= MIN_ROWS
    assert estimated_rows(pg_url, store, name) >= 0.9 * len(loaded)
    assert_answers(store, name, loaded)


def test_small_writes_leave_statistics_to_autovacuum(pg_url: str, store: Store,
                                                     name: str) -> None:
    index = store.create_index(name, DIM, "cosine", index_type="flat")
    index.upsert(records(MIN_ROWS // 4))
    index.upsert_bulk(records(MIN_ROWS // 4, start=MIN_ROWS))
    assert analyzed_rows(pg_url, store, name) == -1


def test_a_table_is_analyzed_again_once_it_has_doubled(pg_url: str, store: Store,
                                                       name: str) -> None:
    index = store.create_index(name, DIM, "cosine", index_type="flat")
    index.upsert(records(MIN_ROWS), batch_size=1_000)
    first = analyzed_rows(pg_url, store, name)
    assert first == MIN_ROWS
    # as many rows again, less one batch: the statistics stand
    index.upsert(records(MIN_ROWS - 1_000, start=MIN_ROWS), batch_size=1_000)
    assert analyzed_rows(pg_url, store, name) == first
    # the batch that makes it as many: analyzed again
    index.upsert(records(1_000, start=2 * MIN_ROWS), batch_size=1_000)
    assert analyzed_rows(pg_url, store, name) == 2 * MIN_ROWS



def metadata_statistics(pg_url: str, store: Store, name: str) -> str:
    """The planner's statistics of the metadata column, as text ('' when it has none)."""
    with psycopg.connect(libpq_uri(pg_url)) as conn:
        row = conn.execute(
            "SELECT concat(most_common_vals::text, histogram_bounds::text) FROM pg_stats"
            " WHERE schemaname = %s AND tablename = %s AND attname = 'metadata'",
            (store.adapter.schema, f"vp_{name}")).fetchone()  # type: ignore[attr-defined]
    return "" if row is None else str(row[0])


def test_later_analyses_read_the_namespaces_and_leave_the_metadata_to_autovacuum(
        pg_url: str, store: Store, name: str) -> None:
    """The first analysis reads every column; once the table has doubled, the writer's
    analysis tells the planner its new size and reads the namespace column alone; an
    index build reads everything again."""
    index = store.create_index(name, DIM, "cosine", index_type="flat",
                               backend_options={"pgvector": {"defer_index": True}})
    first = [replace(r, metadata={"n": r.metadata["n"], "phase": "first"})
             for r in records(MIN_ROWS)]
    index.upsert(first, batch_size=2_000)
    assert analyzed_rows(pg_url, store, name) == MIN_ROWS
    before = metadata_statistics(pg_url, store, name)
    assert "first" in before
    second = [replace(r, metadata={"n": r.metadata["n"], "phase": "second"})
              for r in records(MIN_ROWS, start=MIN_ROWS)]
    index.upsert(second, batch_size=2_000, namespace="other")
    assert analyzed_rows(pg_url, store, name) == 2 * MIN_ROWS  # analyzed again
    assert estimated_rows(pg_url, store, name) <= 0.6 * 2 * MIN_ROWS  # namespaces known
    assert metadata_statistics(pg_url, store, name) == before  # the metadata not read
    store.adapter.build_index(name)  # type: ignore[attr-defined]
    assert "second" in metadata_statistics(pg_url, store, name)
    assert_answers(store, name, first)

"""pgvector's bulk path: straight COPY with the indexes built once afterwards, the
staged merge when rows may be replaced, and a chunk meeting a row written meanwhile.

Expected contents are the records given (compared through fetch); expected query
answers come from the reference query.
"""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

pytest.importorskip("pgvector")

import vectorport
from vectorport.adapters.pgvector import bulk
from vectorport.adapters.pgvector.adapter import PgvectorAdapter
from vectorport.adapters.pgvector.options import index_layout
from vectorport.conformance.base import assert_same_matches
from vectorport.conformance.reference import reference_query
from vectorport.core.store import Store
from vectorport.core.types import Record
from vectorport.testing.pgvector import libpq_uri

DIM = 8
ROWS = bulk.REBUILD_MIN_ROWS + 1_500  # above the rebuild threshold, more than one chunk



def records(count: int, salt: int = 0) -> list[Record]:
    rng = np.random.default_rng(salt)
    vectors = rng.normal(size=(count, DIM)).astype(np.float32)
    return [Record(id=f"id{i:05d}", vector=vectors[i],
                   metadata={"n": i, "f": float(i) + 0.5, "g": i % 3, "salt": salt},
                   document=f"doc {i}") for i in range(count)]


def helper_indexes(pg_url: str, store: Store, name: str) -> set[str]:
    schema = store.adapter.schema  # type: ignore[attr-defined]
    with psycopg.connect(libpq_uri(pg_url)) as conn:
        rows = conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s"
                            " AND tablename = %s", (schema, f"vp_{name}")).fetchall()
    return {row[0].split("$")[-1] if "$" in row[0] else "pkey" for row in rows}


def assert_exact(index: vectorport.Index, namespace: str, expected: list[Record]) -> None:
    assert index.count(namespace) == len(expected)
    got = index.fetch([r.id for r in expected], namespace=namespace)
    for want in expected:
        have = got[want.id]
        np.testing.assert_array_equal(have.vector, want.vector)
        assert have.metadata == want.metadata
        assert {k: type(v) for k, v in have.metadata.items()} == {
            k: type(v) for k, v in want.metadata.items()}
        assert have.document == want.document


def test_a_large_load_into_an_empty_table_builds_the_indexes_once(
        pg_url: str, store: Store, name: str) -> None:
    index = store.create_index(name, DIM, "cosine")
    given = records(ROWS)
    index.upsert_bulk(given, workers=3)
    assert_exact(index, "", given)
    assert helper_indexes(pg_url, store, name) == {"pkey", "ann", "meta"}
    adapter = store.adapter
    assert isinstance(adapter, PgvectorAdapter) and adapter.ann_index_built(name)
    query = given[7].vector
    want = reference_query(given, "cosine", vector=query.tolist(), top_k=5)
    assert_same_matches(index.query(query, top_k=5, ef=500), want, 1e-4, "after bulk")


def test_a_deferred_index_stays_deferred(pg_url: str, store: Store, name: str) -> None:
    index = store.create_index(name, DIM, "cosine",
                               backend_options={"pgvector": {"defer_index": True}})
    given = records(ROWS)
    index.upsert_bulk(given)
    assert helper_indexes(pg_url, store, name) == {"pkey", "meta"}
    adapter = store.adapter
    assert isinstance(adapter, PgvectorAdapter) and not adapter.ann_index_built(name)
    adapter.build_index(name)
    assert helper_indexes(pg_url, store, name) == {"pkey", "ann", "meta"}


def test_loading_over_stored_records_replaces_them(store: Store, name: str) -> None:
    index = store.create_index(name, DIM, "euclidean")
    index.upsert_bulk(records(ROWS))
    changed = records(ROWS, salt=3)[: ROWS // 2]
    for rec in changed[:10]:
        del rec.metadata["f"]  # replace-not-merge: the key must be gone afterwards
    index.upsert_bulk(changed, workers=2)
    assert_exact(index, "", changed + records(ROWS)[ROWS // 2:])
    index.upsert_bulk(changed)  # and again: nothing changes
    assert_exact(index, "", changed + records(ROWS)[ROWS // 2:])


def test_a_chunk_meeting_a_row_written_meanwhile_is_merged(store: Store, name: str) -> None:
    index = store.create_index(name, DIM, "cosine")
    given = records(50)
    index.upsert(given[:1])  # as if another client wrote it after the emptiness check
    adapter = store.adapter
    assert isinstance(adapter, PgvectorAdapter)
    layout = index_layout(index.spec)
    with adapter._connect("upsert", name) as conn:  # the bulk module's own entry point
        bulk.copy_chunk(conn, adapter._names, layout, "", given)
    assert_exact(index, "", given)


def test_namespaces_stay_apart(store: Store, name: str) -> None:
    index = store.create_index(name, DIM, "cosine")
    index.upsert_bulk(records(ROWS), namespace="a")
    index.upsert_bulk(records(300, salt=9), namespace="b")
    assert_exact(index, "a", records(ROWS))
    assert_exact(index, "b", records(300, salt=9))


def test_two_loads_that_both_start_on_the_empty_table_both_land(
        pg_url: str, store: Store, name: str) -> None:
    """Both take the rebuild path (each sees the table empty); their index builds at
    the end are serialised, so neither fails in pg_class and the indexes exist once."""
    import threading

    index = store.create_index(name, DIM, "cosine", index_type="hnsw")
    first, second = records(ROWS, salt=1), records(ROWS, salt=2)
    second = [Record(id=f"x{r.id}", vector=r.vector, metadata=r.metadata,
                     document=r.document) for r in second]
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def load(batch: list[Record]) -> None:
        try:
            barrier.wait()
            index.upsert_bulk(batch)
        except BaseException as exc:  # reported below, with the other thread's outcome
            errors.append(exc)

    threads = [threading.Thread(target=load, args=(b,)) for b in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert_exact(index, "", first + second)
    assert {"meta", "ann", "pkey"} <= helper_indexes(pg_url, store, name)


def test_paging_walks_the_key_on_a_table_not_yet_analysed(
        pg_url: str, store: Store, name: str) -> None:
    """Just loaded (no statistics yet), the planner would sort everything after the
    cursor for every page; scan and list_ids page by walking the primary key instead."""
    from vectorport.adapters.pgvector import statements
    from vectorport.adapters.pgvector.adapter import _walk_the_key

    index = store.create_index(name, DIM, "cosine")
    given = records(20_000)
    for start in range(0, len(given), 2_000):  # as a copy loads: pages, no rebuild, no ANALYZE
        index.upsert_bulk(given[start:start + 2_000])
    adapter = store.adapter
    assert isinstance(adapter, PgvectorAdapter)
    layout = index_layout(index.spec)
    pages = {
        "scan": statements.scan(adapter._names, layout, "", node=None, limit=500,
                                cursor=given[len(given) // 2].id),
        "list_ids": statements.list_ids(adapter._names, layout, "", prefix=None, node=None,
                                        limit=500, cursor=given[len(given) // 2].id),
    }
    with psycopg.connect(libpq_uri(pg_url)) as conn:
        for what, stmt in pages.items():
            with conn.transaction():
                _walk_the_key(conn)
                plan = "\n".join(row[0] for row in conn.execute(
                    psycopg.sql.SQL("EXPLAIN ") + stmt.sql, stmt.params))
            assert "Sort" not in plan and "Index" in plan, (what, plan)
    # and the pages themselves are right: every record once, in id order
    assert [r.id for r in index.iter_records(page_size=777)] == sorted(r.id for r in given)

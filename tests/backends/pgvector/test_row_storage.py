"""An index's table keeps each row whole up to a page (``toast_tuple_target``,
:func:`vectorport.adapters.pgvector.schema.inline_row_bytes`).

With PostgreSQL's default target, every row holding a float32 vector of more than about
450 dimensions had its vector moved to the table's TOAST relation: exact searches read
it back value by value, and the planner, costing a scan by the small table left, chose
it over the HNSW index. Each test reads the sizes of the table and of its TOAST
relation (``pg_relation_size``) and checks the answers against the reference query.
"""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

pytest.importorskip("pgvector")

from vectorport.conformance.base import assert_same_matches
from vectorport.conformance.reference import reference_query
from vectorport.core.store import Store
from vectorport.core.types import Record
from vectorport.testing.pgvector import libpq_uri

DIM = 1536
"""A common embedding size: 6 KiB of float32, three times PostgreSQL's default target."""


def records(count: int, start: int = 0) -> list[Record]:
    vectors = np.random.default_rng(start).normal(size=(count, DIM)).astype(np.float32)
    return [Record(id=f"id{start + i:05d}", vector=vectors[i],
                   metadata={"n": start + i, "lang": "en" if i % 2 else "fr"},
                   document=f"text {start + i}")
            for i in range(count)]


def sizes(pg_url: str, store: Store, name: str) -> tuple[int, int]:
    """The bytes of the index's table and of its TOAST relation."""
    table = f'"{store.adapter.schema}"."vp_{name}"'  # type: ignore[attr-defined]
    with psycopg.connect(libpq_uri(pg_url)) as conn:
        row = conn.execute(
            "SELECT pg_relation_size(oid), pg_relation_size(reltoastrelid) FROM pg_class"
            " WHERE oid = %s::regclass", (table,)).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def test_vectors_of_1536_dimensions_stay_in_their_rows(
        pg_url: str, store: Store, name: str) -> None:
    """Plain upserts (an INSERT from arrays) and a bulk load (binary COPY into the
    table) both leave every vector in its row: nothing in the TOAST relation."""
    index = store.create_index(name, DIM, "cosine", index_type="hnsw")
    plain, bulk = records(200), records(200, start=200)
    index.upsert(plain)
    index.upsert_bulk(bulk, namespace="bulk")
    table_bytes, toast_bytes = sizes(pg_url, store, name)
    assert toast_bytes == 0
    assert table_bytes >= 400 * DIM * 4  # the vectors are in the table
    for namespace, loaded in (("", plain), ("bulk", bulk)):
        query = loaded[3].vector
        want = reference_query(loaded, "cosine", vector=query.tolist(), top_k=5)
        # ef above the rows of a namespace: the graph search reaches every row
        got = index.query(query, top_k=5, namespace=namespace, ef=400)
        assert_same_matches(got, want, 1e-6, f"namespace {namespace!r}")


def test_a_row_larger_than_a_page_is_still_stored_and_read_back_whole(
        pg_url: str, store: Store, name: str) -> None:
    """A row past a page (a 30,000-character document beside the vector) is still
    compressed and moved out of line as PostgreSQL does by default, and reads back
    exactly; the rows around it stay whole."""
    index = store.create_index(name, DIM, "cosine", index_type="flat")
    loaded = records(20)
    rng = np.random.default_rng(7)
    long_text = "".join(rng.choice(list("abcdefghij klmnopqrstuvwxyz"), size=30_000))
    loaded[5] = Record(id=loaded[5].id, vector=loaded[5].vector,
                       metadata=loaded[5].metadata, document=long_text)
    index.upsert(loaded)
    fetched = index.fetch([r.id for r in loaded])
    for record in loaded:
        got = fetched[record.id]
        assert got.document == record.document
        assert np.array_equal(got.vector, record.vector)
        assert dict(got.metadata) == dict(record.metadata)
    _, toast_bytes = sizes(pg_url, store, name)
    assert toast_bytes > 0  # the long document went out of line, as before


def table_options(pg_url: str, store: Store, name: str) -> list[str]:
    table = f'"{store.adapter.schema}"."vp_{name}"'  # type: ignore[attr-defined]
    with psycopg.connect(libpq_uri(pg_url)) as conn:
        row = conn.execute("SELECT reloptions FROM pg_class WHERE oid = %s::regclass",
                           (table,)).fetchone()
    assert row is not None
    return list(row[0] or [])


def test_build_index_gives_an_older_table_the_target_and_says_how_to_move_its_rows(
        pg_url: str, store: Store, name: str, caplog: pytest.LogCaptureFixture) -> None:
    """A table made before (PostgreSQL's default target, set back here) holds its
    vectors out of line; ``build_index`` gives it the target, so rows written after it
    stay whole, and warns once, naming VACUUM FULL, which moves the earlier ones."""
    index = store.create_index(name, DIM, "cosine", index_type="hnsw",
                               backend_options={"pgvector": {"defer_index": True}})
    table = f'"{store.adapter.schema}"."vp_{name}"'  # type: ignore[attr-defined]
    with psycopg.connect(libpq_uri(pg_url), autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {table} RESET (toast_tuple_target)")
    older, later = records(100), records(100, start=100)
    index.upsert(older)
    toasted = sizes(pg_url, store, name)[1]
    assert toasted > 0
    with caplog.at_level("WARNING", logger="vectorport.pgvector"):
        store.adapter.build_index(name)  # type: ignore[attr-defined]
        store.adapter.build_index(name)  # type: ignore[attr-defined]
    warnings = [r.getMessage() for r in caplog.records if r.name == "vectorport.pgvector"]
    assert len(warnings) == 1 and f"VACUUM FULL {table}" in warnings[0]
    assert "toast_tuple_target=8160" in table_options(pg_url, store, name)
    index.upsert(later, namespace="later")
    assert sizes(pg_url, store, name)[1] == toasted  # the later rows are whole
    with psycopg.connect(libpq_uri(pg_url), autocommit=True) as conn:
        conn.execute(f"VACUUM FULL {table}")
    assert sizes(pg_url, store, name)[1] == 0
    for namespace, loaded in (("", older), ("later", later)):
        query = loaded[3].vector
        want = reference_query(loaded, "cosine", vector=query.tolist(), top_k=5)
        got = index.query(query, top_k=5, namespace=namespace, ef=400)
        assert_same_matches(got, want, 1e-6, f"namespace {namespace!r}")

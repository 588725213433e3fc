"""pgvector: no index name collides with another index's helper relations.

Index ``docs`` used to own relations ``vp_docs_ann`` and ``vp_docs_meta``, which are
also the tables of indexes ``docs_ann`` and ``docs_meta``: whichever came second could
not be created. Helpers now carry a ``$`` that canonical names cannot spell; helpers
made under the old scheme are renamed, and their index stays readable.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import vectorport
from vectorport.core.store import Store
from vectorport.testing.pgvector import libpq_uri, running_postgres

NAMES = ["docs", "docs_ann", "docs_meta", "docs_ann_ann", "docs__ann"]


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with running_postgres(shared=True) as url:
        yield url


@pytest.fixture
def store(pg_url: str) -> Iterator[Store]:
    with vectorport.connect(pg_url) as store:
        yield store
        for name in store.list_indexes():
            store.delete_index(name)


def indexes_of(pg_url: str, table: str) -> list[str]:
    with psycopg.connect(libpq_uri(pg_url), autocommit=True) as conn:
        rows = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s"
                            " AND indexname NOT LIKE '%%pkey' ORDER BY 1", (table,)).fetchall()
    return [r[0] for r in rows]


def fill(index: Any, tag: str) -> None:
    index.upsert([{"id": f"{tag}-{i}", "vector": [1.0, float(i)], "metadata": {"tag": tag}}
                  for i in range(5)])


@pytest.mark.parametrize("order", [NAMES, NAMES[::-1]], ids=["forward", "backward"])
def test_names_with_helper_suffixes_coexist(store: Store, order: list[str]) -> None:
    for name in order:
        fill(store.create_index(name, 2, "cosine"), name)
    # the run's one PostgreSQL may hold other modules' indexes too
    assert set(NAMES) <= set(store.list_indexes())
    for name in NAMES:
        index = store.index(name)
        assert index.count() == 5
        assert {m.metadata["tag"] for m in index.query([1, 1], top_k=10)} == {name}
        assert index.count(filter={"tag": name}) == 5
    store.delete_index("docs")
    for name in NAMES[1:]:
        assert store.index(name).count() == 5


def test_legacy_helper_names_are_renamed_and_keep_working(pg_url: str, store: Store) -> None:
    index = store.create_index("docs", 2, "cosine")
    fill(index, "docs")
    # the layout an older vectorport made: helpers named table + "_ann" / "_meta"
    with psycopg.connect(libpq_uri(pg_url), autocommit=True) as conn:
        for suffix in ("ann", "meta"):
            conn.execute(f'ALTER INDEX "vp_docs${suffix}" RENAME TO vp_docs_{suffix}')
    assert indexes_of(pg_url, "vp_docs") == ["vp_docs_ann", "vp_docs_meta"]
    assert index.count(filter={"tag": "docs"}) == 5  # readable as it is
    fill(store.create_index("docs_ann", 2, "cosine"), "docs_ann")  # no longer blocked
    assert indexes_of(pg_url, "vp_docs") == ["vp_docs$ann", "vp_docs$meta"]
    assert indexes_of(pg_url, "vp_docs_ann") == ["vp_docs_ann$ann", "vp_docs_ann$meta"]
    adapter: Any = store.adapter
    adapter.build_index("docs")  # a rebuild replaces the ANN index, never adds one
    assert indexes_of(pg_url, "vp_docs") == ["vp_docs$ann", "vp_docs$meta"]
    assert [m.id for m in index.query([1, 0], top_k=1)] == ["docs-0"]
    assert store.index("docs_ann").count() == 5

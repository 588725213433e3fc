"""Search hits and query rows read column-wise (:mod:`vectorport.adapters.milvus.hits`).

The rows read from the response's columns must be the rows pymilvus decodes from the
same response (vectors as the same float32 values, every other field equal and of the
same type), for arbitrary records (hostile ids and strings, every metadata kind,
documents present and missing, extreme float32 values), for the hits of every query of
a batch, each at its own offset in the response, and for queries by key and in key
order. The adapter must use the columns only for the fields the first read proved, and
keep pymilvus' decoding for the rest.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vectorport

pytest.importorskip("pymilvus")

from vectorport.adapters.milvus import hits, layout
from vectorport.adapters.milvus.filters import pk_in
from vectorport.core.types import Record
from vectorport.testing.milvus import milvus_url

_names = (f"vp_hits_{i}" for i in itertools.count())
_DIM = 4

_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               max_size=12)  # the facade refuses NUL in strings
_value = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    _text,
    st.lists(_text, min_size=1, max_size=4),
)
_float32 = st.floats(width=32, allow_nan=False, allow_infinity=False,
                     min_value=-(2.0**40), max_value=2.0**40)  # within the facade's norm limit
_record = st.builds(
    lambda rid, vector, metadata, document: Record(
        id=rid, vector=np.array(vector, dtype=np.float32), metadata=metadata,
        document=document),
    _text.filter(bool),
    st.lists(_float32, min_size=_DIM, max_size=_DIM),
    st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,5}", fullmatch=True), _value,
                    max_size=4),
    st.one_of(st.none(), _text),
)


@pytest.fixture(scope="module")
def store() -> Iterator[vectorport.Store]:
    with milvus_url() as url, vectorport.connect(url) as store:
        yield store


@pytest.fixture(scope="module")
def index(store: vectorport.Store) -> Iterator[vectorport.Index]:
    index = store.create_index(next(_names), _DIM, "euclidean")
    yield index
    store.delete_index(index.name)


def _search(store: vectorport.Store, index: vectorport.Index, queries: list[list[float]],
            limit: int, fields: list[str]) -> Any:
    adapter: Any = store.adapter
    return adapter._client.search(
        index.name, data=queries, anns_field=layout.VECTOR, limit=limit,
        output_fields=fields, search_params={"metric_type": "L2", "params": {}},
        consistency_level="Strong")


def _record_fields(store: vectorport.Store, index: vectorport.Index) -> list[str]:
    """The fields the adapter reads a whole record from (its metadata in the dynamic
    field, or in ``meta``, by the collection's layout)."""
    return store.adapter._record_fields(index.spec)  # type: ignore[attr-defined, no-any-return]


def _undecoded_or_skip(undecoded: Any) -> Any:
    if undecoded is None:
        pytest.skip("this pymilvus decodes results otherwise: its own decoding is kept, "
                    "which the adapter's tests cover")
    return undecoded


def _assert_same_rows(ours: Any, theirs: Any) -> None:
    assert len(ours) == len(theirs)
    for mine, other in zip(ours, theirs, strict=True):
        assert mine.keys() == other.keys()
        for key, value in mine.items():
            if key == layout.VECTOR:
                assert isinstance(value, np.ndarray) and not value.flags.writeable
                assert value.tobytes() == np.asarray(other[key], np.float32).tobytes()
            else:
                assert value == other[key] and type(value) is type(other[key])


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(_record, min_size=1, max_size=6, unique_by=lambda r: r.id),
       queries=st.lists(st.lists(_float32, min_size=_DIM, max_size=_DIM), min_size=1,
                        max_size=3),
       limit=st.integers(1, 8))
def test_column_rows_are_the_rows_pymilvus_decodes(
        store: vectorport.Store, index: vectorport.Index, records: list[Record],
        queries: list[list[float]], limit: int) -> None:
    index.delete_namespace("")
    index.upsert(records)
    fields = _record_fields(store, index)
    dynamic = layout.DYNAMIC in fields
    result = _search(store, index, queries, limit, fields)
    assert len(result) == len(queries)
    for query_hits in result:  # each query's hits sit at their own offset
        ours = hits.column_rows(_undecoded_or_skip(hits._search_hits(query_hits, dynamic)))
        assert ours is not None  # read without decoding: pymilvus' decoding comes next
        _assert_same_rows(ours, hits.decoded_hits(query_hits))
        assert len(ours) == min(limit, len(records))
    # a query's rows, by key and in key order
    adapter: Any = store.adapter
    keys = [adapter._pk("", r.id) for r in records]
    for arguments in ({"filter": pk_in(keys)},
                      {"filter": f'{layout.PK} >= ""', "limit": limit, "iterator": "True"}):
        rows = adapter._client.query(index.name, output_fields=fields,
                                     consistency_level="Strong", **arguments)
        ours = hits.column_rows(_undecoded_or_skip(hits._query_rows(rows, dynamic)))
        assert ours is not None
        _assert_same_rows(ours, list(rows))


def test_the_adapter_reads_columns_only_for_the_fields_it_proved(
        store: vectorport.Store, index: vectorport.Index) -> None:
    index.delete_namespace("")
    rng = np.random.default_rng(3)
    index.upsert([{"id": f"r{i}", "vector": rng.standard_normal(_DIM).astype(np.float32),
                   "metadata": {"i": i, "s": "é", "t": ["b", "a"]},
                   "document": None if i % 2 else f"d{i}"} for i in range(20)])
    query = rng.standard_normal(_DIM).tolist()
    fields = _record_fields(store, index)
    dynamic = layout.DYNAMIC in fields
    _undecoded_or_skip(hits._search_hits(_search(store, index, [query], 5, fields)[0],
                                         dynamic))
    reader = hits.ColumnHits()

    def vectors(rows: Any) -> set[type]:
        return {type(row[layout.VECTOR]) for row in rows}

    # the first read of a set of lazily decoded fields is pymilvus' own, compared
    # with the columns; the next reads are the columns', the same rows
    first = reader.rows(_search(store, index, [query], 5, fields)[0], dynamic=dynamic)
    assert vectors(first) == {list}
    second = reader.rows(_search(store, index, [query], 5, fields)[0], dynamic=dynamic)
    assert vectors(second) == {np.ndarray}
    _assert_same_rows(second, first)
    assert [row[layout.DOCUMENT] for row in second] == [row[layout.DOCUMENT] for row in first]
    # hits pymilvus has already decoded are read as they are
    decoded = _search(store, index, [query], 5, fields)[0]
    list(decoded)
    assert vectors(reader.rows(decoded, dynamic=dynamic)) == {list}
    # another set of lazy fields (no metadata) is proved anew
    bare = [layout.PK, layout.VECTOR]
    assert vectors(reader.rows(_search(store, index, [query], 5, bare)[0])) == {list}
    assert vectors(reader.rows(_search(store, index, [query], 5, bare)[0])) == {np.ndarray}
    # and so are a query's rows, another kind of result
    client = store.adapter._client  # type: ignore[attr-defined]

    def query_rows() -> Any:
        return reader.query_rows(client.query(index.name, filter=f'{layout.PK} >= ""',
                                              output_fields=fields, limit=7,
                                              consistency_level="Strong"), dynamic=dynamic)

    first_rows = query_rows()
    assert vectors(first_rows) == {list} and len(first_rows) == 7
    next_rows = query_rows()
    assert vectors(next_rows) == {np.ndarray}
    _assert_same_rows(next_rows, first_rows)


def test_queries_through_the_adapter_answer_as_the_reference(
        store: vectorport.Store) -> None:
    index = store.create_index(next(_names), _DIM, "cosine")
    try:
        rng = np.random.default_rng(5)
        rows = [{"id": f"k{i:02d}", "vector": rng.standard_normal(_DIM).astype(np.float32),
                 "metadata": {"n": i, "f": i / 3, "b": i % 2 == 0, "t": ["z", "a"]},
                 "document": f"doc {i}" if i % 3 else None} for i in range(40)]
        index.upsert(rows)
        reference = vectorport.connect("memory://").create_index("reference", _DIM, "cosine")
        reference.upsert(rows)
        for _ in range(6):
            query = rng.standard_normal(_DIM).astype(np.float32)
            got = index.query(query, top_k=7, include_vectors=True, include_documents=True)
            want = reference.query(query, top_k=7, include_vectors=True,
                                   include_documents=True)
            assert [(m.id, m.score, m.metadata, m.document) for m in got] == [
                (m.id, m.score, m.metadata, m.document) for m in want]
            for mine, theirs in zip(got, want, strict=True):
                assert mine.vector is not None and theirs.vector is not None
                assert mine.vector.tobytes() == theirs.vector.tobytes()
                assert not mine.vector.flags.writeable
    finally:
        store.delete_index(index.name)

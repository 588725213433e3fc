"""Column-wise upserts (:mod:`vectorport.adapters.milvus.columns`) on milvus-lite 3.

The request built from the columns must be the very message pymilvus builds from our
rows (checked here for arbitrary records: hostile ids, every metadata kind, missing and
unicode documents, extreme float32 values), the adapter must take that path only where
its probe proved it (dense collections of the current layout), and what it writes must
come back exactly, replaced and not merged, through both the plain and the bulk upsert.
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
pytest.importorskip("milvus_lite")

from vectorport.adapters.milvus import columns, layout
from vectorport.adapters.milvus.rows import record_row
from vectorport.core.types import Record
from vectorport.testing.milvus import lite_major_version, milvus_url

pytestmark = pytest.mark.skipif(lite_major_version() < 3,
                                reason="column-wise upserts are for milvus-lite 3 only")

_names = (f"vp_columns_{i}" for i in itertools.count())
_DIM = 3

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_value = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    _text,
    st.lists(_text, min_size=1, max_size=4),  # the facade refuses empty lists
)
_float32 = st.floats(width=32, allow_nan=False, allow_infinity=False)
_record = st.builds(
    lambda rid, vector, metadata, document: Record(
        id=rid, vector=np.array(vector, dtype=np.float32), metadata=metadata,
        document=document),
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=10),
    st.lists(_float32, min_size=_DIM, max_size=_DIM),
    st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1,
                            max_size=6), _value, max_size=4),
    st.one_of(st.none(), _text),
)


@pytest.fixture(scope="module")
def store() -> Iterator[vectorport.Store]:
    with milvus_url() as url, vectorport.connect(url) as store:
        if not getattr(store.adapter, "_columns", None):
            pytest.skip("column-wise upserts are for milvus-lite files")
        yield store


@pytest.fixture(scope="module")
def dense(store: vectorport.Store) -> Iterator[vectorport.Index]:
    index = store.create_index(next(_names), _DIM, "euclidean")
    yield index
    store.delete_index(index.name)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(_record, min_size=1, max_size=5, unique_by=lambda r: r.id),
       namespace=st.sampled_from(["", "ns", "a b"]))
def test_the_column_request_is_the_message_pymilvus_builds(
        store: vectorport.Store, dense: vectorport.Index, records: list[Record],
        namespace: str) -> None:
    from pymilvus.client.prepare import Prepare

    adapter: Any = store.adapter
    schema, timestamp = adapter._client._get_connection()._get_schema(dense.name)
    keys = adapter._filter_keys(dense.spec)
    assert keys == adapter.engine.filter_keys  # the dynamic field of the new layout
    pks = [layout.make_pk(namespace, r.id, encoded=False) for r in records]
    rows = [record_row(dense.spec, pk, namespace, r, adapter._engine, True, filter_keys=keys)
            for pk, r in zip(pks, records, strict=True)]
    theirs = Prepare.row_insert_param(
        dense.name, rows, "", schema["fields"], [], schema_timestamp=timestamp,
        enable_dynamic=bool(schema.get("enable_dynamic_field")))
    ours = columns.request(dense.name, pks, namespace, records, timestamp, filter_keys=keys)
    assert ours.SerializeToString() == theirs.SerializeToString()


_HOSTILE = ["a", "b\n'\"\\", "é ü", "x" * 60]


def _written(i: int, generation: int) -> dict[str, Any]:
    """Records whose metadata and documents change shape between generations."""
    # a denormal, a signed zero and a float32 that no shorter decimal writes
    vector = np.array([1e-45, -0.0, np.float32(0.1) * (i + 1)], dtype=np.float32)
    if generation == 0:
        return {"id": _HOSTILE[i], "vector": vector, "document": f"dok {i} ✓",
                "metadata": {"n": i, "f": float(i), "b": True, "s": "é", "t": ["z", "a"]}}
    return {"id": _HOSTILE[i], "vector": vector[::-1].copy(), "document": None,
            "metadata": {"f": 1.0 * i} if i % 2 else {}}


@pytest.mark.parametrize("bulk", [False, True])
def test_column_writes_come_back_exactly_and_replace(store: vectorport.Store,
                                                     bulk: bool) -> None:
    index = store.create_index(next(_names), _DIM, "cosine")
    try:
        write = index.upsert_bulk if bulk else index.upsert
        for generation in (0, 1):
            rows = [_written(i, generation) for i in range(len(_HOSTILE))]
            write(rows, namespace="n")
            assert store.adapter._columns._proven[index.name] is True  # type: ignore[attr-defined]
            got = index.fetch(_HOSTILE, namespace="n")
            assert sorted(got) == sorted(_HOSTILE)
            for row in rows:
                record = got[row["id"]]
                assert record.vector.tobytes() == np.asarray(row["vector"], np.float32).tobytes()
                assert record.document == row["document"]
                expected = {k: tuple(v) if isinstance(v, list) else v
                            for k, v in row["metadata"].items()}
                assert record.metadata == expected
                # kinds by key: key order is not kept (nor by pgvector's jsonb); in
                # the dynamic field milvus-lite stores keys sorted
                assert {k: type(v) for k, v in record.metadata.items()} == {
                    k: type(v) for k, v in expected.items()}
        assert index.count(namespace="n") == len(_HOSTILE)
        assert index.count(namespace="") == 0
    finally:
        store.delete_index(index.name)


def test_sparse_indexes_keep_the_row_path(store: vectorport.Store) -> None:
    index = store.create_index(next(_names), _DIM, "dotproduct", sparse=True)
    try:
        index.upsert([{"id": "a", "vector": [1, 2, 3], "sparse": {"indices": [1],
                                                                    "values": [0.5]}}])
        assert index.name not in store.adapter._columns._proven  # type: ignore[attr-defined]
        assert index.fetch(["a"])["a"].vector.tolist() == [1, 2, 3]
    finally:
        store.delete_index(index.name)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 40), dimension=st.integers(1, 1_100),
       seed=st.integers(0, 2**32 - 1))
def test_packed_vectors_are_the_field_pymilvus_extends(rows: int, dimension: int,
                                                       seed: int) -> None:
    """The vectors' field, merged from its packed bytes, serialises as extending it with
    the values as Python floats does (the lengths of every varint size: up to 176 KB),
    and :func:`columns.unpacked_floats` reads that serialised field back (as the
    column-wise reading of a search's hits does, :mod:`vectorport.adapters.milvus.hits`)."""
    from pymilvus.grpc_gen import schema_pb2

    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, size=(rows, dimension), dtype=np.uint64).astype(np.uint32)
    matrix = bits.view(np.float32)
    matrix[~np.isfinite(matrix)] = np.float32(-0.0)  # the facade lets no inf or NaN in
    matrix[0, 0] = np.float32(1e-45)  # a denormal
    theirs = schema_pb2.FloatArray()
    theirs.data.extend(matrix.ravel().tolist())
    ours = schema_pb2.FloatArray()
    ours.MergeFromString(columns.packed_floats(matrix))
    assert ours.SerializeToString() == theirs.SerializeToString()
    assert np.array(ours.data, dtype=np.float32).tobytes() == matrix.tobytes()
    values = columns.unpacked_floats(theirs.SerializeToString())
    assert values is not None and not values.flags.writeable
    assert values.tobytes() == matrix.tobytes()


@pytest.mark.parametrize("wire", [
    b"\x12\x04abcd",  # another field
    b"\x0a\x05abcde",  # a length that is not whole floats
    b"\x0a\x08abcd",  # shorter than its length
    b"\x0a\x04abcdx",  # longer than its length
    b"\x0a\x84",  # a varint cut short
])
def test_unpacked_floats_refuse_anything_but_the_one_packed_field(wire: bytes) -> None:
    assert columns.unpacked_floats(wire) is None
    empty = columns.unpacked_floats(b"")  # no values at all
    assert empty is not None and empty.size == 0

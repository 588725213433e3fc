"""Metadata numbers of full precision, kept and compared exactly on every Qdrant engine.

Qdrant Edge reads payload floats back (and compares them in filters) up to two units in
the last place off, so the adapter keeps each number's order key beside it
(:mod:`vectorport.adapters.qdrant.numbers`). The order-key algebra is checked by
hypothesis against Python's own float order; the engines are checked against the
filter oracle with the values stored as filter operands (the boundaries where a value
read back one unit off gives a wrong answer), and an Edge shard written in the former
layout gets its keys when it is opened.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("qdrant_client")
pytest.importorskip("qdrant_edge")

import qdrant_edge as qe

import vectorport
from vectorport.adapters.qdrant import codec, naming, numbers
from vectorport.adapters.qdrant.engines import edge as edge_engine
from vectorport.core.filters.oracle import matches
from vectorport.core.filters.parse import parse_filter

finite = st.floats(allow_nan=False, allow_infinity=False)


@given(finite, finite)
def test_order_keys_order_as_the_numbers_do(a: float, b: float) -> None:
    ka, kb = numbers.order_key(a), numbers.order_key(b)
    assert (ka < kb) == (a < b) and (ka == kb) == (a == b)
    assert numbers.split(ka) <= numbers.split(kb) if a <= b else numbers.split(ka) > numbers.split(kb)


@given(finite)
def test_a_key_gives_back_its_float(value: float) -> None:
    high, low = numbers.split(numbers.order_key(value))
    assert abs(high) < 2**38 and 0 <= low < 2**numbers.LOW_BITS  # exact as float64 in ranges
    kept = numbers.payload_keys({"x": value})
    assert kept == {naming.number_key("x", numbers.HIGH): high,
                    naming.number_key("x", numbers.LOW): low}
    # from a neighbour of the value, as Edge reads a float back
    near = math.nextafter(value, math.inf) if value < 1e308 else value
    read = numbers.read_float(near if value != 0 else value, kept, "x")
    assert read == value and math.copysign(1, read) == math.copysign(1, value)


def test_edge_indexes_the_order_keys(tmp_path: Path) -> None:
    with vectorport.connect(f"qdrant+edge://{tmp_path}/e") as store:
        store.create_index("keyed", 2, "euclidean").upsert(
            [{"id": "a", "vector": [1.0, 0.0], "metadata": {"x": 1.5, "s": "1.5", "b": True}}])
    shard = qe.EdgeShard.load(str(tmp_path / "e" / "keyed" / edge_engine.SHARD_DIR))
    try:
        schema = shard.info().payload_schema
    finally:
        shard.close()
    assert {k for k in schema if naming.is_number_key(k)} == {naming.number_key("x", numbers.HIGH)}
    assert schema[naming.number_key("x", numbers.HIGH)].data_type == qe.PayloadSchemaType.Integer


def test_range_filtered_hnsw_search_keeps_its_recall(tmp_path: Path) -> None:
    """The order keys' integer indexes keep Qdrant's payload-aware HNSW links (its
    filterable HNSW): a range condition keeping 30% of the points searches a connected
    graph, ACORN or not (turned off here, to see the links alone). Created with
    ``enable_hnsw=False`` they would build 1.6× faster (50,000 rows × 384 with three
    numbers: 26 against 41 s), and recall@10 at ``ef`` 10 fell to 0.81 here without
    ACORN (0.19 on the benchmark's 50,000 rows; with ACORN 0.76–0.94 there, against
    1.00 with the links and ACORN): the links stay."""
    import numpy as np

    from vectorport.conformance.base import canonical_records
    from vectorport.conformance.reference import reference_query

    rng = np.random.default_rng(1)
    centers = rng.standard_normal((40, 64))
    vectors = centers[rng.integers(0, 40, 4000)] + 0.35 * rng.standard_normal((4000, 64))
    queries = centers[rng.integers(0, 40, 50)] + 0.35 * rng.standard_normal((50, 64))
    rows = [{"id": f"r{i:04d}", "vector": v.tolist(), "metadata": {"bucket": i % 10}}
            for i, v in enumerate(vectors)]
    flt = {"bucket": {"$lt": 3}}
    with vectorport.connect(f"qdrant+edge://{tmp_path}/e?optimize_every=1000") as store:
        index = store.create_index("ranged", 64, "cosine", index_type="hnsw", backend_options={
            "qdrant": {"full_scan_threshold": 16, "indexing_threshold": 16}})
        index.upsert(rows)
        assert store.adapter._engine.indexed_vectors("ranged") == 4000  # searched by HNSW
        found = [{m.id for m in index.query(q.tolist(), filter=flt, top_k=10, ef=10,
                                            backend_options={"qdrant": {"acorn": False}})}
                 for q in queries]
    records = canonical_records(rows, 64)
    want = [{e.id for e in reference_query(records, "cosine", vector=q.tolist(),
                                           filter=parse_filter(flt), top_k=10)}
            for q in queries]
    recall = sum(len(f & w) for f, w in zip(found, want, strict=True)) / (10 * len(queries))
    assert recall >= 0.95


def test_an_int_is_keyed_by_its_float_and_bools_have_no_key() -> None:
    assert numbers.payload_keys({"x": 3}) == numbers.payload_keys({"x": 3.0})
    assert numbers.payload_keys({"x": -(2**52) - 1}) == numbers.payload_keys({"x": -(2.0**52) - 1})
    assert numbers.payload_keys({"b": True, "s": "1", "l": ["1"]}) == {}


def _values() -> list[object]:
    rng = random.Random(20261201)
    values: list[object] = [rng.uniform(-1e6, 1e6) for _ in range(24)]
    values += [rng.random() for _ in range(8)]
    values += [rng.choice([1, -1]) * rng.random() * 10.0 ** rng.randint(-300, 300) for _ in range(12)]
    values += [90.33333333333333, 0.1 + 0.2, 1 / 3, -0.0, 0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
               1.7976931348623157e308, 7, -7, 0, 2**53 - 1, 7.0, True, False, "7", ["7"]]
    return values


VALUES = _values()
OPERANDS = [v for v in VALUES if isinstance(v, (int, float)) and not isinstance(v, bool)
            and abs(v) < 2**53]


@pytest.fixture(params=["edge", "local"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[vectorport.Index]:
    url = f"qdrant+edge://{tmp_path}/e" if request.param == "edge" else f"qdrant+local://{tmp_path}/l"
    with vectorport.connect(url) as store:
        opened = store.create_index("numbers", 2, "euclidean")
        opened.upsert([{"id": f"r{i:02d}", "vector": [1.0, float(i)], "metadata": {"x": v, "i": i}}
                       for i, v in enumerate(VALUES)])
        yield opened


def _expected(flt: dict[str, object]) -> int:
    node = parse_filter(flt)
    return sum(matches(node, {"x": v}) for v in VALUES)


def test_numbers_come_back_as_written(index: vectorport.Index) -> None:
    got = index.fetch([f"r{i:02d}" for i in range(len(VALUES))])
    for i, value in enumerate(VALUES):
        stored = got[f"r{i:02d}"].metadata["x"]
        want = tuple(value) if isinstance(value, list) else value
        assert repr(stored) == repr(want) and type(stored) is type(want), (value, stored)
    ranked = index.query([1.0, 0.0], top_k=len(VALUES), include_metadata=True)
    assert {m.id: repr(m.metadata["x"]) for m in ranked if m.metadata} == {
        f"r{i:02d}": repr(tuple(v) if isinstance(v, list) else v) for i, v in enumerate(VALUES)}


@pytest.mark.parametrize("op", ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"])
def test_every_stored_number_is_an_exact_boundary(index: vectorport.Index, op: str) -> None:
    for operand in OPERANDS:
        flt = {"x": {op: operand}}
        assert index.count(filter=flt) == _expected(flt), flt


def test_sets_of_numbers_match_exactly(index: vectorport.Index) -> None:
    for start in range(0, len(OPERANDS), 5):
        chosen = OPERANDS[start:start + 5]
        for op in ("$in", "$nin", "$all"):
            flt = {"x": {op: chosen}}
            assert index.count(filter=flt) == _expected(flt), flt
        flt = {"$or": [{"x": {"$gt": chosen[0]}}, {"x": {"$not": {"$lte": chosen[-1]}}}]}
        assert index.count(filter=flt) == _expected(flt), flt


def test_an_edge_shard_of_the_former_layout_gets_its_keys(tmp_path: Path) -> None:
    url = f"qdrant+edge://{tmp_path}/e"
    values = [v for v in OPERANDS if isinstance(v, float)]
    with vectorport.connect(url) as store:
        index = store.create_index("legacy", 2, "euclidean")
        index.upsert([{"id": f"r{i:02d}", "vector": [1.0, float(i)], "metadata": {"x": v}}
                      for i, v in enumerate(values)])
    folder = tmp_path / "e" / "legacy"
    # as written before order keys existed: none, and no marker file
    shard = qe.EdgeShard.load(str(folder / edge_engine.SHARD_DIR))
    points, _ = shard.scroll(qe.ScrollRequest(limit=1000, with_payload=True, with_vector=False))
    read_back = {codec.record_id_of(p.payload): p.payload[naming.META]["x"] for p in points}
    for point in points:
        shard.update(qe.UpdateOperation.delete_payload([point.id], [
            naming.number_key("x", numbers.HIGH), naming.number_key("x", numbers.LOW)]))
    shard.close()
    (folder / edge_engine.NUMBER_KEYS_FILE).unlink()
    assert json.loads((folder / edge_engine.SPEC_FILE).read_text())  # still an index

    with vectorport.connect(url) as store:
        index = store.index("legacy")
        # what Edge had read back is what the keys now hold: reads and filters agree
        got = index.fetch(list(read_back))
        assert {k: r.metadata["x"] for k, r in got.items()} == read_back
        for value in read_back.values():
            assert index.count(filter={"x": value}) == sum(v == value for v in read_back.values())
            assert index.count(filter={"x": {"$gte": value}}) == sum(
                v >= value for v in read_back.values())
    assert (folder / edge_engine.NUMBER_KEYS_FILE).is_file()


def test_number_conditions_read_high_parts_by_range_on_either_index(tmp_path: Path) -> None:
    """New shards index the high parts for ranges only (the filters compare them by
    ranges alone, equality too); a shard indexed before, with the lookup structure as
    well, answers the same conditions exactly."""
    url = f"qdrant+edge://{tmp_path}/e"
    high = naming.number_key("x", numbers.HIGH)
    rows = [{"id": f"r{i:02d}", "vector": [1.0, float(i)], "metadata": {"x": v}}
            for i, v in enumerate(OPERANDS)]
    with vectorport.connect(url) as store:
        store.create_index("fresh", 2, "euclidean").upsert(rows)
        store.create_index("former", 2, "euclidean")
    folder = tmp_path / "e" / "former" / edge_engine.SHARD_DIR
    shard = qe.EdgeShard.load(str(folder))
    shard.update(qe.UpdateOperation.create_field_index(
        high, qe.IntegerIndexParams(lookup=True, range=True)))  # as indexed before
    shard.close()
    with vectorport.connect(url) as store:
        store.index("former").upsert(rows)
        for name in ("fresh", "former"):
            index = store.index(name)
            for operand in OPERANDS:
                for flt in ({"x": operand}, {"x": {"$gt": operand}}, {"x": {"$lte": operand}}):
                    assert index.count(filter=flt) == _expected_of(flt, OPERANDS), (name, flt)
    fresh = qe.EdgeShard.load(str(tmp_path / "e" / "fresh" / edge_engine.SHARD_DIR))
    former = qe.EdgeShard.load(str(folder))
    try:
        assert fresh.info().payload_schema[high].params.lookup is False
        assert former.info().payload_schema[high].params.lookup is True
    finally:
        fresh.close()
        former.close()


def _expected_of(flt: dict[str, object], values: list[object]) -> int:
    node = parse_filter(flt)
    return sum(matches(node, {"x": v}) for v in values)

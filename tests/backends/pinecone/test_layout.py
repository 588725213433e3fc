"""The two record layouts of the pinecone codec: layout 2 (indexes created now) marks only
ints beyond ±2^53 and integral floats, layout 1 (indexes written by earlier versions)
lists every int. Both must read back every kind exactly and answer every filter as the
contract's oracle does; an index of layout 1 keeps it, and is read with it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pinecone")

from pinecone import Pinecone

import vectorport
from vectorport.adapters.pinecone.capabilities import (
    PINECONE_CAPABILITIES,
    stored_metadata_bound,
    stored_metadata_bytes,
)
from vectorport.adapters.pinecone.codec import (
    FLOAT_KEYS,
    INT_VALUES,
    LAYOUT_BOUND,
    LAYOUT_EVERY_INT,
    LAYOUT_MARKED,
    LAYOUT_TAG,
    decode_metadata,
    encode_metadata,
    layout_of,
    metadata_bytes,
    stored_bytes_bound,
)
from vectorport.adapters.pinecone.filters import compile_filter
from vectorport.conformance import strategies
from vectorport.core import batch_validation, requests, validation
from vectorport.core.capabilities import ALL_FILTER_OPERATORS
from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters.ast import Filter
from vectorport.core.filters.oracle import matches
from vectorport.core.filters.parse import parse_filter
from vectorport.core.limits import check_record_limits
from vectorport.core.types import Record
from vectorport.testing.emulators import pinecone as emulator
from vectorport.testing.emulators.pinecone.filters import compile_filter as pinecone_predicate
from vectorport.testing.emulators.pinecone.server import PineconeEmulator
from vectorport.testing.emulators.pinecone.wire import render_metadata, stored_metadata

LAYOUTS = (LAYOUT_EVERY_INT, LAYOUT_MARKED)
KEY_VARIABLE = "VECTORPORT_TEST_PINECONE_LAYOUT_KEY"

# the kinds the layouts must keep apart, and the numbers at float64's edges
EDGE_NUMBERS = st.sampled_from([
    1, 1.0, True, False, 0, 0.0, -0.0, 2**53, 2**53 + 1, 2**53 + 3, -(2**53), -(2**53) - 1,
    2**63 - 1, -(2**63), 1e300, -1e300, 2.0**60, 0.5, 9007199254740993.0, 1e-300,
])
numbers = st.one_of(EDGE_NUMBERS, st.integers(-(2**63), 2**63 - 1),
                    st.floats(allow_nan=False, allow_infinity=False))
metadatas = st.dictionaries(
    st.sampled_from(["a", "b", "tags", "n", "big"]),
    st.one_of(strategies.metadata_values, numbers),
    max_size=5,
)


def as_stored(metadata: dict[str, Any], layout: int, document: str | None = None
              ) -> dict[str, Any]:
    """What Pinecone (the emulator) keeps of ``layout``'s encoding of ``metadata``."""
    wire = json.loads(json.dumps(encode_metadata(metadata, document, layout)))
    return stored_metadata(wire, limit=False)


def read_back(metadata: dict[str, Any], layout: int, document: str | None = None
              ) -> tuple[dict[str, Any], str | None]:
    """The metadata as the adapter reads it after Pinecone stored and rendered it."""
    rendered = json.loads(json.dumps(render_metadata(as_stored(metadata, layout, document))))
    return decode_metadata(rendered, layout)


def same_kinds(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a == b and all(type(a[k]) is type(b[k]) for k in a)


@pytest.mark.parametrize("layout", LAYOUTS)
@settings(max_examples=300, deadline=None)
@given(raw=metadatas, document=st.none() | st.text(max_size=20))
def test_every_layout_reads_back_values_and_kinds(
    layout: int, raw: dict[str, Any], document: str | None
) -> None:
    canonical = validation.metadata(raw)
    got, got_document = read_back(canonical, layout, document)
    assert same_kinds(got, canonical) and got_document == document


@pytest.mark.parametrize("layout", LAYOUTS)
def test_edge_numbers_keep_their_kind(layout: int) -> None:
    meta = {"one": 1, "one_f": 1.0, "flag": True, "big": 2**53 + 3, "neg_zero": -0.0,
            "huge": 1e300, "max": 2**63 - 1, "min": -(2**63), "edge": 2**53,
            "edge_f": 2.0**53, "below": -(2**53) - 1}
    got, _ = read_back(meta, layout)
    assert same_kinds(got, meta)


def test_subclasses_of_the_json_types_read_as_their_values() -> None:
    """Another JSON reader may hand back subclasses of str, int or list: they take the
    general path and read as the exact types do; what metadata cannot hold is left out."""

    class Text(str):
        pass

    class Whole(int):
        pass

    class Items(list):  # type: ignore[type-arg]
        pass

    raw = {"a": Text("x"), "n": Whole(3), "t": Items(["p", "q"]), "odd": None,
           "vp:num": ["n"]}
    got, document = decode_metadata(raw, LAYOUT_MARKED)
    assert got == {"a": "x", "n": 3, "t": ("p", "q")} and document is None
    assert type(got["n"]) is int and type(got["t"]) is tuple


def test_layout_2_marks_only_what_float64_loses() -> None:
    encoded = encode_metadata({"year": 2003, "bucket": 3, "rating": 0.5, "lang": "en"}, None,
                              LAYOUT_MARKED)
    assert INT_VALUES not in encoded and FLOAT_KEYS not in encoded
    encoded = encode_metadata({"big": 2**53 + 1, "edge": 2**53, "whole": 4.0}, None,
                              LAYOUT_MARKED)
    assert encoded[INT_VALUES] == [f"big={2**53 + 1}"] and encoded[FLOAT_KEYS] == ["whole"]
    old = encode_metadata({"year": 2003, "whole": 4.0}, None, LAYOUT_EVERY_INT)
    assert old[INT_VALUES] == ["year=2003"] and FLOAT_KEYS not in old


@settings(max_examples=200, deadline=None)
@given(raw=metadatas, document=st.none() | st.text(max_size=50))
def test_the_declared_size_bounds_every_layout(raw: dict[str, Any], document: str | None
                                               ) -> None:
    canonical = validation.metadata(raw)
    bound = stored_bytes_bound(canonical, document)
    both = metadata_bytes(encode_metadata(canonical, document, LAYOUT_BOUND))
    assert both <= bound <= both + 3  # counted, not built: one comma too many per list
    for layout in LAYOUTS:
        assert metadata_bytes(encode_metadata(canonical, document, layout)) <= bound


@settings(max_examples=200, deadline=None)
@given(raw=metadatas, document=st.none() | st.text(max_size=50))
def test_the_call_wide_bound_bounds_each_record(raw: dict[str, Any], document: str | None
                                                ) -> None:
    """The facade passes a whole upsert when ``stored_metadata_bound`` of its largest
    metadata (a bound of its JSON size, or the exact size) and longest document is
    within 40 KB: it must be at least each record's own measure."""
    canonical = validation.metadata(raw)
    record = Record(id="r", vector=np.ones(2, dtype=np.float32), metadata=canonical,
                    document=document)
    measured = stored_metadata_bytes(record)
    chars = len(document) if document is not None else 0
    assert stored_metadata_bound(validation.metadata_size(canonical), chars) >= measured
    batch = batch_validation.validated_batch([{"id": "r", "vector": np.ones(2), "metadata": raw,
                                               "document": document}], 2)
    if batch is not None:  # the fast path's own bound of the metadata
        assert stored_metadata_bound(batch.largest_metadata, batch.longest_document) >= measured


def _pinecone_target() -> requests.Target:
    with vectorport.connect("memory://") as store:
        spec = store.build_spec("batch_check", 2, "dotproduct")
    return requests.Target("pinecone", PINECONE_CAPABILITIES, spec)


PINECONE_TARGET = _pinecone_target()


def _outcome(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", [(r.id, dict(r.metadata), r.document) for r in fn()]
    except vectorport.VectorportError as exc:
        return "error", (type(exc), str(exc))


def _record_by_record(items: list[Any]) -> list[Record]:
    target, by_id = PINECONE_TARGET, {}
    for position, raw in enumerate(items):
        rec = validation.record(raw, 2, False, position)
        check_record_limits("pinecone", target.capabilities, target.spec, rec,
                            f"record {position}")
        by_id.pop(rec.id, None)
        by_id[rec.id] = rec
    return list(by_id.values())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(
    st.one_of(st.sampled_from(["a", "b~", "c\x7f", "x" * 74, "~" * 73, "~" * 74, "y" * 512]),
              st.text(st.characters(max_codepoint=0x7F), min_size=1, max_size=8)),
    st.one_of(metadatas, st.just({"t": "z" * 20_000}), st.just({"t": "z" * 37_000})),
    st.one_of(st.none(), st.text(max_size=8), st.just("d" * 5_000))), max_size=5))
def test_the_declared_limits_answer_as_record_by_record(
        rows: list[tuple[str, dict[str, Any], str | None]]) -> None:
    """Pinecone's declared limits (escaped id length, 36 KiB of user metadata, 40 KB with
    the reserved keys), decided for a whole call on the batch path, refuse exactly what
    the per-record check refuses, with the same message."""
    items = [{"id": rid, "vector": np.array([1.0, 0.5], dtype=np.float32), "metadata": meta,
              "document": doc} for rid, meta, doc in rows]
    got = _outcome(lambda: requests.build_records(PINECONE_TARGET, items))
    want = _outcome(lambda: _record_by_record(items))
    assert got == want


def test_layout_is_read_from_the_tags() -> None:
    assert layout_of(None) == LAYOUT_EVERY_INT
    assert layout_of({"vectorport_create": "x"}) == LAYOUT_EVERY_INT
    assert layout_of({LAYOUT_TAG: "2"}) == LAYOUT_MARKED


@pytest.mark.parametrize("layout", LAYOUTS)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(node=strategies.filters(ALL_FILTER_OPERATORS),
       rows=st.lists(metadatas, min_size=1, max_size=6))
def test_filters_over_every_layout_mean_what_the_oracle_means(
    layout: int, node: Filter, rows: list[dict[str, Any]]
) -> None:
    try:
        compiled = compile_filter(node)
    except UnsupportedFeatureError:
        return  # the declared deviations, checked in test_adapter
    assert compiled is not None
    predicate = pinecone_predicate(compiled)
    for raw in rows:
        canonical = validation.metadata(raw)
        assert predicate(as_stored(canonical, layout)) == matches(node, canonical), (
            compiled, canonical)


# -- an index written by an earlier version, through the emulator ----------------------------


@pytest.fixture(scope="module")
def emu() -> Iterator[PineconeEmulator]:
    with emulator.emulate() as running, pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_VARIABLE, "emulator-key")
        yield running


OLD_ROWS = {
    "a": {"n": 1, "f": 1.0, "flag": True, "big": 2**53 + 3, "tags": ["x", "y"], "s": "t"},
    "b": {"n": 2.0, "f": 7, "z": -0.0, "huge": 1e300, "s": "u"},
    "c": {"n": "one", "f": False, "big": -(2**63)},
    "d": {},
}
FILTERS = [
    {"n": 1}, {"n": 1.0}, {"n": {"$gte": 1}}, {"$not": {"n": {"$gt": 1}}},
    {"$not": {"f": {"$lt": 2}}}, {"f": {"$in": [1, 7]}}, {"flag": True},
    {"n": {"$ne": 2}}, {"big": {"$lt": 0}}, {"tags": {"$all": ["x", "y"]}},
    {"$nor": [{"s": "t"}, {"huge": {"$gt": 9e15}}]}, {"z": 0}, {"n": {"$exists": False}},
]


def test_an_index_of_layout_1_is_read_and_written_in_layout_1(emu: PineconeEmulator) -> None:
    pc = Pinecone(api_key="emulator-key", host=emu.server.url)
    model = pc.indexes.create(  # as earlier versions created indexes: no layout tag
        name="old-layout",
        schema={"fields": {"_values": {"type": "dense_vector", "dimension": 4,
                                       "metric": "cosine"}}},
        deployment={"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
        tags={"vectorport_create": "0123"}, timeout=-1,
    )
    raw = pc.index(host=model.host)
    rows = {rid: validation.metadata(meta) for rid, meta in OLD_ROWS.items()}
    raw.upsert(vectors=[(rid, [1.0, float(i), 0.5, 0.25],
                         encode_metadata(meta, None, LAYOUT_EVERY_INT))
                        for i, (rid, meta) in enumerate(rows.items())], namespace="")
    with vectorport.connect(f"pinecone://?api_key_env={KEY_VARIABLE}&host={emu.server.url}"
                            ) as store:
        old = store.index("old_layout")
        got = old.fetch(list(rows))
        for rid, meta in rows.items():
            assert same_kinds(dict(got[rid].metadata), meta), rid
        for text in FILTERS:
            node = parse_filter(text)
            expected = {rid for rid, meta in rows.items() if matches(node, meta)}
            found = {m.id for m in old.query([1, 0, 0, 0], top_k=10, filter=text)}
            assert found == expected, text
        old.upsert([("e", [1, 0, 0, 1], {"n": 5, "w": 3.0})])
        stored = raw.fetch(ids=["e"], namespace="").vectors["e"].metadata
        assert stored[INT_VALUES] == ["n=5"] and FLOAT_KEYS not in stored
        assert same_kinds(dict(old.fetch(["e"])["e"].metadata), {"n": 5, "w": 3.0})

        new = store.create_index("new_layout", 4)
        assert pc.indexes.describe("new-layout").tags[LAYOUT_TAG] == str(LAYOUT_MARKED)
        new.upsert([("e", [1, 0, 0, 1], {"n": 5, "w": 3.0})])
        host = pc.indexes.describe("new-layout").host
        stored = pc.index(host=host).fetch(ids=["e"], namespace="").vectors["e"].metadata
        assert INT_VALUES not in stored and stored[FLOAT_KEYS] == ["w"]
        assert same_kinds(dict(new.fetch(["e"])["e"].metadata), {"n": 5, "w": 3.0})
        for name in store.list_indexes():
            store.delete_index(name)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False),
                min_size=1, max_size=40))
def test_vector_values_are_sent_as_the_digits_of_their_floats(values: list[float]) -> None:
    """The upsert body holds each value exactly as the SDK writes the float list of
    ``tolist()`` (the same bytes, whether the values go as JSON made beforehand or as a
    list), so the stored float32 is the one written; -0.0, subnormals and the largest
    float32 included, and 0x15ae43fd, whose shortest float32 digits (``7.038531e-26``)
    read through float64 round to another float32."""
    from pinecone import Vector
    from pinecone._internal.data_plane_helpers import _vector_to_dict
    from pinecone._internal.http_client import _encode_json

    from vectorport.adapters.pinecone.codec import wire_values

    double_rounded = np.array([0x15AE43FD], dtype=np.uint32).view(np.float32)
    vector = np.array([*values, -0.0, 1e-45, 3.4028234663852886e38, *double_rounded],
                      dtype=np.float32)
    sent = _encode_json(_vector_to_dict(Vector("a", wire_values(vector))))
    assert sent == _encode_json({"id": "a", "values": vector.tolist()})
    assert np.array_equal(np.array(json.loads(sent)["values"], dtype=np.float32), vector)


_wire_metadata = st.one_of(st.none(), st.dictionaries(
    st.from_regex(r"[a-z]{1,8}", fullmatch=True),
    st.one_of(st.text(max_size=3_000), st.integers(-(2**63), 2**63 - 1), st.floats(
        allow_nan=False, allow_infinity=False), st.booleans(),
        st.lists(st.text(max_size=200), max_size=20).map(tuple)),
    max_size=8).map(lambda meta: encode_metadata(meta, None) or None))


@settings(max_examples=200, deadline=None)
@given(shapes=st.lists(st.tuples(st.text(max_size=40), _wire_metadata,
                                 st.integers(0, 300)), max_size=60),
       dimension=st.integers(1, 20_000))
def test_upsert_requests_are_cut_as_the_per_vector_estimate_cuts(
        shapes: list[tuple[str, dict[str, Any] | None, int]], dimension: int) -> None:
    """The ordinary upsert's requests: the same as cutting vector by vector by
    ``estimated_bytes``, whether the one-call bound lets them go whole or not."""
    from pinecone import SparseValues, Vector

    from vectorport.adapterkit import batches
    from vectorport.adapters.pinecone import bulk
    from vectorport.adapters.pinecone.codec import estimated_bytes, estimated_bytes_bound

    vectors = [Vector(rid, [1.0], SparseValues(list(range(terms)), [1.0] * terms)
                      if terms else None, meta) for rid, meta, terms in shapes]
    cut = list(batches(vectors, bulk.MAX_VECTORS, cost=lambda v: estimated_bytes(v, dimension),
                       max_cost=bulk.MAX_BYTES))
    assert bulk.requests_of(vectors, dimension) == cut
    assert estimated_bytes_bound(vectors, dimension) >= sum(
        estimated_bytes(v, dimension) for v in vectors)

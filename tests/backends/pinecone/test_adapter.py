"""The pinecone adapter's own pieces: the codec, the filter compiler (checked against the
contract's oracle *through the emulator's evaluator of Pinecone's filter language*), and
adapter behaviour against the emulator that the conformance suite does not reach:
consistency waits, fault mapping, exact ints, escaped ids, ties, splitting, limits."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pinecone")

import vectorport
from vectorport.adapters.pinecone.codec import (
    decode_id,
    decode_metadata,
    encode_id,
    encode_metadata,
)
from vectorport.adapters.pinecone.filters import compile_filter
from vectorport.conformance import strategies
from vectorport.core import validation
from vectorport.core.capabilities import ALL_FILTER_OPERATORS
from vectorport.core.errors import (
    ConfigError,
    ConsistencyTimeoutError,
    TransientBackendError,
    UnsupportedFeatureError,
    ValidationError,
)
from vectorport.core.filters.ast import Condition, Filter, walk
from vectorport.core.filters.oracle import matches
from vectorport.core.filters.parse import parse_filter
from vectorport.core.retry import NO_RETRY, RetryPolicy
from vectorport.core.store import ListableIndex
from vectorport.testing.emulators import pinecone as emulator
from vectorport.testing.emulators.pinecone.filters import (
    compile_filter as pinecone_predicate,
)
from vectorport.testing.emulators.pinecone.server import PineconeEmulator
from vectorport.testing.emulators.pinecone.wire import render_metadata, stored_metadata

KEY_VARIABLE = "VECTORPORT_TEST_PINECONE_EMULATOR_KEY"

# -- dense values -------------------------------------------------------------------------------

EXTREME_FLOAT32 = np.array([[-0.0, 0.0, 1e-45, -1e-45, 1.1754942e-38, 1.1754944e-38,
                             9.999999e16, -3.0e-39, 0.1, 16777217.0]], np.float32)
"""Signed zeros, denormals, the smallest normals, a large value (norms stay under the
facade's 1e18), a tenth and an int float32 rounds."""


# -- ids ----------------------------------------------------------------------------------------

id_text = st.text(min_size=1, max_size=30).filter(lambda s: "\x00" not in s)


@given(id_text)
def test_ids_round_trip_as_ascii(rid: str) -> None:
    wire = encode_id(rid)
    assert wire.isascii() and decode_id(wire) == rid
    if rid.isascii() and "~" not in rid and "\x7f" not in rid:
        assert wire == rid


@given(id_text, id_text)
def test_id_encoding_keeps_order_and_prefixes(a: str, b: str) -> None:
    assert (a < b) == (encode_id(a) < encode_id(b))
    assert a.startswith(b) == encode_id(a).startswith(encode_id(b))


# -- metadata ---------------------------------------------------------------------------------

big_ints = st.integers(-(2**63), 2**63 - 1)
metadatas = st.dictionaries(
    st.sampled_from(["a", "b", "tags", "n", "big"]),
    st.one_of(strategies.metadata_values, big_ints, st.floats(allow_nan=False,
                                                              allow_infinity=False)),
    max_size=5,
)


def as_stored(metadata: dict[str, Any], document: str | None = None) -> dict[str, Any]:
    """What Pinecone (the emulator) keeps for the adapter's encoding of ``metadata``."""
    wire = json.loads(json.dumps(encode_metadata(metadata, document)))
    return stored_metadata(wire, limit=False)


@given(metadatas, st.none() | st.text(max_size=20))
def test_metadata_round_trips_exactly(raw: dict[str, Any], document: str | None) -> None:
    canonical = validation.metadata(raw)
    rendered = json.loads(json.dumps(render_metadata(as_stored(canonical, document))))
    got, got_document = decode_metadata(rendered)
    assert got == canonical and got_document == document
    assert {type(v) for v in got.values()} == {type(v) for v in canonical.values()}


# -- filters --------------------------------------------------------------------------------------


def deviation(node: Filter) -> bool:
    for part in walk(node):
        if isinstance(part, Condition):
            values = part.value if isinstance(part.value, tuple) else (part.value,)
            if part.op in ("$gt", "$gte", "$lt", "$lte") and isinstance(part.value, str):
                return True
            if any(isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) >= 2**53
                   for v in values):
                return True
    return False


big_conditions = st.builds(
    Condition, st.sampled_from(["n", "big"]),
    st.sampled_from(["$eq", "$ne", "$gt", "$lte"]),
    st.sampled_from([2**53, 2**53 + 1, -(2**60), 9.1e15, 2**53 - 1, -(2**53) + 1]),
)
all_filters = strategies.filters(ALL_FILTER_OPERATORS) | st.builds(
    lambda a, b: parse_filter({"$or": [
        {"$not": _render(a)}, _render(b)]}), big_conditions, strategies.filters(
        ALL_FILTER_OPERATORS))


def _render(node: Filter) -> dict[str, Any]:
    from vectorport.core.filters.parse import render_filter

    return render_filter(node)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(node=all_filters, rows=st.lists(metadatas, min_size=1, max_size=8))
def test_compiled_filters_mean_what_the_oracle_means(
    node: Filter, rows: list[dict[str, Any]]
) -> None:
    """Compile, then evaluate with *Pinecone's* semantics over what Pinecone stores: the
    answer must be the oracle's, or the shape must be a declared deviation."""
    try:
        compiled = compile_filter(node)
    except UnsupportedFeatureError:
        assert deviation(node), node
        return
    assert not deviation(node), node
    assert compiled is not None
    predicate = pinecone_predicate(compiled)
    for raw in rows:
        canonical = validation.metadata(raw)
        assert predicate(as_stored(canonical)) == matches(node, canonical), (compiled, canonical)


def test_filter_cache_keeps_kinds_apart() -> None:
    as_bool = compile_filter(parse_filter({"m": True}))
    as_int = compile_filter(parse_filter({"m": 1}))
    as_float = compile_filter(parse_filter({"m": 1.0}))
    assert as_bool == {"m": {"$eq": True}}
    assert as_int == {"m": {"$eq": 1}} and type(as_int["m"]["$eq"]) is int  # type: ignore[index]
    assert type(as_float["m"]["$eq"]) is float  # type: ignore[index]


# -- the adapter against the emulator ------------------------------------------------------------


@pytest.fixture(scope="module")
def emu() -> Iterator[PineconeEmulator]:
    with emulator.emulate() as running, pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_VARIABLE, "emulator-key")
        yield running


def url(emu: PineconeEmulator, **options: Any) -> str:
    extra = "".join(f"&{k}={v}" for k, v in options.items())
    return f"pinecone://?api_key_env={KEY_VARIABLE}&host={emu.server.url}{extra}"


@pytest.fixture
def store(emu: PineconeEmulator) -> Iterator[vectorport.Store]:
    emu.faults.error_rate = emu.faults.lag_seconds = 0.0
    emu.report_lsn = True
    with vectorport.connect(url(emu)) as opened:
        yield opened
        for name in opened.list_indexes():
            opened.delete_index(name)


def test_url_and_credentials(emu: PineconeEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_PINECONE_KEY", "sk-very-secret-value")
    with pytest.raises(ConfigError, match="bogus"):
        vectorport.connect(f"pinecone://?api_key_env={KEY_VARIABLE}&bogus=1")
    with pytest.raises(ConfigError, match="no host or path"):
        vectorport.connect(f"pinecone://somewhere/x?api_key_env={KEY_VARIABLE}")
    monkeypatch.delenv("PINECONE_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="PINECONE_API_KEY"):
        vectorport.connect("pinecone://")
    with pytest.raises(ConfigError, match="consistency_timeout"):
        vectorport.connect(url(emu, consistency_timeout="soon"))
    with vectorport.connect(f"pinecone://?api_key_env=SECRET_PINECONE_KEY&host={emu.server.url}"
                            ) as wrong:
        assert "sk-very" not in repr(wrong.adapter)
        with pytest.raises(vectorport.BackendError) as info:
            wrong.list_indexes()
        assert "sk-very" not in str(info.value) and "sk-very" not in repr(info.value)


def test_lifecycle_mapping(store: vectorport.Store, emu: PineconeEmulator) -> None:
    index = store.create_index("my_index_1", 4, "dotproduct", sparse=True)
    assert "my-index-1" in emu.indexes
    assert store.list_indexes() == ["my_index_1"]
    info = store.describe_index("my_index_1")
    assert (info.dimension, info.metric, info.sparse, info.count) == (4, "dotproduct", True, 0)
    assert isinstance(index, ListableIndex)
    with pytest.raises(UnsupportedFeatureError, match="sparse vectors with the cosine"):
        store.create_index("sparse_cos", 4, "cosine", sparse=True)
    with pytest.raises(UnsupportedFeatureError, match="index parameters"):
        store.create_index("with_params", 4, index_params={"m": 16})
    with pytest.raises(ValidationError, match="pinecone index options: unknown option"):
        store.create_index("bad_opts", 4, backend_options={"pinecone": {"pods": 2}})
    with pytest.raises(ValidationError, match="query option"):
        index.query([1, 0, 0, 0], backend_options={"pinecone": {"scan_factor": 2}})
    tagged = store.create_index("tagged", 4, backend_options={
        "pinecone": {"tags": {"team": "search"}, "region": "eu-west-1"}})
    state = emu.indexes["tagged"]
    assert state.tags is not None and state.tags["team"] == "search"
    assert state.deployment["region"] == "eu-west-1"
    assert tagged.count() == 0


def test_exact_ints_floats_and_documents(store: vectorport.Store) -> None:
    index = store.create_index("exact", 4)
    meta = {"max": 2**63 - 1, "min": -(2**63), "big": 2**53 + 1, "two": 2.0, "one": 1,
            "flag": True, "tags": ["a", "b"]}
    index.upsert([{"id": "e", "vector": [1, 0, 0, 0], "metadata": meta, "document": "text"}])
    got = index.fetch(["e"])["e"]
    assert dict(got.metadata) == {**meta, "tags": ("a", "b")}
    assert type(got.metadata["two"]) is float and type(got.metadata["one"]) is int
    assert got.document == "text"
    assert index.count(filter={"big": {"$gt": 2**52}}) == 1
    with pytest.raises(UnsupportedFeatureError, match="2\\^53"):
        index.count(filter={"big": 2**53 + 1})
    with pytest.raises(UnsupportedFeatureError, match="strings"):
        index.query([1, 0, 0, 0], filter={"tags": {"$gt": "a"}})
    with pytest.raises(ValidationError, match="40960"):
        index.upsert([{"id": "d", "vector": [1, 0, 0, 0], "metadata": {"m": "x" * 30_000},
                       "document": "y" * 12_000}])
    assert index.count() == 1
    dot = store.create_index("exact_dot", 4, "dotproduct")
    with pytest.raises(ValidationError, match="all-zero"):  # a declared limit
        dot.upsert([("z", [0, 0, 0, 0])])


def test_unicode_ids_and_listing(store: vectorport.Store) -> None:
    index = store.create_index("listing", 4)
    assert isinstance(index, ListableIndex)
    ids = ["a~b", "a", "ab", "é", "é-2", "日本", "🙂", "z", "~", "\x7f"]
    index.upsert([(rid, [1, i, 0, 0]) for i, rid in enumerate(ids)])
    assert sorted(index.fetch(ids)) == sorted(ids)
    assert list(index.iter_ids(page_size=3)) == sorted(ids)
    page = index.list_ids(prefix="é", limit=1)
    assert page.ids == ("é",) and page.next_cursor is not None
    assert index.list_ids(prefix="é", limit=5, cursor=page.next_cursor).ids == ("é-2",)
    assert index.list_ids(prefix="a", limit=10).ids == ("a", "ab", "a~b")  # code points
    with pytest.raises(UnsupportedFeatureError, match="list_ids with a filter"):
        index.list_ids(filter={"x": 1})
    with pytest.raises(ValidationError, match="512"):  # a declared limit
        index.upsert([("日" * 100, [1, 0, 0, 0])])  # 300 bytes, 700 characters escaped
    index.delete(["日本", "🙂"])
    assert sorted(index.fetch(ids)) == sorted(set(ids) - {"日本", "🙂"})


def test_ties_at_the_cut_are_completed(store: vectorport.Store) -> None:
    index = store.create_index("ties", 4)
    ids = [f"t{i:02d}" for i in range(40)]
    index.upsert([(rid, [0, 1, 0, 0]) for rid in reversed(ids)] + [("best", [0, 1, 0.01, 0])])
    got = index.query([0, 1, 0, 0], top_k=6)
    assert [m.id for m in got] == ["t00", "t01", "t02", "t03", "t04", "t05"]
    assert [m.id for m in index.query([0, 1, 0.5, 0], top_k=3)] == ["best", "t00", "t01"]


def test_large_batches_are_split_by_size(store: vectorport.Store, emu: PineconeEmulator) -> None:
    index = store.create_index("split", 4)
    rows = [{"id": f"r{i:03d}", "vector": [1, i, 0, 0], "metadata": {"pad": "x" * 30_000}}
            for i in range(150)]
    before = emu.server.requests_served
    assert index.upsert(rows) == 150
    assert emu.server.requests_served - before >= 3  # 4.5 MB cannot go in one request
    assert index.count() == 150


def test_count_beyond_one_query(store: vectorport.Store) -> None:
    index = store.create_index("many", 4)
    index.upsert([(f"r{i:05d}", [1, i % 7, 0, 0], {"odd": i % 2}) for i in range(10_050)])
    assert index.count() == 10_050
    assert index.count(filter={"odd": {"$gte": 0}}) == 10_050
    assert index.count(filter={"odd": 1}) == 5_025


def test_strong_and_eventual_reads_under_lag(store: vectorport.Store,
                                             emu: PineconeEmulator) -> None:
    index = store.create_index("lagged", 4)
    emu.faults.lag_seconds = 0.4
    index.upsert([("a", [1, 0, 0, 0])])
    assert index.query([1, 0, 0, 0], consistency="eventual") == []
    started = time.monotonic()
    assert [m.id for m in index.query([1, 0, 0, 0])] == ["a"]
    assert time.monotonic() - started >= 0.2
    index.upsert([("b", [0, 1, 0, 0])], namespace="other")
    assert index.count("other") == 1 and index.list_namespaces() == ["", "other"]
    index.delete(["a"])  # returns once visible
    assert index.query([1, 0, 0, 0], consistency="eventual") == []
    index.upsert([("c", [1, 0, 0, 0], {"g": 1})])
    index.delete(filter={"g": 1})
    assert index.count() == 0
    emu.faults.lag_seconds = 0.0


def test_bounded_wait_ends_in_a_timeout(emu: PineconeEmulator) -> None:
    with vectorport.connect(url(emu, consistency_timeout="0.2")) as quick:
        index = quick.create_index("slow_lag", 4)
        try:
            emu.faults.lag_seconds = 2.0
            index.upsert([("a", [1, 0, 0, 0])])
            with pytest.raises(ConsistencyTimeoutError, match="consistency_timeout"):
                index.fetch(["a"])
            assert index.query([1, 0, 0, 0], consistency="eventual") == []
        finally:
            emu.faults.lag_seconds = 0.0
            quick.delete_index("slow_lag")


def test_without_lsn_upserts_wait_for_fetch(store: vectorport.Store,
                                             emu: PineconeEmulator) -> None:
    index = store.create_index("no_lsn", 4)
    emu.report_lsn = False
    emu.faults.lag_seconds = 0.2
    started = time.monotonic()
    index.upsert([("a", [1, 0, 0, 0])])
    assert time.monotonic() - started >= 0.15
    assert index.count() == 1 and [m.id for m in index.query([1, 0, 0, 0])] == ["a"]


def test_transient_failures_are_mapped(store: vectorport.Store, emu: PineconeEmulator) -> None:
    store.create_index("flaky", 4)
    with vectorport.connect(url(emu), retry=NO_RETRY) as strict:
        index = strict.index("flaky")
        emu.faults.error_rate = 1.0
        try:
            with pytest.raises(TransientBackendError, match="injected fault"):
                index.query([1, 0, 0, 0])
            with pytest.raises(TransientBackendError):
                index.upsert([("a", [1, 0, 0, 0])])
        finally:
            emu.faults.error_rate = 0.0
    # With a third of all answers failing, the adapter's control-plane retries (8) and
    # the facade's retries of idempotent operations (here 20) get every call through.
    with vectorport.connect(url(emu), retry=RetryPolicy(attempts=20, base_seconds=0.001)
                            ) as patient:
        emu.faults.error_rate = 0.3
        try:
            created = patient.create_index("flaky_two", 4)
            created.upsert([(f"r{i}", [1, i, 0, 0]) for i in range(20)])
            assert created.count() == 20
            patient.delete_index("flaky_two")
        finally:
            emu.faults.error_rate = 0.0


def test_vectors_come_back_as_float32(store: vectorport.Store) -> None:
    index = store.create_index("vectors", 4, "euclidean")
    index.upsert([{"id": "v", "vector": np.array([0.1, 0.2, 0.3, 0.4])}])
    (match,) = index.query([0.1, 0.2, 0.3, 0.4], include_vectors=True)
    assert match.vector is not None and match.vector.dtype == np.float32
    assert not match.vector.flags.writeable
    assert match.score == pytest.approx(1.0)
    assert os.environ.get(KEY_VARIABLE) == "emulator-key"


def test_extreme_float32_values_come_back_exactly(store: vectorport.Store) -> None:
    index = store.create_index("extremes", EXTREME_FLOAT32.shape[1], "dotproduct")
    rng = np.random.default_rng(7)
    vectors = np.vstack([EXTREME_FLOAT32, rng.standard_normal((40, EXTREME_FLOAT32.shape[1]))
                         .astype(np.float32) * np.float32(1e-30)])
    index.upsert([(f"r{i}", v) for i, v in enumerate(vectors)])
    index.upsert_bulk([(f"b{i}", v) for i, v in enumerate(vectors)])
    for prefix in ("r", "b"):
        fetched = index.fetch([f"{prefix}{i}" for i in range(len(vectors))])
        for i, vector in enumerate(vectors):
            assert fetched[f"{prefix}{i}"].vector.tobytes() == vector.tobytes()

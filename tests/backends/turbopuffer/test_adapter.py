"""The turbopuffer adapter beyond the conformance suite: naming, configuration, secrets,
patch, id listing, options, retries and the exactness of numeric filters across the
int / float columns. Everything runs through the official SDK against the emulator;
expected results come from the filter oracle or from the contract's rules.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("turbopuffer")

import vectorport
from vectorport.adapters.turbopuffer.filters import FilterCompiler
from vectorport.adapters.turbopuffer.naming import (
    MAX_NATIVE_ID_BYTES,
    Names,
    field_columns,
    native_id,
    parse_column,
)
from vectorport.core.errors import (
    BackendError,
    ConfigError,
    TransientBackendError,
    UnsupportedFeatureError,
    ValidationError,
)
from vectorport.core.filters import matches, parse_filter
from vectorport.core.retry import NO_RETRY
from vectorport.core.store import Index, ListableIndex, PatchableIndex, Store
from vectorport.testing.emulators.http import EmulatorServer, Faults
from vectorport.testing.emulators.turbopuffer import DEFAULT_API_KEY, running

KEY_ENV = "VECTORPORT_TEST_TURBOPUFFER_ADAPTER_KEY"
INDEX_NAMES = st.from_regex(r"\A[a-z][a-z0-9_]{2,44}\Z")
NAMESPACES = st.just("") | st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}\Z")
NATIVE_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9\-_.]{1,128}$")


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with running() as srv:
        yield srv


def connect(server: EmulatorServer, **extra: str) -> Store:
    os.environ[KEY_ENV] = DEFAULT_API_KEY
    options = "".join(f"&{k}={v}" for k, v in extra.items())
    return vectorport.connect(f"turbopuffer://?base_url={server.url}&api_key_env={KEY_ENV}{options}")


@pytest.fixture(scope="module")
def store(server: EmulatorServer) -> Iterator[Store]:
    with connect(server) as s:
        yield s


@pytest.fixture
def index(store: Store) -> Iterator[Index]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield store.create_index(name, 2, "cosine")
    store.delete_index(name, missing_ok=True)


# -- naming ---------------------------------------------------------------------------

@given(index=INDEX_NAMES, other=INDEX_NAMES, namespace=NAMESPACES)
def test_namespace_names_are_reversible_and_separate(index: str, other: str, namespace: str) -> None:
    names = Names()
    native = names.namespace(index, namespace)
    assert NATIVE_NAMESPACE_RE.match(native)
    assert names.parse(native) == (index, namespace)
    assert native.startswith(names.index_prefix(other)) == (index == other)
    assert names.parse(names.catalog) is None


@given(st.text(min_size=1, max_size=200).filter(lambda s: "\x00" not in s))
def test_native_ids_fit_and_stay_distinct(record_id: str) -> None:
    try:
        record_id.encode("utf-8")
    except UnicodeEncodeError:
        return
    native = native_id(record_id)
    assert len(native.encode("utf-8")) <= MAX_NATIVE_ID_BYTES
    short = len(record_id.encode("utf-8")) <= MAX_NATIVE_ID_BYTES and not record_id.startswith("~")
    assert (native == record_id) == short
    assert native_id(record_id + "x") != native


def test_metadata_columns_are_reversible() -> None:
    for kind, name in field_columns("year").items():
        assert parse_column(name) == (kind, "year")
    assert parse_column("vp_id") is None and parse_column("vp_doc") is None
    assert parse_column("vector") is None


def test_long_and_awkward_ids_roundtrip(index: Index) -> None:
    awkward = ["~starts-with-tilde", "x" * 512, "é" * 40, "plain", "a'b\"c", "🙂" * 20]
    index.upsert([(rid, [1, i], {"n": i}) for i, rid in enumerate(awkward)])
    assert sorted(index.fetch(awkward)) == sorted(awkward)
    assert {m.id for m in index.query([1, 0], top_k=10)} == set(awkward)
    assert isinstance(index, ListableIndex)
    assert list(index.iter_ids(page_size=2)) == sorted(awkward)
    index.delete(["x" * 512, "~starts-with-tilde"])
    assert sorted(index.fetch(awkward)) == sorted(set(awkward) - {"x" * 512, "~starts-with-tilde"})


@pytest.mark.parametrize("bulk", [False, True])
def test_a_field_of_many_kinds_in_one_write_keeps_each_records_kind(index: Index,
                                                                    bulk: bool) -> None:
    """One write's columns are built a field at a time: a field holding an int, a bool, a
    float, a string and a list in different records of the same write (and missing in
    one) must come back, and filter, by each record's own kind."""
    values: list[Any] = [1, True, 1.0, "1", ("1", "a"), None, 2**60, -0.0, False]
    records = [(f"r{i}", [1, i + 1], {"x": v, "n": i} if v is not None else {"n": i})
               for i, v in enumerate(values)]
    if bulk:
        index.upsert_bulk(records)
    else:
        index.upsert(records)
    fetched = index.fetch([r[0] for r in records])
    for rid, _, meta in records:
        got = dict(fetched[rid].metadata)
        assert {k: (type(v), v) for k, v in got.items()} == {
            k: (type(v), v) for k, v in meta.items()}
    for flt in ({"x": {"$eq": 1}}, {"x": {"$eq": True}}, {"x": {"$eq": "1"}},
                {"x": {"$exists": False}}, {"x": {"$gte": 1}}):
        expected = {rid for rid, _, meta in records if matches(parse_filter(flt), meta)}
        assert {m.id for m in index.query([1, 0], top_k=20, filter=flt)} == expected, flt


# -- configuration and secrets -------------------------------------------------------

@pytest.mark.parametrize("url", [
    "turbopuffer://",
    "turbopuffer://?region=gcp-us-central1&base_url=http://127.0.0.1:1",
    "turbopuffer://host?region=gcp-us-central1",
    "turbopuffer://?region=gcp-us-central1&colour=blue",
    "turbopuffer://?base_url=http://127.0.0.1:1&api_key=k&prefix=has/slash",
    "turbopuffer://?base_url=http://127.0.0.1:1&api_key=k&timeout=soon",
    "turbopuffer://?base_url=http://127.0.0.1:1&api_key_env=VECTORPORT_NO_SUCH_VARIABLE",
])
def test_bad_urls_are_config_errors(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TURBOPUFFER_API_KEY", raising=False)
    with pytest.raises(ConfigError):
        vectorport.connect(url)


def test_missing_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TURBOPUFFER_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="API key"):
        vectorport.connect("turbopuffer://?region=gcp-us-central1")


def test_the_api_key_never_leaks(server: EmulatorServer) -> None:
    secret = "tpuf_SECRET_" + uuid.uuid4().hex
    with vectorport.connect(f"turbopuffer://?base_url={server.url}&api_key={secret}",
                            retry=NO_RETRY) as wrong:
        assert secret not in repr(wrong) and secret not in repr(wrong.adapter)
        with pytest.raises(BackendError) as info:
            wrong.list_indexes()
        assert "401" in str(info.value)
        assert secret not in str(info.value) and secret not in repr(info.value)
        assert secret not in str(info.value.__cause__)
    with pytest.raises(ConfigError) as config:
        vectorport.connect(f"turbopuffer://?base_url={server.url}&api_key={secret}&bogus=1")
    assert secret not in str(config.value)


# -- optional protocols --------------------------------------------------------------

def test_patch(index: Index) -> None:
    assert isinstance(index, PatchableIndex)
    index.upsert([{"id": "p", "vector": [1, 0], "metadata": {"a": 1, "b": "x"},
                   "document": "old"}])
    assert index.patch("p", metadata={"a": "now a string", "b": None, "c": ("l1", "l2")},
                       document="new")
    got = index.fetch(["p"])["p"]
    assert dict(got.metadata) == {"a": "now a string", "c": ("l1", "l2")}
    assert got.document == "new"
    assert index.count(filter={"a": 1}) == 0
    assert index.count(filter={"a": "now a string"}) == 1
    assert index.count(filter={"b": {"$exists": True}}) == 0
    assert index.count(filter={"c": "l2"}) == 1
    assert not index.patch("missing", metadata={"a": 1})
    with pytest.raises(UnsupportedFeatureError):
        index.patch("p", vector=[0, 1])
    with pytest.raises(ValidationError):
        index.patch("p", metadata={"long": "x" * 5000})


def test_list_ids_pages_prefix_and_filter(index: Index) -> None:
    assert isinstance(index, ListableIndex)
    ids = [f"doc-{i:02d}" for i in range(25)] + ["other-1", "dod"]
    index.upsert([(rid, [1, i], {"n": i}) for i, rid in enumerate(ids)])
    assert list(index.iter_ids(page_size=4)) == sorted(ids)
    assert list(index.iter_ids(prefix="doc-", page_size=10)) == sorted(ids[:25])
    page = index.list_ids(prefix="doc-1", limit=3)
    assert page.ids == ("doc-10", "doc-11", "doc-12") and page.next_cursor is not None
    rest = index.list_ids(prefix="doc-1", limit=100, cursor=page.next_cursor)
    assert rest.ids == tuple(f"doc-{i}" for i in range(13, 20)) and rest.next_cursor is None
    assert list(index.iter_ids(filter={"n": {"$gte": 24}})) == ["doc-24", "dod", "other-1"]
    assert index.list_ids(namespace="empty").ids == ()


# -- options, consistency, limits ---------------------------------------------------------

def test_exact_option_and_strict_backend_options(index: Index) -> None:
    index.upsert([(f"e{i}", [1, i / 10]) for i in range(10)])
    approx = [m.id for m in index.query([1, 0.3], top_k=3)]
    exact = [m.id for m in index.query([1, 0.3], top_k=3,
                                       backend_options={"turbopuffer": {"exact": True}})]
    assert exact == approx
    with pytest.raises(ValidationError):
        index.query([1, 0], backend_options={"turbopuffer": {"ef": 10}})
    with pytest.raises(ValidationError):
        index.query([1, 0], backend_options={"turbopuffer": {"exact": "yes"}})


def test_create_index_options(store: Store) -> None:
    name = f"t_{uuid.uuid4().hex[:12]}"
    with pytest.raises(ValidationError):
        store.create_index(name, 2, backend_options={"turbopuffer": {"shards": 2}})
    created = store.create_index(name, 3, "euclidean",
                                 backend_options={"pgvector": {"anything": 1}})
    try:
        assert store.describe_index(name).spec == created.spec
    finally:
        store.delete_index(name)
    with pytest.raises(UnsupportedFeatureError):
        store.create_index(name, 2, "dotproduct")


def test_the_catalog_is_shared_by_connections(server: EmulatorServer, store: Store) -> None:
    name = f"t_{uuid.uuid4().hex[:12]}"
    store.create_index(name, 2, "euclidean").upsert([("a", [0, 1])], namespace="ns1")
    with connect(server) as other:
        info = other.describe_index(name)
        assert (info.dimension, info.metric, dict(info.namespaces)) == (2, "euclidean", {"ns1": 1})
        other.delete_index(name)
    assert name not in store.list_indexes()
    with connect(server, prefix="elsewhere.") as separate:
        assert name not in separate.list_indexes()


def test_strings_over_4_kib_are_refused_before_writing(index: Index) -> None:
    with pytest.raises(ValidationError, match="4096"):
        index.upsert([("ok", [1, 0]), ("big", [0, 1], {"text": "y" * 4097})])
    assert index.count() == 0


def test_eventual_consistency_is_passed_through() -> None:
    faults = Faults(lag_seconds=0.3)
    with running(faults=faults) as srv, connect(srv) as lagging:
        idx = lagging.create_index("lagging", 2)
        idx.upsert([("a", [1, 0])])
        assert [m.id for m in idx.query([1, 0], consistency="strong")] == ["a"]
        assert idx.query([1, 0], consistency="eventual") == []
        time.sleep(0.35)
        assert [m.id for m in idx.query([1, 0], consistency="eventual")] == ["a"]


def test_transient_failures_are_retried_then_reported() -> None:
    faults = Faults(error_rate=0.5, seed=11)
    with running(faults=faults) as srv:
        os.environ[KEY_ENV] = DEFAULT_API_KEY
        url = f"turbopuffer://?base_url={srv.url}&api_key_env={KEY_ENV}"
        with vectorport.connect(url, retry=NO_RETRY) as flaky:
            idx = flaky.create_index("flaky_index", 2)
            idx.upsert([("a", [1, 0])], namespace="n")
            assert flaky.describe_index("flaky_index").count == 1
            faults.error_rate = 1.0
            with pytest.raises(TransientBackendError) as info:
                idx.count("n")
            assert re.search(r"HTTP (429|503)", str(info.value))
            faults.error_rate = 0.5
            flaky.delete_index("flaky_index")
            assert flaky.list_indexes() == []


# -- filters --------------------------------------------------------------------------

def test_range_clauses_exclude_missing_values() -> None:
    compiled = FilterCompiler(set(field_columns("x").values())).compile(
        parse_filter({"x": {"$lt": 3}}))
    assert compiled == ["Or", [
        ["And", [["i__x", "NotEq", None], ["i__x", "Lt", 3]]],
        ["And", [["f__x", "NotEq", None], ["f__x", "Lt", 3.0]]],
    ]]


def test_fields_absent_from_the_schema_fold_to_constants(index: Index) -> None:
    index.upsert([("a", [1, 0], {"k": 1}), ("b", [0, 1])])
    assert index.count(filter={"never_written": 1}) == 0
    assert index.count(filter={"never_written": {"$ne": 1}}) == 2
    assert index.count(filter={"never_written": {"$exists": False}}) == 2
    assert index.count(filter={"$or": [{"never_written": 1}, {"k": 1}]}) == 1
    index.delete(filter={"never_written": "x"})
    assert index.count() == 2
    assert [m.id for m in index.query([1, 0], filter={"nope": {"$gt": 0}})] == []


NUMBERS = st.sampled_from([
    0, 1, -1, 2, 2.0, 2.5, -2.5, 1e-9, 2**53, 2**53 + 1, 2**53 + 2, float(2**53),
    float(2**53 + 2), 2**63 - 1, -(2**63), 9.3e18, -9.3e18, 1e300, 0.1, 3,
])
NUMERIC_OPS = st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"])


@pytest.fixture(scope="module")
def numeric_index(store: Store) -> Iterator[tuple[Index, list[dict[str, Any]]]]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    idx = store.create_index(name, 2)
    values: list[Any] = [0, 1, -1, 2, 2.0, 2.5, -2.5, 1e-9, 2**53, 2**53 + 1, 2**53 + 2,
                         float(2**53), float(2**53 + 2), 2**63 - 1, -(2**63), 0.1, 3, 1e300,
                         True, False, "2", ["2", "x"]]
    rows = [{"id": f"n{i}", "vector": [1, i], "metadata": {"v": v}} for i, v in enumerate(values)]
    rows.append({"id": "missing", "vector": [1, 0], "metadata": {"other": 1}})
    idx.upsert(rows)
    yield idx, rows
    store.delete_index(name, missing_ok=True)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(op=NUMERIC_OPS, operand=NUMBERS, more=st.lists(NUMBERS, max_size=2))
def test_numeric_filters_are_exact_across_int_and_float_columns(
    numeric_index: tuple[Index, list[dict[str, Any]]], op: str, operand: Any, more: list[Any],
) -> None:
    idx, rows = numeric_index
    value: Any = [operand, *more] if op in ("$in", "$nin") else operand
    raw = {"v": {op: value}}
    node = parse_filter(raw)
    expected = {r["id"] for r in rows if matches(node, r["metadata"])}
    assert idx.count(filter=raw) == len(expected), raw
    got = {m.id for m in idx.query([1, 0], top_k=len(rows), filter=raw)}
    assert got == expected, raw



# -- the write schema --------------------------------------------------------------------


def _columns(server: EmulatorServer, native: str) -> set[str]:
    import turbopuffer

    client = turbopuffer.Turbopuffer(api_key=DEFAULT_API_KEY, base_url=server.url,
                                     telemetry=False)
    try:
        return set(client.namespace(native).metadata().schema_)
    finally:
        client.close()


def test_each_field_is_declared_with_its_five_columns(server: EmulatorServer,
                                                      index: Index) -> None:
    index.upsert([("a", [1, 0], {"k": 1})])
    index.upsert([("b", [0, 1], {"k": "x", "later": True})])  # k declared before, later new
    columns = _columns(server, Names().namespace(index.name, ""))
    assert set(field_columns("k").values()) | set(field_columns("later").values()) <= columns
    got = {rid: dict(r.metadata) for rid, r in index.fetch(["a", "b"]).items()}
    assert got == {"a": {"k": 1}, "b": {"k": "x", "later": True}}


def test_a_namespace_another_client_deleted_comes_back_with_its_reserved_schema(
        server: EmulatorServer, index: Index) -> None:
    index.upsert([("a", [1, 0], {"n": 1, "f": 1.0})], namespace="ns")
    with connect(server) as other:
        other.index(index.name).delete_namespace("ns")
    # this connection declared n and f there before: it now sends the reserved attributes
    # only, and the document must still be no filterable string (those stop at 4 KiB)
    index.upsert([{"id": "b", "vector": [0, 1], "metadata": {"n": 2, "f": 2.0},
                   "document": "d" * 5_000}], namespace="ns")
    record = index.fetch(["b"], namespace="ns")["b"]
    assert (dict(record.metadata), record.document) == ({"n": 2, "f": 2.0}, "d" * 5_000)
    assert type(record.metadata["n"]) is int and type(record.metadata["f"]) is float
    assert index.count(filter={"n": {"$gt": 1}}, namespace="ns") == 1
    assert index.count(filter={"f": 2}, namespace="ns") == 1


@settings(max_examples=100, deadline=None)
@given(bits=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=64),
       form=st.sampled_from(["native", "big-endian", "float64", "strided", "writable"]))
def test_vectors_go_as_base64_of_little_endian_float32(bits: list[int], form: str) -> None:
    """A write's vectors are turbopuffer's documented binary form, whatever the array's
    dtype, byte order or layout, and read back bit for bit."""
    import base64

    import numpy as np

    from vectorport.adapters.turbopuffer.bulk import encoded_vector
    from vectorport.adapters.turbopuffer.codec import decode_vector

    values = np.array(bits, dtype=np.uint32).view(np.float32)
    values = np.where(np.isfinite(values), values, np.float32(-0.0)).astype(np.float32)
    given_array = {
        "native": values,
        "big-endian": values.astype(">f4"),
        "float64": values.astype(np.float64),
        "strided": np.repeat(values, 2)[::2],
        "writable": values.copy(),
    }[form]
    encoded = encoded_vector(given_array)
    assert encoded == base64.b64encode(values.astype("<f4").tobytes()).decode("ascii")
    assert decode_vector(encoded).tobytes() == values.astype("<f4").tobytes()


def test_a_scan_reads_each_page_with_one_query(server: EmulatorServer, index: Index) -> None:
    """The adapter scans natively: a page of whole records is one query of the ids after
    the cursor (through the facade's id listing it was a query for the ids and one more
    to fetch each 1,000 of them). Counted by the emulator."""
    records = [{"id": f"r{i:04d}", "vector": [1.0, i / 250], "metadata": {"n": i}}
               for i in range(250)]
    index.upsert(records)
    index.count()  # the write settled and the namespace's schema known before counting
    before = server.requests_served
    pages = list(index.scan(page_size=100))
    assert server.requests_served - before == len(pages) == 3
    got = [r for page in pages for r in page.records]
    assert [r.id for r in got] == [r["id"] for r in records]
    assert got[7].metadata == {"n": 7}
    assert [float(x) for x in got[7].vector] == pytest.approx([1.0, 7 / 250], rel=1e-6)

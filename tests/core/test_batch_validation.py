"""The one-pass validation of an upsert gives exactly the answers of validating record
by record: the same records (ids, float32 vectors, metadata, documents) when the call
is valid, and the same error type and message (the first bad record's) when it is not.

The reference is :func:`validation.record` applied record by record followed by the
declared-limits check, which is what ``build_records`` did before the batch path.
Inputs mix the common kinds (which take the batch path) with every unusual one (which
must be handed to the per-record path), valid and invalid.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vectorport
from vectorport.core import batch_validation, limits, requests, validation
from vectorport.core.capabilities import Limits
from vectorport.core.errors import VectorportError
from vectorport.core.limits import check_record_limits, vector_limits_hold
from vectorport.core.types import Record

DIM = 4


def _target(metric: str = "cosine") -> requests.Target:
    with vectorport.connect("memory://") as store:
        spec = store.build_spec("batch_check", DIM, metric)
        return requests.Target(store.backend, store.capabilities, spec)


TARGETS = {metric: _target(metric) for metric in ("cosine", "euclidean")}


def _declaring(caps: Any) -> requests.Target:
    return dataclasses.replace(TARGETS["cosine"], backend="declared", capabilities=caps)


# backends' declared limits the plain-batch shortcut (limits.plain_batch_holds) must
# honour exactly: no NUL anywhere (pgvector), a document size (milvus), a short id
_LOCAL_CAPS = TARGETS["cosine"].capabilities
DECLARED = {
    "no_nul": _declaring(dataclasses.replace(
        _LOCAL_CAPS, limits=dataclasses.replace(_LOCAL_CAPS.limits, allow_nul=False))),
    "short_docs_and_ids": _declaring(dataclasses.replace(
        _LOCAL_CAPS, limits=dataclasses.replace(_LOCAL_CAPS.limits, max_document_bytes=3,
                                                max_id_bytes=2))),
    "short_strings": _declaring(dataclasses.replace(
        _LOCAL_CAPS, limits=dataclasses.replace(_LOCAL_CAPS.limits, max_string_bytes=5))),
    "small_metadata": _declaring(dataclasses.replace(_LOCAL_CAPS, max_metadata_bytes=30)),
}


def _stored_id(rid: str) -> int:
    """An id measure of the escaping kind (Pinecone's): some characters take three."""
    return len(rid) + 2 * sum(not c.isalnum() for c in rid)


def _stored_record(record: Record) -> int:
    """A record-size measure of the reserved-keys kind: metadata and document as sent,
    plus a marker per number."""
    numbers = sum(type(v) in (int, float) for v in record.metadata.values())
    document = len((record.document or "").encode("utf-8"))
    return validation.metadata_size(record.metadata) + document + 8 * numbers


def _stored_record_bound(metadata_json: int, document_chars: int) -> int:
    # a number's entry takes at least 5 bytes ("k":1,) against its 8 of marker
    return metadata_json + 4 * document_chars + 2 * metadata_json


# the measures a backend declares as functions (Pinecone: an escaped id length, a record
# size with reserved keys, and a metadata limit below the contract's), with and without
# the record-size bound that lets the batch path decide the whole call
DECLARED["measured"] = _declaring(dataclasses.replace(
    _LOCAL_CAPS, max_metadata_bytes=60, limits=dataclasses.replace(
        _LOCAL_CAPS.limits, max_id_bytes=4, id_size=_stored_id, record_size=_stored_record,
        max_record_bytes=200, record_size_bound=_stored_record_bound)))
DECLARED["measured_unbounded"] = _declaring(dataclasses.replace(
    DECLARED["measured"].capabilities, limits=dataclasses.replace(
        DECLARED["measured"].capabilities.limits, record_size_bound=None)))


def _per_record(target: requests.Target, items: list[Any]) -> list[Record]:
    spec, caps = target.spec, target.capabilities
    by_id: dict[str, Record] = {}
    for position, raw in enumerate(items):
        rec = validation.record(raw, spec.dimension, spec.sparse, position)
        check_record_limits(target.backend, caps, spec, rec, f"record {position}")
        by_id.pop(rec.id, None)
        by_id[rec.id] = rec
    return list(by_id.values())


def _outcome(fn: Any) -> tuple[str, Any]:
    try:
        result = fn()
    except VectorportError as exc:
        return "error", (type(exc), str(exc))
    return "ok", result


def _same_records(got: list[Record], want: list[Record]) -> None:
    assert [r.id for r in got] == [r.id for r in want]
    for a, b in zip(got, want, strict=True):
        assert a.vector.dtype == np.float32 and not a.vector.flags.writeable
        assert a.vector.tobytes() == b.vector.tobytes()  # bit for bit, not approximately
        assert dict(a.metadata) == dict(b.metadata)
        assert {k: type(v) for k, v in a.metadata.items()} == {
            k: type(v) for k, v in b.metadata.items()}
        assert a.document == b.document and a.sparse == b.sparse


def _check(items: list[Any], metric: str = "cosine",
           target: requests.Target | None = None) -> None:
    target = target or TARGETS[metric]
    got = _outcome(lambda: requests.build_records(target, items))
    want = _outcome(lambda: _per_record(target, items))
    assert got[0] == want[0], (got, want)
    if got[0] == "error":
        assert got[1] == want[1]
    else:
        _same_records(got[1], want[1])


floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
numbers = st.one_of(st.floats(-10, 10), st.integers(-5, 5), floats,
                    st.sampled_from([1e20, 3e38, 4e38, -1e300, 0.0]))
texts = st.one_of(st.text(max_size=8), st.sampled_from(["", "a\x00b", "\ud800", "é", "x" * 600]))
keys = st.one_of(st.sampled_from(["year", "lang", "tags", "k_1", "_x"]),
                 st.sampled_from(["1bad", "", "has space", "x" * 65]), st.integers(0, 3))
values = st.one_of(
    texts, st.booleans(), st.integers(-(2**64), 2**64), floats,
    st.lists(texts, max_size=3), st.tuples(texts), st.lists(st.integers(0, 3), max_size=2),
    st.just(None), st.just(np.int64(7)), st.just(np.float32(1.5)), st.just({"nested": 1}),
    st.just("y" * 41_000),
)
metadatas = st.one_of(st.just(None), st.dictionaries(keys, values, max_size=4),
                      st.just([("a", 1)]))


@st.composite
def vectors(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["f32", "f64", "int", "list", "wrong_dim", "2d", "bool", "zero"]))
    row = [draw(numbers) for _ in range(DIM)]
    if kind == "f32":
        with np.errstate(over="ignore"):
            return np.asarray(row, dtype=np.float64).astype(np.float32)
    if kind == "f64":
        return np.asarray(row, dtype=np.float64)
    if kind == "int":
        return np.arange(DIM, dtype=np.int64) * draw(st.integers(-3, 3))
    if kind == "list":
        return row
    if kind == "wrong_dim":
        return np.ones(DIM + 1)
    if kind == "2d":
        return np.ones((1, DIM))
    if kind == "bool":
        return np.ones(DIM, dtype=bool)
    return np.zeros(DIM)


@st.composite
def raw_records(draw: st.DrawFn) -> Any:
    rid = draw(st.one_of(st.sampled_from(["a", "b", "c", "d"]), texts, st.just(5)))
    vector, meta = draw(vectors()), draw(metadatas)
    shape = draw(st.sampled_from(["tuple", "dict", "record", "values", "extra", "bare"]))
    document = draw(st.one_of(st.just(None), texts, st.just(3)))
    if shape == "tuple":
        return (rid, vector, meta)
    if shape == "dict":
        return {"id": rid, "vector": vector, "metadata": meta, "document": document}
    if shape == "values":
        return {"id": rid, "values": vector}
    if shape == "extra":
        return {"id": rid, "vector": vector, "colour": "red"}
    if shape == "record":
        return Record(id=rid, vector=vector, metadata=meta or {}, document=document)
    return rid


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(raw_records(), max_size=6), st.sampled_from(["cosine", "euclidean"]))
def test_batch_path_answers_as_record_by_record(items: list[Any], metric: str) -> None:
    _check(items, metric)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(raw_records(), max_size=6), st.sampled_from(sorted(DECLARED)))
def test_declared_limits_are_kept_on_the_batch_path(items: list[Any], declared: str) -> None:
    _check(items, target=DECLARED[declared])


@pytest.mark.parametrize(("declared", "record"), [
    ("no_nul", ("a", np.ones(DIM, dtype=np.float32), {"lang": "e\x00n"})),
    ("no_nul", ("a", np.ones(DIM, dtype=np.float32), {"tags": ["x", "\x00"]})),
    ("short_docs_and_ids", {"id": "ab", "vector": np.ones(DIM, dtype=np.float32),
                            "document": "four"}),
    ("short_docs_and_ids", {"id": "ab", "vector": np.ones(DIM, dtype=np.float32),
                            "document": "é"}),  # 2 bytes: allowed
    ("short_docs_and_ids", ("abc", np.ones(DIM, dtype=np.float32))),
    ("short_strings", ("a", np.ones(DIM, dtype=np.float32), {"lang": "sixsix"})),
    ("short_strings", ("a", np.ones(DIM, dtype=np.float32), {"tags": ["ok", "éé"]})),  # 4 bytes
    ("short_strings", ("a", np.ones(DIM, dtype=np.float32), {"tags": ["ok", "ééé"]})),  # 6
    # 30 bytes as compact JSON: at the limit, and one over it
    ("small_metadata", ("a", np.ones(DIM, dtype=np.float32), {"lang": "x" * 19})),
    ("small_metadata", ("a", np.ones(DIM, dtype=np.float32), {"lang": "x" * 20})),
    ("small_metadata", ("a", np.ones(DIM, dtype=np.float32), {"y": 2**62, "z": -1.5e-300})),
])
def test_each_declared_limit_decides_as_record_by_record(declared: str, record: Any) -> None:
    good = ("b", np.ones(DIM, dtype=np.float32), {"lang": "en"})
    _check([good, record, good], target=DECLARED[declared])


_ONES = np.ones(DIM, dtype=np.float32)


@pytest.mark.parametrize("declared", ["measured", "measured_unbounded"])
@pytest.mark.parametrize("record", [
    ("b.c", _ONES),  # 3 + 2 escaped: over 4
    ("bc", _ONES, {"n": 1, "m": 2.5, "lang": "en"}),
    ("bc", _ONES, {"lang": "x" * 45}),  # metadata over 60
    {"id": "bc", "vector": _ONES, "metadata": {"lang": "x" * 40, "n": 1},
     "document": "d" * 140},  # 140 + 60 + 8: over 200
    {"id": "bc", "vector": _ONES, "metadata": {"lang": "x" * 40}, "document": "d" * 40},
    {"id": "bc", "vector": _ONES, "document": ""},
    {"id": "bc", "vector": _ONES, "document": "é" * 99},  # 198 bytes and the {}: at 200
    {"id": "bc", "vector": _ONES, "document": "é" * 100},  # over 200
], ids=["escaped-id", "numbers", "metadata", "record", "document", "empty-doc", "utf8-at",
        "utf8-over"])
def test_measured_limits_decide_as_record_by_record(declared: str, record: Any) -> None:
    good = ("b", _ONES, {"lang": "en"})
    _check([good, record, good], target=DECLARED[declared])
    _check([record], target=DECLARED[declared])


def test_a_declared_record_size_bound_spares_the_per_record_pass() -> None:
    """With a bound the call is decided at once; without one each record is measured."""
    rows = [(f"r{i}", _ONES, {"lang": "en", "n": i}) for i in range(4)]
    batch = batch_validation.validated_batch(rows, DIM)
    assert batch is not None
    holds = {name: limits.plain_batch_holds(
        DECLARED[name].capabilities, batch.records, batch.longest_text, batch.longest_id,
        batch.has_documents, batch.largest_metadata, batch.longest_document)
        for name in ("measured", "measured_unbounded")}
    assert holds == {"measured": True, "measured_unbounded": False}


def _no_nul(size: int) -> st.SearchStrategy[str]:
    """Text of the common kind (a NUL is rare, and is left to the per-record path)."""
    return st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                   max_size=size)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]),
                          st.lists(st.floats(-1e3, 1e3, width=32), min_size=DIM, max_size=DIM),
                          st.dictionaries(st.sampled_from(["year", "lang", "tags"]),
                                          st.one_of(st.integers(-(2**63), 2**63 - 1), _no_nul(4),
                                                    st.lists(_no_nul(3), min_size=1),
                                                    st.floats(-5, 5), st.booleans()),
                                          max_size=3)), min_size=1, max_size=8))
def test_valid_calls_take_the_batch_path(rows: list[tuple[str, list[float], dict[str, Any]]]
                                         ) -> None:
    """Common valid input really is answered by the batch path (not always handed on)."""
    items = [(rid, np.asarray(vec, dtype=np.float32), meta) for rid, vec, meta in rows]
    batch = batch_validation.validated_batch(items, DIM)
    assert batch is not None
    want = [validation.record(raw, DIM, False, i) for i, raw in enumerate(items)]
    _same_records(batch.records, want)
    _check(items, "euclidean")


_COLUMN_VALUES = st.one_of(
    st.integers(-(2**64), 2**64), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e308, -1e308, 2**63 - 1, -(2**63), True, "", "\ud800", "a\x00", "é"]),
    _no_nul(3), st.lists(_no_nul(2), max_size=2), st.tuples(_no_nul(2)),
    st.lists(st.one_of(_no_nul(2), st.integers(0, 2)), min_size=1, max_size=2),
    st.just(np.int64(3)), st.just("z" * 14_000))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["year", "lang", "tags", "9bad"]), min_size=1, max_size=3,
                unique=True),
       st.lists(st.lists(_COLUMN_VALUES, min_size=3, max_size=3), min_size=1, max_size=8),
       st.booleans(), st.sampled_from(sorted(DECLARED)))
def test_records_sharing_keys_are_checked_a_column_at_a_time_as_one_by_one(
        keys: list[str], rows: list[list[Any]], shuffle: bool, declared: str) -> None:
    """The column-at-a-time check of records with one key set (the common call, mostly
    valid, now and then one odd value in a column) answers as record by record, and
    keeps the kinds; with ``shuffle`` the records list the same keys in different
    orders."""
    items = []
    for position, values in enumerate(rows):
        pairs = list(zip(keys, values, strict=False))
        if shuffle and position % 2:
            pairs.reverse()
        items.append((f"r{position}", np.ones(DIM, dtype=np.float32), dict(pairs)))
    _check(items, "euclidean")
    _check(items, target=DECLARED[declared])


def test_metadata_is_copied_and_lists_become_tuples_a_column_at_a_time() -> None:
    metas = [{"tags": ["a", "b"], "lang": "en", "n": 1} for _ in range(5)]
    items = [(f"r{i}", np.ones(DIM, dtype=np.float32), meta) for i, meta in enumerate(metas)]
    records = requests.build_records(TARGETS["cosine"], items)
    metas[0]["tags"].append("c")
    metas[1]["lang"] = "fr"
    assert [dict(r.metadata) for r in records] == [
        {"tags": ("a", "b"), "lang": "en", "n": 1}] * 5
    assert [list(r.metadata) for r in records] == [["tags", "lang", "n"]] * 5  # key order


def test_norm_at_the_limit_is_decided_by_the_per_record_rule() -> None:
    limit = validation.MAX_VECTOR_NORM
    for scale in (1 - 1e-12, 1.0, 1 + 1e-12, 1 - 1e-8):
        vec = np.array([limit * scale, 0, 0, 0])
        _check([("a", vec)], "euclidean")
    assert batch_validation.stacked_vectors([np.array([limit * 0.999, 0, 0, 0])]) is not None


def test_metadata_near_the_size_limit_is_measured_exactly() -> None:
    for size in (40 * 1024 - 12, 40 * 1024 - 11, 40 * 1024 - 10, 40 * 1024):
        meta = {"t": "x" * size}
        _check([("a", np.ones(DIM), meta)])
    escaped = {"t": "\x01" * 7000}  # 6 bytes each in JSON: 42,000 bytes
    _check([("a", np.ones(DIM), escaped)])


def test_caller_arrays_are_not_aliased() -> None:
    vec = np.ones(DIM, dtype=np.float32)
    [rec] = requests.build_records(TARGETS["cosine"], [("a", vec)])
    vec[0] = 5.0
    assert rec.vector[0] == 1.0


def test_an_iterable_failing_part_way_raises_after_earlier_records_are_checked() -> None:
    def bad_after_invalid() -> Any:
        yield ("a", np.ones(DIM))
        yield ("b", [math.nan] * DIM)
        raise KeyError("source broke")

    def bad_after_valid() -> Any:
        yield ("a", np.ones(DIM))
        raise KeyError("source broke")

    with pytest.raises(vectorport.ValidationError, match="record 1"):
        requests.build_records(TARGETS["cosine"], bad_after_invalid())
    with pytest.raises(KeyError, match="source broke"):
        requests.build_records(TARGETS["cosine"], bad_after_valid())


def test_repeated_ids_keep_the_last_in_its_position() -> None:
    items = [("a", np.ones(DIM)), ("b", np.ones(DIM)), ("a", np.full(DIM, 2.0))]
    _check(items)
    got = requests.build_records(TARGETS["cosine"], items)
    assert [r.id for r in got] == ["b", "a"] and got[1].vector[0] == 2.0


def _query_reference(value: Any, cosine: bool) -> Any:
    """The query checks as numpy states them: finite float32, ``norm(axis=-1)`` at most
    the limit, and for cosine ``norm`` (1-d) at least the minimum."""
    with np.errstate(over="ignore", invalid="ignore"):
        as32 = np.ascontiguousarray(value, dtype=np.float32)
    if not np.isfinite(as32).all():
        raise vectorport.ValidationError("not finite")
    if np.linalg.norm(as32.astype(np.float64), axis=-1) > validation.MAX_VECTOR_NORM:
        raise vectorport.ValidationError("norm")
    if cosine and float(np.linalg.norm(as32.astype(np.float64))) < validation.MIN_COSINE_NORM:
        raise vectorport.ValidationError("zero")
    return as32


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(numbers, st.sampled_from([5e17, 7.07e17, 1e-18, 7.1e-19, 1e-30])),
                min_size=2, max_size=2), st.booleans())
def test_query_vector_checks_as_numpy_norms_do(row: list[float], cosine: bool) -> None:
    with np.errstate(over="ignore"):
        value = np.asarray(row, dtype=np.float64)
    got = _outcome(lambda: validation.query_vector(value, 2, cosine))
    want = _outcome(lambda: _query_reference(value, cosine))
    assert got[0] == want[0]
    if got[0] == "ok":
        assert got[1].tobytes() == want[1].tobytes() and not got[1].flags.writeable


# -- the backend's vector limits decided for a whole batch -------------------------------

_SCALES = st.sampled_from([0.0, 1e-30, 1e-19, 1e-18, 2e-18, 4e-18, 5e-18, 1e-17, 1.0,
                           65503.0, 65504.0, 65505.0, 1e5])


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dotproduct"])
@pytest.mark.parametrize("limits", [
    Limits(), Limits(allow_zero_vector=False), Limits(max_abs_value=65504.0),
], ids=["plain", "no-zero", "halfvec"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scales=st.lists(_SCALES, min_size=1, max_size=6), seed=st.integers(0, 2**16))
def test_the_batch_vector_check_never_passes_a_vector_the_per_record_check_refuses(
        metric: str, limits: Limits, scales: list[float], seed: int) -> None:
    """vector_limits_hold may say "not sure"; when it says "all pass", each vector passes
    the per-record check with its own arithmetic (near the cosine minimum and the halfvec
    bound included)."""
    rng = np.random.default_rng(seed)
    rows = []
    for scale in scales:
        unit = rng.normal(size=DIM)
        rows.append({"id": f"r{len(rows)}", "vector": unit / np.abs(unit).max() * scale})
    batch = batch_validation.validated_batch(rows, DIM)
    if batch is None:
        return  # the per-record path decides alone
    spec = dataclasses.replace(TARGETS["cosine"].spec, metric=metric)
    caps = dataclasses.replace(TARGETS["cosine"].capabilities, limits=limits)
    if vector_limits_hold(spec, limits, batch.min_squared_norm, batch.max_abs_component):
        for rec in batch.records:
            check_record_limits("memory", caps, spec, rec, "record")
    else:  # "not sure" must mean some vector is near or past a rule
        assert any(s <= 4e-18 or s >= 65504.0 or (s == 0.0) for s in scales)

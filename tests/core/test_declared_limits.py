"""Declared backend limits are checked by the facade for the whole call, before any I/O.

The reference adapter stores everything the contract allows; here it is given the
limits other backends declare (Pinecone's, pgvector's, turbopuffer's, Chroma's), so
the facade's checks are proven against a real engine without any of those servers: a
refused call writes nothing although its good records fill several batches, and the
same input gets the same answer as on the backend that declares the rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np
import pytest

import vectorport
from vectorport.adapters.chroma.capabilities import CHROMA_LIMITS
from vectorport.adapters.pgvector.capabilities import PGVECTOR_LIMITS
from vectorport.adapters.pinecone.capabilities import PINECONE_LIMITS, stored_id_length
from vectorport.adapters.turbopuffer.capabilities import TURBOPUFFER_LIMITS
from vectorport.core import requests, validation
from vectorport.core.capabilities import Capabilities, Limits
from vectorport.core.errors import UnsupportedFeatureError, ValidationError
from vectorport.core.filters.ast import Condition, Not
from vectorport.core.store import Store
from vectorport.core.types import IndexSpec


@pytest.fixture
def store() -> Iterator[Store]:
    with vectorport.connect("memory://") as s:
        yield s


def _good(n: int = 5) -> list[tuple[str, list[float]]]:
    return [(f"good-{i}", [1.0, float(i), 0.0, 1.0]) for i in range(n)]


def _set(store: Store, limits: Limits, **changes: object) -> None:
    """Give the store's adapter another declaration, as a third-party adapter would."""
    caps = dataclasses.replace(store.capabilities, limits=limits, **changes)
    base = type(store.adapter)
    store.adapter.__class__ = type(f"Limited{base.__name__}", (base,),
                                   {"capabilities": property(lambda self: caps)})


def test_a_refused_record_after_many_batches_writes_nothing(store: Store) -> None:
    _set(store, PINECONE_LIMITS)
    index = store.create_index("limits", 4, "cosine")
    too_long = "é" * 100  # 200 UTF-8 bytes (contract-valid), 700 escaped characters
    assert stored_id_length(too_long) > 512
    with pytest.raises(ValidationError, match="stored form"):
        index.upsert([*_good(), (too_long, [1, 0, 0, 0])], batch_size=1)
    assert index.count() == 0


@pytest.mark.parametrize("row", [
    {"id": "n", "vector": [1, 0, 0, 0], "metadata": {"s": "a\x00b"}},
    {"id": "n", "vector": [1, 0, 0, 0], "metadata": {"l": ["ok", "a\x00b"]}},
])
def test_nul_where_postgresql_refuses_it(store: Store, row: dict) -> None:
    index = store.create_index("nul_ok", 4, "cosine")
    index.upsert([row])  # the contract allows it: stored literally
    assert index.fetch(["n"])["n"].metadata == validation.metadata(row["metadata"])
    _set(store, PGVECTOR_LIMITS)
    index = store.index("nul_ok")
    index.delete(["n"])
    with pytest.raises(ValidationError, match="NUL"):
        index.upsert([*_good(), row], batch_size=1)
    assert index.count() == 0


def test_patch_obeys_the_record_rules(store: Store) -> None:
    _set(store, dataclasses.replace(TURBOPUFFER_LIMITS, allow_nul=False))
    index = store.create_index("patching", 4, "cosine")
    index.upsert([("p", [1, 0, 0, 0], {"v": 1})])
    for patch in ({"vector": [0, 0, 0, 0]}, {"vector": [1e-30, 0, 0, 0]},
                  {"metadata": {"s": "x" * 5000}}, {"metadata": {"s": "a\x00"}},
                  {"metadata": {"s": "\udc00"}}, {"document": "\ud800"}, {"metadata": "x"}):
        with pytest.raises(ValidationError):
            index.patch("p", **patch)  # type: ignore[attr-defined]
    assert dict(index.fetch(["p"])["p"].metadata) == {"v": 1}


def test_pinecone_record_size_counts_document_and_type_keys(store: Store) -> None:
    _set(store, PINECONE_LIMITS)
    index = store.create_index("sized", 4, "euclidean")
    with pytest.raises(ValidationError, match="40960"):
        index.upsert([{"id": "d", "vector": [1, 0, 0, 0], "metadata": {"m": "x" * 30_000},
                       "document": "y" * 12_000}])
    with pytest.raises(ValidationError, match="all-zero"):
        index.upsert([*_good(), ("z", [0, 0, 0, 0])], batch_size=1)
    assert index.count() == 0


def test_filter_size_and_hand_built_trees(store: Store) -> None:
    _set(store, CHROMA_LIMITS)
    index = store.create_index("filters", 4, "cosine")
    index.upsert([("a", [1, 0, 0, 0], {"s": "v"})])
    assert index.count(filter={"s": {"$in": ["v", *map(str, range(898))]}}) == 1
    with pytest.raises(UnsupportedFeatureError, match="900"):
        index.count(filter={"s": {"$in": ["v", *map(str, range(900))]}})
    for node in (Condition("vp:doc", "$exists", True), Condition("s\n", "$eq", "v"),
                 Condition("s", "$in", "v"), Not(Condition("s", "$eq", "\ud800"))):
        with pytest.raises(ValidationError):
            index.count(filter=node)  # type: ignore[arg-type]
    deep = Condition("s", "$eq", "v")
    for _ in range(5_000):  # far deeper than the recursion limit: refused, not a crash
        deep = Not(deep)  # type: ignore[assignment]
    with pytest.raises(ValidationError):
        index.count(filter=deep)


@pytest.mark.parametrize("name", ["docs\n", "Docs", "docs_\n"])
def test_names_are_matched_whole(store: Store, name: str) -> None:
    with pytest.raises(ValidationError):
        store.create_index(name, 4)
    index = store.create_index("whole", 4)
    for bad in ("ns\n", "a\n"):
        with pytest.raises(ValidationError):
            index.count(namespace=bad)
    with pytest.raises(ValidationError):
        index.upsert([("x", [1, 0, 0, 0], {"k\n": 1})])
    with pytest.raises(ValidationError):
        index.count(filter={"k\n": 1})


def test_numbers_that_do_not_fit(store: Store) -> None:
    index = store.create_index("numbers", 4, "dotproduct")
    index.upsert([("a", [1, 0, 0, 0])])
    for options in ({"min_score": 10**400}, {"min_score": float("nan")}, {"top_k": 2**64},
                    {"ef": 2**64}, {"probes": 2**64}):
        with pytest.raises(ValidationError):
            index.query([1, 0, 0, 0], **options)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        index.list_ids(limit=2**64)  # type: ignore[attr-defined]
    with pytest.raises(ValidationError):
        index.upsert([("b", [1, 0, 0, 0], None)], batch_size=0)
    with pytest.raises(ValidationError):
        index.upsert([{"id": "s", "vector": [1, 0, 0, 0], "sparse": {"indices": [1],
                       "values": [10**400]}}])


def test_vector_norm_bound_keeps_float32_scores_finite(store: Store) -> None:
    for metric in ("cosine", "dotproduct", "euclidean"):
        index = store.create_index(f"norms_{metric}", 4, metric)
        with pytest.raises(ValidationError, match="norm"):
            index.upsert([*_good(), ("huge", [1e30, 0, 0, 0])], batch_size=1)
        with pytest.raises(ValidationError, match="norm"):
            index.query([1e19, 1e19, 0, 0])
        assert index.count() == 0
        bound = validation.MAX_VECTOR_NORM
        edge = np.array([0.6, 0.8, 0, 0]) * bound  # exactly at the bound: allowed
        index.upsert([("edge", edge)])
        # the products an engine computes in float32 stay finite
        assert np.isfinite(np.float32(edge).dot(np.float32(edge)) * np.float32(4))


def test_limits_are_described(store: Store) -> None:
    described = Capabilities(limits=PINECONE_LIMITS).describe()
    assert described["max_record_bytes"] == "40960"
    assert described["allow_zero_vector"] == "no"
    assert described["id_size"] == "stored_id_length"


def test_builders_refuse_without_a_store() -> None:
    caps = Capabilities(limits=PGVECTOR_LIMITS, sparse=True)
    target = requests.Target("pgvector", caps, IndexSpec("x_index", 2, "dotproduct", sparse=True))
    many = {"indices": list(range(16_001)), "values": [1.0] * 16_001}
    with pytest.raises(ValidationError, match="16000"):
        requests.build_records(target, [{"id": "a", "vector": [1, 0], "sparse": many}])
    with pytest.raises(ValidationError, match="999999999"):
        requests.build_query(target, [1, 0], sparse={"indices": [1_000_000_000], "values": [1]})

"""What the facade keeps between calls instead of rebuilding per operation still follows
the store: the operation wrapper is rebuilt when the registry, the retry policy or the
timeout is changed, a query's ``Include`` is shared per combination of flags (kinds
kept: ``1`` is not taken for ``True``), an index's request target follows its store's
adapter and its spec, and the fast constructors of records and matches make the very
values the dataclasses make."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vectorport
from vectorport.core import requests
from vectorport.core.plugin import Registry
from vectorport.core.retry import RetryPolicy
from vectorport.core.scoring import sort_matches
from vectorport.core.types import Match, Record, match_of, records_of


def test_the_runner_follows_the_store_settings() -> None:
    with vectorport.connect("memory://") as store:
        first = store.runner
        assert store.runner is first
        store.timeout = 4.0
        assert store.runner.timeout == 4.0
        store.retry = RetryPolicy(attempts=2)
        assert store.runner.retry.attempts == 2
        store.registry = Registry(load_entry_points=False)
        assert store.runner.registry is store.registry
        index = store.create_index("runner_follows", 2)
        index.upsert([("a", [1.0, 0.0])])
        assert [m.id for m in index.query([1.0, 0.0])] == ["a"]


def test_include_is_shared_per_combination_with_kinds_kept() -> None:
    with vectorport.connect("memory://") as store:
        target = store.index(store.create_index("include_shared", 2).name).target
        one = requests.build_query(target, [1.0, 0.0], include_vectors=True)
        two = requests.build_query(target, [0.0, 1.0], include_vectors=True)
        assert one.include is two.include
        assert (one.include.metadata, one.include.vectors, one.include.documents) == (
            True, True, True)
        odd = requests.build_query(target, [1.0, 0.0], include_metadata=1)  # type: ignore[arg-type]
        assert type(odd.include.metadata) is int


def test_the_target_follows_the_adapter_the_capabilities_and_the_spec() -> None:
    with vectorport.connect("memory://") as store:
        index = store.create_index("target_follows", 2)
        first = index.target
        assert index.target is first  # kept between calls
        index.spec = dataclasses.replace(index.spec, dimension=3)
        assert index.target is not first and index.target.spec.dimension == 3
        with vectorport.connect("memory://") as other:
            store.adapter = other.adapter
            assert index.target.capabilities is other.adapter.capabilities
            assert index.target is index.target


def test_fast_constructors_make_the_same_frozen_values() -> None:
    vector = np.arange(3, dtype=np.float32)
    made = records_of(["a"], [vector], [{"k": 1}], [None], ["doc"])
    assert made == [Record("a", vector, {"k": 1}, None, "doc")]
    assert (made[0].id, made[0].metadata, made[0].sparse, made[0].document) == (
        "a", {"k": 1}, None, "doc")
    meta = {"k": ("x",)}
    match = match_of("a", 0.5, meta, vector, None, "doc")
    plain = Match("a", 0.5, meta, vector, None, "doc")
    assert repr(match) == repr(plain)
    assert [getattr(match, f) is getattr(plain, f) for f in ("id", "metadata", "vector")] == [
        True, True, True]
    for value in (made[0], match):
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.id = "b"  # type: ignore[misc]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "é", "B", ""]),
                          st.sampled_from([1.0, 0.5, 0.5, -0.0, 0.0, -1.0, 3, 2**-1074])),
                max_size=12))
def test_the_contract_order_is_score_descending_then_id(pairs: list[tuple[str, float]]) -> None:
    matches = [Match(rid, score) for rid, score in pairs]
    ordered = sort_matches(matches)
    assert [(m.id, m.score) for m in ordered] == [
        (m.id, m.score) for m in sorted(matches, key=lambda m: (-m.score, m.id))]

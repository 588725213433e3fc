"""What the facade keeps between calls instead of rebuilding per operation still follows
the store: the operation wrapper is rebuilt when the registry, the retry policy or the
timeout is changed, and a query's ``Include`` is shared per combination of flags (kinds
kept: ``1`` is not taken for ``True``)."""

from __future__ import annotations

import vectorport
from vectorport.core import requests
from vectorport.core.plugin import Registry
from vectorport.core.retry import RetryPolicy


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

"""Declared limits and text, names and numbers that cannot be stored, on every backend.

Each case is derived from what the adapter declares (``store.capabilities.limits``), so
a third-party adapter is held to its own declaration: what a limit refuses raises
``ValidationError`` (a filter beyond ``max_filter_terms``: ``UnsupportedFeatureError``)
with nothing written by the refused call, even when the good records before the bad
one fill several batches; what no limit refuses is stored literally. "Nothing written"
is the count and a checksum of every stored record, before and after.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from vectorport.conformance.base import SuiteBase, canonical_records, unique_name
from vectorport.conformance.reference import reference_query
from vectorport.conformance.robustness import snapshot
from vectorport.core.errors import (
    TransientBackendError,
    UnsupportedFeatureError,
    ValidationError,
)
from vectorport.core.filters.ast import And, Condition
from vectorport.core.filters.parse import MAX_NODES
from vectorport.core.limits import check_record_limits, index_capabilities
from vectorport.core.store import Index, ListableIndex, PatchableIndex, Store
from vectorport.core.types import METRICS, IndexSpec, Metric

GOOD_ROWS = 5
"""Good records sent before the bad one, one per batch (``batch_size=1``): a check made
one batch at a time would have written them."""


def _cleanup(store: Store, name: str) -> None:
    """Delete a fixture's index, riding out transient faults: the bindings with
    injected faults (20% of requests) must not fail a case on its cleanup, and index
    deletion is not retried by the facade."""
    for attempt in range(5):
        try:
            store.delete_index(name, missing_ok=True)
            return
        except TransientBackendError:
            if attempt == 4:
                raise


def _good(tag: str) -> list[dict[str, Any]]:
    return [{"id": f"{tag}-{i}", "vector": [1, i + 1, 0, 1], "metadata": {"i": i}}
            for i in range(GOOD_ROWS)]


def _refused_by_limits(store: Store, spec: IndexSpec, row: dict[str, Any]) -> bool:
    record = canonical_records([row])[0]
    caps = index_capabilities(store.adapter, store.capabilities, spec)  # the index's own
    try:
        check_record_limits(store.backend, caps, spec, record)
    except ValidationError:
        return True
    return False


def _id_cases() -> list[str]:
    """Contract-valid ids (at most 512 UTF-8 bytes) of several shapes; the ones the
    declared id rules refuse must be refused, the others stored."""
    return ["é" * 100, "~" * 100, "日" * 170, "x" * 512, "a b/c?d#e", "🙂" * 128]


class DeclaredLimitTests(SuiteBase):
    @pytest.fixture(scope="class")
    @classmethod
    def limit_index(cls, store: Store) -> Iterator[tuple[Index, list[str]]]:
        name = unique_name("limits")
        index = store.create_index(name, 4, cls.a_metric(store))
        ids = [f"base-{i}" for i in range(4)]
        for ns in ("", "base-ns"):
            index.upsert([{"id": rid, "vector": [1, i, 0, 1], "metadata": {"i": i, "ns": ns}}
                          for i, rid in enumerate(ids)], namespace=ns)
        yield index, ids
        _cleanup(store, name)

    def _refused_whole(self, index: Index, ids: list[str], bad: dict[str, Any],
                       error: type[Exception] = ValidationError) -> None:
        before = snapshot(index, ids)
        rows = [*_good("g"), bad]
        with pytest.raises(error):
            index.upsert(rows, batch_size=1)
        assert snapshot(index, ids) == before
        assert index.fetch([r["id"] for r in rows]) == {}

    def _stored(self, index: Index, row: dict[str, Any]) -> None:
        index.upsert([row])
        got = index.fetch([row["id"]])[row["id"]]
        assert got == canonical_records([row])[0] or (
            dict(got.metadata) == dict(canonical_records([row])[0].metadata)
            and got.document == row.get("document"))
        index.delete([row["id"]])

    def _each(self, store: Store, index: Index, ids: list[str], rows: list[dict[str, Any]],
              ) -> None:
        """Every row is either refused by a declared limit (and then by the facade, with
        nothing written) or stored literally."""
        for row in rows:
            if _refused_by_limits(store, index.spec, row):
                self._refused_whole(index, ids, row)
            else:
                self._stored(index, row)

    def test_ids(self, store: Store, limit_index: tuple[Index, list[str]]) -> None:
        index, ids = limit_index
        rows = [{"id": rid, "vector": [1, 0, 1, 0]} for rid in _id_cases()]
        self._each(store, index, ids, rows)

    def test_strings_nul_and_documents(self, store: Store,
                                       limit_index: tuple[Index, list[str]]) -> None:
        index, ids = limit_index
        limits = store.capabilities.limits
        rows: list[dict[str, Any]] = [
            {"id": "nul-s", "vector": [1, 0, 1, 0], "metadata": {"s": "a\x00b"}},
            {"id": "nul-l", "vector": [1, 0, 1, 0], "metadata": {"l": ["ok", "a\x00b"]}},
            {"id": "long-s", "vector": [1, 0, 1, 0], "metadata": {"s": "x" * 5_000}},
            {"id": "long-l", "vector": [1, 0, 1, 0], "metadata": {"l": ["y" * 5_000]}},
        ]
        if store.capabilities.documents:
            size = (limits.max_document_bytes or 60_000) + 1
            rows.append({"id": "long-doc", "vector": [1, 0, 1, 0], "document": "d" * size})
            rows.append({"id": "meta-doc", "vector": [1, 0, 1, 0],
                         "metadata": {"m": "x" * 30_000}, "document": "y" * 12_000})
        self._each(store, index, ids, rows)
        if not limits.allow_nul:
            assert _refused_by_limits(store, index.spec, rows[0])

    def test_zero_and_huge_vectors(self, store: Store, make_index: Any) -> None:
        for metric in sorted(store.capabilities.metrics):
            index = make_index(metric=metric)
            index.upsert([("keep", [1, 0, 0, 0])])
            zero = {"id": "zero", "vector": [0, 0, 0, 0]}
            if metric == "cosine" or not store.capabilities.limits.allow_zero_vector:
                self._refused_whole(index, ["keep"], zero)
            else:
                self._stored(index, zero)
            for huge in ([1e30, 0, 0, 0], [1e19, 1e19, 0, 0], [3e17] * 4 + [0] * 0):
                bad = {"id": "huge", "vector": huge}
                if np.linalg.norm(huge) > 1e18:
                    self._refused_whole(index, ["keep"], bad)
                    with pytest.raises(ValidationError):
                        index.query(huge)
            if metric == "cosine":
                self._refused_whole(index, ["keep"], {"id": "tiny", "vector": [1e-30, 0, 0, 0]})

    def test_scores_stay_exact_near_the_norm_bound(self, store: Store, make_index: Any) -> None:
        rows = [("a", [4e17, 3e17, 0, 0]), ("b", [1e17, 0, 0, 0]), ("c", [0, -2e17, 1e17, 0])]
        query = [3e17, 4e17, 0, 0]
        for metric in METRICS:
            if metric not in store.capabilities.metrics:
                continue
            index = make_index(metric=metric)
            index.upsert(rows)
            expected = reference_query(
                canonical_records([{"id": i, "vector": v} for i, v in rows]),
                metric, vector=query, top_k=3)
            got = {m.id: m.score for m in index.query(query, top_k=3)}
            assert [m.id for m in index.query(query, top_k=3)] == [e.id for e in expected]
            for e in expected:
                assert np.isfinite(got[e.id]), f"{metric}: {e.id} scored {got[e.id]}"
                assert abs(got[e.id] - e.score) <= 1e-3 * max(1.0, abs(e.score)), (
                    f"{metric}: {e.id} scored {got[e.id]}, expected {e.score}")

    def test_sparse_limits(self, store: Store, make_index: Any) -> None:
        caps = store.capabilities
        if not caps.sparse:
            pytest.skip("sparse vectors are not declared")
        metric: Metric = "dotproduct" if "dotproduct" in caps.metrics else self.a_metric(store)
        index = make_index(metric=metric, sparse=True)
        index.upsert([("keep", [1, 0, 0, 0])])
        limits = caps.limits
        many = (limits.max_sparse_entries or 3_000) + 1
        rows = [
            {"id": "many", "vector": [1, 0, 0, 1],
             "sparse": {"indices": list(range(many)), "values": [1.0] * many}},
            {"id": "far", "vector": [1, 0, 0, 1],
             "sparse": {"indices": [min(limits.max_sparse_index + 1, 2**31 - 1)],
                        "values": [1.0]}},
        ]
        for row in rows:
            if _refused_by_limits(store, index.spec, row):
                self._refused_whole(index, ["keep"], row)
                with pytest.raises(ValidationError):
                    index.query([1, 0, 0, 0], sparse=row["sparse"])

    def test_patch_obeys_the_record_rules(self, store: Store, make_index: Any) -> None:
        index = make_index(metric=self.a_metric(store))
        if not isinstance(index, PatchableIndex):
            pytest.skip("patch is not declared")
        index.upsert([("p", [1, 0, 0, 0], {"v": 1})])
        before = index.fetch(["p"])["p"]
        bad_patches: list[dict[str, Any]] = [
            {"metadata": {"s": "bad \ud800"}},
            {"metadata": {"k\n": 1}},
            {"vector": [1e30, 0, 0, 0]},
        ]
        if index.spec.metric == "cosine" or not store.capabilities.limits.allow_zero_vector:
            bad_patches.append({"vector": [0, 0, 0, 0]})
        limits = store.capabilities.limits
        if not limits.allow_nul:
            bad_patches.append({"metadata": {"s": "a\x00b"}})
        if limits.max_string_bytes is not None:
            bad_patches.append({"metadata": {"s": "x" * (limits.max_string_bytes + 1)}})
        if store.capabilities.max_metadata_bytes < 40 * 1024 or limits.max_record_bytes:
            bad_patches.append({"metadata": {"s": "x" * 39_000}, "document": "y" * 3_000})
        for patch in bad_patches:
            with pytest.raises(ValidationError):
                index.patch("p", **patch)
            assert index.fetch(["p"])["p"] == before


class HostileTextTests(SuiteBase):
    @pytest.fixture(scope="class")
    @classmethod
    def text_index(cls, store: Store) -> Iterator[tuple[Index, list[str]]]:
        name = unique_name("text")
        index = store.create_index(name, 4, cls.a_metric(store))
        ids = [f"base-{i}" for i in range(4)]
        index.upsert([{"id": rid, "vector": [1, i, 0, 1], "metadata": {"k": i, "s": "v"}}
                      for i, rid in enumerate(ids)])
        yield index, ids
        _cleanup(store, name)

    def test_lone_surrogates_are_refused(self, store: Store,
                                         text_index: tuple[Index, list[str]]) -> None:
        index, ids = text_index
        before = snapshot(index, ids)
        lone = "bad \ud800 text"
        rows: list[dict[str, Any]] = [
            {"id": lone, "vector": [1, 0, 0, 1]},
            {"id": "s", "vector": [1, 0, 0, 1], "metadata": {"s": lone}},
            {"id": "l", "vector": [1, 0, 0, 1], "metadata": {"l": ["ok", lone]}},
        ]
        if store.capabilities.documents:
            rows.append({"id": "d", "vector": [1, 0, 0, 1], "document": lone})
        for row in rows:
            with pytest.raises(ValidationError):
                index.upsert([*_good("g"), row], batch_size=1)
        for call in (lambda: index.fetch([lone]), lambda: index.delete([lone]),
                     lambda: index.count(filter={"s": lone}),
                     lambda: index.query([1, 0, 0, 1], filter={"s": {"$in": ["v", lone]}}),
                     lambda: index.count(filter=Condition("s", "$eq", lone))):
            with pytest.raises(ValidationError):
                call()
        if isinstance(index, ListableIndex):
            with pytest.raises(ValidationError):
                index.list_ids(prefix=lone)
        assert snapshot(index, ids) == before

    def test_names_match_the_whole_string(self, store: Store,
                                          text_index: tuple[Index, list[str]]) -> None:
        index, ids = text_index
        before = snapshot(index, ids)
        indexes = store.list_indexes()
        with pytest.raises(ValidationError):
            store.create_index("docs_index\n", 4)
        with pytest.raises(ValidationError):
            store.describe_index(index.name + "\n")
        with pytest.raises(ValidationError):
            index.upsert([("x", [1, 0, 0, 0])], namespace="ns\n")
        with pytest.raises(ValidationError):
            index.count(namespace="ns\n")
        with pytest.raises(ValidationError):
            index.upsert([*_good("g"), {"id": "x", "vector": [1, 0, 0, 0],
                                        "metadata": {"k\n": 1}}], batch_size=1)
        with pytest.raises(ValidationError):
            index.count(filter={"k\n": 1})
        assert store.list_indexes() == indexes
        assert snapshot(index, ids) == before

    def test_numbers_that_do_not_fit(self, store: Store,
                                     text_index: tuple[Index, list[str]]) -> None:
        index, _ = text_index
        q = [1, 0, 0, 1]
        for options in ({"min_score": 10**400}, {"min_score": float("inf")},
                        {"top_k": 2**64}, {"ef": 2**64}, {"probes": 2**64},
                        {"filter": {"k": 2**64}}):
            with pytest.raises(ValidationError):
                index.query(q, **options)
        with pytest.raises(ValidationError):
            index.query([10**400, 0, 0, 1])
        with pytest.raises(ValidationError):
            next(iter(index.scan(page_size=2**64)))
        if isinstance(index, ListableIndex):
            with pytest.raises(ValidationError):
                index.list_ids(limit=2**64)

    def test_hand_built_filters_are_validated_like_dicts(
        self, text_index: tuple[Index, list[str]]
    ) -> None:
        index, _ = text_index
        for node in (Condition("vp:doc", "$exists", True),  # a reserved internal field
                     Condition("k\n", "$eq", 1), Condition("1k", "$eq", 1),
                     Condition("k", "$in", "abc"),
                     Condition("k", "$regex", "x"),  # type: ignore[arg-type]
                     Condition("k", "$eq", 2**70), Condition("k", "$eq", float("nan")),
                     Condition("k", "$gt", True),
                     And(()), And((Condition("k", "$eq", 1), {"k": 1})),  # type: ignore[arg-type]
                     ):
            with pytest.raises(ValidationError):
                index.count(filter=node)
        assert index.count(filter=And((Condition("k", "$gte", 1), Condition("s", "$eq", "v")))
                           ) == 3

    def test_filters_beyond_the_declared_size(self, store: Store,
                                             text_index: tuple[Index, list[str]]) -> None:
        index, _ = text_index
        limit = store.capabilities.limits.max_filter_terms
        if limit is None:
            pytest.skip("no filter size limit is declared")
        values = ["v", *(f"w{i}" for i in range(limit - 2))]
        assert index.count(filter={"s": {"$in": values}}) == 4  # limit - 1 terms: allowed
        with pytest.raises(UnsupportedFeatureError):
            index.count(filter={"s": {"$in": [*values, "x", "y"]}})
        if limit < MAX_NODES:  # beyond MAX_NODES the parser refuses it first (FilterError)
            with pytest.raises(UnsupportedFeatureError):
                index.query([1, 0, 0, 1], filter={"$or": [{"k": i} for i in range(limit)]})


__all__ = ["DeclaredLimitTests", "HostileTextTests"]

"""Hostile input and concurrency, shared by every adapter.

Hostile input: one corpus of injection strings, malformed and oversize values. Each
must raise its typed error or be stored literally, and the store must be unchanged
afterwards (the count per namespace and a checksum of every stored record are compared
before and after).

Concurrency: 8 threads, then 32 asyncio tasks, each upserting, deleting and querying
its own records at the same time; the final counts and contents must be exact.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from vectorport.conformance.base import SuiteBase, unique_name
from vectorport.conformance.dataset import HOSTILE_STRINGS
from vectorport.core.async_store import AsyncStore
from vectorport.core.errors import ValidationError
from vectorport.core.store import Index, Store

BASELINE_NAMESPACES = ("", "base-ns")


def snapshot(index: Index, ids: list[str]) -> tuple[dict[str, int], str]:
    """Counts per namespace and a checksum of every record's content."""
    counts = {ns: index.count(ns) for ns in BASELINE_NAMESPACES}
    digest = hashlib.sha256()
    for ns in BASELINE_NAMESPACES:
        for rid, rec in sorted(index.fetch(ids, namespace=ns).items()):
            digest.update(json.dumps([ns, rid, sorted(dict(rec.metadata).items()),
                                      np.round(rec.vector, 5).tolist(), rec.document],
                                     default=list).encode())
    return counts, digest.hexdigest()


class HostileInputTests(SuiteBase):
    @pytest.fixture(scope="class")
    @classmethod
    def guarded(cls, store: Store) -> Iterator[tuple[Index, list[str]]]:
        name = unique_name("hostile")
        index = store.create_index(name, 4, cls.a_metric(store))
        ids = [f"base-{i}" for i in range(6)]
        for ns in BASELINE_NAMESPACES:
            index.upsert([{"id": rid, "vector": [1, i, 0, 1], "metadata": {"i": i, "ns": ns}}
                          for i, rid in enumerate(ids)], namespace=ns)
        yield index, ids
        store.delete_index(name, missing_ok=True)

    def test_hostile_ids_documents_and_values_are_literal(
        self, store: Store, guarded: tuple[Index, list[str]]
    ) -> None:
        index, ids = guarded
        before = snapshot(index, ids)
        namespace = "hostile-ns"
        docs = store.capabilities.documents
        rows = [{"id": s, "vector": [0.5, 1, i, 1], "metadata": {"text": s, "k": i},
                 **({"document": s} if docs else {})} for i, s in enumerate(HOSTILE_STRINGS)]
        index.upsert(rows, namespace=namespace)
        fetched = index.fetch(list(HOSTILE_STRINGS), namespace=namespace)
        assert sorted(fetched) == sorted(HOSTILE_STRINGS)
        for s in HOSTILE_STRINGS:
            assert fetched[s].metadata["text"] == s
            if docs:
                assert fetched[s].document == s
        got = index.query([0.5, 1, 0, 1], top_k=len(HOSTILE_STRINGS), namespace=namespace)
        assert sorted(m.id for m in got) == sorted(HOSTILE_STRINGS)
        index.delete(list(HOSTILE_STRINGS), namespace=namespace)
        assert index.count(namespace) == 0
        assert snapshot(index, ids) == before

    @pytest.mark.parametrize("hostile", [s for s in HOSTILE_STRINGS if s.strip()][:8])
    def test_hostile_names_are_refused(
        self, store: Store, guarded: tuple[Index, list[str]], hostile: str
    ) -> None:
        index, ids = guarded
        before = snapshot(index, ids)
        indexes_before = store.list_indexes()
        with pytest.raises(ValidationError):
            store.create_index(hostile, 4)
        with pytest.raises(ValidationError):
            index.upsert([("x", [1, 0, 0, 0])], namespace=hostile)
        with pytest.raises(ValidationError):
            index.delete_namespace(hostile)
        with pytest.raises(ValidationError):
            store.describe_index(hostile)
        assert store.list_indexes() == indexes_before
        assert snapshot(index, ids) == before

    @pytest.mark.parametrize("bad", [
        [1.0, float("nan"), 0, 0], [float("inf"), 0, 0, 0], [1e39, 0, 0, 0], [1, 0, 0],
        [1, 0, 0, 0, 0], [], [[1, 0, 0, 0]], "1,0,0,0", None, [True, False, True, False],
    ])
    def test_malformed_vectors_change_nothing(
        self, guarded: tuple[Index, list[str]], bad: Any
    ) -> None:
        index, ids = guarded
        before = snapshot(index, ids)
        with pytest.raises(ValidationError):
            index.upsert([("base-0", [9, 9, 9, 9]), ("bad", bad)])
        with pytest.raises(ValidationError):
            index.query(bad)
        assert snapshot(index, ids) == before

    def test_oversize_input_changes_nothing(self, guarded: tuple[Index, list[str]]) -> None:
        index, ids = guarded
        before = snapshot(index, ids)
        huge_meta = {f"k{i}": "v" * 1000 for i in range(50)}
        for bad in ({"id": "x" * 600, "vector": [1, 0, 0, 0]},
                    {"id": "ok", "vector": [1, 0, 0, 0], "metadata": huge_meta},
                    {"id": "ok", "vector": [1, 0, 0, 0], "metadata": {"k" * 65: 1}},
                    {"id": "ok", "vector": [1, 0, 0, 0], "metadata": {"n": 2**64}},
                    {"id": "ok", "vector": [1, 0, 0, 0], "sparse": {"indices": [-1], "values": [1]}},
                    {"id": "ok", "vector": [1, 0, 0, 0], "document": 5}):
            with pytest.raises(ValidationError):
                index.upsert([{"id": "base-1", "vector": [9, 9, 9, 9]}, bad])
        with pytest.raises(ValidationError):
            index.query([1, 0, 0, 0], top_k=10**9)
        with pytest.raises(ValidationError):
            index.fetch(["x" * 600])
        assert snapshot(index, ids) == before


class ConcurrencyTests(SuiteBase):
    threads = 8
    tasks = 32
    records_per_worker = 6

    def _rows(self, worker: int) -> list[dict[str, Any]]:
        return [{"id": f"w{worker:02d}-{i}", "vector": [1, worker, i, 1],
                 "metadata": {"worker": worker, "i": i}} for i in range(self.records_per_worker)]

    def _expected(self, workers: int) -> set[str]:
        # each worker deletes its even records after writing them all
        return {f"w{w:02d}-{i}" for w in range(workers) for i in range(self.records_per_worker)
                if i % 2}

    def test_threads(self, store: Store) -> None:
        name = unique_name("threads")
        index = store.create_index(name, 4, self.a_metric(store))
        errors: list[BaseException] = []

        def work(worker: int) -> None:
            try:
                rows = self._rows(worker)
                for row in rows:
                    index.upsert([row], namespace="conc")
                    index.query(row["vector"], top_k=3, namespace="conc")
                index.delete([r["id"] for r in rows if int(r["id"].rsplit("-", 1)[1]) % 2 == 0],
                             namespace="conc")
                index.upsert(rows[1::2], namespace="conc")  # idempotent re-write
            except BaseException as exc:  # reported below with the worker's context
                errors.append(exc)

        try:
            workers = [threading.Thread(target=work, args=(w,)) for w in range(self.threads)]
            for t in workers:
                t.start()
            for t in workers:
                t.join(timeout=300)
            assert not errors, errors[0]
            expected = self._expected(self.threads)
            assert index.count("conc") == len(expected)
            fetched = index.fetch([*sorted(expected), "w00-0"], namespace="conc")
            assert set(fetched) == expected
            for rid, rec in fetched.items():
                worker, i = rid[1:].split("-")
                assert dict(rec.metadata) == {"worker": int(worker), "i": int(i)}
        finally:
            store.delete_index(name, missing_ok=True)

    def test_async_tasks(self, store: Store) -> None:
        name = unique_name("tasks")
        store.create_index(name, 4, self.a_metric(store))

        async def main() -> None:
            astore = AsyncStore(store)
            index = await astore.index(name)

            async def work(worker: int) -> None:
                rows = self._rows(worker)
                await index.upsert(rows, namespace="conc")
                await index.query(rows[0]["vector"], top_k=3, namespace="conc")
                await index.delete([r["id"] for r in rows[0::2]], namespace="conc")

            await asyncio.gather(*(work(w) for w in range(self.tasks)))
            expected = self._expected(self.tasks)
            assert await index.count("conc") == len(expected)
            assert set(await index.fetch(sorted(expected), namespace="conc")) == expected

        try:
            asyncio.run(main())
        finally:
            store.delete_index(name, missing_ok=True)

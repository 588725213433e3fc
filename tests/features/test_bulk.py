"""``Index.upsert_bulk`` on every backend: a bulk load ends with exactly the records given.

Compared through ``fetch`` and a full scan, with every part and every metadata kind
(``1``, ``1.0`` and ``True`` kept apart); loading again changes nothing; loading changed
records replaces them wholly (a dropped metadata key is gone); namespaces stay apart.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.support.backends import ALL, Backend, open_backend, opened_store
from tests.support.records import assert_same_record

import vectorport
from vectorport.core.async_store import connect_async
from vectorport.core.errors import ValidationError

DIM = 8


def rows(namespace: str, count: int, *, sparse: bool, salt: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(len(namespace) * 7919 + salt)
    out = []
    for i in range(count):
        meta: dict[str, Any] = {"n": i + salt, "half": i / 2 + 0.25, "even": i % 2 == 0,
                                "one_int": 1, "one_float": 1.0, "yes": True,
                                "tags": [f"t{i % 3}", "all"], "big": 1e16}
        if salt == 0:  # the first version only: replacing must drop it
            meta["first"] = "only"
        row: dict[str, Any] = {"id": f"r{i:04d}",  # the same ids in every namespace
                               "vector": rng.normal(size=DIM).astype(np.float32),
                               "metadata": meta,
                               "document": None if i % 4 == 0 else f"text {i}/{salt}"}
        if sparse:
            row["sparse"] = {"indices": [i % 11, 20 + i % 5], "values": [0.5, i % 4 + 0.25]}
        out.append(row)
    return out


def assert_holds_exactly(index: vectorport.Index, namespace: str,
                         expected: list[dict[str, Any]]) -> None:
    assert index.count(namespace) == len(expected)
    assert sorted(r.id for r in index.iter_records(namespace)) == sorted(
        r["id"] for r in expected)
    got = index.fetch([r["id"] for r in expected], namespace=namespace)
    assert len(got) == len(expected)
    for want in expected:
        assert_same_record(got[want["id"]], want)




@pytest.mark.parametrize("backend", ALL, ids=lambda b: b.name)
def test_bulk_load_holds_exactly_the_records_given(backend: Backend, tmp_path: Path) -> None:
    with opened_store(backend, tmp_path) as store:
        sparse = store.capabilities.sparse
        # Pinecone scores sparse vectors on dotproduct indexes only
        metric = "dotproduct" if sparse and backend.name == "pinecone" else "cosine"
        index = store.create_index("bulk_exact", DIM, metric, sparse=sparse)
        try:
            first = {"": rows("", 120, sparse=sparse), "tenant": rows("tenant", 30, sparse=sparse)}
            for ns, records in first.items():
                assert index.upsert_bulk(records, namespace=ns, workers=2) == len(records)
            for ns, records in first.items():
                assert_holds_exactly(index, ns, records)

            # again: idempotent
            assert index.upsert_bulk(first[""], workers=2) == len(first[""])
            assert_holds_exactly(index, "", first[""])

            # changed records replace the stored ones wholly; the other namespace is untouched
            changed = rows("", 120, sparse=sparse, salt=5)[:80] + first[""][80:]
            index.upsert_bulk(changed)
            assert_holds_exactly(index, "", changed)
            assert_holds_exactly(index, "tenant", first["tenant"])
            assert index.upsert_bulk([]) == 0
            with pytest.raises(ValidationError):
                index.upsert_bulk(changed, workers=0)
        finally:
            store.delete_index("bulk_exact", missing_ok=True)


@pytest.mark.parametrize("backend", [b for b in ALL if b.name in ("memory", "pgvector")],
                         ids=lambda b: b.name)
def test_async_bulk_load(backend: Backend, tmp_path: Path) -> None:
    with open_backend(backend, tmp_path) as url:
        async def main() -> None:
            async with await connect_async(url) as store:
                index = await store.create_index("bulk_async", DIM, "cosine")
                try:
                    records = rows("a", 50, sparse=False)
                    assert await index.upsert_bulk(records, namespace="a") == 50
                    assert await index.upsert_bulk(records, namespace="a") == 50
                    assert_holds_exactly(index.sync, "a", records)
                    assert await index.count("") == 0
                finally:
                    await store.delete_index("bulk_async", missing_ok=True)

        asyncio.run(main())


# -- the bulk paths of the backends that have one ----------------------------------------

CHUNKED = {  # module, attribute: chunk sizes cut down so that a small load has several
    "milvus": ("vectorport.adapters.milvus.bulk", "CHUNK_ROWS"),
    "pinecone": ("vectorport.adapters.pinecone.bulk", "MAX_VECTORS"),
    "turbopuffer": ("vectorport.adapters.turbopuffer.bulk", "CHUNK_ROWS"),
}


@pytest.mark.parametrize("backend", [b for b in ALL if b.name in (*CHUNKED, "chroma")],
                         ids=lambda b: b.name)
def test_bulk_load_over_stored_records_in_several_chunks(
        backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of which some ids are stored (replaced wholly) and some are not (the fast
    path where the engine has one), several in flight at once."""
    from vectorport.core.adapter import BulkLoadingAdapter

    if backend.name in CHUNKED:
        module, attribute = CHUNKED[backend.name]
        monkeypatch.setattr(module + "." + attribute, 40)
    with opened_store(backend, tmp_path) as store:
        assert isinstance(store.adapter, BulkLoadingAdapter)
        index = store.create_index("bulk_mixed", DIM, "cosine")
        try:
            index.upsert(rows("m", 50, sparse=False), namespace="m")  # first versions
            changed = rows("m", 200, sparse=False, salt=3)
            assert index.upsert_bulk(changed, namespace="m", workers=3) == 200
            assert_holds_exactly(index, "m", changed)
            assert index.count("") == 0
        finally:
            store.delete_index("bulk_mixed", missing_ok=True)


def test_a_failed_chunk_leaves_written_ids_exactly_those_of_the_stored_chunks() -> None:
    from vectorport.adapterkit.bulk import send_chunks
    from vectorport.core.errors import BackendError
    from vectorport.core.types import Record

    vector = np.ones(DIM, dtype=np.float32)
    chunks = [[Record(id=f"c{c}r{i}", vector=vector) for i in range(3)] for c in range(5)]
    sent: list[str] = []

    def send(chunk: Any) -> None:
        if chunk[0].id.startswith("c2"):
            raise BackendError("refused")
        sent.extend(r.id for r in chunk)

    for workers in (1, 3):
        sent.clear()
        with pytest.raises(BackendError) as info:
            send_chunks(chunks, send, workers)
        assert sorted(info.value.written_ids) == sorted(sent)  # every other chunk went
        assert len(sent) == 12

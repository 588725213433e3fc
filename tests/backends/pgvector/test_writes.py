"""The one-statement upsert (binary arrays through ``unnest``) on a real server: batches
mixing records with and without sparse vectors and documents, both vector types, and
replacement that clears what the new record does not have; expected answers from the
local reference store given the same calls."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pgvector")

import vectorport
from vectorport.core.store import Store
from vectorport.core.types import Record, SparseVector


def _batch(dimension: int, seed: int, count: int) -> list[Record]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        out.append(Record(
            id=f"r{i:03d}-é",
            vector=rng.normal(size=dimension).astype(np.float32),
            sparse=SparseVector((i, 1000 + i), (0.5, 1.5)) if i % 3 == 0 else None,
            metadata={"i": i, "half": i / 2, "even": i % 2 == 0, "tags": ("a", f"t{i}")},
            document=f"doc {i} ✓" if i % 2 else None,
        ))
    return out


def _plain(rec: Record) -> dict[str, Any]:
    return {
        "vector": np.asarray(rec.vector, dtype=np.float32).tolist(),
        "sparse": None if rec.sparse is None else (rec.sparse.indices, rec.sparse.values),
        "metadata": {k: (type(v).__name__, v) for k, v in rec.metadata.items()},
        "document": rec.document,
    }


@pytest.fixture(params=["vector", "halfvec"])
def pair(request: pytest.FixtureRequest, store: Store) -> Iterator[tuple[Any, Any]]:
    name = f"w_{uuid.uuid4().hex[:12]}"
    options = {"pgvector": {"vector_type": request.param}}
    reference = vectorport.connect("memory://")
    made = [s.create_index(name, 8, "cosine", sparse=True, backend_options=options)
            for s in (store, reference)]
    yield made[0], made[1]
    store.delete_index(name, missing_ok=True)
    reference.close()


def test_mixed_batches_and_replacement_match_the_reference(pair: tuple[Any, Any]) -> None:
    pg_index, ref_index = pair
    first = _batch(8, 1, 40)
    # the same ids again with other values: every part is replaced, absent parts cleared
    second = [Record(id=rec.id, vector=-np.asarray(rec.vector), metadata={"i": -1})
              for rec in first[:25]]
    for index in pair:
        index.upsert(first)
        index.upsert(second, namespace="")
        index.upsert(first[:5], namespace="other")
    for namespace in ("", "other"):
        ids = [rec.id for rec in first]
        want = {rid: _plain(rec) for rid, rec in ref_index.fetch(ids, namespace).items()}
        have = {rid: _plain(rec) for rid, rec in pg_index.fetch(ids, namespace).items()}
        if pg_index.spec.backend_options["pgvector"]["vector_type"] == "halfvec":
            for entry in (*want.values(), *have.values()):  # float16 storage
                entry["vector"] = np.asarray(entry["vector"], dtype=np.float16).tolist()
        assert have == want


def test_a_scan_reads_what_fetch_reads(pair: tuple[Any, Any]) -> None:
    """Scans convert a page's vectors at once (both vector types, pages of several)."""
    pg_index, _ = pair
    batch = _batch(8, 2, 23)
    pg_index.upsert(batch)
    fetched = {rid: _plain(rec) for rid, rec in pg_index.fetch([r.id for r in batch]).items()}
    scanned = {rec.id: _plain(rec) for rec in pg_index.iter_records(page_size=5)}
    assert scanned == fetched
    assert all(not rec.vector.flags.writeable for rec in pg_index.iter_records(page_size=5))

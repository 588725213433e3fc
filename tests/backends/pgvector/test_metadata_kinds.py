"""Metadata kinds survive the fast ``jsonb`` reader (orjson) on a real server.

Every read path (query, fetch, scan, async query) must give back exactly what the local
reference store gives back for the same records: ``1`` an int, ``1.0`` a float, ``True`` a
bool, int64 values exact, integral floats written with an exponent still floats, lists as
tuples. Text beyond what vectorport writes (an integer past 64 bits, which orjson would
read as a float) is read through ``json`` and stays an int.
"""

from __future__ import annotations

import asyncio
import math
import random
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pgvector")

import vectorport
from vectorport.adapters.pgvector.adapter import PgvectorAdapter
from vectorport.core.async_store import connect_async
from vectorport.core.store import Store

KINDS: dict[str, Any] = {
    "one": 1,
    "one_float": 1.0,
    "true": True,
    "false": False,
    "zero": 0,
    "neg_zero": -0.0,
    "big": 2**53 + 3,
    "int64_max": 2**63 - 1,
    "int64_min": -(2**63),
    "exp_float": 1e16,
    "huge_float": 1e300,
    "tiny_float": 1.5e-300,
    "neg_float": -123.456,
    "float_2_63": 2.0**63,
    "unicode": "é 😀 \u2028 \\ \" /",
    "tags": ["a", "b é"],
    "single": ["only"],
}


def _random_floats(seed: int, count: int) -> dict[str, float]:
    rng = random.Random(seed)
    out: dict[str, float] = {}
    for i in range(count):
        exponent = rng.randint(-300, 300)
        out[f"f{i}"] = rng.uniform(-1, 1) * 10.0**exponent
    return out


def _records() -> list[tuple[str, np.ndarray[Any, Any], dict[str, Any]]]:
    rows = [("kinds", np.array([1.0, 0.0, 0.0], dtype=np.float32), KINDS)]
    for seed in range(4):
        vector = np.array([0.5, 0.5 + seed, 1.0], dtype=np.float32)
        rows.append((f"floats-{seed}", vector, _random_floats(seed, 30)))
    return rows


def _typed(value: Any) -> Any:
    """A value with its kind made visible (``1 == 1.0 == True`` in Python)."""
    if isinstance(value, tuple):
        return ("tuple", tuple(_typed(v) for v in value))
    if isinstance(value, float):
        return ("float", math.copysign(1.0, value) if value == 0 else value)
    return (type(value).__name__, value)


def _typed_meta(meta: Any) -> dict[str, Any]:
    return {key: _typed(value) for key, value in meta.items()}


@pytest.fixture
def stores(store: Store) -> Iterator[tuple[vectorport.Index, vectorport.Index]]:
    name = f"k_{uuid.uuid4().hex[:12]}"
    reference = vectorport.connect("memory://")
    pg_index = store.create_index(name, 3, "cosine")
    ref_index = reference.create_index(name, 3, "cosine")
    for index in (pg_index, ref_index):
        index.upsert(_records())
    yield pg_index, ref_index
    store.delete_index(name, missing_ok=True)
    reference.close()


def _neg_zero_as_stored(meta: dict[str, Any]) -> dict[str, Any]:
    # numeric has no negative zero: PostgreSQL keeps -0.0 as 0.0 (a float still)
    return {**meta, "neg_zero": ("float", 1.0)} if "neg_zero" in meta else meta


def test_fetch_query_and_scan_give_the_reference_kinds(
        stores: tuple[vectorport.Index, vectorport.Index]) -> None:
    pg_index, ref_index = stores
    ids = [rid for rid, _, _ in _records()]
    want = {rid: _neg_zero_as_stored(_typed_meta(rec.metadata))
            for rid, rec in ref_index.fetch(ids).items()}
    assert {rid: _typed_meta(rec.metadata) for rid, rec in pg_index.fetch(ids).items()} == want
    found = pg_index.query(np.array([1.0, 0.2, 0.3], dtype=np.float32), top_k=10)
    assert {m.id: _typed_meta(m.metadata) for m in found} == want
    scanned = {rec.id: _typed_meta(rec.metadata) for rec in pg_index.iter_records()}
    assert scanned == want


def test_async_query_gives_the_reference_kinds(
        pg_url: str, stores: tuple[vectorport.Index, vectorport.Index]) -> None:
    pg_index, ref_index = stores
    fetched = ref_index.fetch([rid for rid, _, _ in _records()])
    want = {rid: _neg_zero_as_stored(_typed_meta(rec.metadata)) for rid, rec in fetched.items()}

    async def run() -> dict[str, Any]:
        async with await connect_async(pg_url) as astore:
            index = await astore.index(pg_index.name)
            found = await index.query(np.array([1.0, 0.2, 0.3], dtype=np.float32), top_k=10)
            return {m.id: _typed_meta(m.metadata) for m in found}

    assert asyncio.run(run()) == want


@pytest.mark.parametrize(("text", "expected"), [
    ('{"a": 18446744073709551616}', {"a": ("int", 2**64)}),
    ('{"a": -18446744073709551617, "b": [1, 2]}', {"a": ("int", -(2**64) - 1),
                                                   "b": ("tuple", (("int", 1), ("int", 2)))}),
    ('{"a": 18446744073709551616.0}', {"a": ("float", 2.0**64)}),
    # numeric prints 1e400 as an integer of 401 digits (orjson refuses it): json, exact
    ('{"a": 1e400}', {"a": ("int", 10**400)}),
])
def test_text_beyond_the_contract_is_read_exactly(store: Store, text: str,
                                                  expected: dict[str, Any]) -> None:
    adapter = store.adapter
    assert isinstance(adapter, PgvectorAdapter)
    with adapter._connect("test") as conn:
        row = conn.reader().execute("SELECT %s::jsonb", (text,)).fetchone()
    assert row is not None
    assert _typed_meta(row[0]) == expected

"""Limits that depend on the index or on the engine line, not only on the backend, are
declared and checked for the whole call before the first write, like every other limit.

- pgvector's ``halfvec`` indexes store float16: a component beyond ±65504 does not fit.
  A ``vector`` (float32) index of the same backend stores it.
- milvus-lite 2 (the C++ engine line) stores compared strings in an order-preserving
  encoding that is longer than the text, and Milvus refuses a JSON value over 64 KiB: a
  record's metadata that fits as text can exceed it once encoded.

"Nothing written" is the count and a checksum of every stored record (the conformance
suite's snapshot), before and after a refused call whose good records come first, one
per batch.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import vectorport
from vectorport import ValidationError
from vectorport.adapters.milvus import layout
from vectorport.adapters.milvus.engine_line import CURRENT, LITE2
from vectorport.conformance.robustness import snapshot
from vectorport.core.limits import check_record_limits, index_capabilities
from vectorport.core.types import IndexSpec, Record
from vectorport.testing.pgvector import running_postgres

HALF_MAX = 65504.0


@pytest.fixture(scope="module")
def pg_store() -> Iterator[vectorport.Store]:
    with running_postgres(shared=True) as url, vectorport.connect(url) as store:
        yield store


@pytest.fixture
def halfvec_index(pg_store: vectorport.Store) -> Iterator[vectorport.Index]:
    name = "half_limits"
    pg_store.delete_index(name, missing_ok=True)
    index = pg_store.create_index(name, 4, "euclidean",
                                  backend_options={"pgvector": {"vector_type": "halfvec"}})
    index.upsert([(f"base-{i}", [1.0, i, 0.0, 1.0], {"i": i}) for i in range(3)])
    yield index
    pg_store.delete_index(name, missing_ok=True)


def _good() -> list[dict[str, Any]]:
    return [{"id": f"g-{i}", "vector": [1.0, i + 1, 0.0, 1.0]} for i in range(5)]


BASE_IDS = [f"base-{i}" for i in range(3)]


@pytest.mark.parametrize("bulk", [False, True], ids=["upsert", "upsert_bulk"])
def test_a_halfvec_index_refuses_the_whole_call_before_writing(
        halfvec_index: vectorport.Index, bulk: bool) -> None:
    before = snapshot(halfvec_index, BASE_IDS)
    rows = [*_good(), {"id": "huge", "vector": [1.0, 70_000.0, 0.0, 1.0]}]
    with pytest.raises(ValidationError) as info:
        if bulk:
            halfvec_index.upsert_bulk(rows)
        else:
            halfvec_index.upsert(rows, batch_size=1)
    assert "65504" in str(info.value) and "pgvector" in str(info.value)
    assert snapshot(halfvec_index, BASE_IDS) == before
    assert halfvec_index.fetch([r["id"] for r in rows]) == {}


def test_a_halfvec_patch_obeys_the_same_rule(halfvec_index: vectorport.Index) -> None:
    before = snapshot(halfvec_index, BASE_IDS)
    with pytest.raises(ValidationError):
        halfvec_index.patch("base-0", vector=[1.0, -70_000.0, 0.0, 1.0])  # type: ignore[attr-defined]
    assert snapshot(halfvec_index, BASE_IDS) == before


def test_the_range_edge_and_a_float32_index(pg_store: vectorport.Store,
                                            halfvec_index: vectorport.Index) -> None:
    """±65504 itself fits a halfvec; a ``vector`` index of the same store takes more."""
    halfvec_index.upsert([("edge", [HALF_MAX, -HALF_MAX, 0.0, 1.0])])
    assert halfvec_index.fetch(["edge"])["edge"].vector[0] == np.float32(HALF_MAX)
    name = "full_limits"
    pg_store.delete_index(name, missing_ok=True)
    index = pg_store.create_index(name, 4, "euclidean")
    try:
        index.upsert([("huge", [1.0, 70_000.0, 0.0, 1.0])])
        assert index.fetch(["huge"])["huge"].vector[1] == np.float32(70_000.0)
    finally:
        pg_store.delete_index(name, missing_ok=True)


def test_the_limits_follow_the_index(pg_store: vectorport.Store,
                                     halfvec_index: vectorport.Index) -> None:
    """What the facade checks an index's calls against: the index's own declaration."""
    caps = pg_store.capabilities
    assert caps.limits.max_abs_value is None
    derived = index_capabilities(pg_store.adapter, caps, halfvec_index.spec)
    assert derived.limits.max_abs_value == HALF_MAX
    assert halfvec_index.target.capabilities == derived
    assert derived.limits.describe()["max_abs_value"] == str(HALF_MAX)


# -- milvus-lite 2: the encoded JSON size, declared by the engine line ----------------------


def _wide_record() -> Record:
    """Metadata within the contract's 40 KiB as text, past 64 KiB once encoded."""
    meta = {f"k{i}": "&" * 900 for i in range(40)}  # "&" is stored as "&0"
    return Record(id="wide", vector=np.ones(4, dtype=np.float32), metadata=meta)


def test_milvus_lite_2_declares_its_encoded_json_limit() -> None:
    record = _wide_record()
    encoded, _ = layout.encode_metadata(record.metadata, encoded=True)
    assert layout.json_size(encoded) > layout.JSON_MAX_BYTES
    spec = IndexSpec(name="docs", dimension=4, metric="cosine")
    with pytest.raises(ValidationError) as info:
        check_record_limits("milvus", LITE2.capabilities, spec, record)
    assert str(layout.JSON_MAX_BYTES) in str(info.value)
    check_record_limits("milvus", CURRENT.capabilities, spec, record)  # stored as text


def test_milvus_lite_2_refuses_the_whole_call_before_writing(tmp_path: Any) -> None:
    """On milvus-lite 2 itself (the legacy session installs it), the facade refuses
    the call with nothing written; elsewhere the current line stores the record."""
    from vectorport.testing.milvus import lite_major_version

    if lite_major_version() != 2:
        pytest.skip("needs milvus-lite 2 (tests/backends/milvus/legacy_session.sh)")
    with vectorport.connect(f"milvus://{tmp_path}/lite.db") as store:
        index = store.create_index("wide", 4, "cosine")
        index.upsert([("base-0", [1.0, 0.0, 0.0, 1.0])])
        before = snapshot(index, ["base-0"])
        rec = _wide_record()
        rows = [*_good(), {"id": rec.id, "vector": [1.0, 0, 0, 1], "metadata": rec.metadata}]
        with pytest.raises(ValidationError):
            index.upsert(rows, batch_size=1)
        assert snapshot(index, ["base-0"]) == before
        assert index.fetch([r["id"] for r in rows]) == {}

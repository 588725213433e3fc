"""Point layouts: collections written before layout 2 keep working.

Layout 1 kept a cosine index's vectors as written in the second named vector ``raw``
and recorded no layout beside the IndexSpec; layout 2 keeps them as hex text in the
payload (:data:`~vectorport.adapters.qdrant.naming.VECTOR`). A layout-1 collection is
written here the way the code before layout 2 wrote it (the bare IndexSpec as the
stored settings, the ``raw`` vector, points of ``to_point(..., version=1)``), then read
through a fresh connection: queried (with and without filters), fetched, patched,
listed, counted, upserted into and deleted from, on Edge and local mode, with the
answers of the reference query; and what it writes stays layout 1.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("qdrant_client")
pytest.importorskip("qdrant_edge")

import vectorport
from vectorport.adapters.qdrant import codec, naming
from vectorport.adapters.qdrant.adapter import QdrantAdapter
from vectorport.adapters.qdrant.options import collection_layout
from vectorport.conformance.base import canonical_records
from vectorport.conformance.reference import reference_query
from vectorport.core.errors import BackendError
from vectorport.core.filters.parse import parse_filter
from vectorport.core.store import PatchableIndex
from vectorport.core.types import IndexSpec

DIM = 8
NAME = "old_idx"


def _url(engine: str, folder: Path) -> str:
    return f"qdrant+edge://{folder}/edge" if engine == "edge" else f"qdrant+local://{folder}/lc"


def _adapter(store: vectorport.Store) -> QdrantAdapter:
    adapter = store.adapter
    assert isinstance(adapter, QdrantAdapter)
    return adapter


def _rows() -> list[dict]:
    rng = np.random.default_rng(7)
    rows = []
    for i in range(60):
        vector = rng.normal(size=DIM).astype(np.float32)
        rows.append({"id": f"r{i:02d}", "vector": vector.tolist(),
                     "metadata": {"n": i % 7, "even": i % 2 == 0, "tag": ["a", "b"][i % 2]},
                     "document": f"doc {i}"})
    rows.append({"id": "twin", "vector": rows[0]["vector"], "metadata": {"n": 0}})  # a tie
    return rows


def _write_layout_1(store: vectorport.Store, spec: IndexSpec, rows: list[dict],
                    namespace: str = "") -> None:
    engine = _adapter(store).engine
    if engine.spec_json(spec.name) is None:
        layout = dataclasses.replace(collection_layout(spec), keep_raw=True)
        engine.create(spec.name, layout, codec.spec_to_json(spec))  # no layout recorded
    points = [codec.to_point(spec, namespace, record, bools_native=engine.bools_native,
                             numbers_exact=engine.numbers_exact, version=1)
              for record in canonical_records(rows, DIM)]
    engine.upsert(spec.name, points)


def _stored(store: vectorport.Store, record_id: str, namespace: str = "") -> codec.Hit:
    engine = _adapter(store).engine
    return engine.retrieve(NAME, [naming.point_id(namespace, record_id)], [naming.RAW])[0]


@pytest.fixture(params=["edge", "local"])
def old_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[vectorport.Store]:
    """A connection opened after a layout-1 collection was written by another."""
    url = _url(request.param, tmp_path)
    spec = IndexSpec(name=NAME, dimension=DIM, metric="cosine")
    with vectorport.connect(url) as writer:
        _write_layout_1(writer, spec, _rows())
        _write_layout_1(writer, spec, _rows()[:5], namespace="other")
    with vectorport.connect(url) as store:
        yield store


def test_layout_1_points_are_what_the_old_code_wrote(old_store: vectorport.Store) -> None:
    hit = _stored(old_store, "r01")
    assert naming.VECTOR not in hit.payload and naming.REVISION_ID not in hit.payload
    assert hit.payload[naming.ID] == "r01" and len(hit.payload[naming.REVISION]) == 32
    assert hit.vectors[naming.RAW] == _rows()[1]["vector"]


def test_layout_1_queries_match_the_reference(old_store: vectorport.Store) -> None:
    index = old_store.index(NAME)
    records = canonical_records(_rows(), DIM)
    rng = np.random.default_rng(3)
    queries = [rng.normal(size=DIM).astype(np.float32).tolist() for _ in range(5)] + [_rows()[0]["vector"]]
    for vector in queries:
        for flt in (None, {"n": {"$gte": 3}}, {"even": True}, {"tag": {"$in": ["b"]}}):
            got = index.query(vector, filter=flt, top_k=7, include_vectors=True)
            want = reference_query(records, "cosine", vector=vector, top_k=7,
                                   filter=None if flt is None else parse_filter(flt))
            assert [m.id for m in got] == [e.id for e in want], flt
            assert [m.score for m in got] == pytest.approx([e.score for e in want], abs=1e-12)
            by_id = {r.id: r for r in records}
            for match in got:
                assert match.vector is not None
                assert match.vector.tobytes() == by_id[match.id].vector.tobytes()
                assert match.metadata == by_id[match.id].metadata


def test_layout_1_fetch_list_count_and_delete(old_store: vectorport.Store) -> None:
    index = old_store.index(NAME)
    records = {r.id: r for r in canonical_records(_rows(), DIM)}
    got = index.fetch(["r03", "r10", "nope", "twin"])
    assert sorted(got) == ["r03", "r10", "twin"]
    for rid, record in got.items():
        assert record.vector.tobytes() == records[rid].vector.tobytes()
        assert record.metadata == records[rid].metadata
        assert record.document == records[rid].document
    assert index.count() == len(records) and index.count("other") == 5
    assert index.count(filter={"even": True}) == sum(
        1 for r in records.values() if r.metadata.get("even") is True)
    page = index.list_ids(limit=5)
    assert list(page.ids) == sorted(records)[:5]
    assert old_store.describe_index(NAME).spec.metric == "cosine"
    index.delete(["r03"])
    assert "r03" not in index.fetch(["r03"]) and index.count() == len(records) - 1


def test_layout_1_patches_and_upserts_stay_layout_1(old_store: vectorport.Store) -> None:
    index = old_store.index(NAME)
    assert isinstance(index, PatchableIndex)
    assert index.patch("r05", metadata={"n": 100, "tag": None})
    patched = index.fetch(["r05"])["r05"]
    assert patched.metadata == {"n": 100, "even": False}
    assert patched.vector.tolist() == _rows()[5]["vector"]
    new_vector = np.linspace(-1, 1, DIM, dtype=np.float32)
    index.patch("r06", vector=new_vector)
    index.upsert([("fresh", new_vector.tolist(), {"n": 1})])
    for rid in ("r05", "r06", "fresh"):
        hit = _stored(old_store, rid)
        assert naming.VECTOR not in hit.payload and naming.RAW in hit.vectors, rid
    best = index.query(new_vector, top_k=2)
    assert [m.id for m in best] == ["fresh", "r06"]
    assert best[0].score == pytest.approx(1.0, abs=1e-12)


def test_new_collections_are_layout_2_beside_old_ones(old_store: vectorport.Store) -> None:
    index = old_store.create_index("new_idx", DIM, "cosine")
    odd = "é 日本\n" + "x" * 40  # ids are kept after the revision token, as given
    index.upsert([("a", _rows()[0]["vector"]), (odd, _rows()[1]["vector"])])
    engine = _adapter(old_store).engine
    hit = engine.retrieve("new_idx", [naming.point_id("", "a")], [naming.DENSE])[0]
    assert naming.VECTOR in hit.payload and naming.RAW not in hit.vectors
    assert naming.ID not in hit.payload and naming.REVISION not in hit.payload
    assert hit.payload[naming.REVISION_ID][naming.REVISION_CHARS:] == "a" == hit.record_id
    assert sorted(index.fetch(["a", odd])) == sorted(["a", odd])
    before = engine.retrieve("new_idx", [naming.point_id("", odd)], [])[0]
    assert isinstance(index, PatchableIndex) and index.patch(odd, metadata={"k": 1})
    after = engine.retrieve("new_idx", [naming.point_id("", odd)], [])[0]
    assert after.record_id == odd and after.payload[naming.REVISION_ID] != before.payload[
        naming.REVISION_ID]  # a fresh token
    text = _adapter(old_store).engine.spec_json("new_idx")
    assert text is not None and codec.settings_from_json(text)[1] == naming.LAYOUT
    assert old_store.index(NAME).query(_rows()[0]["vector"], top_k=2)[0].id == "r00"


def test_a_layout_from_a_newer_version_is_refused() -> None:
    spec = IndexSpec(name="x_idx", dimension=2)
    text = codec.settings_to_json(spec).replace(
        f'"{naming.LAYOUT_KEY}": {naming.LAYOUT}', f'"{naming.LAYOUT_KEY}": 99')
    with pytest.raises(BackendError, match="layout 99"):
        codec.settings_from_json(text)
    assert codec.settings_from_json(codec.spec_to_json(spec)) == (spec, 1)

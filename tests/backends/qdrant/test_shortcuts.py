"""The Qdrant adapter's shortcuts on its hot paths, each shown to give what the long
way gives: point ids formatted from the SHA-1 digest (uuid5's), stored vectors packed
into one float64 matrix (NumPy's reading of the lists), the namespace condition left
out while a single-writer engine's collection holds one namespace, the common query
answered from its first search's payloads (the general ranking's answer), and the
default search options of a query without a qdrant section."""

from __future__ import annotations

import uuid
from pathlib import Path

import hypothesis
import numpy as np
import pytest
from hypothesis import strategies as st

pytest.importorskip("qdrant_client")
pytest.importorskip("qdrant_edge")

import qdrant_edge as qe

import vectorport
from vectorport.adapterkit import exact_scores
from vectorport.adapters.qdrant import codec, naming
from vectorport.adapters.qdrant.adapter import QdrantAdapter
from vectorport.adapters.qdrant.engines.edge import EdgeEngine
from vectorport.core.types import Include, Match, QueryRequest


def _adapter(store: vectorport.Store) -> QdrantAdapter:
    adapter = store.adapter
    assert isinstance(adapter, QdrantAdapter)
    return adapter


def _unread(limit: int) -> list[str]:
    raise AssertionError("the namespaces should be known by now")


def _float32_rows(rows: int, dimension: int, seed: int) -> np.ndarray:
    """Stored float32 vectors of one random scale (tiny to huge), with a -0.0."""
    rng = np.random.default_rng(seed)
    stored = (rng.standard_normal((rows, dimension)) * 10.0 ** rng.integers(-30, 30)).astype(
        np.float32)
    stored[0, 0] = -0.0
    return stored


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(st.integers(1, 6), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_packed_float64_rows_are_the_stored_float32_values(rows: int, dimension: int,
                                                           seed: int) -> None:
    # the matrix exact scores are computed from: the same float64 values NumPy reads
    # from the lists the engines return, bit for bit (including -0.0, tiny and huge)
    stored = _float32_rows(rows, dimension, seed)
    lists = [row.tolist() for row in stored]
    packed = codec.float64_rows(lists)
    assert packed.dtype == np.float64 and packed.shape == (rows, dimension)
    assert packed.tobytes() == np.array(lists, dtype=np.float64).tobytes()


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(st.integers(1, 6), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_payload_vectors_decode_to_the_float32_values_written(rows: int, dimension: int,
                                                              seed: int) -> None:
    # layout 2: the vector as written is hex text in the payload; the matrix built
    # from the texts is the one built from the engines' lists (layout 1) bit for bit,
    # and a returned vector is the float32 array written
    stored = _float32_rows(rows, dimension, seed)
    payload_hits = [codec.Hit(None, {naming.VECTOR: codec.vector_text(row)}, {}, f"r{i}")
                    for i, row in enumerate(stored)]
    list_hits = [codec.Hit(None, {}, {naming.RAW: row.tolist()}, f"r{i}")
                 for i, row in enumerate(stored)]
    from_text = codec.dense_matrix(payload_hits, naming.RAW)
    assert from_text.dtype == np.float64 and from_text.shape == (rows, dimension)
    assert from_text.tobytes() == codec.dense_matrix(list_hits, naming.RAW).tobytes()
    spec = vectorport.IndexSpec(name="idx", dimension=dimension, metric="cosine")
    for row, hit in zip(stored, payload_hits, strict=True):
        vector = codec.dense_of(spec, hit)
        assert vector.dtype == np.float32 and not vector.flags.writeable
        assert vector.tobytes() == row.tobytes()


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.integers(1, 14), st.integers(1, 50), st.integers(0, 2**32 - 1),
                  st.sampled_from(["cosine", "dotproduct", "euclidean"]), st.booleans())
def test_exact_scores_are_numpys_formula_bit_for_bit(rows: int, dimension: int, seed: int,
                                                     metric: str, zero_row: bool) -> None:
    # the kit's exact_scores writes NumPy's norms out (no np.linalg.norm calls); the
    # scores must stay the formula's to the last bit, zero vectors scoring 0
    stored = _float32_rows(rows, dimension, seed).astype(np.float64) / 1e20
    if zero_row:
        stored[-1] = 0.0
    query = _float32_rows(1, dimension, seed + 1)[0].astype(np.float64)
    got = exact_scores(metric, query, stored)  # type: ignore[arg-type]
    assert got.tobytes() == _formula(metric, query, stored).tobytes()
    as_lists = exact_scores(metric, query.tolist(), stored.tolist())  # type: ignore[arg-type]
    assert as_lists.tobytes() == got.tobytes()
    # one vector is one row
    one = exact_scores(metric, query, stored[0])  # type: ignore[arg-type]
    assert one.tobytes() == _formula(metric, query, stored[:1]).tobytes()


def _formula(metric: str, query: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """The contract's scores as row-wise float64 reductions through NumPy's public
    einsum (each row's sums independent of the other rows, as the kit promises)."""
    if metric == "cosine":
        norms = np.sqrt(np.einsum("ij,ij->i", stored, stored)) * np.sqrt(
            np.einsum("i,i", query, query))
        want = np.zeros(len(stored))
        np.divide(np.einsum("ij,j->i", stored, query), norms, out=want, where=norms > 0)
        return want
    if metric == "dotproduct":
        return np.asarray(np.einsum("ij,j->i", stored, query))
    diff = stored - query
    return np.asarray(1.0 / (1.0 + np.sqrt(np.einsum("ij,ij->i", diff, diff))))


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.text(max_size=12).filter(lambda s: "\0" not in s),
                  st.text(min_size=1, max_size=40).filter(lambda s: "\0" not in s))
def test_point_ids_are_exactly_what_uuid5_computes(namespace: str, record_id: str) -> None:
    # point_id formats the SHA-1 digest itself (no uuid.UUID objects); the stored points
    # of every existing index depend on it naming the same UUIDs as uuid.uuid5
    want = str(uuid.uuid5(naming.POINT_ID_NAMESPACE, f"{namespace}\0{record_id}"))
    assert naming.point_id(namespace, record_id) == want


def test_local_mode_drops_the_namespace_condition_only_while_it_is_redundant(
    tmp_path: Path,
) -> None:
    """Local mode filters point by point in Python, so a collection holding one namespace
    is searched without the namespace condition; a second namespace, written by another
    connection or found on reopening, brings the condition back."""
    url = f"qdrant+local://{tmp_path}/lc"
    with vectorport.connect(url) as first, vectorport.connect(url) as second:
        mine = first.create_index("tenant_idx", 2, "dotproduct")
        mine.upsert([("a", [1, 0]), ("b", [0, 1])])
        engine = _adapter(first).engine
        scope = {"must": [{"key": naming.NAMESPACE, "match": {"value": ""}}]}
        assert engine._tenants.unscoped("tenant_idx", scope, _unread) == {}  # type: ignore[attr-defined]
        assert [m.id for m in mine.query([1, 1], top_k=5)] == ["a", "b"]
        second.index("tenant_idx").upsert([("c", [5, 5])], namespace="other")
        assert engine._tenants.unscoped("tenant_idx", scope, _unread) == scope  # type: ignore[attr-defined]
        assert [m.id for m in mine.query([1, 1], top_k=5)] == ["a", "b"]
        assert mine.count() == 2 and mine.count("other") == 1
        assert [m.id for m in mine.query([1, 1], top_k=5, namespace="other")] == ["c"]
    with vectorport.connect(url) as again:  # the namespaces are read back on reopening
        index = again.index("tenant_idx")
        assert [m.id for m in index.query([1, 1], top_k=5)] == ["a", "b"]
        index.delete(filter={"n": {"$exists": False}})  # deletes "a", "b" of "" only
        assert index.count() == 0 and index.count("other") == 1
        again.delete_index("tenant_idx")
        fresh = again.create_index("tenant_idx", 2, "dotproduct")
        fresh.upsert([("d", [1, 0])], namespace="x")
        assert fresh.count() == 0 and fresh.count("x") == 1


def test_edge_searches_drop_the_namespace_condition_only_while_it_is_redundant(
    tmp_path: Path,
) -> None:
    """An Edge shard has one owner, so its searches leave the namespace condition out
    while the shard holds one namespace; a second namespace brings it back, and so does
    a point of another namespace coming back from a search (a write that raced it)."""
    url = f"qdrant+edge://{tmp_path}/edge"
    scope = {"must": [{"key": naming.NAMESPACE, "match": {"value": ""}}]}
    with vectorport.connect(url) as first, vectorport.connect(url) as second:
        mine = first.create_index("tenant_idx", 2, "dotproduct")
        mine.upsert([("a", [1, 0]), ("b", [0, 1])])
        engine = _adapter(first).engine
        assert isinstance(engine, EdgeEngine)
        tenants = engine._entry("tenant_idx").tenants
        assert tenants.unscoped("tenant_idx", scope, _unread) == {}
        # a point of another namespace written behind the tenants' back, as a write
        # racing a search would land: the search sees it and asks again, scoped
        engine._shard("tenant_idx").update(qe.UpdateOperation.upsert_points([qe.Point(
            id=naming.point_id("ghost", "g"), vector={naming.DENSE: [9.0, 9.0]},
            payload={naming.NAMESPACE: "ghost", naming.ID: "g", naming.META: {}})]))
        assert tenants.unscoped("tenant_idx", scope, _unread) == {}
        assert [m.id for m in mine.query([1, 1], top_k=5)] == ["a", "b"]
        second.index("tenant_idx").upsert([("c", [5, 5])], namespace="other")
        assert tenants.unscoped("tenant_idx", scope, _unread) == scope
        assert [m.id for m in mine.query([1, 1], top_k=5)] == ["a", "b"]
        assert [m.id for m in mine.query([1, 1], top_k=5, namespace="other")] == ["c"]
    with vectorport.connect(url) as again:  # the namespaces are read back on reopening
        index = again.index("tenant_idx")
        assert [m.id for m in index.query([1, 1], top_k=5)] == ["a", "b"]
        assert [m.id for m in index.query([1, 1], top_k=5, namespace="ghost")] == ["g"]
        tenants = _adapter(again).engine._entry("tenant_idx").tenants  # type: ignore[attr-defined]
        assert tenants.unscoped("tenant_idx", scope, _unread) == scope
        again.delete_index("tenant_idx")
        fresh = again.create_index("tenant_idx", 2, "dotproduct")
        fresh.upsert([("d", [1, 0])], namespace="x")
        assert [m.id for m in fresh.query([1, 1], top_k=5, namespace="x")] == ["d"]
        assert fresh.query([1, 1], top_k=5) == []


def test_filters_are_built_once_and_reused_across_queries(tmp_path: Path) -> None:
    """The scoped filter document of a (namespace, filter) is one shared object, and
    Edge keeps the qdrant-edge-py filter built from it: the same filter asked again,
    and in another namespace, still selects what the reference selects."""
    from vectorport.adapters.qdrant.filters import scoped
    from vectorport.conformance.base import canonical_records
    from vectorport.conformance.reference import reference_query
    from vectorport.core.filters.oracle import matches
    from vectorport.core.filters.parse import parse_filter

    where = {"year": {"$gte": 2000}, "lang": {"$in": ["de", "en"]}, "ok": True}
    node = parse_filter(where)
    edge = {"bools_native": False, "numbers_exact": False}
    assert scoped("a", node, **edge) is scoped("a", parse_filter(where), **edge)
    assert scoped("a", node, **edge) is not scoped("b", node, **edge)
    rng = np.random.default_rng(7)
    rows = [{"id": f"r{i:03d}", "vector": rng.standard_normal(4).tolist(),
             "metadata": {"year": 1995 + i % 10, "lang": ["de", "en", "fr"][i % 3],
                          "ok": i % 2 == 0}} for i in range(90)]
    with vectorport.connect(f"qdrant+edge://{tmp_path}/edge") as store:
        index = store.create_index("filters_idx", 4, "cosine")
        index.upsert(rows[:60], namespace="a")
        index.upsert(rows[30:], namespace="b")
        for namespace, part in (("a", rows[:60]), ("b", rows[30:]), ("a", rows[:60])):
            records = canonical_records(part, 4)
            for q in rng.standard_normal((3, 4)):
                got = index.query(q, top_k=7, filter=where, namespace=namespace)
                want = reference_query(records, "cosine", vector=q, top_k=7,
                                       filter=parse_filter(where))
                assert [m.id for m in got] == [e.id for e in want]
                assert index.count(namespace=namespace, filter=where) == sum(
                    1 for r in records if matches(node, r.metadata))


@pytest.mark.parametrize("count", [0, 1, 2, 100])
def test_batch_revisions_are_fresh_tokens_like_single_ones(count: int) -> None:
    # an upsert reads the random source once for all its revision tokens
    tokens = naming.revisions(count)
    assert len(tokens) == count == len(set(tokens))
    single = naming.revision()
    assert all(len(t) == len(single) == 32 and int(t, 16) >= 0 for t in tokens)


class _EnginePoint:
    """What both SDKs' points offer: an id, a payload and the vectors asked for."""

    def __init__(self, payload: dict, vector: object) -> None:
        self.id = uuid.uuid4()
        self.payload = payload
        self.vector = vector


@pytest.mark.parametrize("vector", [None, {}, {"raw": [1.0, 2.0]}])
@pytest.mark.parametrize("payload", [
    {naming.ID: "plain"},
    {naming.REVISION_ID: "0" * naming.REVISION_CHARS + "é id\n", naming.META: {"k": [1]}},
])
def test_hits_are_the_dataclass_values(payload: dict, vector: object) -> None:
    # hit_of builds Hits without the frozen dataclass __init__: the same values
    point = _EnginePoint(payload, vector)
    got = codec.hit_of(point, qe.SparseVector)
    record_id = payload.get(naming.ID) or payload[naming.REVISION_ID][naming.REVISION_CHARS:]
    assert got == codec.Hit(point, payload, vector or {}, record_id)
    assert got.record_id == record_id and dict(got.vectors) == (vector or {})
    with pytest.raises(AttributeError):
        got.record_id = "x"  # type: ignore[misc]


def _match_fields(match: Match) -> tuple[object, ...]:
    vector = None if match.vector is None else (match.vector.dtype.str, match.vector.tobytes())
    return (match.id, match.score, match.metadata, vector, match.sparse, match.document)


@pytest.mark.parametrize("scheme", ["qdrant+edge", "qdrant+local"])
def test_settled_queries_give_the_general_rankings_answer(tmp_path: Path, scheme: str) -> None:
    """A dense-only query on a cosine index is answered from its first search's payloads
    (:mod:`.settled`) when that search settles the cut: the same matches, bit for bit,
    as the general ranking (exact_top_k over the engine's hits), ties by id included
    (vectors of one direction at several lengths tie by cosine), min_score applied;
    and where the first search does not settle it, the general path answers."""
    from vectorport.adapters.qdrant.adapter import _Candidates
    from vectorport.adapters.qdrant.options import search_options
    from vectorport.adapters.qdrant.ranking import Scorer, exact_top_k, first_depth
    from vectorport.adapters.qdrant.settled import settled_top_k

    rng = np.random.default_rng(11)
    pool = rng.standard_normal((6, 6))
    rows = [{"id": f"r{i:03d}",
             "vector": (rng.standard_normal(6) if i % 5 == 0
                        else pool[i % 6] * (1 + (i // 6) % 3)).tolist(),
             "metadata": {"x": i / 3, "n": i, "t": ["a", "b"][:1 + i % 2], "ok": i % 2 == 0},
             "document": f"doc {i}"} for i in range(80)]
    include = Include(metadata=True, vectors=True, documents=True)
    with vectorport.connect(f"{scheme}://{tmp_path}/settled") as store:
        index = store.create_index("settled_idx", 6, "cosine")
        index.upsert(rows)
        adapter = _adapter(store)
        spec = adapter._spec("settled_idx")
        flt = adapter._scoped("", None)
        settled = 0
        for q in [*rng.standard_normal((10, 6)), pool[0], pool[3] * -1]:
            vector = np.asarray(q, dtype=np.float32)
            for top_k in (1, 3, 10, 40, 100):
                for min_score in (None, 0.25):
                    request = QueryRequest(namespace="", top_k=top_k, vector=vector,
                                           include=include, min_score=min_score)
                    got = adapter.query(spec, request)
                    scorer = Scorer.for_query("cosine", codec.stored_vector_name(spec),
                                              vector, None)
                    source = _Candidates(adapter.engine, spec, request, flt,
                                         search_options(request), [])
                    want = [codec.to_match(spec, hit, score, metadata=True, vectors=True,
                                           documents=True)
                            for hit, score in exact_top_k(scorer, source, top_k, min_score)]
                    assert [_match_fields(m) for m in got] == [_match_fields(m) for m in want]
                    depth = first_depth(top_k, True)
                    payloads = adapter.engine.search_payloads(
                        "settled_idx", vector, flt, depth, search_options(request), True)
                    first = settled_top_k(payloads, vector.astype(np.float64), top_k, depth,
                                          min_score)
                    if first is not None:
                        settled += 1
                        assert [(score, record_id) for score, record_id, _ in first] == [
                            (m.score, m.id) for m in want]
        assert settled > 0


def test_settled_top_k_refuses_what_only_the_general_path_can_answer() -> None:
    # a full first search whose cut is not proven, and payloads without the vector as
    # written, go the general way (which widens, or says what is missing)
    vectors = np.eye(3, dtype=np.float32)
    payloads = [{naming.REVISION_ID: "0" * naming.REVISION_CHARS + rid,
                 naming.VECTOR: codec.vector_text(v)}
                for rid, v in zip("abc", vectors, strict=True)]
    query = np.array([1.0, 0.0, 0.0])
    from vectorport.adapters.qdrant.settled import settled_top_k

    assert settled_top_k(payloads, query, 2, 3, None) is None  # "b" ties what lies beyond
    assert [r for _, r, _ in settled_top_k(payloads, query, 1, 3, None) or []] == ["a"]
    assert [r for _, r, _ in settled_top_k(payloads, query, 2, 4, None) or []] == ["a", "b"]
    assert settled_top_k(payloads, query, 2, 3, 0.5) is not None  # nothing unseen reaches 0.5
    assert settled_top_k([{naming.REVISION_ID: "0" * 33}], query, 1, 1, None) is None
    assert settled_top_k([], query, 5, 7, None) == []


@pytest.mark.parametrize("ef", [None, 32])
@pytest.mark.parametrize("sections", [{}, {"other": {"x": 1}}, {"qdrant": {}},
                                      {"qdrant": {"exact": True}},
                                      {"qdrant": {"acorn": False}}])
def test_plain_search_options_are_the_checked_defaults(ef: int | None, sections: dict) -> None:
    # a query without a qdrant section skips the option check: the same options
    from vectorport.adapters.qdrant.options import QUERY_OPTIONS, SearchOptions, search_options

    request = QueryRequest(namespace="", top_k=1, vector=np.ones(2, dtype=np.float32), ef=ef,
                           backend_options=sections)
    section = QUERY_OPTIONS.query(request)
    assert search_options(request) == SearchOptions(
        ef=ef, exact=section["exact"], acorn=section.get("acorn"))

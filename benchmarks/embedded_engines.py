"""Qdrant and LanceDB, the embedded engines: facade overhead against their own SDKs, and
recall@10 of their ANN indexes at the generic ``ef`` / ``probes`` settings.

**Overhead** (as in :mod:`benchmarks.overhead`: 2,000 records × 384, top-10 queries
returning metadata and upserts of 100 records, vectorport and the raw SDK alternating):

- **LanceDB** (``lancedb:///folder``): the raw side is what LanceDB's documentation
  shows, a table of ``id``, ``vector`` and the metadata as a JSON string in the same
  database, cosine, exact search (``bypass_vector_index``, as vectorport's ``auto``
  index is), ``table.search(q).distance_type("cosine").limit(10).to_arrow()``; upserts
  by ``merge_insert("id")`` of an Arrow table built from the same Python data.
- **Qdrant** (``qdrant+local:///folder``, qdrant-client's local mode): the raw side is
  ``QdrantClient(path=…)``, a collection of the same records (UUID point ids, the id and
  metadata in the payload), ``query_points(…, limit=10, with_payload=True)`` and
  ``upsert`` of ``PointStruct``s. Skipped with a note while the ``qdrant`` backend is
  not registered (the adapter is on its own branch).

On LanceDB and Qdrant Edge a second query figure pairs vectorport with the engine sent
the adapter's own first search (its table or shard, depth and columns), and a second
upsert figure the engine sent the adapter's own rows (the Arrow table of
``codec.record_batch``, the points of ``codec.to_point``), built before the timing, as
in :mod:`benchmarks.overhead`: vectorport's own cost.

**Recall@10** on the Gaussian mixture of :func:`common.dataset` (cosine, 100 held-out
queries, the exact answer from numpy): LanceDB IVF (``index_type="ivf"``, LanceDB's
IVF_FLAT) at ``probes`` 1 / 5 / 10 / 20 and HNSW (``index_type="hnsw"``, IVF_HNSW_SQ) at
``ef`` 10 / 40 / 100, on ``min(--rows, 50,000)`` rows; Qdrant Edge's HNSW at the same
``ef`` on ``min(--rows, 20,000)`` rows (:data:`RECALL_ROWS`).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

import vectorport
from benchmarks import overhead
from benchmarks.common import DIM, Figure, Options, Report, Vectors, dataset, for_loads, metadata, record_id
from benchmarks.overhead import TOP_K, Batch, Sides

SECTION = "Qdrant and LanceDB"
RECALL_ROWS = {"lancedb": 50_000, "qdrant": 20_000}
"""Rows of each engine's recall index. Qdrant Edge builds its HNSW graph (with the
payload-aware links of the number indexes) as the load goes: 50,000 rows took 37–47 s
to load, a tenth of the whole bench's budget, against 6 s for 20,000, past the 10 MB
of vectors below which Qdrant scans instead (recall@10 at ``ef`` 10 read 0.85 and 0.88
on the two; milvus-lite's recall in :mod:`benchmarks.recall` is on 20,000 too)."""
RECALL_QUERIES = 100
IVF_PROBES = (1, 5, 10, 20)
HNSW_EF = (10, 40, 100)
K = 10


@contextlib.contextmanager
def _folder(name: str) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix=f"vp-bench-{name}-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _registered(backend: str) -> bool:
    return backend in vectorport.default_registry().entries


# -- overhead: LanceDB -------------------------------------------------------------------


@contextlib.contextmanager
def _lancedb(data: Vectors, batches: list[Batch]) -> Iterator[Sides]:
    import lancedb
    import pyarrow as pa

    with _folder("lancedb") as folder:
        store = vectorport.connect(f"lancedb://{folder}")
        index = store.create_index("overhead", DIM, "cosine")
        db = lancedb.connect(str(folder / "raw"))
        schema = pa.schema([pa.field("id", pa.string()),
                            pa.field("vector", pa.list_(pa.float32(), DIM)),
                            pa.field("metadata", pa.string())])
        table = db.create_table("raw", schema=schema)

        def arrow(batch: Batch) -> Any:
            flat = np.ascontiguousarray(batch.vectors, dtype=np.float32).reshape(-1)
            return pa.Table.from_arrays(
                [pa.array(batch.ids, pa.string()),
                 pa.FixedSizeListArray.from_arrays(pa.array(flat), DIM),
                 pa.array([json.dumps(m) for m in batch.metadata], pa.string())],
                schema=schema)

        def raw_upsert(batch: Batch) -> None:
            (table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
             .execute(arrow(batch)))

        def raw_query(q: Vectors) -> list[str]:
            result = (table.search(np.asarray(q, dtype=np.float32), vector_column_name="vector")
                      .distance_type("cosine").select(["id", "metadata", "_distance"]).limit(TOP_K)
                      .bypass_vector_index().to_arrow())
            hits = [(i, json.loads(m)) for i, m in zip(result["id"].to_pylist(),
                                                      result["metadata"].to_pylist(),
                                                      strict=True)]
            return [i for i, _ in hits]

        depth = overhead.first_depth(index)
        # the adapter's table (made by create_index) opened as the adapter opens it: every
        # read and write sees the latest version. A handle of LanceDB's default connection
        # stays at the version it opened, here the empty table before the load, and its
        # searches found no rows (the same-request query figure read 0.93 and 2.45 so)
        own = lancedb.connect(str(folder), read_consistency_interval=timedelta(0)
                              ).open_table(index.name)

        def same_query(q: Vectors) -> object:
            """The adapter's request through the SDK's sync builder: its table, depth and
            columns, searched exactly, without the namespace condition (the adapter leaves
            it out while the table holds one namespace)."""
            return (own.search(np.asarray(q, dtype=np.float32), vector_column_name="vector")
                    .distance_type("cosine").select(["id", "vector", "meta", "doc", "_distance"])
                    .limit(depth).bypass_vector_index().to_arrow())

        adapter = store.adapter
        from vectorport.adapters.lancedb.codec import PK

        def same_rows(batch: Batch) -> Any:
            return adapter._arrow(index.spec, "", overhead.adapter_records(index, batch))

        def same_upsert(rows: Any) -> object:
            return (own.merge_insert(PK).when_matched_update_all()
                    .when_not_matched_insert_all().execute(rows))

        sides = overhead._paired(index, batches, raw_query, raw_upsert, same_query=same_query,
                                 same_rows=same_rows, same_upsert=same_upsert, notes=(
            "Qdrant and LanceDB: LanceDB's raw side is a table of id, vector and JSON "
            "metadata searched exactly (bypass_vector_index) with LanceDB's own cosine "
            "distances, returning id, metadata and distance as vectorport does; "
            "vectorport's reads with read_consistency_interval=0 (every read sees other "
            "processes' writes), returns the vectors of one row past the cut (11 rows for "
            "a top 10, deeper only when the cut is tied) to rescore them exactly in float64 "
            "with ties complete, and writes its kind-tagged metadata, token list and "
            "namespace columns; its namespace condition is left out while the table holds "
            "one namespace (rows checked); the upsert's second figure sends, with the "
            "SDK's public merge_insert('pk') (update all, insert all) into the adapter's "
            "table opened with read_consistency_interval=0, the Arrow table the adapter's "
            "own encoder (codec.record_batch) made before the timing; the adapter itself "
            "hands that table to the engine's merge directly, skipping the SDK's schema read "
            "and input sanitiser (writes.py), so this ratio may be below 1",))
        if own.count_rows() != index.count():  # the same side must search the same rows
            raise RuntimeError(f"the same-request side sees {own.count_rows()} rows of "
                               f"{index.count()}")
        try:
            yield sides
        finally:
            store.close()


# -- overhead: Qdrant --------------------------------------------------------------------


@contextlib.contextmanager
def _qdrant(data: Vectors, batches: list[Batch]) -> Iterator[Sides]:
    import uuid

    from qdrant_client import QdrantClient, models

    with _folder("qdrant") as folder:
        store = vectorport.connect(f"qdrant+local://{folder / 'vp'}")
        index = store.create_index("overhead", DIM, "cosine")
        client = QdrantClient(path=str(folder / "raw"))
        client.create_collection("raw", vectors_config=models.VectorParams(
            size=DIM, distance=models.Distance.COSINE))

        def raw_upsert(batch: Batch) -> None:
            client.upsert("raw", points=[
                models.PointStruct(id=str(uuid.uuid5(uuid.NAMESPACE_URL, i)), vector=v.tolist(),
                                   payload={"id": i, "metadata": m})
                for i, v, m in zip(batch.ids, batch.vectors, batch.metadata, strict=True)])

        def raw_query(q: Vectors) -> list[str]:
            hits = client.query_points("raw", query=np.asarray(q).tolist(), limit=TOP_K,
                                       with_payload=True).points
            return [str(h.payload["id"]) for h in hits if h.payload is not None]

        sides = overhead._paired(index, batches, raw_query, raw_upsert, (
            "Qdrant and LanceDB: Qdrant's raw side is qdrant-client's local mode with UUID "
            "point ids and the id and metadata in the payload; vectorport's first search "
            "goes 12 deep for a top 10 and returns the vectors as written (hex text in the "
            "payload), to rescore them exactly with ties complete; its namespace condition "
            "(evaluated point by point in Python by local mode) is left out while the "
            "collection holds one namespace",))
        try:
            yield sides
        finally:
            client.close()
            store.close()


@contextlib.contextmanager
def _qdrant_edge(data: Vectors, batches: list[Batch]) -> Iterator[Sides]:
    import uuid

    import qdrant_edge as qe

    with _folder("qdrant-edge") as folder:
        store = vectorport.connect(f"qdrant+edge://{folder / 'vp'}")
        index = store.create_index("overhead", DIM, "cosine")
        shard = qe.EdgeShard.create(str(folder / "raw"), qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)))

        def raw_upsert(batch: Batch) -> None:
            shard.update(qe.UpdateOperation.upsert_points([
                qe.Point(id=str(uuid.uuid5(uuid.NAMESPACE_URL, i)), vector=v.tolist(),
                         payload={"id": i, "metadata": m})
                for i, v, m in zip(batch.ids, batch.vectors, batch.metadata, strict=True)]))

        def raw_query(q: Vectors) -> list[str]:
            hits = shard.query(qe.QueryRequest(limit=TOP_K, query=qe.Query.Nearest(
                np.asarray(q).tolist()), with_payload=True))
            return [str(h.payload["id"]) for h in hits if h.payload is not None]

        explained = index.explain(data[0], top_k=TOP_K)
        depth = int(explained.settings["first_depth"])
        using = json.loads(explained.request)[0]["using"]
        engine = store.adapter._engine

        def same_query(q: Vectors) -> object:
            """The adapter's first search on its own shard: its depth and vector, the
            payload (which holds the vector as written), without the namespace condition
            (left out while the shard holds one namespace); the payloads read
            (qdrant-edge-py converts one only when it is read; the raw side reads its
            own, as the adapter does)."""
            return [point.payload for point in engine._entry(index.name).shard.query(
                qe.QueryRequest(limit=depth, query=qe.Query.Nearest(
                    np.asarray(q).tolist(), using=using), with_payload=True,
                    with_vector=False))]

        from vectorport.adapters.qdrant import codec, naming

        adapter = store.adapter
        version = adapter._version(index.name)

        def same_rows(batch: Batch) -> list[Any]:
            """The adapter's points (codec.to_point, with fresh revision tokens): the
            point ids, payloads and dense vectors it hands to qdrant-edge-py."""
            records = overhead.adapter_records(index, batch)
            points = [codec.to_point(index.spec, "", r, bools_native=engine.bools_native,
                                     numbers_exact=engine.numbers_exact, version=version,
                                     revision=revision)
                      for r, revision in zip(records, naming.revisions(len(records)),
                                             strict=True)]
            if any(type(p.vectors) is not dict or naming.SPARSE in p.vectors for p in points):
                raise RuntimeError("points the benchmark cannot send as the adapter does")
            return points

        def same_upsert(points: list[Any]) -> object:
            # the SDK's Point copies each point into Rust: the SDK's work, timed here as
            # on the raw side (the adapter's edge._edge_point makes the same call)
            return engine._entry(index.name).shard.update(qe.UpdateOperation.upsert_points(
                [qe.Point(id=p.uid, payload=p.payload, vector=p.vectors) for p in points]))

        sides = overhead._paired(index, batches, raw_query, raw_upsert, same_query=same_query,
                                 same_rows=same_rows, same_upsert=same_upsert, notes=(
            "Qdrant and LanceDB: Qdrant Edge's raw side is an EdgeShard of qdrant-edge-py "
            "(Qdrant's Rust engine in process) with UUID point ids and the id and metadata "
            "in the payload; vectorport's first search goes 12 deep for a top 10 and "
            "returns the vectors as written (hex text in the payload), to rescore them "
            "exactly in float64 with ties complete; its namespace condition is left out "
            "while the shard holds one namespace; its payloads also carry the vectors as "
            "written (cosine), the namespace and a revision token, and every 10,000 points "
            "written it runs Qdrant's optimizers (the raw side never does); the upsert's "
            "second figure sends, with EdgeShard.update(upsert_points) into the adapter's "
            "shard, the points the adapter's own encoder (codec.to_point) made before the "
            "timing, as qdrant-edge-py Points made in the timing as the raw side's are "
            "(each batch's revision tokens made once, so the same tokens are written "
            "again); without the adapter's writer lock, tenant bookkeeping or optimizer "
            "runs",))
        try:
            yield sides
        finally:
            shard.close()
            store.close()


# -- recall ------------------------------------------------------------------------------


def _truth(data: Vectors, queries: Vectors) -> list[set[str]]:
    from benchmarks.common import exact_top_k

    return [{record_id(int(r)) for r in row} for row in exact_top_k(data, queries, K)]


def _recall_at(index: vectorport.Index, queries: Vectors, truth: list[set[str]],
               **kwargs: Any) -> tuple[float, float]:
    index.query(queries[0], top_k=K, include_metadata=False, **kwargs)
    start = time.perf_counter()
    found = [{m.id for m in index.query(q, top_k=K, include_metadata=False, **kwargs)}
             for q in queries]
    rate = len(queries) / (time.perf_counter() - start)
    return float(np.mean([len(f & t) / K for f, t in zip(found, truth, strict=True)])), rate


def _load(store: vectorport.Store, name: str, index_type: str, data: Vectors) -> vectorport.Index:
    # LanceDB trains its ANN index when a write first takes the table past
    # ``build_threshold`` rows (default 256) and searches later rows exhaustively: with the
    # default, the index would cover the first batch only and recall would read 1.0 while
    # measuring a scan. The threshold at the table size trains it over every row.
    index = store.create_index(name, DIM, "cosine", index_type=index_type,
                               backend_options={"lancedb": {"build_threshold": len(data)}})
    index.upsert((record_id(i), data[i], metadata(i)) for i in range(len(data)))
    return index


def _recall(report: Report, options: Options, backend: str, url: str) -> None:
    rows = min(RECALL_ROWS[backend], options.rows)
    data, queries = dataset(rows, DIM, RECALL_QUERIES)
    truth = _truth(data, queries)
    store = vectorport.connect(for_loads(url))
    types = store.capabilities.index_types
    try:
        if "ivf" in types:
            print(f"  {backend}: loading {rows:,} rows into an IVF index …", flush=True)
            start = time.perf_counter()
            ivf = _load(store, "recall_ivf", "ivf", data)
            built = time.perf_counter() - start
            for probes in IVF_PROBES:
                recall, rate = _recall_at(ivf, queries, truth, probes=probes)
                report.add(Figure(SECTION, f"recall@10: {backend} IVF over {rows:,} rows, probes "
                                  f"{probes} ({rate:.0f} queries/s)", recall, 1.0,
                                  "recall vs exact", chart=False))
            report.note(f"Qdrant and LanceDB: {backend} IVF load and training of {rows:,} rows "
                        f"took {built:.0f} s (LanceDB: build_threshold set to the table size, "
                        "so the index is trained over every row; with the default 256 it "
                        "covers the first batch only and later rows are scanned exhaustively)")
            store.delete_index("recall_ivf", missing_ok=True)
        if "hnsw" in types:
            print(f"  {backend}: loading {rows:,} rows into an HNSW index …", flush=True)
            hnsw = _load(store, "recall_hnsw", "hnsw", data)
            for ef in HNSW_EF:
                recall, rate = _recall_at(hnsw, queries, truth, ef=ef)
                report.add(Figure(SECTION, f"recall@10: {backend} HNSW over {rows:,} rows, ef "
                                  f"{ef} ({rate:.0f} queries/s)", recall, 1.0,
                                  "recall vs exact", chart=False))
            store.delete_index("recall_hnsw", missing_ok=True)
    finally:
        store.close()


def run(report: Report, options: Options) -> None:
    data, queries = dataset(min(overhead.RECORDS, options.rows), DIM,
                            overhead.QUERIES_PER_SAMPLE)
    batches = overhead._batches(data, overhead.UPSERT_BATCH)
    samples = 3 * options.repeats  # the command line asks for at least 3 repeats: 9 samples
    # recall on Qdrant's own engine (Edge): qdrant-client's local mode is brute force only
    engines = {"lancedb": (_lancedb, "lancedb://{}"), "qdrant": (_qdrant, "qdrant+edge://{}")}
    for backend, (setup, url) in engines.items():
        if backend == "qdrant" and _registered(backend):
            try:  # Qdrant Edge, Qdrant's own engine, beside qdrant-client's local mode
                with _qdrant_edge(data, batches) as sides:
                    overhead._measure(report, "qdrant (Edge)", sides, queries, batches,
                                      samples, SECTION)
            except Exception as exc:
                report.note(f"Qdrant and LanceDB: qdrant (Edge) overhead failed: "
                            f"{type(exc).__name__}: {exc}")
        if not _registered(backend):
            report.note(f"Qdrant and LanceDB: {backend} not measured: no '{backend}' backend is "
                        "registered in this tree")
            continue
        try:
            with setup(data, batches) as sides:
                overhead._measure(report, backend, sides, queries, batches, samples, SECTION)
        except Exception as exc:
            report.note(f"Qdrant and LanceDB: {backend} overhead failed: "
                        f"{type(exc).__name__}: {exc}")
        try:
            with _folder(f"{backend}-recall") as folder:
                _recall(report, options, backend, url.format(folder))
        except Exception as exc:
            report.note(f"Qdrant and LanceDB: {backend} recall failed: "
                        f"{type(exc).__name__}: {exc}")

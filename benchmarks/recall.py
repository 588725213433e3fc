"""Recall@10 against the exact answer wherever vectorport uses an ANN index.

Data and queries: the Gaussian mixture of :func:`common.dataset` (``--rows`` rows, 200
held-out queries), cosine. The exact top 10 comes from numpy over the same vectors.
Every query goes through vectorport (``index.query(q, top_k=10, ef=… / probes=…)``),
so the figure is what a vectorport user gets, with the ef / probes named in each row.
The baseline is the exact answer (recall 1.0); queries/s are in the row names.

- pgvector HNSW (m 16, ef_construction 64): the table the ingestion section left, or
  a fresh load; also with a filter selecting 10% of the rows (vectorport turns on
  pgvector's iterative scans, so a filtered ANN query still returns 10 rows).
- pgvector IVFFlat (lists = rows / 1000, pgvector's advice): its own load.
- milvus-lite HNSW (faiss underneath) on a smaller table (milvus-lite is an in-process
  Python engine, slow to load), flushed so that its segments are sealed and indexed; the
  adapter searches ``max(ef, top_k + 16)`` deep and rescores exactly.

**Real text** beside it, when WordLlama is installed (the ``wordllama`` extra): Gaussian
neighbourhoods flatter or wrong-foot an ANN index in ways real embeddings do not, so
the same settings are measured again on the Python standard library's docstrings
(:mod:`benchmarks.text_corpus`: about 17,000 distinct sentences held, 200 held out as
queries) embedded with WordLlama's bundled 256-dimension model, on pgvector HNSW and
IVFFlat and milvus-lite HNSW. The truth there is vectorport's local backend (exact
search), checked against numpy's exact answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import vectorport
from benchmarks import text_corpus
from benchmarks.common import (
    DIM,
    Figure,
    Options,
    Report,
    Vectors,
    dataset,
    exact_top_k,
    for_loads,
    metadata,
    record_id,
)
from benchmarks.servers import SERVERS

SECTION = "recall@10"
K = 10
QUERIES = 200
HNSW_EF = (10, 40, 100, 200)
IVF_PROBES = (1, 5, 10, 20)
MILVUS_ROWS = 20_000
MILVUS_EF = (10, 40, 100)
MILVUS_QUERIES = 100
BATCH = 5_000
TEXT_ROWS = 20_000
"""Chunks asked of the corpus (it has fewer: all of them are used)."""
TEXT_QUERIES = 200
TEXT = "real text (stdlib docstrings, WordLlama 256-d)"


def _truth(data: Vectors, queries: Vectors, rows: np.ndarray[Any, Any] | None = None
           ) -> list[set[str]]:
    """Exact top-K ids per query, over all rows or over the given row numbers."""
    if rows is None:
        top = exact_top_k(data, queries, K)
        return [{record_id(int(r)) for r in row} for row in top]
    top = exact_top_k(np.ascontiguousarray(data[rows]), queries, K)
    return [{record_id(int(rows[r])) for r in row} for row in top]


def _recall(found: Sequence[Sequence[str]], truth: Sequence[set[str]]) -> float:
    return float(np.mean([len(set(f) & t) / K for f, t in zip(found, truth, strict=True)]))


def _measure(index: vectorport.Index, queries: Vectors, truth: list[set[str]],
             **kwargs: Any) -> tuple[float, float]:
    index.query(queries[0], top_k=K, include_metadata=False, **kwargs)  # warm
    start = time.perf_counter()
    found = [[m.id for m in index.query(q, top_k=K, include_metadata=False, **kwargs)]
             for q in queries]
    rate = len(queries) / (time.perf_counter() - start)
    return _recall(found, truth), rate


def _sweep(report: Report, index: vectorport.Index, queries: Vectors, truth: list[set[str]],
           hint: str, values: Sequence[int], name: Callable[[int, float], str]) -> None:
    """One figure per value of the ``ef`` / ``probes`` hint, named by ``name(value,
    queries per second)``."""
    for value in values:
        recall, rate = _measure(index, queries, truth, **{hint: value})
        report.add(Figure(SECTION, name(value, rate), recall, 1.0, "recall vs exact"))


def _sealed_and_indexed(client: Any, collection: str) -> None:
    """Flush, then release and load the collection: milvus-lite builds the faiss index
    of sealed segments in a background worker after the flush returns, and until then
    searches them exhaustively (recall 1.0 at a tenth of the speed); loading waits for
    that build (seen: 6 s at 15k × 256), so the searches that follow use the index."""
    client.flush(collection)
    client.release_collection(collection)
    client.load_collection(collection)


def _load(store: vectorport.Store, name: str, data: Vectors, index_type: str,
          dim: int = DIM) -> vectorport.Index:
    store.delete_index(name, missing_ok=True)
    index = store.create_index(name, dim, "cosine", index_type=index_type,
                               backend_options={"pgvector": {"defer_index": True}})
    index.upsert(((record_id(i), data[i], metadata(i)) for i in range(len(data))),
                 batch_size=BATCH)
    store.adapter.build_index(name)  # type: ignore[attr-defined]
    return index


def _pgvector(report: Report, options: Options) -> None:
    rows = options.rows
    data, queries = dataset(rows, DIM)
    queries = queries[:QUERIES]
    truth = _truth(data, queries)
    loaded = SERVERS.loaded_pgvector
    if loaded is not None and loaded.rows == rows:
        store = vectorport.connect(for_loads(loaded.url))
        hnsw = store.index(loaded.index)
        owned: list[str] = []
    else:
        store = vectorport.connect(for_loads(f"{SERVERS.postgres()}&schema=bench_recall"))
        print(f"  loading {rows:,} rows and building HNSW …", flush=True)
        hnsw = _load(store, "recall_hnsw", data, "hnsw")
        owned = ["recall_hnsw"]
    try:
        _sweep(report, hnsw, queries, truth, "ef", HNSW_EF,
               lambda ef, rate: f"pgvector HNSW, ef {ef} ({rate:.0f} queries/s)")
        tenth = np.flatnonzero(np.arange(rows) % 10 == 0)
        filtered_truth = _truth(data, queries, tenth)
        recall, rate = _measure(hnsw, queries, filtered_truth, ef=40, filter={"bucket": 0})
        report.add(Figure(SECTION, f"pgvector HNSW, ef 40, 10% filter, iterative scan "
                          f"({rate:.0f} queries/s)", recall, 1.0, "recall vs exact"))
        print(f"  loading {rows:,} rows and building IVFFlat …", flush=True)
        ivf = _load(store, "recall_ivf", data, "ivf")
        owned.append("recall_ivf")
        lists = max(1, rows // 1000)
        _sweep(report, ivf, queries, truth, "probes", IVF_PROBES,
               lambda probes, rate: f"pgvector IVFFlat, {lists} lists, probes {probes} "
                                    f"({rate:.0f} queries/s)")
        report.note(f"recall: pgvector over {rows:,} rows × {DIM}, {len(queries)} held-out "
                    "queries from the same mixture")
    finally:
        for name in owned:
            store.delete_index(name, missing_ok=True)
        store.close()


def _milvus(report: Report, options: Options) -> None:
    from pymilvus import MilvusClient

    rows = min(MILVUS_ROWS, options.rows)
    data, queries = dataset(rows, DIM)
    queries = queries[:MILVUS_QUERIES]
    truth = _truth(data, queries)
    url = SERVERS.milvus()
    store = vectorport.connect(for_loads(url))
    client = MilvusClient(uri=url.removeprefix("milvus://"))
    try:
        print(f"  loading {rows:,} rows into milvus-lite (HNSW) …", flush=True)
        index = store.create_index("recall_hnsw", DIM, "cosine", index_type="hnsw")
        index.upsert(((record_id(i), data[i], metadata(i)) for i in range(rows)),
                     batch_size=1_000)
        _sealed_and_indexed(client, "recall_hnsw")  # only sealed segments get the index
        _sweep(report, index, queries, truth, "ef", MILVUS_EF,
               lambda ef, rate: f"milvus-lite HNSW, ef {ef} (searched {max(ef, K + 16)} deep; "
                                f"{rate:.0f} queries/s)")
        report.note(f"recall: milvus-lite over {rows:,} rows and {len(queries)} queries, "
                    "flushed with MilvusClient.flush first, and its background index build "
                    "awaited: milvus-lite searches unsealed or unindexed rows exhaustively "
                    "(recall 1.0, about 1 s a query at 20k rows) and builds its faiss HNSW "
                    "index only for sealed segments, as a Milvus server seals them on its own")
    finally:
        store.delete_index("recall_hnsw", missing_ok=True)
        client.close()
        store.close()
        SERVERS.release("milvus")


def _text_data() -> tuple[Vectors, Vectors] | None:
    """The corpus and the held-out queries, embedded; ``None`` without WordLlama."""
    from vectorport.embedders import wordllama

    if not wordllama.installed():
        return None
    corpus, held = text_corpus.split(text_corpus.stdlib_chunks(TEXT_ROWS + TEXT_QUERIES),
                                     TEXT_QUERIES)
    embedder = wordllama.WordLlamaEmbedder()
    data = np.ascontiguousarray(np.asarray(embedder.embed(corpus), dtype=np.float32))
    queries = np.ascontiguousarray(np.asarray(embedder.embed(held), dtype=np.float32))
    return data, queries


def _text_truth(report: Report, data: Vectors, queries: Vectors) -> list[set[str]]:
    """The exact top K from vectorport's local backend; a note if numpy disagrees."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder, \
            vectorport.connect(for_loads(f"local://{folder}/truth.db")) as store:
        index = store.create_index("text_truth", data.shape[1], "cosine")
        index.upsert_bulk({"id": record_id(i), "vector": v} for i, v in enumerate(data))
        truth = [{m.id for m in index.query(q, top_k=K, include_metadata=False)}
                 for q in queries]
    agreeing = _recall([sorted(t) for t in _truth(data, queries)], truth)
    if agreeing < 1.0:
        report.note(f"recall: on real text, numpy's exact top {K} agrees with the local "
                    f"backend's on {agreeing:.4f} of the ids (ties at the cut)")
    return truth


def _real_text(report: Report, options: Options) -> None:
    from pymilvus import MilvusClient

    start = time.perf_counter()
    embedded = _text_data()
    if embedded is None:
        report.note("recall: real-text figures skipped: WordLlama is not installed "
                    "(pip install 'vectorport[wordllama]')")
        return
    data, queries = embedded
    rows, dim = data.shape
    prepared = time.perf_counter() - start
    truth = _text_truth(report, data, queries)
    store = vectorport.connect(for_loads(f"{SERVERS.postgres()}&schema=bench_recall_text"))
    try:
        print(f"  real text: {rows:,} chunks × {dim}, pgvector HNSW and IVFFlat …", flush=True)
        hnsw = _load(store, "text_hnsw", data, "hnsw", dim)
        _sweep(report, hnsw, queries, truth, "ef", HNSW_EF,
               lambda ef, rate: f"{TEXT}: pgvector HNSW, ef {ef} ({rate:.0f} queries/s)")
        store.delete_index("text_hnsw", missing_ok=True)
        ivf = _load(store, "text_ivf", data, "ivf", dim)
        lists = max(1, rows // 1000)
        _sweep(report, ivf, queries, truth, "probes", IVF_PROBES,
               lambda probes, rate: f"{TEXT}: pgvector IVFFlat, {lists} lists, probes "
                                    f"{probes} ({rate:.0f} queries/s)")
    finally:
        store.delete_index("text_hnsw", missing_ok=True)
        store.delete_index("text_ivf", missing_ok=True)
        store.close()
    url = SERVERS.milvus()
    client = MilvusClient(uri=url.removeprefix("milvus://"))
    store = vectorport.connect(for_loads(url))
    try:
        print(f"  real text: {rows:,} chunks into milvus-lite (HNSW) …", flush=True)
        index = store.create_index("text_hnsw", dim, "cosine", index_type="hnsw")
        index.upsert_bulk({"id": record_id(i), "vector": v} for i, v in enumerate(data))
        _sealed_and_indexed(client, "text_hnsw")
        few, few_truth = queries[:MILVUS_QUERIES], truth[:MILVUS_QUERIES]
        _sweep(report, index, few, few_truth, "ef", MILVUS_EF,
               lambda ef, rate: f"{TEXT}: milvus-lite HNSW, ef {ef} (searched "
                                f"{max(ef, K + 16)} deep; {rate:.0f} queries/s)")
    finally:
        store.delete_index("text_hnsw", missing_ok=True)
        client.close()
        store.close()
        SERVERS.release("milvus")
    report.note(f"recall: real text is {rows:,} distinct sentences of the Python standard "
                f"library's docstrings, {len(queries)} more held out as queries "
                f"({MILVUS_QUERIES} on milvus-lite), embedded with WordLlama's bundled "
                f"{dim}-d model (corpus and embeddings took {prepared:.0f} s; the section's "
                f"real-text part {time.perf_counter() - start:.0f} s); the truth is the local "
                "backend's exact search")


def run(report: Report, options: Options) -> None:
    for name, part in (("pgvector", _pgvector), ("milvus", _milvus), ("real text", _real_text)):
        try:
            part(report, options)
        except Exception as exc:
            report.note(f"recall: {name} failed: {type(exc).__name__}: {exc}")

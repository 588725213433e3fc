"""Bulk loads on milvus (milvus-lite), chroma (in process), pinecone and turbopuffer (the
project's emulators, each served from a process of its own): ``index.upsert_bulk``
against the same backend's plain ``index.upsert`` of the same records, and against the
raw SDK's best bulk call.

Pinecone and turbopuffer are remote services: there a client's concurrent requests
overlap the service's work. An emulator served inside the benchmark's process shares
its interpreter lock and heap with the client, so that overlap cannot happen, and the
figures measured whichever side's threads won the lock (and the garbage the earlier
sections left); last measured so, turbopuffer's bulk load took 1.26 s in the full run
against 0.81 s alone. So both emulators run as ``vectorport emulator NAME`` in a child
process (:func:`benchmarks.servers.emulator_process`), and vectorport and the raw SDK
talk to the same one: the comparison stays like for like, the machine's cores (not one
lock) are what the two sides share.

Each load goes into a fresh index / collection / namespace (dropped and recreated,
untimed, before each sample), from the same Python data (ids, a float32 matrix,
metadata dicts, texts); the three sides alternate ``repeats`` times (at least 3) and the
medians are compared. The raw side is the SDK's own fastest documented way to load many
records, replace-not-merge or not:

- **milvus**: ``MilvusClient.insert`` of row dicts in chunks of 5,000, two at once,
  into a quick-setup collection (string id, vector, dynamic fields);
- **chroma**: ``Collection.add`` in batches of the client's ``max_batch_size``;
- **pinecone**: ``Index.upsert(vectors, batch_size=200, max_concurrency=8)``, the SDK's
  own parallel batching (200 vectors of 384 floats stay under the 2 MB request limit);
- **turbopuffer**: ``Namespace.write(upsert_columns=...)`` in chunks of 10,000, four
  at once (vectors as lists, which the SDK base64-encodes).

The plain upsert is vectorport's default batches (the backend's ``max_batch_size``,
``write_concurrency`` at once).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import vectorport
from benchmarks.common import (
    DIM,
    Figure,
    Options,
    Report,
    Vectors,
    alternating,
    dataset,
    document,
    for_loads,
    metadata,
    record_id,
)
from benchmarks.overhead import API_KEY_ENV, EMULATOR_KEY, Batch
from benchmarks.servers import SERVERS

SECTION = "bulk loads"
ROWS = 10_000
QUICK_ROWS = 4_000
SLOW_ROWS = {"chroma": 4_000}
"""Fewer rows where one load takes long: Chroma inserts ≈ 750 rows/s into its HNSW
graph here, so three sides of 10,000 rows three times took two minutes of the
benchmark's fifteen. 4,000 rows are one batch of Chroma's ``max_batch_size`` (5,461)
on every side, as 10,000 were two."""
VP_INDEX = "bulk_bench"


@dataclass(frozen=True)
class Data:
    """The facade overhead section's records, with a text each."""

    rows: Batch
    texts: list[str]

    @property
    def ids(self) -> list[str]:
        return self.rows.ids

    @property
    def vectors(self) -> Vectors:
        return self.rows.vectors

    @property
    def metadata(self) -> list[dict[str, Any]]:
        return self.rows.metadata

    def records(self) -> Iterator[dict[str, Any]]:
        for (i, v, m), t in zip(self.rows.records(), self.texts, strict=True):
            yield {"id": i, "vector": v, "metadata": m, "document": t}

    def head(self, rows: int) -> Data:
        """The first ``rows`` records."""
        return Data(Batch(self.ids[:rows], self.vectors[:rows], self.metadata[:rows]),
                      self.texts[:rows])


@dataclass(frozen=True)
class Backend:
    """A backend's vectorport store and its raw load (``raw_reset`` untimed first)."""

    store: vectorport.Store
    raw_reset: Callable[[], None]
    raw_load: Callable[[Data], None]
    after_write: Callable[[vectorport.Index], None] = lambda index: None
    """Run inside the timed part after a vectorport load (a strong read on pinecone)."""


def _vp_load(backend: Backend, data: Data, bulk: bool) -> float:
    store = backend.store
    store.delete_index(VP_INDEX, missing_ok=True)
    index = store.create_index(VP_INDEX, DIM, "cosine")
    start = time.perf_counter()
    if bulk:
        index.upsert_bulk(data.records())
    else:
        index.upsert(data.records())
    backend.after_write(index)
    return time.perf_counter() - start


def _raw(backend: Backend, data: Data) -> float:
    backend.raw_reset()
    start = time.perf_counter()
    backend.raw_load(data)
    return time.perf_counter() - start


def _chunks(data: Data, size: int) -> list[slice]:
    return [slice(i, i + size) for i in range(0, len(data.ids), size)]


# -- the backends ------------------------------------------------------------------------


@contextlib.contextmanager
def _milvus() -> Iterator[Backend]:
    from pymilvus import MilvusClient

    url = SERVERS.milvus()
    client = MilvusClient(uri=url.removeprefix("milvus://"))

    def reset() -> None:
        with contextlib.suppress(Exception):
            client.drop_collection("raw_bulk")
        client.create_collection("raw_bulk", dimension=DIM, metric_type="COSINE",
                                 id_type="string", max_length=64, auto_id=False,
                                 enable_dynamic_field=True, consistency_level="Strong")

    def load(data: Data) -> None:
        def one(part: slice) -> None:
            client.insert("raw_bulk", [
                {"id": i, "vector": v.tolist(), **m}
                for i, v, m in zip(data.ids[part], data.vectors[part], data.metadata[part],
                                   strict=True)])

        with ThreadPoolExecutor(2) as pool:
            list(pool.map(one, _chunks(data, 5_000)))

    with vectorport.connect(for_loads(url)) as store:
        try:
            yield Backend(store, reset, load)
        finally:
            with contextlib.suppress(Exception):
                client.drop_collection("raw_bulk")
            client.close()


@contextlib.contextmanager
def _chroma() -> Iterator[Backend]:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
    holder: dict[str, Any] = {}

    def reset() -> None:
        with contextlib.suppress(Exception):
            client.delete_collection("raw_bulk")
        holder["c"] = client.create_collection(
            "raw_bulk", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)

    def load(data: Data) -> None:
        collection = holder["c"]
        for part in _chunks(data, client.get_max_batch_size()):
            collection.add(ids=data.ids[part], embeddings=data.vectors[part],
                           metadatas=data.metadata[part], documents=data.texts[part])

    with vectorport.connect(for_loads("chroma+memory://")) as store:
        try:
            yield Backend(store, reset, load)
        finally:
            with contextlib.suppress(Exception):
                client.delete_collection("raw_bulk")


@contextlib.contextmanager
def _pinecone() -> Iterator[Backend]:
    from pinecone import Pinecone

    host = SERVERS.pinecone()
    os.environ[API_KEY_ENV] = EMULATOR_KEY
    pc = Pinecone(api_key=EMULATOR_KEY, host=host)
    holder: dict[str, Any] = {}

    def reset() -> None:
        with contextlib.suppress(Exception):
            pc.indexes.delete("raw-bulk")
        model = pc.indexes.create(
            name="raw-bulk",
            schema={"fields": {"_values": {"type": "dense_vector", "dimension": DIM,
                                           "metric": "cosine"}}},
            deployment={"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
            timeout=-1)
        holder["i"] = pc.index(host=str(model.host))

    def load(data: Data) -> None:
        holder["i"].upsert(
            vectors=[(i, v.tolist(), {**m, "text": t}) for i, v, m, t in
                     zip(data.ids, data.vectors, data.metadata, data.texts, strict=True)],
            namespace="", batch_size=200, max_concurrency=8, show_progress=False)

    def settled(index: vectorport.Index) -> None:
        index.count()  # a strong read: waits until the emulator reports the writes

    with vectorport.connect(for_loads(f"pinecone://?api_key_env={API_KEY_ENV}&host={host}")) as store:
        try:
            yield Backend(store, reset, load, settled)
        finally:
            with contextlib.suppress(Exception):
                pc.indexes.delete("raw-bulk")


@contextlib.contextmanager
def _turbopuffer() -> Iterator[Backend]:
    import turbopuffer

    base = SERVERS.turbopuffer()
    os.environ[API_KEY_ENV] = EMULATOR_KEY
    client = turbopuffer.Turbopuffer(api_key=EMULATOR_KEY, base_url=base, telemetry=False)
    namespace = client.namespace("raw-bulk")

    def reset() -> None:
        with contextlib.suppress(Exception):
            namespace.delete_all()

    def load(data: Data) -> None:
        def one(part: slice) -> None:
            columns: dict[str, list[Any]] = {
                "id": data.ids[part], "vector": data.vectors[part].tolist(),
                "text": data.texts[part]}
            for key in data.metadata[0]:
                columns[key] = [m[key] for m in data.metadata[part]]
            namespace.write(upsert_columns=columns,  # type: ignore[arg-type]
                            distance_metric="cosine_distance")

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(one, _chunks(data, 10_000)))

    with vectorport.connect(for_loads(
            f"turbopuffer://?base_url={base}&api_key_env={API_KEY_ENV}")) as store:
        try:
            yield Backend(store, reset, load)
        finally:
            reset()
            client.close()


BACKENDS: dict[str, Callable[[], contextlib.AbstractContextManager[Backend]]] = {
    "milvus": _milvus,
    "chroma": _chroma,
    "pinecone": _pinecone,
    "turbopuffer": _turbopuffer,
}


def _sides(backend: Backend, data: Data) -> list[Callable[[], float]]:
    return [lambda: _vp_load(backend, data, True), lambda: _vp_load(backend, data, False),
            lambda: _raw(backend, data)]


def run(report: Report, options: Options) -> None:
    rows = min(options.rows, QUICK_ROWS if options.quick else ROWS)
    vectors = dataset(rows, DIM)[0]
    data = Data(Batch([record_id(i) for i in range(rows)], vectors,
                      [metadata(i) for i in range(rows)]), [document(i) for i in range(rows)])
    repeats = min(options.repeats, 3)  # the default 5 would take a minute more
    for name, setup in BACKENDS.items():
        rows = min(len(data.ids), SLOW_ROWS.get(name, len(data.ids)))
        print(f"  {name}: {rows:,} rows × {DIM}, upsert_bulk / upsert / raw SDK, "
              "alternately …", flush=True)
        try:
            with setup() as backend:
                bulk, plain, raw = alternating(_sides(backend, data.head(rows)), repeats)
                count = backend.store.index(VP_INDEX).count()
                if count != rows:
                    report.note(f"bulk loads: {name} holds {count} rows, not {rows}")
                backend.store.delete_index(VP_INDEX, missing_ok=True)
        except Exception as exc:  # one backend's failure leaves the others' figures
            report.note(f"bulk loads: {name} failed: {type(exc).__name__}: {exc}")
            continue
        report.add(Figure(SECTION, f"{name}: upsert_bulk vs plain upsert, {rows:,} rows "
                          f"({bulk:.2f} s vs {plain:.2f} s)", rows / bulk, rows / plain,
                          "rows/s", "≥ 1.0×"))
        report.add(Figure(SECTION, f"{name}: upsert_bulk vs the raw SDK's bulk call "
                          f"({bulk:.2f} s vs {raw:.2f} s)", rows / bulk, rows / raw, "rows/s",
                          "≥ 1.0×"))
    report.note("bulk loads: milvus is milvus-lite and pinecone / turbopuffer are the "
                "project's emulators, each served from its own process (as the services "
                "are remote) to which vectorport and the raw SDK both write: the figures "
                "say what the client side and the emulator cost, not what the hosted "
                "services take")

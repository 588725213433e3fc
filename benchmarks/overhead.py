"""Facade overhead: vectorport against the raw SDK doing the same work on the same backend.

Small calls make the overhead visible: a top-10 query returning metadata, and an upsert
of 100 records, on 2,000 records of 384 dimensions. Each sample is a loop of calls; the
vectorport and the raw samples alternate, and the medians are compared.

What "the same work" means per backend:

- **pgvector**: the same table, and psycopg sending the very SQL the adapter sends (the
  benchmark renders the adapter's statement and checks it equals the hand-written one),
  on one connection with the same settings (binary results, no server-side prepare);
  upserts by binary COPY into a temporary table, then one ``INSERT … ON CONFLICT``.
- **milvus** (milvus-lite), **turbopuffer** and **pinecone** (the project's emulators,
  each served from a process of its own, as the services are remote: see
  ``benchmarks/servers.py``; both sides talk to the same one), **chroma** (in process):
  the raw side is what the SDK's documentation shows, on its
  own collection / namespace / index holding the same records with the same metric and
  index type: ``MilvusClient.search``, ``Namespace.query``, ``Index.query``,
  ``Collection.query`` and their upserts.

On milvus, turbopuffer, pinecone and chroma a second query figure pairs vectorport with
the raw SDK sending the adapter's own request (``Sides.same_query``): the adapter's
collection, depth (``top_k`` + 1 or + 2 to see ties at the cut), fields and options, as
``Index.explain`` shows them. Its ratio is vectorport's own cost; what the first figure
adds to it is the price of what the guarantees ask of the engine (exact tie order, exact
scores, kinds and namespaces kept). pgvector's raw side sends the adapter's SQL already.

Upserts have the same second figure on every backend here (``Sides.same_upsert``): the
raw SDK sending, into the adapter's own collection / table / namespace, the very rows
(points, Arrow table, columns, binary arrays) the adapter's own encoder makes of the
batch's validated records, built before the timing (``Sides.same_rows``). vectorport
against it is vectorport's own cost (validation, encoding, plumbing); it against the
raw upsert, the price of the guarantees' wider rows, less the conversion from the
Python data that the raw side does in its time as a user would (``tolist``, Arrow
arrays, the SDK's record tuples) and the "same" side had done for it. SDK objects that
copy their data on construction (qdrant-edge-py's ``Point``) are made in the time on
both sides. Before it is timed,
:func:`same_rows_check` writes swapped records that way and reads them back through
vectorport; a note says so should they not come back as written.

Both sides start from the same Python data (ids, float32 numpy vectors, metadata dicts)
and end with the results in hand, so conversions each side needs are in its time.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import vectorport
from benchmarks.common import (
    DIM,
    Figure,
    Options,
    Report,
    Vectors,
    alternating,
    dataset,
    metadata,
    paired_medians,
    record_id,
    timed,
)
from benchmarks.servers import SERVERS

SECTION = "facade overhead"
RECORDS = 2_000
TOP_K = 10
QUERIES_PER_SAMPLE = 40
SAMPLE_SECONDS = 0.25
"""Seconds of calls in one sample: 15 alternating samples a side of a quarter second each
keep the section near two minutes (0.4 s made it over four on a slow machine); the
median of many short samples follows load that comes and goes better than few long
ones."""
UPSERT_BATCH = 100
TARGET = "≤ 1.05×"
API_KEY_ENV = "VECTORPORT_BENCH_EMULATOR_KEY"
EMULATOR_KEY = "emulator-key"


@dataclass(frozen=True)
class Batch:
    ids: list[str]
    vectors: Vectors
    metadata: list[dict[str, Any]]

    def records(self) -> list[tuple[str, Any, dict[str, Any]]]:
        return list(zip(self.ids, self.vectors, self.metadata, strict=True))


@dataclass(frozen=True)
class Sides:
    """One backend's vectorport and raw calls, and what the raw side must be told."""

    vp_query: Callable[[Vectors], Sequence[str]]
    raw_query: Callable[[Vectors], Sequence[str]]
    vp_upsert: Callable[[Batch], object]
    raw_upsert: Callable[[Batch], object]
    notes: tuple[str, ...] = ()
    prepare: Callable[[Vectors], Any] | None = None
    adapter_query: Callable[[Any], object] | None = None
    """The adapter called directly with a request ``prepare`` made beforehand (no facade),
    to split the overhead between the facade and the adapter."""
    same_query: Callable[[Vectors], object] | None = None
    """The raw SDK sending the adapter's own request to the adapter's own collection (its
    depth, fields and options; from ``Index.explain`` where that is the request itself),
    without the adapter's work around it: what the guarantees ask of the engine. The
    ratio against it is vectorport's own cost; the raw side's ratio against it, the
    guarantees' price. (pgvector's raw side already sends the adapter's SQL.)"""
    same_rows: Callable[[Batch], Any] | None = None
    """A batch as the adapter's own encoder turns it into native rows (points, Arrow
    table, request body) for ``same_upsert``; called before the timing, so that side
    times the SDK and the engine only."""
    same_upsert: Callable[[Any], object] | None = None
    """The raw SDK sending rows ``same_rows`` built into the adapter's own collection /
    table / namespace: vectorport's upsert against it is vectorport's own cost
    (validation, encoding, plumbing); it against the raw upsert, the price of the
    guarantees' wider rows."""


def _paired(index: Any, batches: Sequence[Batch], raw_query: Callable[[Vectors], Sequence[str]],
            raw_upsert: Callable[[Batch], object], notes: tuple[str, ...],
            same_query: Callable[[Vectors], object] | None = None,
            same_rows: Callable[[Batch], Any] | None = None,
            same_upsert: Callable[[Any], object] | None = None) -> Sides:
    """Load the same batches through both sides, then pair vectorport's calls with the raw
    ones (the common case; a backend needing more builds :class:`Sides` itself)."""
    for batch in batches:
        index.upsert(batch.records())
        raw_upsert(batch)
    checked = (same_rows_check(index, batches, same_rows, same_upsert)
               if same_rows is not None and same_upsert is not None else ())
    return Sides(
        vp_query=lambda q: [m.id for m in index.query(q, top_k=TOP_K)],
        raw_query=raw_query,
        vp_upsert=lambda b: index.upsert(b.records()),
        raw_upsert=raw_upsert,
        notes=notes + checked,
        same_query=same_query,
        same_rows=same_rows,
        same_upsert=same_upsert,
    )


def adapter_records(index: Any, batch: Batch) -> Sequence[Any]:
    """``batch`` as the facade hands it to the adapter: the validated ``Record`` values
    of the facade's own request builder (what every adapter's row encoder takes)."""
    from vectorport.core import requests

    return requests.build_records(index.target, batch.records())


def same_rows_check(index: Any, batches: Sequence[Batch], same_rows: Callable[[Batch], Any],
                    same_upsert: Callable[[Any], object]) -> tuple[str, ...]:
    """Overwrite the first batch's records, through the raw SDK with the adapter's rows,
    with the last batch's vectors and metadata, read them back through vectorport, and
    write the first batch again: a note unless they came back as written (metadata with
    its kinds exactly; else the "same" side would not be sending what the adapter
    sends)."""
    first, last = batches[0], batches[-1]
    swapped = Batch(first.ids, last.vectors, last.metadata)
    same_upsert(same_rows(swapped))
    fetched = index.fetch(first.ids)
    index.upsert(first.records())

    def kinds(meta: dict[str, Any]) -> dict[str, tuple[str, Any]]:
        return {key: (type(value).__name__, value) for key, value in meta.items()}

    expected = adapter_records(index, swapped)
    exact = list(fetched) == list(first.ids) and all(
        # vectors within the conformance suite's tolerance: Chroma's cosine collections
        # read some float32 components back one unit in the last place off, vectorport's
        # own writes alike
        np.allclose(fetched[r.id].vector, r.vector, rtol=1e-6, atol=1e-6)
        and kinds(dict(fetched[r.id].metadata)) == kinds(dict(r.metadata))
        and fetched[r.id].document == r.document for r in expected)
    if exact:
        return ()
    return (f"facade overhead: {index.store.backend}: the raw SDK's write of the adapter's "
            "own rows does not read back as written (the upsert's second figure does not "
            "send what the adapter sends)",)


def first_depth(index: Any) -> int:
    """How deep the adapter's first search goes for a top-10 query (its ``explain``)."""
    return int(index.explain(np.ones(DIM, np.float32), top_k=TOP_K).settings["first_depth"])


def _explained(index: Any) -> dict[str, Any]:
    """The keyword arguments the adapter sends for a top-10 query (its ``explain``
    request, a JSON document of them), the query vector left out."""
    request: dict[str, Any] = json.loads(index.explain(np.ones(DIM, np.float32),
                                                       top_k=TOP_K).request)
    return request


Setup = Callable[[Vectors, list[Batch]], contextlib.AbstractContextManager[Sides]]


def _batches(data: Vectors, size: int) -> list[Batch]:
    out = []
    for start in range(0, len(data), size):
        rows = range(start, min(start + size, len(data)))
        out.append(Batch([record_id(i) for i in rows], data[start:start + size],
                         [metadata(i) for i in rows]))
    return out


# -- pgvector ------------------------------------------------------------------------------

RAW_PG_QUERY = (
    "SELECT id, (1 - coalesce(nullif(vp_rank, 'NaN'::float8), 1))::float8 AS score, metadata,"
    " document FROM (SELECT id, (embedding <=> %s::vector) AS vp_rank, metadata, document"
    ' FROM "overhead"."vp_overhead" WHERE namespace = %s ORDER BY vp_rank, id LIMIT %s) AS hits'
    " ORDER BY vp_rank, id"
)
TABLE_OID_COLUMNS = (", tableoid AS vp_table", ", vp_table")
"""What the adapter's query selects beyond :data:`RAW_PG_QUERY`: each row's table OID."""
RAW_PG_STAGE = (
    "CREATE TEMP TABLE raw_stage (id text NOT NULL, embedding vector NOT NULL,"
    " sparse sparsevec, metadata jsonb NOT NULL, document text) ON COMMIT DELETE ROWS"
)
RAW_PG_COPY = "COPY raw_stage (id, embedding, sparse, metadata, document) FROM STDIN (FORMAT BINARY)"
RAW_PG_MERGE = (
    'INSERT INTO "overhead"."vp_overhead" (namespace, id, embedding, sparse, metadata, document)'
    " SELECT %s, id, embedding, sparse, metadata, document FROM raw_stage"
    " ON CONFLICT (namespace, id) DO UPDATE SET embedding = EXCLUDED.embedding,"
    " sparse = EXCLUDED.sparse, metadata = EXCLUDED.metadata, document = EXCLUDED.document"
)


@contextlib.contextmanager
def _pgvector(data: Vectors, batches: list[Batch]) -> Iterator[Sides]:
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg.types.json import Jsonb

    from vectorport.adapters.pgvector import statements
    from vectorport.adapters.pgvector.options import SESSION_DEFAULTS, index_layout
    from vectorport.adapters.pgvector.schema import Names
    from vectorport.testing.pgvector import libpq_uri

    url = SERVERS.postgres()
    store = vectorport.connect(f"{url}&schema=overhead")
    try:
        index = store.create_index("overhead", DIM, "cosine")
        for batch in batches:
            index.upsert(batch.records())
        conn = psycopg.connect(libpq_uri(url), autocommit=True, prepare_threshold=None)
        register_vector(conn)
        conn.execute(RAW_PG_STAGE)
        for name, value in SESSION_DEFAULTS:  # the adapter's session settings, for the same plan
            conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        notes = ["pgvector: the raw connection runs the adapter's SQL with the adapter's session "
                 "settings (iterative index scans on) and, like the adapter, no server-side "
                 "prepared statements"]
        probe = index.prepare_query(data[0], top_k=TOP_K)
        adapter_sql = statements.query(Names("overhead"), index_layout(index.spec), probe)
        # the adapter's rows also carry their table's OID (how it tells a table replaced
        # under a handle, docs/backends/pgvector.md), which a user's query would not read
        adapter_text = stripped = adapter_sql.sql.as_string(conn)
        for column in TABLE_OID_COLUMNS:
            stripped = stripped.replace(column, "")
        if stripped != RAW_PG_QUERY:
            notes.append("pgvector: the adapter's query SQL changed; the raw side's hand-written "
                         "copy no longer matches it")
        elif adapter_text != RAW_PG_QUERY:
            notes.append("pgvector: the adapter's query is the raw side's with each row's "
                         "tableoid as well (how a handle notices its table replaced)")
        cursor = conn.cursor(binary=True)

        def raw_query(q: Vectors) -> list[str]:
            rows = cursor.execute(RAW_PG_QUERY, (q, "", TOP_K)).fetchall()
            return [row[0] for row in rows]

        def raw_upsert(batch: Batch) -> None:
            with conn.transaction():
                with conn.cursor() as cur, cur.copy(RAW_PG_COPY) as copy:
                    copy.set_types(["text", "vector", "sparsevec", "jsonb", "text"])
                    for rid, vec, meta in zip(batch.ids, batch.vectors, batch.metadata,
                                              strict=True):
                        copy.write_row((rid, vec, None, Jsonb(meta), None))
                conn.execute(RAW_PG_MERGE, ("",))

        from vectorport.adapters.pgvector import array_params
        from vectorport.adapters.pgvector.connections import type_oids

        # the adapter's upsert statement and parameter encoding (one INSERT … SELECT FROM
        # unnest of five binary arrays), on the raw connection
        for adapters in (conn.adapters, cursor.adapters):  # the cursor copied conn's map
            adapters.register_dumper(array_params.ArrayParam, array_params.ArrayParamDumper)
        layout = index_layout(index.spec)
        merge = statements.merge_arrays(Names("overhead"), layout)
        oids = type_oids(conn, layout.vector_type)

        def same_rows(batch: Batch) -> tuple[Any, ...]:
            return array_params.encode(adapter_records(index, batch), layout.vector_type, *oids)

        def same_upsert(arrays: tuple[Any, ...]) -> None:
            with conn.transaction():
                cursor.execute(merge, ("", *arrays))

        notes.extend(same_rows_check(index, batches, same_rows, same_upsert))
        notes.append("pgvector: the upsert's second figure sends, on the raw connection in "
                     "BEGIN … COMMIT, the adapter's own statement (statements.merge_arrays: "
                     "one INSERT … SELECT FROM unnest … ON CONFLICT DO UPDATE) with the five "
                     "binary arrays its encoder (array_params.encode) made before the timing; "
                     "the first figure's raw side loads by binary COPY into a temporary table "
                     "and merges from it")
        yield Sides(
            vp_query=lambda q: [m.id for m in index.query(q, top_k=TOP_K)],
            raw_query=raw_query,
            vp_upsert=lambda b: index.upsert(b.records()),
            raw_upsert=raw_upsert,
            same_rows=same_rows,
            same_upsert=same_upsert,
            notes=tuple(notes),
            prepare=lambda q: index.prepare_query(q, top_k=TOP_K),
            adapter_query=lambda request: store.adapter.query(index.spec, request),
        )
        conn.close()
    finally:
        with contextlib.suppress(Exception):
            store.delete_index("overhead")
        store.close()


# -- milvus --------------------------------------------------------------------------------

META_FIELDS = ["source", "year", "rating", "lang", "tags", "bucket"]


@contextlib.contextmanager
def _milvus(data: Vectors, batches: list[Batch]) -> Iterator[Sides]:
    from pymilvus import MilvusClient

    url = SERVERS.milvus()
    store = vectorport.connect(url)
    client = MilvusClient(uri=url.removeprefix("milvus://"))
    try:
        index = store.create_index("overhead", DIM, "cosine")
        client.create_collection("raw_overhead", dimension=DIM, metric_type="COSINE",
                                 id_type="string", max_length=64, auto_id=False,
                                 enable_dynamic_field=True, consistency_level="Strong")

        def raw_upsert(batch: Batch) -> None:
            client.upsert("raw_overhead", [
                {"id": rid, "vector": vec.tolist(), **meta}
                for rid, vec, meta in zip(batch.ids, batch.vectors, batch.metadata, strict=True)
            ])

        def raw_query(q: Vectors) -> list[str]:
            hits = client.search("raw_overhead", data=[q.tolist()], limit=TOP_K,
                                 output_fields=META_FIELDS, consistency_level="Strong")
            return [str(hit["id"]) for hit in hits[0]]

        from vectorport.adapters.milvus import layout
        from vectorport.adapters.milvus.explain import dense_search_params

        request = index.prepare_query(data[0], top_k=TOP_K)
        adapter = store.adapter
        expression = adapter._scoped(index.spec, "", None)
        fields = adapter._output_fields(index.spec, request)
        depth = first_depth(index)
        params = dense_search_params(index.spec, request, depth)

        def same_query(q: Vectors) -> object:
            """The adapter's search, its hits read (pymilvus decodes them only then; the
            raw side reads its own, as the adapter does)."""
            hits = client.search(index.name, data=[q.tolist()], anns_field=layout.VECTOR,
                                 limit=depth, filter=expression, output_fields=fields,
                                 search_params=params, consistency_level="Strong")
            return [hit.get("entity") for hit in hits[0]]

        adapter_row, in_meta = adapter._row, adapter._bounds_in_meta(index.spec)
        columns = adapter._columns
        first = adapter_records(index, batches[0])[0]
        column_wise = adapter._column_wise(index.spec, "", first, in_meta)

        filter_keys = adapter._filter_keys(index.spec)

        def same_rows(batch: Batch) -> Any:
            """The adapter's own request for the batch: on milvus-lite 3 the column-wise
            InsertRequest it sends (adapters/milvus/columns.py), elsewhere its rows."""
            records = adapter_records(index, batch)
            if column_wise:
                from vectorport.adapters.milvus import columns as milvus_columns

                _, timestamp = columns._schema(index.name)
                pks = [adapter._pk("", r.id) for r in records]
                return milvus_columns.request(index.name, pks, "", records, timestamp,
                                              filter_keys=filter_keys)
            return [adapter_row(index.spec, "", r, in_meta) for r in records]

        def same_upsert(prepared: Any) -> object:
            if column_wise:  # the same client's gRPC stub, as the adapter sends it
                return client._get_connection()._stub.Insert(prepared)
            if adapter.engine.inserts_replace:
                return client.insert(index.name, prepared)
            return client.upsert(index.name, prepared)

        sides = _paired(index, batches, raw_query, raw_upsert, same_query=same_query,
                        same_rows=same_rows, same_upsert=same_upsert,
                        notes=("milvus: the adapter asks for top_k + 2 candidates with their vectors and "
                   "rescores them exactly in float64 (exact scores, ties at the cut by id, "
                   "deeper only when the cut is not proven); the raw search asks for 10 "
                   "without vectors, and adds no namespace filter; the upsert's second "
                   "figure sends into the adapter's collection the request the adapter itself "
                   "sends, built before the timing: on milvus-lite 3 its column-wise "
                   "InsertRequest (an insert replaces there, where an upsert reads and "
                   "merges: namespaced primary keys, vectors, namespace, kind-tagged "
                   "meta JSON, documents, the filter keys in the dynamic field) through "
                   "the same pymilvus client's gRPC stub; elsewhere its rows "
                   "(MilvusAdapter._row) through MilvusClient.upsert; the raw side "
                   "upserts its rows; "
                   "both collections are sealed after the load (MilvusClient.flush; the "
                   "adapter's first search would seal its own, optimize_every), so that "
                   "every side searches sealed rows: milvus-lite reads unsealed ones one by "
                   "one",),)
        client.flush("raw_overhead")
        store.adapter.optimize(index.name)  # type: ignore[attr-defined]
        yield sides
    finally:
        with contextlib.suppress(Exception):
            client.drop_collection("raw_overhead")
        with contextlib.suppress(Exception):
            store.delete_index("overhead")
        client.close()
        store.close()


# -- turbopuffer ---------------------------------------------------------------------------


@contextlib.contextmanager
def _turbopuffer(data: Vectors, batches: list[Batch]) -> Iterator[Sides]:
    import turbopuffer

    base = SERVERS.turbopuffer()
    os.environ[API_KEY_ENV] = EMULATOR_KEY
    store = vectorport.connect(f"turbopuffer://?base_url={base}&api_key_env={API_KEY_ENV}")
    client = turbopuffer.Turbopuffer(api_key=EMULATOR_KEY, base_url=base, telemetry=False)
    namespace = client.namespace("raw-overhead")
    try:
        index = store.create_index("overhead", DIM, "cosine")

        def raw_upsert(batch: Batch) -> None:
            namespace.write(
                upsert_rows=[{"id": rid, "vector": vec.tolist(), **meta}
                             for rid, vec, meta in zip(batch.ids, batch.vectors, batch.metadata,
                                                       strict=True)],
                distance_metric="cosine_distance",
            )

        def raw_query(q: Vectors) -> list[str]:
            result = namespace.query(rank_by=("vector", "ANN", q.tolist()), top_k=TOP_K,
                                     include_attributes=META_FIELDS)
            return [str(row.id) for row in result.rows or []]

        sent = _explained(index)
        own = client.namespace(sent.pop("namespace"))
        rank_field, rank_kind = sent.pop("rank_by")[:2]

        def same_query(q: Vectors) -> object:
            return own.query(rank_by=(rank_field, rank_kind, q.tolist()), **sent)

        from vectorport.adapters.turbopuffer import bulk, codec
        from vectorport.adapters.turbopuffer.adapter import _METRICS

        adapter = store.adapter
        native = adapter._native(index.spec, "")
        distance = _METRICS[index.metric]

        def same_rows(batch: Batch) -> dict[str, Any]:
            """The adapter's write: its columns and the schema it sends (the reserved
            attributes, and columns for fields it has not declared: none once loaded)."""
            records = adapter_records(index, batch)
            return bulk.write_arguments(
                bulk.columns_of(records), distance,
                adapter._write_schema(index.spec, native, codec.fields_of(records)))

        def same_upsert(body: dict[str, Any]) -> object:
            return own.write(**body)

        yield _paired(index, batches, raw_query, raw_upsert, same_query=same_query,
                      same_rows=same_rows, same_upsert=same_upsert,
                      notes=("turbopuffer (emulator, in its own process): the adapter asks for "
                   "top_k + 1 rows to see ties at the cut, and writes each metadata field "
                   "to a column typed by its kind; the "
                   "upsert's second figure sends, with Namespace.write into the adapter's "
                   "namespace, the column-oriented rows (bulk.columns_of), distance metric and "
                   "schema (_write_schema) the adapter's own encoder made before the timing, "
                   "as the adapter passes them (bulk.write_arguments: the columns in "
                   "extra_body, which the SDK sends without walking them)",),)
    finally:
        with contextlib.suppress(Exception):
            namespace.delete_all()
        with contextlib.suppress(Exception):
            store.delete_index("overhead")
        client.close()
        store.close()


# -- pinecone ------------------------------------------------------------------------------


@contextlib.contextmanager
def _pinecone(data: Vectors, batches: list[Batch]) -> Iterator[Sides]:
    from pinecone import Pinecone

    host = SERVERS.pinecone()
    os.environ[API_KEY_ENV] = EMULATOR_KEY
    store = vectorport.connect(f"pinecone://?api_key_env={API_KEY_ENV}&host={host}")
    pc = Pinecone(api_key=EMULATOR_KEY, host=host)
    try:
        index = store.create_index("overhead", DIM, "cosine")
        model = pc.indexes.create(
            name="raw-overhead",
            schema={"fields": {"_values": {"type": "dense_vector", "dimension": DIM,
                                           "metric": "cosine"}}},
            deployment={"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
            timeout=-1,
        )
        raw = pc.index(host=model.host)

        def raw_upsert(batch: Batch) -> None:
            raw.upsert(vectors=[(rid, vec.tolist(), meta) for rid, vec, meta in
                                zip(batch.ids, batch.vectors, batch.metadata, strict=True)],
                       namespace="")

        def raw_query(q: Vectors) -> list[str]:
            answer = raw.query(vector=q.tolist(), top_k=TOP_K, include_metadata=True,
                               namespace="")
            return [m.id for m in answer.matches]

        for batch in batches:
            index.upsert(batch.records())
            raw_upsert(batch)
        index.query(data[0], top_k=1)  # the first strong read waits for the writes
        from vectorport.adapters.pinecone.naming import index_name_to_pinecone

        own = pc.index(host=pc.indexes.describe(index_name_to_pinecone(index.name)).host)
        sent = _explained(index)

        def same_query(q: Vectors) -> object:
            return own.query(**{**sent, "vector": q.tolist()})

        from vectorport.adapters.pinecone.codec import wire_vector

        layout = store.adapter._handle(index.name).layout

        def same_rows(batch: Batch) -> list[Any]:
            return [wire_vector(r, layout) for r in adapter_records(index, batch)]

        def same_upsert(vectors: list[Any]) -> object:
            return own.upsert(vectors=vectors, namespace="")

        checked = same_rows_check(index, batches, same_rows, same_upsert)

        yield Sides(
            vp_query=lambda q: [m.id for m in index.query(q, top_k=TOP_K)],
            raw_query=raw_query,
            vp_upsert=lambda b: index.upsert(b.records()),
            raw_upsert=raw_upsert,
            same_rows=same_rows,
            same_upsert=same_upsert,
            notes=("pinecone (emulator, in its own process): vectorport's default strong "
                   "reads wait until a query reports the namespace caught up with this "
                   "client's writes (an extra "
                   "round trip after each upsert), ask for top_k + 1 to see ties at the cut, "
                   "and encode ids and number kinds (a marker only for ints beyond 2^53 and "
                   "integral floats, and the keys holding numbers); the raw query does not "
                   "wait; the upsert's second figure sends, with the same Index.upsert into "
                   "the adapter's index and namespace, the Vectors the adapter's own encoder "
                   "(codec.wire_vector: encoded id, values, encoded metadata) made before "
                   "the timing, in one request as the adapter sends 100 records", *checked),
            same_query=same_query,
        )
    finally:
        with contextlib.suppress(Exception):
            pc.indexes.delete("raw-overhead")
        with contextlib.suppress(Exception):
            store.delete_index("overhead")
        store.close()


# -- chroma --------------------------------------------------------------------------------


@contextlib.contextmanager
def _chroma(data: Vectors, batches: list[Batch]) -> Iterator[Sides]:
    import chromadb
    from chromadb.config import Settings

    store = vectorport.connect("chroma+memory://")
    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
    collection = client.create_collection(
        "raw_overhead", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
    try:
        index = store.create_index("overhead", DIM, "cosine")

        def raw_upsert(batch: Batch) -> None:
            collection.upsert(ids=batch.ids, embeddings=batch.vectors,
                              metadatas=batch.metadata)  # type: ignore[arg-type]

        def raw_query(q: Vectors) -> list[str]:
            result = collection.query(query_embeddings=q.reshape(1, -1), n_results=TOP_K,
                                      include=["metadatas", "distances"])
            return list(result["ids"][0])

        from vectorport.adapters.chroma.naming import data_collection

        sent = _explained(index)
        own: list[Any] = []  # the data collection, made by the first upsert

        def same_query(q: Vectors) -> object:
            if not own:
                own.append(store.adapter._client.get_collection(data_collection(index.name, "")))
            return own[0].query(query_embeddings=q.reshape(1, -1), n_results=sent["n_results"],
                             where=sent["where"], where_document=sent["where_document"],
                             include=sent["include"])

        from vectorport.adapters.chroma.layout import layout_of
        from vectorport.adapters.chroma.written import clearing, written_of

        def same_rows(batch: Batch) -> dict[str, Any]:
            """What the adapter's write (written.replace) sends once its collection lists
            every key the batch holds: ids, the stacked vectors, each metadata encoded by
            the collection's layout with None for every listed key it lacks."""
            data_handle = own[0] if own else store.adapter._client.get_collection(
                data_collection(index.name, ""))
            records = adapter_records(index, batch)
            encode = layout_of(data_handle.metadata).encode
            known = written_of(data_handle.metadata)
            encoded = [encode(r.metadata) for r in records]
            cleared = clearing(encoded, known) if known is not None else None
            if cleared is None:
                raise RuntimeError("the chroma adapter would read the stored records first")
            return {"ids": [r.id for r in records],
                    "embeddings": np.stack([r.vector for r in records]),
                    "metadatas": cleared}

        def same_upsert(rows: dict[str, Any]) -> object:
            if not own:
                own.append(store.adapter._client.get_collection(data_collection(index.name, "")))
            return own[0].upsert(**rows)

        yield _paired(index, batches, raw_query, raw_upsert, same_query=same_query,
                      same_rows=same_rows, same_upsert=same_upsert,
                      notes=("chroma: the adapter remembers its collection handle (looked up "
                   "again only when it has gone stale), asks for top_k + 1 neighbours to see "
                   "ties at the cut, returns documents, and keeps one reserved list "
                   "(vectorport:kinds) per record for exact $exists and number ranges; an "
                   "upsert replaces a record (Chroma's own upsert merges metadata keys) by "
                   "sending None for every key the collection lists as ever written that "
                   "the new record lacks (no read of the stored records; the list is kept on "
                   "the collection handle of this chroma+memory store, its database's only "
                   "writer, where a folder's or a server's writer looks it up afresh under "
                   "the write lock); the raw upsert merges; the upsert's second figure "
                   "sends, with Collection.upsert into the adapter's data collection, what "
                   "the adapter's write sends once the collection lists every key: the ids, "
                   "the stacked vectors and each metadata encoded by the collection's layout "
                   "(layout.encode, with None for every listed key it lacks: "
                   "written.clearing), made before the timing; no lock, no key-list check",),)
    finally:
        with contextlib.suppress(Exception):
            client.delete_collection("raw_overhead")
        with contextlib.suppress(Exception):
            store.delete_index("overhead")
        store.close()


BACKENDS: dict[str, Setup] = {
    "pgvector": _pgvector,
    "milvus": _milvus,
    "turbopuffer": _turbopuffer,
    "pinecone": _pinecone,
    "chroma": _chroma,
}


def _overlap(a: Sequence[str], b: Sequence[str]) -> float:
    return len(set(a) & set(b)) / max(1, len(set(a) | set(b)))


WAKE_PAUSE = 0.002
"""Seconds of the blocking wait before the in-place timing (an engine's answer to a query
of these sizes takes about that)."""


def wake_penalty(queries: Vectors, rounds: int = 400) -> tuple[float, float]:
    """Median µs of one piece of the facade's per-call work (checking a query vector,
    ``validation.query_vector``) run warm, one call after another, and run right after a
    blocking wait of :data:`WAKE_PAUSE`, as it runs in a query: after the previous call's
    answer woke the thread. On a virtual machine whose idle CPU the host takes back, the
    second is several times the first, and so is every µs of Python a call spends."""
    from vectorport.core.validation import query_vector

    warm: list[float] = []
    woken: list[float] = []
    for i in range(rounds):
        vector = queries[i % len(queries)]
        warm.append(timed(lambda v=vector: query_vector(v, DIM, True)))  # type: ignore[misc]
        time.sleep(WAKE_PAUSE)
        woken.append(timed(lambda v=vector: query_vector(v, DIM, True)))  # type: ignore[misc]
    return statistics.median(warm) * 1e6, statistics.median(woken) * 1e6


def run(report: Report, options: Options) -> None:
    data, queries = dataset(RECORDS, DIM, QUERIES_PER_SAMPLE)
    batches = _batches(data, UPSERT_BATCH)
    samples = max(9, 3 * options.repeats)
    warm, woken = wake_penalty(queries)
    report.note(f"facade overhead: on this machine one piece of the per-call work (checking "
                f"a 384-d query vector) takes {warm:.1f} µs warm and {woken:.1f} µs right "
                f"after a {WAKE_PAUSE * 1e3:g} ms blocking wait, as it runs in a query "
                f"({woken / warm:.0f}×): the µs of Python a call spends count several times "
                "over here (docs/benchmarks.md, \"What a call costs in place\")")
    for backend, setup in BACKENDS.items():
        try:
            context = setup(data, batches)
            sides = context.__enter__()
        except Exception as exc:  # an adapter not yet in the tree, a server that won't start
            report.note(f"facade overhead: {backend} not measured: {type(exc).__name__}: {exc}")
            continue
        try:
            _measure(report, backend, sides, queries, batches, samples)
        except Exception as exc:
            report.note(f"facade overhead: {backend} failed: {type(exc).__name__}: {exc}")
            context.__exit__(type(exc), exc, exc.__traceback__)
            continue
        context.__exit__(None, None, None)
    SERVERS.release("milvus", "turbopuffer", "pinecone")


def _calls(fn: Callable[[], object], budget: float, low: int, high: int) -> int:
    """How many calls fill about ``budget`` seconds (a sample long enough to time well)."""
    fn()
    seconds = statistics.median(timed(fn) for _ in range(3))
    return max(low, min(high, round(budget / max(seconds, 1e-6))))


def _measure(report: Report, backend: str, sides: Sides, queries: Vectors,
             batches: list[Batch], samples: int, section: str = SECTION) -> None:
    for note in sides.notes:
        report.note(note)
    same = np.mean([_overlap(sides.vp_query(q), sides.raw_query(q)) for q in queries[:10]])
    if same < 1.0:
        report.note(f"facade overhead: {backend}: vectorport and the raw SDK agree on "
                    f"{same:.0%} of the top-{TOP_K} ids (different index instances)")
    calls = _calls(lambda: sides.raw_query(queries[0]), SAMPLE_SECONDS, 3, len(queries))
    chosen = queries[:calls]

    def query_loop(fn: Callable[[Vectors], object]) -> Callable[[], None]:
        def loop() -> None:
            for q in chosen:
                fn(q)
        return loop

    if sides.prepare is not None and sides.adapter_query is not None:
        # three sides in turn: vectorport, the adapter called directly, raw
        requests = [sides.prepare(q) for q in chosen]
        adapter_query = sides.adapter_query

        def direct_loop() -> None:
            for request in requests:
                adapter_query(request)

        loops = [query_loop(sides.vp_query), direct_loop, query_loop(sides.raw_query)]
        for loop in loops:
            loop()
        vp, direct, raw = alternating([lambda fn=fn: timed(fn) for fn in loops], samples)
        report.note(f"facade overhead: {backend} query split (medians of the same alternating "
                    f"samples, µs per call): facade (validation, request, result order) ≈ "
                    f"{(vp - direct) / calls * 1e6:.0f}, adapter (statement, pool, row "
                    f"mapping) ≈ {(direct - raw) / calls * 1e6:.0f}, raw psycopg "
                    f"{raw / calls * 1e6:.0f}")
    else:
        vp, raw = paired_medians(query_loop(sides.vp_query), query_loop(sides.raw_query),
                                 repeats=samples)
    report.add(Figure(section, f"{backend}: query, top {TOP_K} with metadata",
                      vp / calls * 1e6, raw / calls * 1e6, "µs per call vs raw SDK", TARGET,
                      higher_is_better=False))
    if sides.same_query is not None:
        vp, same = paired_medians(query_loop(sides.vp_query), query_loop(sides.same_query),
                                  repeats=samples)
        report.add(Figure(section, f"{backend}: query, vs the raw SDK sending the adapter's "
                          "own request (vectorport's own cost)", vp / calls * 1e6,
                          same / calls * 1e6, "µs per call vs raw SDK", TARGET,
                          higher_is_better=False))

    cursor = {"vp": 0, "raw": 0}
    per_sample = _calls(lambda: sides.raw_upsert(batches[-1]), SAMPLE_SECONDS, 2, len(batches))

    def upsert_loop(side: str, fn: Callable[[Batch], object]) -> Callable[[], None]:
        def loop() -> None:
            for _ in range(per_sample):
                fn(batches[cursor[side] % len(batches)])
                cursor[side] += 1
        return loop

    vp, raw = paired_medians(upsert_loop("vp", sides.vp_upsert),
                             upsert_loop("raw", sides.raw_upsert), repeats=samples)
    report.add(Figure(section, f"{backend}: upsert of {UPSERT_BATCH} records",
                      vp / per_sample * 1e3, raw / per_sample * 1e3,
                      "ms per call vs raw SDK", TARGET, higher_is_better=False))
    if sides.same_rows is not None and sides.same_upsert is not None:
        # the adapter's rows for every batch, built before the timing
        payloads = [sides.same_rows(batch) for batch in batches]
        same_upsert = sides.same_upsert

        def same_loop() -> None:
            for _ in range(per_sample):
                same_upsert(payloads[cursor["same"] % len(payloads)])
                cursor["same"] += 1

        cursor["same"] = 0
        vp, same = paired_medians(upsert_loop("vp", sides.vp_upsert), same_loop,
                                  repeats=samples)
        report.add(Figure(section, f"{backend}: upsert of {UPSERT_BATCH} records, vs the raw "
                          "SDK sending the adapter's own rows (vectorport's own cost)",
                          vp / per_sample * 1e3, same / per_sample * 1e3,
                          "ms per call vs raw SDK", TARGET, higher_is_better=False))

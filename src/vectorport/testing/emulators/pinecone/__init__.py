"""A local emulator of Pinecone's HTTP API, driven by the official ``pinecone`` SDK.

Start it from Python::

    from vectorport.testing.emulators import pinecone as emulator
    with emulator.running() as server:            # server.url: the control-plane host
        pc = Pinecone(api_key="emulator-key", host=server.url)

or from the command line (``vectorport emulator pinecone --port 5081``), which calls
:func:`serve`. Every request must carry ``Api-Key`` (``emulator-key`` unless changed).

What it emulates, from Pinecone's public API reference (API version ``2026-07``):

- Control plane: create / describe / list / delete / configure (tags, deletion
  protection) of *vector* indexes, whose schema has the reserved ``_values`` dense field
  and optionally the ``_sparse_values`` sparse field; the index model the SDK expects,
  with a ``host`` pointing back at this server (``/data/<index>``). Indexes are ready at
  once; names, dimensions (1-20,000), metrics and tags are validated; 409 on an existing
  name, 403 on deleting a protected index.
- Data plane (vectors API): upsert, query by vector / sparse vector / both / id, fetch,
  fetch by metadata, delete by ids / filter / ``deleteAll``, update (values, sparse
  values, ``setMetadata``, by id or by filter with ``dryRun``), ``describe_index_stats``
  (a metadata filter only on pod deployments, as serverless indexes refuse it), list ids
  with prefix and pagination (ids in ascending order), and the namespaces API.
- Namespaces: the default namespace is ``__default__`` (also reached by omitting the
  namespace or passing ``""``), and is reported under that name.
- Its own evaluator of Pinecone's filter language (:mod:`.filters`): numbers are 64-bit
  floats, booleans and strings are distinct kinds, list values hold strings, ``$ne`` and
  ``$nin`` never match a record without the field, ranges take numbers only.
- Scores: cosine similarity, dot product, and *squared* euclidean distance (lower is
  better). Sparse-dense scores add the sparse dot product; querying with sparse values
  needs the ``dotproduct`` metric. A sparse-only query returns only records sharing a
  term. Equal scores come back in an arbitrary (hash) order, not by id.
- Limits, with Pinecone-style error bodies and status codes: 1,000 vectors and 2 MB per
  upsert (413 over 2 MB), 40 KB of metadata per vector, top_k 1-10,000, ids of 1-512
  ASCII characters, 1,000 ids per fetch or delete, 2,048 sparse values, non-zero dense
  vectors, float32 values; metadata numbers are stored as floats and nulls are dropped.
- The ``X-Pinecone-Api-Version`` header (``2026-07`` on the control plane; 2025-04 to
  2026-07 on the data plane; absent means the latest) and the ``Api-Key`` header (401).
- Data freshness: each namespace write gets a log sequence number, returned in
  ``x-pinecone-request-lsn``; queries report the reconciled LSN in
  ``x-pinecone-max-indexed-lsn``.
- Faults (:class:`~vectorport.testing.emulators.http.Faults`): a rate of 429 / 503
  answers (with ``Retry-After``), added latency, and eventual-consistency lag: a write
  becomes visible to query, fetch, stats and list ``lag_seconds`` after it was accepted,
  in LSN order.

What it does NOT emulate: document indexes and the documents / records / search APIs,
integrated embedding, inference, assistants, backups, collections, imports, admin;
sparse-only indexes; pod scaling, read capacity and ``scan_factor`` / ``max_candidates``;
the 4 MB query response limit and rate limits other than injected faults; approximate
search (search is exact); filter limits on the number of values; gRPC; TLS; persistence
(everything lives in memory and is lost at shutdown); projects, API-key management and
per-key permissions (one key is accepted for everything).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from vectorport.testing.emulators.http import EmulatorServer, Faults
from vectorport.testing.emulators.pinecone.server import PineconeEmulator
from vectorport.testing.emulators.pinecone.wire import API_VERSION


@contextmanager
def emulate(
    *, faults: Faults | None = None, api_key: str = "emulator-key",
    retry_after_seconds: float | None = 0.0,
) -> Iterator[PineconeEmulator]:
    """A started emulator, for tests that need to reach its state or switches."""
    emulator = PineconeEmulator(api_key=api_key, faults=faults,
                                retry_after_seconds=retry_after_seconds)
    emulator.server.start()
    try:
        yield emulator
    finally:
        emulator.server.stop()


@contextmanager
def running(
    *, faults: Faults | None = None, api_key: str = "emulator-key",
    drop_rate: float | None = None, stall: bool | None = None,
) -> Iterator[EmulatorServer]:
    """A started emulator on a free local port; ``.url`` is the control-plane host.

    ``drop_rate`` / ``stall`` set those switches of ``faults`` (see
    :class:`~vectorport.testing.emulators.http.Faults`)."""
    faults = faults if faults is not None else Faults()
    if drop_rate is not None:
        faults.drop_rate = drop_rate
    if stall is not None:
        faults.stall = stall
    with emulate(faults=faults, api_key=api_key) as emulator:
        yield emulator.server


def serve(host: str, port: int, faults: Faults, api_key: str = "emulator-key") -> None:
    """Serve until interrupted (for ``vectorport emulator pinecone``). Binding happens
    first, so a taken port raises ``OSError`` before anything is printed."""
    emulator = PineconeEmulator(api_key=api_key, faults=faults, host=host, port=port)
    key = repr(api_key) if api_key == "emulator-key" else "as configured (not shown)"
    print(f"pinecone emulator on {emulator.server.url} (Ctrl-C to stop)\n"
          f"  api key: {key}\n"
          f"  connect: pinecone://?api_key_env=VAR&host={emulator.server.url}", flush=True)
    emulator.server.serve_forever()


__all__ = ["API_VERSION", "PineconeEmulator", "emulate", "running", "serve"]

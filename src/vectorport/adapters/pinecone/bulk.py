"""Bulk loads (:meth:`vectorport.Index.upsert_bulk`) on Pinecone.

Pinecone's upsert already replaces whole records, so a load is only a matter of
throughput: the records are cut into requests as large as Pinecone takes (1,000
vectors and 2 MB, estimated per record with the ordinary upsert's estimate, so never
more than the facade's batches would send) and those requests go
:data:`MIN_PARALLEL` or ``workers`` at once, whichever is more — a request's time is
mostly waiting on the service, not this machine's cores, so the core count that sets
``workers`` by default is no bound here. Each chunk is encoded by the thread that
sends it, so the first request leaves at once and encoding overlaps the service's work
(the records were checked by the facade; encoding refuses nothing). Every request's LSN
is noted as the ordinary upsert notes it, so a strong read after the load waits for
all of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from vectorport.adapterkit import Record, batches
from vectorport.adapterkit.bulk import send_chunks
from vectorport.adapters.pinecone.codec import (
    estimated_bytes,
    estimated_bytes_bound,
    estimated_record_bytes,
    wire_vector,
)

MAX_VECTORS = 1_000
"""Vectors per upsert request (Pinecone's limit)."""
MAX_BYTES = 2 * 1024 * 1024 - 128 * 1024
"""Estimated body bytes per request: Pinecone takes 2 MB; a margin for the envelope."""
MIN_PARALLEL = 8
"""Requests in flight at least (Pinecone's guidance for large imports is parallel
upserts; the ordinary path sends four batches at once)."""


def requests_of(vectors: list[Any], dimension: int) -> list[list[Any]]:
    """The SDK ``vectors`` of an upsert cut into requests of at most :data:`MAX_VECTORS`
    and :data:`MAX_BYTES` by :func:`~.codec.estimated_bytes`: each run of
    :data:`MAX_VECTORS` in one request when the bound of its estimates' sum allows it
    (the per-vector cut would then make that one request too), else cut vector by
    vector."""
    return list(batches(vectors, MAX_VECTORS, cost=lambda v: estimated_bytes(v, dimension),
                        max_cost=MAX_BYTES,
                        bound=lambda run: estimated_bytes_bound(run, dimension)))


def load(records: Sequence[Record], workers: int, layout: int,
         send: Callable[[list[Any]], None]) -> None:
    """Send ``records`` (validated, unique ids) as SDK vectors of an index of ``layout``,
    one request per chunk."""
    chunks = list(batches(records, MAX_VECTORS, cost=estimated_record_bytes,
                          max_cost=MAX_BYTES))
    send_chunks(chunks, lambda chunk: send([wire_vector(r, layout) for r in chunk]),
                max(workers, MIN_PARALLEL))


__all__ = ["MAX_BYTES", "MAX_VECTORS", "MIN_PARALLEL", "load", "requests_of"]

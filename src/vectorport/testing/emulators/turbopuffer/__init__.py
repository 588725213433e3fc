"""A local emulator of turbopuffer's HTTP API, for the official ``turbopuffer`` SDK.

Point the SDK at it with ``Turbopuffer(api_key="emulator-key", base_url=server.url)``
(leave ``TURBOPUFFER_REGION`` unset)::

    from vectorport.testing.emulators import turbopuffer as tpuf_emulator

    with tpuf_emulator.running() as server:
        client = turbopuffer.Turbopuffer(api_key="emulator-key", base_url=server.url)

or run ``vectorport emulator turbopuffer --port 8765``. Everything lives in memory.

What it does, from turbopuffer's public API reference:

- Writes, ``POST /v2/namespaces/{ns}``: ``upsert_rows`` / ``upsert_columns``,
  ``patch_rows`` / ``patch_columns``, ``deletes``, ``delete_by_filter`` and
  ``patch_by_filter`` (with ``*_allow_partial`` and ``rows_remaining``),
  ``upsert_condition`` / ``patch_condition`` / ``delete_condition`` with ``$ref_new``,
  ``distance_metric``, ``schema`` (types, ``filterable``, ``full_text_search``, ``regex``,
  ``glob``), ``return_affected_ids``, ``create_namespace``, same-organisation
  ``copy_from_namespace``. Vectors as JSON arrays or base64 little-endian float32 (what
  the SDK sends). A request is validated completely before anything changes.
- Types are inferred from the first value or declared, and then enforced: ``string``,
  ``int``, ``uint``, ``float``, ``bool``, ``uuid``, their ``[]`` arrays, ``[N]f32`` and
  ``[N]f16`` vectors. Missing attributes are ``null``.
- Queries, ``POST /v2/namespaces/{ns}/query``: ``rank_by`` vector ``ANN`` and ``kNN``
  (``$dist`` for ``cosine_distance`` = 1 − cosine similarity and ``euclidean_squared``),
  ``BM25`` with ``Sum`` / ``Max`` / ``Product`` and filters as rank expressions,
  ordering by one attribute (nulls first ascending), ``top_k`` / ``limit`` (with
  ``limit.per`` when ordering by attribute), ``offset``, ``filters``,
  ``include_attributes`` / ``exclude_attributes``, ``vector_encoding``,
  ``aggregate_by`` (``Count``, ``["Count", attr]``, ``["Sum", attr]``), multi-queries,
  and ``consistency`` ``strong`` / ``eventual``.
- Filters, evaluated by the emulator's own reading of the documented semantics (see
  :mod:`.filters`): ``And`` ``Or`` ``Not``; ``Eq`` ``NotEq`` ``In`` ``NotIn`` ``Lt``
  ``Lte`` ``Gt`` ``Gte``; ``Contains`` ``NotContains`` ``ContainsAny``
  ``NotContainsAny`` ``AnyLt`` ``AnyLte`` ``AnyGt`` ``AnyGte``; ``Glob`` ``NotGlob``
  ``IGlob`` ``NotIGlob``; ``Regex``; ``ContainsAllTokens`` ``ContainsAnyToken``
  ``ContainsTokenSequence``.
- ``DELETE /v2/namespaces/{ns}``, ``GET /v1/namespaces`` (``prefix``, ``cursor``,
  ``page_size``), ``GET /v2/namespaces/{ns}/metadata``, ``GET`` / ``POST
  /v1/namespaces/{ns}/schema``, ``PATCH /v1/namespaces/{ns}/metadata`` (``read_only``),
  ``GET /v1/namespaces/{ns}/hint_cache_warm``.
- Limits: ids up to 64 bytes, attribute names up to 128 bytes (not starting with
  ``$``), 1,024 attributes per namespace, filterable string values up to 4 KiB, 10,752
  dimensions, ``limit.total`` up to 10,000, 16 sub-queries, 5M rows per
  ``delete_by_filter`` and 50k per ``patch_by_filter``, namespace names
  ``[A-Za-z0-9-_.]{1,128}``, gzip request bodies.
- Errors as ``{"status": "error", "error": "..."}``: 400, 401 (``Authorization: Bearer``
  must carry the configured key), 403, 404; and :class:`Faults`: a rate of injected 429 /
  503 answers, added latency, and eventual-consistency lag — with
  ``consistency: eventual`` a read does not see writes younger than ``lag_seconds``;
  strong reads always do, as on the real service.

What it does NOT emulate:

- approximate search: ``ANN`` is exact (perfect recall), and equal distances are
  ordered by id, which the service does not promise;
- BM25 scores exactly as the service computes them (the tokenizer and statistics are a
  plain approximation); ``full_text_search`` options beyond ``case_sensitive``,
  ``max_token_length``, ``k1`` and ``b`` are refused (stemming, stop-word removal, ASCII
  folding, other tokenizers and languages), as are ``Fuzzy`` filters;
- ``datetime`` and ``{}f16`` (sparse) types, ``SparseKNN``, multiple vector columns'
  performance traits, ``Attribute`` / ``Saturate`` / ``Decay`` / ``Dist`` rank operators,
  ``group_by``, ``rerank_by``, ``compute_attributes``, ``explain_query``, recall,
  export, async copy, ``branch_from_namespace``, cross-region or cross-organisation
  copies, customer-managed encryption, pinning, sharding, backpressure, billing (the
  numbers returned are placeholders), ``respond-async`` (requests always complete
  synchronously); every route not served answers 400 saying the emulator does not
  implement it (see docs/emulators/fidelity.md for the vendor tests it passes);
- the object ("legacy") form of ``filters``; filtering on, or including, an attribute
  that is not in the namespace schema answers 400 (an assumption: the reference
  documents this only for ``include_attributes``);
- persistence: everything is lost when the process ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from vectorport.testing.emulators.http import EmulatorServer, Faults
from vectorport.testing.emulators.turbopuffer.server import TurbopufferEmulator

DEFAULT_API_KEY = "emulator-key"


@contextmanager
def running(
    *, faults: Faults | None = None, api_key: str = DEFAULT_API_KEY,
    drop_rate: float | None = None, stall: bool | None = None,
) -> Iterator[EmulatorServer]:
    """Start an emulator on a free local port; stop it on exit. ``server.url`` is the
    ``base_url`` for the SDK; change ``server.faults`` at any time. ``drop_rate`` /
    ``stall`` set those switches of ``faults``."""
    faults = faults if faults is not None else Faults()
    if drop_rate is not None:
        faults.drop_rate = drop_rate
    if stall is not None:
        faults.stall = stall
    server = TurbopufferEmulator(faults=faults, api_key=api_key)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def serve(host: str, port: int, faults: Faults, api_key: str = DEFAULT_API_KEY) -> None:
    """Serve until interrupted (the ``vectorport emulator turbopuffer`` command). Binding
    happens first, so a taken port raises ``OSError`` before anything is printed."""
    server = TurbopufferEmulator(host=host, port=port, faults=faults, api_key=api_key)
    key = repr(api_key) if api_key == DEFAULT_API_KEY else "as configured (not shown)"
    print(f"turbopuffer emulator on {server.url} (Ctrl-C to stop)\n"
          f"  api key: {key}\n"
          f"  connect: turbopuffer://?api_key_env=VAR&base_url={server.url}", flush=True)
    server.serve_forever()


__all__ = ["DEFAULT_API_KEY", "TurbopufferEmulator", "running", "serve"]

"""The two Milvus engine lines the adapter speaks to, told apart at connect time.

``CURRENT``: milvus-lite 3 (the pure-Python re-implementation a fresh
``pip install "vectorport[milvus]"`` gives), in a file or served. Everything the
adapter offers works there: the layout of :mod:`.layout` as documented, the IndexSpec in
a collection property, ``exists`` guards and ``not`` in expressions. ``SERVER``: Milvus
servers (2.5 and later), the same but for number operands of magnitude 2^53 or more in
filters, which are refused (see :data:`SERVER`).

``LITE2``: milvus-lite 2.x, the real Milvus C++ engine (segcore) embedded in a process,
reached with pymilvus 2.6. Probed on milvus-lite 2.5.1, it differs in ways that change
the layout and what can be declared:

- a partition-key field breaks every filter expression ("primary_key_offset == -1"),
  so ``ns`` is a plain VARCHAR field (namespaces stay expression-scoped, as they are on
  the current line);
- nullable fields are refused, so ``doc`` is a non-null VARCHAR holding ``""`` for no
  document, with a presence flag in ``aux``;
- collection properties and descriptions are not kept, so the IndexSpec lives in a
  catalog collection (:data:`CATALOG`);
- ``exists``, ``is null`` on JSON and ``not (…)`` are refused. Without negation every
  expression is monotone, so a comparison with a missing key needs no guard (it is
  false, and in a monotone formula a false or null leaf can never make the whole
  true); presence is tested per kind with comparisons that hold for every value of that
  kind. ``$ne``, ``$nin``, ``$not``, ``$nor`` and ``$exists: false`` need a complement,
  which cannot be written: they are not offered;
- string literals cannot hold a raw newline or carriage return and escapes other than
  ``\\"`` and ``\\\\`` are not decoded; upserts fail on primary keys with ``'`` or NUL:
  compared strings are stored and compared in an order-preserving encoding
  (:func:`.layout.encode_text`), which is longer than the text, so the metadata's
  64 KiB JSON limit is declared on the encoded form (``record_size``);
- a query returning vectors from a collection that never held a row fails ("Growing
  segment loss raw data"), so fetches first look up the primary keys alone;
- only FLAT, IVF_FLAT and AUTOINDEX are built ("local mode only support FLAT IVF_FLAT
  AUTOINDEX"), so ``hnsw`` and the ``ef`` hint are not offered;
- a JSON number is compared with a number literal as float64: a stored float
  ``9.223372036854776e18`` equals the literal ``9223372036854775807``, and a stored
  ``2**53 + 1`` equals ``2.0**53`` (6 of 9 such filters answered otherwise than the
  contract, found by the conformance suite's sequence test), so filter operands of
  magnitude 2^53 or more are refused, as on Pinecone and Qdrant; below 2^53 float64
  holds every int, and comparisons are exact.

Detection: for a milvus-lite file, the installed ``milvus-lite`` distribution's major
version; for a server URL, ``GetVersion``, which milvus-lite 2 does not implement (a
Milvus server and milvus-lite 3 answer it).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
from dataclasses import dataclass
from typing import Any

from vectorport.adapters.milvus.capabilities import MILVUS_CAPABILITIES, MILVUS_LIMITS
from vectorport.adapters.milvus.layout import JSON_MAX_BYTES, encoded_metadata_size
from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities

CATALOG = "_vectorport_catalog"
"""The collection holding the IndexSpecs on ``LITE2``. Index names start with a letter,
so no index can take this name."""

NEGATION_OPERATORS = frozenset({"$ne", "$nin", "$not", "$nor"})


@dataclass(frozen=True, slots=True)
class Engine:
    """What the connected engine line can do, and so which layout the adapter uses."""

    name: str
    capabilities: Capabilities
    partition_key: bool
    """``ns`` is the partition key (else a plain field)."""
    nullable_documents: bool
    """``doc`` is nullable (else ``""`` plus a presence flag in ``aux``)."""
    spec_in_properties: bool
    """The IndexSpec is a collection property (else a row of :data:`CATALOG`)."""
    negation: bool
    """Expressions may use ``not`` and ``exists`` (else only monotone expressions)."""
    encoded_text: bool
    """Compared strings are stored through :func:`.layout.encode_text`."""
    fetch_keys_first: bool
    """Fetches look up the primary keys before asking for vectors."""
    exact_numbers: bool
    """JSON numbers compare exactly by value (else as float64: filter operands of
    magnitude 2^53 or more are refused)."""
    seals_on_its_own: bool = False
    """The engine seals growing segments itself (a server, by size and idle time); a
    milvus-lite one only when flushed, and until then every query reads the growing
    segment's rows one by one (about 0.3 s a query over 10,000 × 384 rows, against 0.02
    to 0.04 s once sealed)."""
    counts_by_reading: bool = False
    """A ``count(*)`` with a filter reads every matching record whole, vector and all,
    before counting (milvus-lite 3: 1.6 s for 20,000 × 384 rows of one namespace),
    while one without a filter counts keys (20 ms): see ``MilvusAdapter.count``."""
    inserts_replace: bool = False
    """An insert of an existing primary key replaces that record whole: milvus-lite 3
    keeps the newest row of each key. Its upsert instead reads the stored record of each
    key and merges the new fields onto it, the dynamic field's keys included, so there
    the adapter writes by insert: a replace, without the read (100 rows × 384 into 2,000:
    17.4-18.7 ms as an upsert, 16.0-16.6 ms as an insert, raw pymilvus)."""
    filter_keys: bool = False
    """New collections keep each record's filter keys in Milvus' dynamic field, and
    filters read only those (the :data:`.layout.FILTER_KEYS` layout): milvus-lite 3
    evaluates a path into a JSON field, and ``json_contains``, record by record in
    Python, and ``$meta`` keys on columns (a search filtered on one key over 10,000 ×
    384 sealed rows: 250-300 against 31-44 ms)."""
    session_ts: bool = True
    """Query results carry the engine's session timestamp, which pymilvus' query
    iterator starts from. milvus-lite 3 sends none: pymilvus then logs a warning and
    reads from the client's latest write, which is what a strong read needs, so the
    adapter's scans keep that warning to themselves (:mod:`.search`)."""


CURRENT = Engine(
    name="Milvus server / milvus-lite 3",
    capabilities=MILVUS_CAPABILITIES,
    partition_key=True,
    nullable_documents=True,
    spec_in_properties=True,
    negation=True,
    encoded_text=False,
    fetch_keys_first=False,
    exact_numbers=True,
    session_ts=False,
    counts_by_reading=True,
    inserts_replace=True,
    filter_keys=True,
)

LITE2 = Engine(
    name="milvus-lite 2 (C++ engine)",
    capabilities=dataclasses.replace(
        MILVUS_CAPABILITIES,
        filter_operators=ALL_FILTER_OPERATORS - NEGATION_OPERATORS,
        hints=frozenset({"probes"}),
        index_types=frozenset({"auto", "flat", "ivf"}),
        limits=dataclasses.replace(MILVUS_LIMITS, record_size=encoded_metadata_size,
                                   max_record_bytes=JSON_MAX_BYTES),
    ),
    partition_key=False,
    nullable_documents=False,
    spec_in_properties=False,
    negation=False,
    encoded_text=True,
    fetch_keys_first=True,
    exact_numbers=False,
)


SERVER = dataclasses.replace(CURRENT, name="Milvus server", exact_numbers=False,
                             session_ts=True, seals_on_its_own=True,
                             counts_by_reading=False, inserts_replace=False,
                             filter_keys=False)
"""A Milvus server (or Zilliz Cloud): the current line's layout and capabilities, with
the C++ engine's number comparisons. Milvus's own tests document that a JSON double is
compared with an int64 literal as a double (``ExprJsonUint64Test.cpp``, "a shared
precision limit across scan, index and stats paths"), what milvus-lite 2 showed here, so
filter operands of magnitude 2^53 or more are refused, as there. Not run here (no Docker);
milvus-lite 3, served or in a file, compares by value and stays :data:`CURRENT`."""

LITE_SERVER_VERSION = "milvus_lite"
"""How a ``milvus-lite server`` (3.x) names itself in ``GetVersion``
(``milvus_lite-3.2.2``); a Milvus server answers ``v2.5.4`` and the like."""


def engine_of_version(version: str) -> Engine:
    """The engine line behind a server that answered ``GetVersion`` with ``version``."""
    return CURRENT if version.startswith(LITE_SERVER_VERSION) else SERVER


def _major(version: str) -> int:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def _unimplemented(exc: BaseException) -> bool:
    code = getattr(exc, "code", None)
    if callable(code):  # a grpc.RpcError
        try:
            code = code()
        except Exception:  # pragma: no cover - defensive
            return False
    return "UNIMPLEMENTED" in str(getattr(code, "name", code)).upper()


def detect_engine(client: Any, *, lite_file: bool, timeout: float | None = None) -> Engine:
    """The engine line behind ``client`` (see the module docstring); ``timeout`` bounds
    the one request it may send."""
    if lite_file:
        try:
            version = importlib.metadata.version("milvus-lite")
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover
            return CURRENT
        return LITE2 if _major(version) < 3 else CURRENT
    try:
        version = client.get_server_version(**({} if timeout is None else {"timeout": timeout}))
    except Exception as exc:
        # a server that does not say what it is: the current line, its numbers as a
        # Milvus server compares them (the refusal only turns doubtful answers into errors)
        return LITE2 if _unimplemented(exc) else SERVER
    return engine_of_version(str(version))


__all__ = ["CATALOG", "CURRENT", "LITE2", "LITE_SERVER_VERSION", "SERVER", "Engine",
           "detect_engine", "engine_of_version"]

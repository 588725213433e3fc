"""The ``qdrant`` sections of ``backend_options`` and the index parameters, declared
once as the adapter kit's option specs and checked before any I/O (CONTRACT §5).

Index options: ``on_disk`` (vectors on disk, memory-mapped), ``full_scan_threshold``
(kilobytes of vectors below which a search scans instead of walking the graph) and
``indexing_threshold`` (kilobytes of vectors in a segment before its HNSW graph is
built). ``index_params`` of ``hnsw``: ``m`` and ``ef_construction``; ``flat`` takes
none (the graph is off). Query options: ``exact`` (a brute-force search) and
``acorn`` (``False`` turns off ACORN, which Qdrant Edge uses for filtered searches).
"""

from __future__ import annotations

from dataclasses import dataclass

from vectorport.adapterkit import (
    IndexSpec,
    Option,
    OptionSpec,
    QueryRequest,
    ValidationError,
    positive,
)

BACKEND = "qdrant"
DISTANCES = {"cosine": "Cosine", "dotproduct": "Dot", "euclidean": "Euclid"}
"""Qdrant's distance for each metric (the enum member names of both SDKs)."""

INDEX_OPTIONS = OptionSpec(BACKEND, "index", (
    Option("on_disk", "bool", default=False),
    Option("full_scan_threshold", "int", check=positive),
    Option("indexing_threshold", "int", check=positive),
))
HNSW_PARAMS = OptionSpec(BACKEND, "index_params", (
    Option("m", "int", check=positive),
    Option("ef_construction", "int", check=positive),
))
FLAT_PARAMS = OptionSpec(BACKEND, "index_params")
QUERY_OPTIONS = OptionSpec(BACKEND, "query", (Option("exact", "bool", default=False),
                                               Option("acorn", "bool")))
ACORN_MAX_SELECTIVITY = 1.0
"""ACORN's ``max_selectivity`` on Edge: always (see :data:`.engines.edge.ACORN`)."""


@dataclass(frozen=True, slots=True)
class CollectionLayout:
    """How the collection of an index is configured, whatever the SDK."""

    dimension: int
    distance: str
    sparse: bool
    keep_raw: bool
    """A second named vector (``raw``) holds the vectors as written: cosine indexes of
    point layout 1. New collections keep them in the payload instead (layout 2, see
    :mod:`.naming`); the engines still create layout 1 for tests of old collections."""
    hnsw_m: int | None
    """0 turns the HNSW graph off (``flat``); None keeps Qdrant's default."""
    ef_construct: int | None
    full_scan_threshold: int | None
    indexing_threshold: int | None
    """Kilobytes of vectors in a segment before Qdrant builds its HNSW graph."""
    on_disk: bool


@dataclass(frozen=True, slots=True)
class SearchOptions:
    ef: int | None
    exact: bool
    acorn: bool | None = None
    """ACORN for filtered searches as the query asks (``None``: not asked; Qdrant Edge
    then uses it, see :data:`.engines.edge.ACORN`)."""


def collection_layout(spec: IndexSpec) -> CollectionLayout:
    """The collection settings of ``spec``; raises before any I/O when they are bad."""
    options = INDEX_OPTIONS.index(spec)
    m: int | None = None
    ef_construct: int | None = None
    if spec.index_type == "flat":
        FLAT_PARAMS.parse(spec.index_params)
        m = 0
    elif spec.index_type == "hnsw":
        params = HNSW_PARAMS.parse(spec.index_params)
        m, ef_construct = params.get("m"), params.get("ef_construction")
    elif spec.index_params:
        raise ValidationError(f"{spec.index_type} indexes take no index_params on qdrant")
    return CollectionLayout(
        dimension=spec.dimension, distance=DISTANCES[spec.metric], sparse=spec.sparse,
        keep_raw=False, hnsw_m=m, ef_construct=ef_construct,
        full_scan_threshold=options.get("full_scan_threshold"),
        indexing_threshold=options.get("indexing_threshold"), on_disk=options["on_disk"],
    )


_PLAIN = SearchOptions(ef=None, exact=False)


def search_options(request: QueryRequest) -> SearchOptions:
    """``ef`` (the contract's hint, Qdrant's ``hnsw_ef``), ``exact`` (the ``qdrant``
    section's switch to a brute-force search) and ``acorn``. A query without a
    ``qdrant`` section and without ``ef`` (most) gets the defaults as one shared value:
    checking an empty section was ≈ 3 µs a query."""
    if request.ef is None and BACKEND not in request.backend_options:
        return _PLAIN
    section = QUERY_OPTIONS.query(request)
    return SearchOptions(ef=request.ef, exact=section["exact"], acorn=section.get("acorn"))


def asks_acorn(options: SearchOptions, *, engine_uses_acorn: bool, dense: bool,
               filtered: bool) -> bool:
    """Whether a search asks for ACORN: a filtered dense search, not exact, on an engine
    that uses it (Edge), unless the query turned it off. The one decision the Edge
    engine sends and ``explain`` shows."""
    return (engine_uses_acorn and dense and filtered and not options.exact
            and options.acorn is not False)


__all__ = [
    "ACORN_MAX_SELECTIVITY",
    "DISTANCES",
    "FLAT_PARAMS",
    "HNSW_PARAMS",
    "INDEX_OPTIONS",
    "QUERY_OPTIONS",
    "CollectionLayout",
    "SearchOptions",
    "asks_acorn",
    "collection_layout",
    "search_options",
]

"""The ``qdrant`` sections of ``backend_options``, validated strictly (CONTRACT §5).

Option checking is generic adapter work; it is kept here, in two small functions, to
be swapped for the adapter kit's option specs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vectorport.core.errors import ValidationError
from vectorport.core.types import IndexSpec, QueryRequest

BACKEND = "qdrant"
DISTANCES = {"cosine": "Cosine", "dotproduct": "Dot", "euclidean": "Euclid"}
"""Qdrant's distance for each metric (the enum member names of both SDKs)."""

CREATE_OPTIONS = frozenset({"on_disk", "full_scan_threshold", "indexing_threshold"})
QUERY_OPTIONS = frozenset({"exact"})


@dataclass(frozen=True, slots=True)
class CollectionLayout:
    """How the collection of an index is configured, whatever the SDK."""

    dimension: int
    distance: str
    sparse: bool
    keep_raw: bool
    """A second named vector holds the vectors as written (cosine indexes)."""
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


def _section(options: Mapping[str, Any], known: frozenset[str], what: str) -> Mapping[str, Any]:
    section = options.get(BACKEND, {})
    if not isinstance(section, Mapping):
        raise ValidationError(f"backend_options['qdrant'] must be a dict ({what})")
    unknown = set(section) - known
    if unknown:
        raise ValidationError(
            f"unknown qdrant {what} option(s) {', '.join(sorted(map(str, unknown)))}; "
            f"known: {', '.join(sorted(known))}"
        )
    return section


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"qdrant option {name} must be a positive int, got {value!r}")
    return value


def collection_layout(spec: IndexSpec) -> CollectionLayout:
    """The collection settings of ``spec``; raises before any I/O when they are bad."""
    section = _section(spec.backend_options, CREATE_OPTIONS, "index")
    on_disk = section.get("on_disk", False)
    if not isinstance(on_disk, bool):
        raise ValidationError("qdrant option on_disk must be a bool")
    threshold = section.get("full_scan_threshold")
    if threshold is not None:
        threshold = _positive_int("full_scan_threshold", threshold)
    indexing = section.get("indexing_threshold")
    if indexing is not None:
        indexing = _positive_int("indexing_threshold", indexing)
    params = dict(spec.index_params)
    m: int | None = None
    ef_construct: int | None = None
    if spec.index_type == "flat":
        if params:
            raise ValidationError("flat indexes take no index_params")
        m = 0
    elif spec.index_type == "hnsw":
        unknown = set(params) - {"m", "ef_construction"}
        if unknown:
            raise ValidationError(
                f"unknown hnsw index_params {', '.join(sorted(unknown))}; "
                "known: ef_construction, m"
            )
        if "m" in params:
            m = _positive_int("m", params["m"])
        if "ef_construction" in params:
            ef_construct = _positive_int("ef_construction", params["ef_construction"])
    elif params:
        raise ValidationError(f"{spec.index_type} indexes take no index_params on qdrant")
    return CollectionLayout(
        dimension=spec.dimension, distance=DISTANCES[spec.metric], sparse=spec.sparse,
        keep_raw=spec.metric == "cosine", hnsw_m=m, ef_construct=ef_construct,
        full_scan_threshold=threshold, indexing_threshold=indexing, on_disk=on_disk,
    )


def search_options(request: QueryRequest) -> SearchOptions:
    """``ef`` (the contract's hint, Qdrant's ``hnsw_ef``) and ``exact`` (the ``qdrant``
    section's switch to a brute-force search)."""
    section = _section(request.backend_options, QUERY_OPTIONS, "query")
    exact = section.get("exact", False)
    if not isinstance(exact, bool):
        raise ValidationError("qdrant query option exact must be a bool")
    return SearchOptions(ef=request.ef, exact=exact)


__all__ = [
    "DISTANCES",
    "CollectionLayout",
    "SearchOptions",
    "collection_layout",
    "search_options",
]

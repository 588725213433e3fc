"""The ``lancedb`` section of ``backend_options``, checked strictly (CONTRACT §5).

Per query (``QueryRequest.backend_options["lancedb"]``):

``nprobes``        IVF partitions to search; the same as the generic ``probes`` (which
                   wins when both are given).
``refine_factor``  re-read ``refine_factor × depth`` candidates' full vectors before the
                   cut (IVF-PQ/SQ indexes); a hint, like ``ef`` and ``probes``.

Per index (``IndexSpec.backend_options["lancedb"]``):

``ann_index``      the LanceDB index type to build for ``index_type="ivf"`` (default
                   ``IVF_FLAT``) or ``"hnsw"`` (default ``IVF_HNSW_SQ``).
``build_threshold`` rows needed before the ANN index is trained (default 256: k-means
                   and PQ need data; below it, searches are exact scans).
``num_sub_vectors`` PQ sub-vectors, for the ``*_PQ`` index types.
``optimize_every`` rows written (through one connection) between two runs of LanceDB's
                   ``optimize`` on an ``ivf``/``hnsw`` index (default 10,000; ``0``:
                   only when ``store.adapter.optimize`` is called): it folds the rows
                   written since the ANN index was trained into it, which searches
                   otherwise read in full.

Other backends' sections are ignored; anything else in this one is a
``ValidationError``.

``index_params`` of an ANN index are checked too: ``ivf`` reads ``lists``, ``hnsw``
reads ``m``, ``ef_construction`` and ``lists`` (its partitions, default 1); any other
parameter of those types is a ``ValidationError``, not silently left out of the build.
``auto`` and ``flat`` build nothing and accept what the reference adapter accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vectorport.adapterkit import Option, OptionSpec, ValidationError, positive, within
from vectorport.core.types import IndexSpec

BACKEND = "lancedb"
IVF_TYPES = frozenset({"IVF_FLAT", "IVF_SQ", "IVF_PQ", "IVF_RQ"})
HNSW_TYPES = frozenset({"IVF_HNSW_SQ", "IVF_HNSW_PQ", "IVF_HNSW_FLAT"})
DEFAULT_BUILD_THRESHOLD = 256
DEFAULT_OPTIMIZE_EVERY = 10_000

QUERY_OPTIONS = OptionSpec(BACKEND, "query", (
    Option("nprobes", "int", check=positive),
    Option("refine_factor", "int", check=positive),
))
INDEX_OPTIONS = OptionSpec(BACKEND, "index", (
    Option("ann_index"),  # checked against the index type below
    Option("build_threshold", "int", default=DEFAULT_BUILD_THRESHOLD, check=positive),
    Option("num_sub_vectors", "int", check=positive),
    Option("optimize_every", "int", default=DEFAULT_OPTIMIZE_EVERY, check=within(0, 2**31)),
))


ANN_INDEX_PARAMS = {
    "ivf": OptionSpec(BACKEND, "index_params", (Option("lists", "int"),)),
    "hnsw": OptionSpec(BACKEND, "index_params", tuple(
        Option(name, "int") for name in ("m", "ef_construction", "lists"))),
}


def check_index_params(spec: IndexSpec) -> None:
    """Refuse ``index_params`` an ANN index build would not read."""
    params = ANN_INDEX_PARAMS.get(spec.index_type)
    if params is not None:
        params.parse(spec.index_params)


@dataclass(frozen=True, slots=True)
class QueryOptions:
    nprobes: int | None = None
    refine_factor: int | None = None


def query_options(options: Mapping[str, Any]) -> QueryOptions:
    """The query section (``QueryRequest.options_for("lancedb")``), checked."""
    return QueryOptions(**QUERY_OPTIONS.parse(options))


@dataclass(frozen=True, slots=True)
class IndexOptions:
    ann_index: str | None = None
    build_threshold: int = DEFAULT_BUILD_THRESHOLD
    num_sub_vectors: int | None = None
    optimize_every: int = DEFAULT_OPTIMIZE_EVERY


def index_options(options: Mapping[str, Any], index_type: str) -> IndexOptions:
    """The index section, checked against the requested ``index_type``."""
    parsed = IndexOptions(**INDEX_OPTIONS.parse(options))
    allowed = IVF_TYPES if index_type == "ivf" else HNSW_TYPES if index_type == "hnsw" else (
        frozenset())
    if "optimize_every" in options and not allowed:
        raise ValidationError(
            f"{BACKEND} index options: optimize_every applies to index_type 'ivf' or "
            f"'hnsw' (an ANN index to fold new rows into), not {index_type!r}")
    if parsed.ann_index is not None and parsed.ann_index not in allowed:
        raise ValidationError(
            f"{BACKEND} index options: ann_index for index_type={index_type!r} must be one "
            f"of {', '.join(sorted(allowed)) or '(none: exact scans)'}, "
            f"got {parsed.ann_index!r}"
        )
    return parsed


__all__ = ["ANN_INDEX_PARAMS", "INDEX_OPTIONS", "QUERY_OPTIONS", "IndexOptions", "QueryOptions",
           "check_index_params", "index_options", "query_options"]

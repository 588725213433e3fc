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

Other backends' sections are ignored; anything else in this one is a
``ValidationError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vectorport.core.errors import ValidationError

BACKEND = "lancedb"
IVF_TYPES = frozenset({"IVF_FLAT", "IVF_SQ", "IVF_PQ", "IVF_RQ"})
HNSW_TYPES = frozenset({"IVF_HNSW_SQ", "IVF_HNSW_PQ", "IVF_HNSW_FLAT"})
DEFAULT_BUILD_THRESHOLD = 256


def _positive_int(section: str, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(
            f"backend_options[{BACKEND!r}][{key!r}] ({section}) must be a positive int, "
            f"got {value!r}"
        )
    return value


def _unknown(section: str, options: Mapping[str, Any], known: frozenset[str]) -> None:
    extra = set(options) - known
    if extra:
        raise ValidationError(
            f"unknown {section} option(s) {', '.join(sorted(map(str, extra)))} in "
            f"backend_options[{BACKEND!r}]; known: {', '.join(sorted(known))}"
        )


@dataclass(frozen=True, slots=True)
class QueryOptions:
    nprobes: int | None = None
    refine_factor: int | None = None


QUERY_KEYS = frozenset({"nprobes", "refine_factor"})


def query_options(options: Mapping[str, Any]) -> QueryOptions:
    _unknown("query", options, QUERY_KEYS)
    return QueryOptions(**{k: _positive_int("query", k, v) for k, v in options.items()})


@dataclass(frozen=True, slots=True)
class IndexOptions:
    ann_index: str | None = None
    build_threshold: int = DEFAULT_BUILD_THRESHOLD
    num_sub_vectors: int | None = None


INDEX_KEYS = frozenset({"ann_index", "build_threshold", "num_sub_vectors"})


def index_options(options: Mapping[str, Any], index_type: str) -> IndexOptions:
    """The index section, checked against the requested ``index_type``."""
    _unknown("index", options, INDEX_KEYS)
    ann = options.get("ann_index")
    allowed = IVF_TYPES if index_type == "ivf" else HNSW_TYPES if index_type == "hnsw" else (
        frozenset())
    if ann is not None and ann not in allowed:
        raise ValidationError(
            f"backend_options[{BACKEND!r}]['ann_index'] for index_type={index_type!r} must "
            f"be one of {', '.join(sorted(allowed)) or '(none: exact scans)'}, got {ann!r}"
        )
    ints = {k: _positive_int("index", k, options[k])
            for k in ("build_threshold", "num_sub_vectors") if k in options}
    return IndexOptions(ann_index=ann, **ints)


__all__ = ["IndexOptions", "QueryOptions", "index_options", "query_options"]

"""Pure request builders: the facade's validation, shared by :class:`Index` and
:class:`AsyncIndex`.

Each builder takes the raw arguments of one operation and returns the typed values the
adapter receives (``Record``, ``QueryRequest``, a ``Filter`` AST, …), or raises
``ValidationError`` / ``UnsupportedFeatureError``. None does I/O, so the sync and the
async facade accept and refuse exactly the same calls, and a refused call never reaches
the database. What the facade guarantees once results come back (order, ``top_k`` cut,
inclusive ``min_score``) is here too: :func:`finish_query`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np

from vectorport.core import validation
from vectorport.core.capabilities import Capabilities
from vectorport.core.errors import UnsupportedFeatureError, ValidationError
from vectorport.core.filters.ast import Filter, operators_used
from vectorport.core.filters.parse import parse_filter
from vectorport.core.scoring import sort_matches
from vectorport.core.types import (
    Consistency,
    Include,
    IndexSpec,
    IndexType,
    Match,
    MetadataValue,
    QueryRequest,
    Record,
    RecordPatch,
)

_INDEX_TYPES = ("auto", "flat", "hnsw", "ivf")
RawFilter = Mapping[str, Any] | Filter | None


class QueryKwargs(TypedDict, total=False):
    """The options of ``query`` and ``query_many``, declared once for the sync and the
    async signatures (``**options: Unpack[QueryKwargs]``). Defaults are those of
    :func:`build_query`."""

    top_k: int
    filter: RawFilter
    namespace: str
    include_metadata: bool
    include_vectors: bool
    include_documents: bool
    min_score: float | None
    ef: int | None
    probes: int | None
    consistency: Consistency
    backend_options: Mapping[str, Mapping[str, Any]] | None


@dataclass(frozen=True, slots=True)
class Target:
    """What a builder checks against: the backend's name and capabilities, and the index."""

    backend: str
    capabilities: Capabilities
    spec: IndexSpec

    def unsupported(self, feature: str, detail: str = "") -> UnsupportedFeatureError:
        return UnsupportedFeatureError(self.backend, feature, detail)


# -- index lifecycle -------------------------------------------------------------------


def build_spec(
    backend: str,
    caps: Capabilities,
    name: str,
    dimension: int,
    metric: str = "cosine",
    *,
    sparse: bool = False,
    index_type: str = "auto",
    index_params: Mapping[str, int] | None = None,
    backend_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> IndexSpec:
    """Validate creation arguments against the contract and the capabilities."""
    spec = IndexSpec(
        name=validation.index_name(name),
        dimension=validation.dimension(dimension),
        metric=validation.metric(metric),
        sparse=bool(sparse),
        index_type=_index_type(index_type),
        index_params=dict(index_params or {}),
        backend_options=dict(backend_options or {}),
    )
    if spec.metric not in caps.metrics:
        raise UnsupportedFeatureError(backend, f"metric {spec.metric!r}")
    if spec.sparse and not caps.sparse:
        raise UnsupportedFeatureError(backend, "sparse vectors")
    if spec.index_type != "auto" and spec.index_type not in caps.index_types:
        raise UnsupportedFeatureError(backend, f"index type {spec.index_type!r}")
    if spec.dimension > caps.max_dimension:
        raise ValidationError(
            f"dimension {spec.dimension} exceeds this backend's limit of {caps.max_dimension}"
        )
    for key, value in spec.index_params.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValidationError(f"index parameter {key!r} must be a positive int")
    return spec


def _index_type(value: str) -> IndexType:
    if value not in _INDEX_TYPES:
        raise ValidationError(f"unknown index type {value!r}; use one of {', '.join(_INDEX_TYPES)}")
    return value  # type: ignore[return-value]


# -- writes ----------------------------------------------------------------------------


def build_records(target: Target, records: Iterable[Any]) -> list[Record]:
    """Validate every record (all before any write) and keep the last of repeated ids."""
    caps, spec = target.capabilities, target.spec
    if isinstance(records, (Record, Mapping)):
        raise ValidationError("upsert takes a sequence of records, not a single record")
    by_id: dict[str, Record] = {}
    for position, raw in enumerate(records):
        rec = validation.record(raw, spec.dimension, spec.sparse, position)
        if spec.metric == "cosine" and not rec.vector.any():
            raise ValidationError(
                f"record {position} (id {rec.id!r}): a zero vector has no cosine similarity"
            )
        if rec.document is not None and not caps.documents:
            raise target.unsupported("documents")
        # validation.record already enforced the contract's limit; measure again only
        # for a backend whose own limit is tighter.
        if (caps.max_metadata_bytes < validation.MAX_METADATA_BYTES and rec.metadata
                and validation.metadata_size(rec.metadata) > caps.max_metadata_bytes):
            raise ValidationError(
                f"record {position} (id {rec.id!r}): metadata exceeds this backend's "
                f"limit of {caps.max_metadata_bytes} bytes"
            )
        by_id.pop(rec.id, None)  # keep the position of the last occurrence
        by_id[rec.id] = rec
    return list(by_id.values())


def split_batches(caps: Capabilities, records: Sequence[Record],
                  batch_size: int | None) -> list[Sequence[Record]]:
    """Batches of at most ``batch_size`` records, never more than the backend takes."""
    limit = caps.max_batch_size
    size = limit if batch_size is None else min(batch_size, limit)
    if size < 1:
        raise ValidationError("batch_size must be positive")
    return [records[i:i + size] for i in range(0, len(records), size)]


def build_patch(
    target: Target,
    id: str,
    *,
    vector: Any = None,
    sparse: Any = None,
    metadata: Mapping[str, MetadataValue | None] | None = None,
    document: str | None = None,
) -> RecordPatch:
    spec = target.spec
    set_meta: dict[str, MetadataValue] = {}
    unset: set[str] = set()
    for key, value in (metadata or {}).items():
        validation.metadata_key(key)
        if value is None:
            unset.add(key)
        else:
            set_meta[key] = validation.metadata_value(key, value)
    if sparse is not None and not spec.sparse:
        raise ValidationError(f"index {spec.name!r} was created without sparse vectors")
    if document is not None and not target.capabilities.documents:
        raise target.unsupported("documents")
    return RecordPatch(
        id=validation.record_id(id),
        vector=validation.dense_vector(vector, spec.dimension) if vector is not None else None,
        sparse=validation.sparse_vector(sparse) if sparse is not None else None,
        set_metadata=set_meta,
        unset_metadata=frozenset(unset),
        document=validation.document(document),
    )


def build_delete(
    target: Target, ids: Iterable[str] | None, filter: RawFilter
) -> tuple[tuple[str, ...] | None, Filter | None]:
    """``(ids, None)`` or ``(None, filter)``: exactly one of them, never an empty filter."""
    if (ids is None) == (filter is None):
        raise ValidationError("delete takes ids or a filter: exactly one of them")
    if ids is not None:
        return validation.record_ids(ids), None
    node = check_filter(target, filter)
    if node is None:
        raise ValidationError(
            "an empty filter would delete everything; use delete_namespace() for that"
        )
    if not target.capabilities.delete_by_filter:
        raise target.unsupported("delete by filter")
    return None, node


# -- reads -----------------------------------------------------------------------------


def check_filter(target: Target, raw: RawFilter) -> Filter | None:
    """Parse a filter and refuse operators the backend does not declare."""
    node = parse_filter(raw)
    unsupported = operators_used(node) - target.capabilities.filter_operators
    if unsupported:
        raise target.unsupported(f"filter operator {', '.join(sorted(unsupported))}")
    return node


def build_count(target: Target, filter: RawFilter) -> Filter | None:
    node = check_filter(target, filter)
    if node is not None and not target.capabilities.count_by_filter:
        raise target.unsupported("count with a filter")
    return node


def build_list_ids(target: Target, *, prefix: str | None, filter: RawFilter,
                   limit: int) -> Filter | None:
    node = check_filter(target, filter)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValidationError(f"limit must be a positive int, got {limit!r}")
    if prefix is not None and not isinstance(prefix, str):
        raise ValidationError("prefix must be a str")
    return node


def build_scan(target: Target, *, filter: RawFilter, page_size: int) -> tuple[Filter | None, int]:
    """The parsed filter and the page size a scan asks the adapter for (at most the
    backend's batch limit)."""
    node = check_filter(target, filter)
    if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
        raise ValidationError(f"page_size must be a positive int, got {page_size!r}")
    return node, min(page_size, target.capabilities.max_batch_size)


def build_fetch(ids: Iterable[object]) -> tuple[str, ...]:
    """Validated ids, each once (an engine may refuse repeats, as Chroma does); the
    answer is ordered by :func:`order_fetched`."""
    return tuple(dict.fromkeys(validation.record_ids(ids)))


def order_fetched(wanted: Sequence[str], found: Iterable[Record]) -> dict[str, Record]:
    """The records found, keyed and ordered by the ids asked for (repeats once)."""
    by_id = {r.id: r for r in found}
    return {i: by_id[i] for i in dict.fromkeys(wanted) if i in by_id}


def build_query(
    target: Target,
    vector: Any = None,
    *,
    sparse: Any = None,
    top_k: int = 10,
    filter: RawFilter = None,
    namespace: str = "",
    include_metadata: bool = True,
    include_vectors: bool = False,
    include_documents: bool = True,
    min_score: float | None = None,
    ef: int | None = None,
    probes: int | None = None,
    consistency: Consistency = "strong",
    backend_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> QueryRequest:
    caps, spec = target.capabilities, target.spec
    if vector is None and sparse is None:
        raise ValidationError("a query needs a dense vector, a sparse vector, or both")
    dense = None
    if vector is not None:
        dense = validation.dense_vector(vector, spec.dimension, "query vector")
        if spec.metric == "cosine" and not dense.any():
            raise ValidationError("a zero query vector has no cosine similarity")
    sparse_q = None
    if sparse is not None:
        if not caps.sparse:
            raise target.unsupported("sparse vectors")
        if not spec.sparse:
            raise ValidationError(f"index {spec.name!r} was created without sparse vectors")
        sparse_q = validation.sparse_vector(sparse, "sparse query")
    if dense is not None and sparse_q is not None and caps.hybrid == "none":
        raise target.unsupported("hybrid (dense + sparse) queries")
    if min_score is not None and (
        isinstance(min_score, bool) or not isinstance(min_score, (int, float))
        or min_score != min_score
    ):
        raise ValidationError(f"min_score must be a number, got {min_score!r}")
    for hint, value in (("ef", ef), ("probes", probes)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValidationError(f"{hint} must be a positive int, got {value!r}")
        if hint not in caps.hints:
            raise target.unsupported(f"the {hint!r} search hint")
    if consistency not in ("strong", "eventual"):
        raise ValidationError(f"consistency must be 'strong' or 'eventual', got {consistency!r}")
    if consistency not in caps.consistency:
        raise target.unsupported(f"{consistency} consistency")
    options = dict(backend_options or {})
    for section, section_options in options.items():
        if not isinstance(section, str) or not isinstance(section_options, Mapping):
            raise ValidationError("backend_options maps a backend name to a dict of options")
    return QueryRequest(
        namespace=validation.namespace(namespace),
        top_k=validation.top_k(top_k, caps.max_top_k),
        vector=dense,
        sparse=sparse_q,
        filter=check_filter(target, filter),
        include=Include(metadata=include_metadata, vectors=include_vectors,
                        documents=include_documents),
        min_score=float(min_score) if min_score is not None else None,
        ef=ef,
        probes=probes,
        consistency=consistency,
        backend_options=options,
    )


def build_query_many(target: Target, vectors: Any,
                     **options: Any) -> tuple[QueryRequest, np.ndarray[Any, Any]]:
    """The request for the first row (every row shares its options) and the validated
    matrix of query vectors; an empty matrix gives an empty result without a request."""
    matrix = validation.dense_matrix(vectors, target.spec.dimension)
    if len(matrix) == 0:
        return build_query(target, np.ones(target.spec.dimension), **options), matrix
    if target.spec.metric == "cosine" and not matrix.any(axis=1).all():
        raise ValidationError("a zero query vector has no cosine similarity")
    return build_query(target, matrix[0], **options), matrix


def finish_query(request: QueryRequest, matches: list[Match]) -> list[Match]:
    """Enforce the contract's order, bound and inclusive ``min_score`` on any adapter:
    the facade alone orders, cuts and applies ``min_score``, whatever the adapter did."""
    if request.min_score is not None:
        matches = [m for m in matches if m.score >= request.min_score]
    return sort_matches(matches)[: request.top_k]

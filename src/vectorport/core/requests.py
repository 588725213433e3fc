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
from dataclasses import dataclass, fields
from functools import lru_cache
from operator import attrgetter
from typing import Any, TypedDict

import numpy as np

from vectorport.core import batch_validation, checked, gc_pause, validation
from vectorport.core.capabilities import Capabilities
from vectorport.core.errors import UnsupportedFeatureError, ValidationError
from vectorport.core.filters import frozen
from vectorport.core.filters.ast import And, Condition, Filter, Nor, Not, Or, operators_used
from vectorport.core.filters.parse import parse_filter
from vectorport.core.limits import (
    check_filter_node,
    check_patch_limits,
    check_record_limits,
    check_sparse_query,
    filter_terms,
    plain_batch_holds,
    vector_limits_hold,
)
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
_RECORD_ID = attrgetter("id")
MAX_PAGE = 1_000_000
"""The largest ``limit`` / ``page_size`` accepted (pages are cut to the backend's batch
limit anyway); ``2**64`` would overflow the engines' integer parameters."""
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
    """Validate every record (all before any write) and keep the last of repeated ids.

    The whole call is validated in one pass when it can be (:mod:`batch_validation`);
    anything that pass is unsure of, and every refusal, is decided record by record
    here, so the errors and their order are the same either way."""
    if isinstance(records, (Record, Mapping)):
        raise ValidationError("upsert takes a sequence of records, not a single record")
    if checked.is_checked(records):
        # a page of a scan, issued by the core: only what can refuse it here is checked
        admitted = checked.admit(target, records)
        if admitted is not None:
            return admitted
        records = records.records  # something might refuse it: the whole validation decides
    items, failure = _collect(records)
    with gc_pause.paused(len(items)):
        return _validated(target, items, failure)


def _validated(target: Target, items: list[Any], failure: Exception | None) -> list[Record]:
    caps, spec = target.capabilities, target.spec
    batch = batch_validation.validated_batch(items, spec.dimension) if failure is None else None
    validated = None if batch is None else batch.records
    # the backend's vector limits for the whole call in one comparison, when it can tell
    vectors_checked = batch is not None and vector_limits_hold(
        spec, caps.limits, batch.min_squared_norm, batch.max_abs_component)
    if (batch is not None and vectors_checked
            and plain_batch_holds(caps, batch.records, batch.longest_text, batch.longest_id,
                                  batch.has_documents, batch.largest_metadata,
                                  batch.longest_document)):
        # no declared limit can refuse any of them: one pass for repeats
        if not caps.documents and batch.has_documents:
            raise target.unsupported("documents")
        return _last_of_each(batch.records)
    # the largest metadata's size is bounded for the whole call: measured only above it
    metadata_bound = None if batch is None else batch.largest_metadata
    by_id: dict[str, Record] = {}
    for position, raw in enumerate(items):
        rec = (validation.record(raw, spec.dimension, spec.sparse, position)
               if validated is None else validated[position])
        if rec.document is not None and not caps.documents:
            raise target.unsupported("documents")
        # the contract's rules are checked; now the backend's own declared ones, for
        # every record before the first batch is sent (a refused call writes nothing)
        check_record_limits(target.backend, caps, spec, rec, f"record {position}",
                            vector_checked=vectors_checked, metadata_bound=metadata_bound)
        by_id.pop(rec.id, None)  # keep the position of the last occurrence
        by_id[rec.id] = rec
    if failure is not None:  # the records before it were all valid: its error is the first
        raise failure
    return list(by_id.values())


def _last_of_each(records: list[Record]) -> list[Record]:
    """``records`` keeping, of a repeated id, only the last, at the last's position (as
    the per-record loop's pop-and-insert does); the list itself when no id repeats."""
    if len(set(map(_RECORD_ID, records))) == len(records):  # (a C-level map of the ids)
        return records
    last = {rec.id: position for position, rec in enumerate(records)}
    return [rec for position, rec in enumerate(records) if last[rec.id] == position]


def _collect(records: Iterable[Any]) -> tuple[list[Any], Exception | None]:
    """The records as a list, and the exception the iterable raised part way, if any
    (raised after the records before it are validated, as a record-by-record pass would
    have met them first)."""
    if isinstance(records, list):
        return records, None
    items: list[Any] = []
    try:
        items.extend(records)
    except Exception as exc:  # re-raised by build_records, unchanged
        return items, exc
    return items, None


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
    if metadata is not None and not isinstance(metadata, Mapping):
        raise ValidationError(f"metadata must be a dict, got {type(metadata).__name__}")
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
    patch = RecordPatch(
        id=validation.record_id(id),
        vector=validation.dense_vector(vector, spec.dimension) if vector is not None else None,
        sparse=validation.sparse_vector(sparse) if sparse is not None else None,
        set_metadata=set_meta,
        unset_metadata=frozenset(unset),
        document=validation.document(document),
    )
    # the rules an upsert of the same values obeys (the merged metadata is checked
    # for size as far as the patch alone tells: its new keys already exceeding a limit)
    check_patch_limits(target.backend, target.capabilities, spec, patch)
    return patch


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
    """Parse a filter (a hand-built AST is validated exactly like a dict) and refuse
    operators the backend does not declare and filters beyond its declared size."""
    hand_built = isinstance(raw, (Condition, And, Or, Nor, Not))
    key = None if hand_built or raw is None else frozen.freeze(raw)
    if key is not None:  # a plain dict: parsed once per distinct filter, not per call
        node, terms, operators = _checked(key)
    else:
        node = check_filter_node(raw) if hand_built else parse_filter(raw)  # type: ignore[arg-type]
        if node is None:
            return None
        terms, operators = _facts(node)
    if node is None:
        return None
    declared = target.capabilities.filter_operators
    if not operators <= declared:  # a subset test allocates nothing, a difference does
        unsupported = operators - declared
        raise target.unsupported(f"filter operator {', '.join(sorted(unsupported))}")
    limit = target.capabilities.limits.max_filter_terms
    if limit is not None and terms > limit:
        raise target.unsupported(
            f"filters of more than {limit} terms",
            f"this one has {terms} (nodes plus list values); split the call",
        )
    return node


def _facts(node: Filter) -> tuple[int, frozenset[str]]:
    return filter_terms(node), operators_used(node)  # filter_terms refuses lone surrogates


@lru_cache(maxsize=512)
def _checked(key: frozen.Key) -> tuple[Filter | None, int, frozenset[str]]:
    """The parse of a frozen filter and the backend-independent facts about it; a
    refused filter raises and is not cached. The dict parsed is thawed from the key,
    a copy: what the caller passed (and may change later) is never kept."""
    node = parse_filter(frozen.thaw(key))
    if node is None:
        return None, 0, frozenset()
    return (node, *_facts(node))


def build_count(target: Target, filter: RawFilter) -> Filter | None:
    node = check_filter(target, filter)
    if node is not None and not target.capabilities.count_by_filter:
        raise target.unsupported("count with a filter")
    return node


def build_list_ids(target: Target, *, prefix: str | None, filter: RawFilter,
                   limit: int) -> Filter | None:
    node = check_filter(target, filter)
    validation.positive_int(limit, "limit", MAX_PAGE)
    if prefix is not None:
        if not isinstance(prefix, str):
            raise ValidationError("prefix must be a str")
        validation.text(prefix, "prefix")
        if "\x00" in prefix:
            raise ValidationError("prefix must not contain NUL")
    return node


def build_scan(target: Target, *, filter: RawFilter, page_size: int) -> tuple[Filter | None, int]:
    """The parsed filter and the page size a scan asks the adapter for (at most the
    backend's batch limit)."""
    node = check_filter(target, filter)
    validation.positive_int(page_size, "page_size", MAX_PAGE)
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
        dense = validation.query_vector(vector, spec.dimension, spec.metric == "cosine")
    sparse_q = None
    if sparse is not None:
        if not caps.sparse:
            raise target.unsupported("sparse vectors")
        if not spec.sparse:
            raise ValidationError(f"index {spec.name!r} was created without sparse vectors")
        sparse_q = validation.sparse_vector(sparse, "sparse query")
        check_sparse_query(target.backend, caps, sparse_q)
    if dense is not None and sparse_q is not None and caps.hybrid == "none":
        raise target.unsupported("hybrid (dense + sparse) queries")
    score_floor = validation.score_bound(min_score) if min_score is not None else None
    if ef is not None or probes is not None:
        for hint, value in (("ef", ef), ("probes", probes)):
            if value is None:
                continue
            validation.positive_int(value, hint, validation.MAX_HINT)
            if hint not in caps.hints:
                raise target.unsupported(f"the {hint!r} search hint")
    if consistency not in ("strong", "eventual"):
        raise ValidationError(f"consistency must be 'strong' or 'eventual', got {consistency!r}")
    if consistency not in caps.consistency:
        raise target.unsupported(f"{consistency} consistency")
    options = dict(backend_options) if backend_options else {}
    for section, section_options in options.items():
        if not isinstance(section, str) or not isinstance(section_options, Mapping):
            raise ValidationError("backend_options maps a backend name to a dict of options")
    return _query_request(
        validation.namespace(namespace),
        validation.top_k(top_k, caps.max_top_k),
        dense,
        sparse_q,
        None if filter is None else check_filter(target, filter),
        _include(include_metadata, include_vectors, include_documents),
        score_floor,
        ef,
        probes,
        consistency,
        options,
    )


_REQUEST_FIELDS = ("namespace", "top_k", "vector", "sparse", "filter", "include",
                   "min_score", "ef", "probes", "consistency", "backend_options")


def _check_request_layout() -> None:
    """Refuse to run if ``QueryRequest`` gained, lost or reordered a field, or a hook its
    ``__init__`` would run (what :func:`_query_request` relies on)."""
    names = tuple(f.name for f in fields(QueryRequest))
    if names != _REQUEST_FIELDS or hasattr(QueryRequest, "__post_init__"):
        raise RuntimeError(f"QueryRequest's fields changed to {names}: update {__name__}")


_check_request_layout()
_new_request = QueryRequest.__new__
(_set_namespace, _set_top_k, _set_vector, _set_sparse, _set_filter, _set_include,
 _set_min_score, _set_ef, _set_probes, _set_consistency, _set_backend_options) = (
    getattr(QueryRequest, name).__set__ for name in _REQUEST_FIELDS)


def _query_request(namespace: str, top_k: int, vector: Any, sparse: Any, node: Filter | None,
                   include: Include, min_score: float | None, ef: int | None,
                   probes: int | None, consistency: Consistency,
                   backend_options: Mapping[str, Mapping[str, Any]]) -> QueryRequest:
    """``QueryRequest(...)`` of validated values, at half the cost: its frozen
    ``__init__`` sets each of the eleven fields through ``object.__setattr__`` (2.3 µs
    a query here); the slots' own setters do the same with no attribute lookup and no
    ``__init__`` frame (as ``vectorport.adapters.local.results`` builds matches)."""
    request: Any = _new_request(QueryRequest)
    _set_namespace(request, namespace)
    _set_top_k(request, top_k)
    _set_vector(request, vector)
    _set_sparse(request, sparse)
    _set_filter(request, node)
    _set_include(request, include)
    _set_min_score(request, min_score)
    _set_ef(request, ef)
    _set_probes(request, probes)
    _set_consistency(request, consistency)
    _set_backend_options(request, backend_options)
    built: QueryRequest = request
    return built


@lru_cache(maxsize=32, typed=True)
def _include(metadata: bool, vectors: bool, documents: bool) -> Include:
    """One frozen :class:`Include` per combination (``typed``: ``1`` and ``True`` stay
    apart), not a new one per query."""
    return Include(metadata=metadata, vectors=vectors, documents=documents)


def build_query_many(target: Target, vectors: Any,
                     **options: Any) -> tuple[QueryRequest, np.ndarray[Any, Any]]:
    """The request for the first row (every row shares its options) and the validated
    matrix of query vectors; an empty matrix gives an empty result without a request."""
    matrix = validation.dense_matrix(vectors, target.spec.dimension)
    if len(matrix) == 0:
        return build_query(target, np.ones(target.spec.dimension), **options), matrix
    if target.spec.metric == "cosine" and (
        np.linalg.norm(matrix.astype(np.float64), axis=1) < validation.MIN_COSINE_NORM
    ).any():
        raise ValidationError("a zero query vector has no cosine similarity")
    return build_query(target, matrix[0], **options), matrix


def finish_query(request: QueryRequest, matches: list[Match]) -> list[Match]:
    """Enforce the contract's order, bound and inclusive ``min_score`` on any adapter:
    the facade alone orders, cuts and applies ``min_score``, whatever the adapter did."""
    if request.min_score is not None:
        matches = [m for m in matches if m.score >= request.min_score]
    return sort_matches(matches)[: request.top_k]

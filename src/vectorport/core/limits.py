"""The backend's declared :class:`~vectorport.core.capabilities.Limits`, checked by the
facade for a whole call before any I/O, and the gate for hand-built filter trees.

Every check here is pure. ``requests.build_records`` calls :func:`check_record_limits`
for every record of an upsert before the first batch is sent, so a record one backend
cannot store makes the whole call fail with nothing written, and two backends declaring
the same rule answer the same input the same way.

Some limits belong to an index rather than to the backend (pgvector's ``halfvec``
indexes store float16): an adapter implementing :class:`IndexLimitsAdapter` derives an
index's limits from its :class:`IndexSpec`, and :func:`index_capabilities` is what the
facade checks that index's calls against. Limits of an engine line (milvus-lite 2) are
simply that connection's ``capabilities``.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from vectorport.core import validation
from vectorport.core.capabilities import DEFAULT_LIMITS, Capabilities, Limits
from vectorport.core.errors import FilterError, ValidationError
from vectorport.core.filters.ast import And, Condition, Filter, Nor, Not, Or
from vectorport.core.filters.parse import MAX_DEPTH, MAX_NODES, parse_filter, render_filter
from vectorport.core.types import IndexSpec, MetadataValue, Record, RecordPatch, SparseVector

_NODE_TYPES = (Condition, And, Or, Nor, Not)


@runtime_checkable
class IndexLimitsAdapter(Protocol):
    """An adapter whose limits depend on the index (its storage type, say)."""

    def index_limits(self, spec: IndexSpec, limits: Limits) -> Limits:
        """The limits of ``spec``'s index, given the backend's ``limits`` (return
        ``limits`` itself when the index adds nothing; a constant otherwise, so the
        derived capabilities are made once)."""
        ...


_derived: dict[tuple[int, int], tuple[Capabilities, Limits, Capabilities]] = {}
_derived_lock = threading.Lock()


def index_capabilities(adapter: object, caps: Capabilities, spec: IndexSpec) -> Capabilities:
    """``caps`` with the limits of ``spec``'s index, for adapters that declare them."""
    derive = getattr(adapter, "index_limits", None)  # (an isinstance on the Protocol
    if derive is None:  # would cost more than the rest of a small call's checks)
        return caps
    limits: Limits = derive(spec, caps.limits)
    if limits is caps.limits or limits == caps.limits:
        return caps
    key = (id(caps), id(limits))
    found = _derived.get(key)
    if found is not None and found[0] is caps and found[1] is limits:
        return found[2]
    derived = dataclasses.replace(caps, limits=limits)
    with _derived_lock:
        if len(_derived) > 256:  # adapters return constants; this only guards a leak
            _derived.clear()
        _derived[key] = (caps, limits, derived)  # holding both keeps their ids unique
    return derived


class _Refusal:
    """Builds the ValidationError of one record: where it is, which backend refuses.
    The prefix is composed only when a record is refused (most never are)."""

    def __init__(self, backend: str, where: str, rid: str) -> None:
        self.where, self.rid, self.backend = where, rid, backend

    @property
    def prefix(self) -> str:
        return f"{self.where} (id {self.rid[:80]!r})" if self.where else self.rid

    def __call__(self, rule: str) -> ValidationError:
        return ValidationError(f"{self.prefix}: {rule} (a limit of backend {self.backend!r})")


def _check_vector(spec: IndexSpec, limits: Limits, vector: np.ndarray, refuse: _Refusal) -> None:
    if spec.metric == "cosine":
        if float(np.linalg.norm(vector.astype(np.float64))) < validation.MIN_COSINE_NORM:
            raise ValidationError(
                f"{refuse.prefix}: a zero vector (norm below {validation.MIN_COSINE_NORM:g}) "
                "has no cosine similarity"
            )
    elif not limits.allow_zero_vector and not vector.any():
        raise refuse("an all-zero dense vector cannot be stored")
    bound = limits.max_abs_value
    if bound is not None and vector.size and float(np.abs(vector).max()) > bound:
        raise refuse(f"a component beyond ±{bound:g} does not fit the index's vector type")


_COSINE_MARGIN = 4.0
"""A batch's smallest norm must clear the cosine minimum by this factor for the batch
check to decide; closer to it, each vector is measured as :func:`_check_vector` does."""


def vector_limits_hold(spec: IndexSpec, limits: Limits, min_squared_norm: float,
                       max_abs_component: float) -> bool:
    """Whether every vector of a call passes :func:`_check_vector`, from the call's
    smallest squared norm and largest component (one vectorised pass over the batch).
    ``False`` means only "not sure": each record is then checked on its own, which also
    gives the refusal its record's position."""
    if spec.metric == "cosine":
        floor = validation.MIN_COSINE_NORM * _COSINE_MARGIN
        if min_squared_norm < floor * floor:
            return False
    elif not limits.allow_zero_vector and min_squared_norm <= 0.0:
        return False
    bound = limits.max_abs_value
    return bound is None or max_abs_component <= bound


@functools.lru_cache(maxsize=64)
def tighter_rules(source: Capabilities, destination: Capabilities) -> Capabilities | None:
    """The destination's declared record rules that are tighter than the source's, as
    capabilities holding only those (every other rule at the contract's own, which a
    stored record already meets); ``None`` when no rule is tighter, so that no record the
    source holds can be refused. Cached: a copy asks once a page, with the same two
    (frozen, hashable) capabilities every time."""
    src, dst = source.limits, destination.limits
    kept: dict[str, Any] = {}

    def tighter(name: str, looser: Callable[[Any, Any], bool]) -> None:
        mine, theirs = getattr(dst, name), getattr(src, name)
        if mine != getattr(DEFAULT_LIMITS, name) and not looser(mine, theirs):
            kept[name] = mine

    def at_least(mine: Any, theirs: Any) -> bool:  # a size limit; None means none
        return mine is None or (theirs is not None and mine >= theirs)

    tighter("max_id_bytes", lambda m, t: m >= t and dst.id_size is src.id_size)
    tighter("id_size", lambda m, t: m is t)
    tighter("id_pattern", lambda m, t: m == t)
    for name in ("max_document_bytes", "max_string_bytes", "max_sparse_entries"):
        tighter(name, at_least)
    tighter("allow_nul", lambda m, t: m or not t)
    tighter("allow_zero_vector", lambda m, t: m or not t)
    tighter("max_sparse_index", lambda m, t: m >= t)
    if dst.record_size is not None and (
            dst.record_size is not src.record_size or not at_least(dst.max_record_bytes,
                                                                   src.max_record_bytes)):
        kept.update(record_size=dst.record_size, max_record_bytes=dst.max_record_bytes)
    if "id_size" in kept:
        kept["max_id_bytes"] = dst.max_id_bytes
    metadata_bytes = min(destination.max_metadata_bytes, validation.MAX_METADATA_BYTES)
    documents = destination.documents or not source.documents
    if not kept and metadata_bytes >= min(source.max_metadata_bytes,
                                          validation.MAX_METADATA_BYTES) and documents:
        return None
    return dataclasses.replace(destination, limits=dataclasses.replace(DEFAULT_LIMITS, **kept),
                   max_metadata_bytes=metadata_bytes)


def _check_id(limits: Limits, rid: str, refuse: _Refusal) -> None:
    size = limits.id_size(rid) if limits.id_size is not None else len(rid.encode("utf-8"))
    if size > limits.max_id_bytes:
        unit = "characters in its stored form" if limits.id_size is not None else "UTF-8 bytes"
        raise refuse(f"the id is {size} {unit}; at most {limits.max_id_bytes}")
    if limits.id_pattern is not None and re.fullmatch(limits.id_pattern, rid) is None:
        raise refuse(f"the id does not match {limits.id_pattern!r}")


def _strings(metadata: Mapping[str, MetadataValue]) -> Iterable[tuple[str, str]]:
    for key, value in metadata.items():
        if isinstance(value, str):
            yield key, value
        elif isinstance(value, tuple):
            for item in value:
                yield key, item


def _check_metadata(caps: Capabilities, metadata: Mapping[str, MetadataValue],
                    refuse: _Refusal, bound: int | None = None) -> None:
    limits = caps.limits
    if not limits.allow_nul or limits.max_string_bytes is not None:
        for key, item in _strings(metadata):
            if not limits.allow_nul and "\x00" in item:
                raise refuse(f"metadata {key!r} holds a NUL character")
            if limits.max_string_bytes is not None and (
                len(item.encode("utf-8")) > limits.max_string_bytes
            ):
                raise refuse(
                    f"metadata {key!r} holds a string of more than {limits.max_string_bytes} "
                    "UTF-8 bytes (keep long text in the document)"
                )
    # validation.metadata already enforced the contract's 40 KiB; measure again only for
    # a backend whose own limit is tighter.
    if (caps.max_metadata_bytes < validation.MAX_METADATA_BYTES and metadata
            and (bound is None or bound > caps.max_metadata_bytes)):
        size = validation.metadata_size(metadata)
        if size > caps.max_metadata_bytes:
            raise refuse(
                f"metadata is {size} bytes as JSON; at most {caps.max_metadata_bytes}"
            )


def _check_document(limits: Limits, document: str | None, refuse: _Refusal) -> None:
    if document is not None and limits.max_document_bytes is not None:
        size = len(document.encode("utf-8"))
        if size > limits.max_document_bytes:
            raise refuse(f"the document is {size} UTF-8 bytes; at most "
                         f"{limits.max_document_bytes}")


def _check_sparse(limits: Limits, sparse: SparseVector | None, refuse: _Refusal) -> None:
    if sparse is None:
        return
    if limits.max_sparse_entries is not None and len(sparse.indices) > limits.max_sparse_entries:
        raise refuse(f"the sparse vector has {len(sparse.indices)} entries; at most "
                     f"{limits.max_sparse_entries}")
    if sparse.indices and sparse.indices[-1] > limits.max_sparse_index:
        raise refuse(f"sparse index {sparse.indices[-1]} is beyond {limits.max_sparse_index}")


def _check_size(limits: Limits, record: Record, refuse: _Refusal) -> None:
    if limits.record_size is None or limits.max_record_bytes is None:
        return
    size = limits.record_size(record)
    if size > limits.max_record_bytes:
        raise refuse(f"metadata, document and type information take {size} bytes; "
                     f"at most {limits.max_record_bytes} per record")


def plain_batch_holds(caps: Capabilities, records: Sequence[Record],
                      longest_text: int, longest_id: int | None = None,
                      has_documents: bool = True, largest_metadata: int | None = None,
                      longest_document: int | None = None) -> bool:
    """Whether :func:`check_record_limits` can refuse none of ``records``, decided for the
    whole call: ``records`` come from the batch fast path
    (:func:`vectorport.core.batch_validation.validated_batch`: ASCII ids, no NUL in any id,
    metadata string or document, no sparse vector) and their vectors passed
    :func:`vector_limits_hold`. Then the only limits left are the ones below, each decided
    from the call's extremes (``ValidatedBatch``: ``longest_text``, the most characters of
    one metadata string; ``longest_id``; ``has_documents``; ``largest_metadata``, a bound
    of the largest metadata's compact JSON; ``longest_document``), so a backend declaring
    them (Pinecone declares an id measure, a record size and a tighter metadata size)
    needs no per-record pass either. An extreme the caller does not know (``None``) is
    found by a walk over the records, or sends the call record by record. ``False``:
    check each record."""
    limits = caps.limits
    if limits.id_pattern is not None:
        return False
    if caps.max_metadata_bytes < validation.MAX_METADATA_BYTES and (
            largest_metadata is None or largest_metadata > caps.max_metadata_bytes):
        return False
    if limits.record_size is not None and limits.max_record_bytes is not None:
        bound = limits.record_size_bound
        if bound is None or largest_metadata is None or (
                has_documents and longest_document is None):
            return False
        if bound(largest_metadata, longest_document or 0) > limits.max_record_bytes:
            return False
    # a character is at most 4 bytes in UTF-8
    if limits.max_string_bytes is not None and 4 * longest_text > limits.max_string_bytes:
        return False
    most = limits.max_document_bytes
    if most is not None and has_documents and any(
            record.document is not None and 4 * len(record.document) > most
            and len(record.document.encode("utf-8")) > most for record in records):
        return False
    if limits.id_size is not None:  # the backend's own measure, of every id (exact)
        sizes = map(limits.id_size, map(_RECORD_ID, records))
        return max(sizes, default=0) <= limits.max_id_bytes
    # an ASCII id's UTF-8 size is its length
    if longest_id is None:
        longest_id = max((len(record.id) for record in records), default=0)
    return longest_id <= limits.max_id_bytes


_RECORD_ID = operator.attrgetter("id")


def check_record_limits(backend: str, caps: Capabilities, spec: IndexSpec, record: Record,
                        where: str = "", *, vector_checked: bool = False,
                        metadata_bound: int | None = None) -> None:
    """Refuse a (contract-valid) record the backend's declared limits do not allow.
    ``vector_checked``: :func:`vector_limits_hold` already passed the call's vectors.
    ``metadata_bound``: an upper bound of the metadata's size as compact JSON, known from
    the batch fast path; the size is measured only when the bound exceeds the limit."""
    limits = caps.limits
    refuse = _Refusal(backend, where, record.id)
    if not vector_checked:
        _check_vector(spec, limits, record.vector, refuse)
    _check_id(limits, record.id, refuse)
    _check_metadata(caps, record.metadata, refuse, metadata_bound)
    _check_document(limits, record.document, refuse)
    _check_sparse(limits, record.sparse, refuse)
    _check_size(limits, record, refuse)


def check_patch_limits(backend: str, caps: Capabilities, spec: IndexSpec,
                       patch: RecordPatch) -> None:
    """The record rules, applied to what a patch sets. Metadata size is checked on the
    keys the patch sets: a merge can only be larger than they are alone."""
    limits = caps.limits
    refuse = _Refusal(backend, "patch", patch.id)
    if patch.vector is not None:
        _check_vector(spec, limits, patch.vector, refuse)
    _check_id(limits, patch.id, refuse)
    _check_metadata(caps, patch.set_metadata, refuse)
    _check_document(limits, patch.document, refuse)
    _check_sparse(limits, patch.sparse, refuse)
    partial = Record(id=patch.id, vector=np.ones(spec.dimension, dtype=np.float32),
                     metadata=patch.set_metadata, document=patch.document)
    _check_size(limits, partial, refuse)


def check_sparse_query(backend: str, caps: Capabilities, sparse: SparseVector) -> None:
    """A sparse query the backend could not take (too many entries, an index beyond its
    range) is refused before I/O, as a stored one would be."""
    _check_sparse(caps.limits, sparse, _Refusal(backend, "", "sparse query"))


# -- filters -----------------------------------------------------------------------------


def check_filter_node(node: Filter) -> Filter:
    """A hand-built AST validated exactly like a parsed dict: its shape is checked
    without recursion (a tree too deep or too large is refused before it is walked),
    then it is rendered and parsed again, so field names, value kinds, depth and size
    follow the same rules (and the same messages) as a filter given as a dict."""
    stack: list[tuple[object, int]] = [(node, 0)]
    seen = 0
    while stack:
        current, depth = stack.pop()
        seen += 1
        if seen > 2 * MAX_NODES or depth > 2 * MAX_DEPTH:
            raise FilterError("filter is larger or deeper than a filter may be")
        if isinstance(current, (And, Or, Nor)):
            children = current.children
            if not isinstance(children, (tuple, list)) or not children:
                raise FilterError(f"{type(current).__name__} needs a non-empty tuple of nodes")
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(current, Not):
            stack.append((current.child, depth + 1))
        elif not isinstance(current, Condition):
            raise FilterError(f"{type(current).__name__} is not a filter node")
    parsed = parse_filter(render_filter(node))
    if parsed is None:  # pragma: no cover - a rendered node is never empty
        raise FilterError("an empty filter is not allowed here")
    return parsed


def filter_terms(node: Filter) -> int:
    """The size of a filter as the engines see it: nodes plus the values of its lists.
    Refuses strings that are not valid Unicode text on the way (no engine stores them,
    so none can match; every backend answers the same)."""
    terms = 0
    stack: list[Filter] = [node]
    while stack:
        current = stack.pop()
        terms += 1
        if isinstance(current, (And, Or, Nor)):
            stack.extend(current.children)
        elif isinstance(current, Not):
            stack.append(current.child)
        else:
            values = current.value if isinstance(current.value, tuple) else (current.value,)
            terms += len(values) - 1 if isinstance(current.value, tuple) else 0
            for value in values:
                if isinstance(value, str):
                    validation.text(value, f"filter value of {current.field!r}")
    return terms

"""What an adapter declares it can do (CONTRACT §7).

The facade refuses anything not declared here before any I/O, and the conformance suite
checks both directions: what is declared works, what is not raises
:class:`UnsupportedFeatureError`. The capability matrix in the docs is generated from
these values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields

from vectorport.core.filters.ast import FIELD_OPERATORS, LOGICAL_OPERATORS
from vectorport.core.types import METRICS, Consistency, HybridMode, IndexType, Metric, Record

ALL_FILTER_OPERATORS: frozenset[str] = FIELD_OPERATORS | LOGICAL_OPERATORS
INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Limits:
    """A backend's own rules for what it can store and evaluate, tighter than (or equal
    to) the contract's. The facade checks a whole call against them before the first
    write (``requests.build_records`` / ``build_patch``), so a refused call writes
    nothing and the same input gets the same answer on every backend sharing a rule.

    Record rules are refused with ``ValidationError`` naming the backend (CONTRACT §1);
    a filter beyond ``max_filter_terms`` with ``UnsupportedFeatureError``. ``None``
    means "no rule beyond the contract".
    """

    max_id_bytes: int = 512
    """UTF-8 bytes of a record id (the contract allows 512)."""
    id_pattern: str | None = None
    """A regular expression the whole id must match (``re.fullmatch``)."""
    id_size: Callable[[str], int] | None = None
    """The backend's own measure of an id in its stored form (for example Pinecone's
    escaped ASCII), compared with ``max_id_bytes`` instead of the UTF-8 length."""
    max_document_bytes: int | None = None
    """UTF-8 bytes of a document."""
    max_string_bytes: int | None = None
    """UTF-8 bytes of each metadata string and each item of a string list."""
    allow_nul: bool = True
    """Whether metadata strings may hold NUL (documents and ids never may: CONTRACT §1)."""
    allow_zero_vector: bool = True
    """Whether an all-zero dense vector can be stored under every metric (cosine never
    takes one, whatever the backend)."""
    max_abs_value: float | None = None
    """The largest magnitude of a dense vector component the index stores (65504 for
    float16 storage); usually declared per index (``IndexLimitsAdapter``)."""
    max_sparse_entries: int | None = None
    """Non-zero entries of one sparse vector."""
    max_sparse_index: int = INT32_MAX
    """The largest sparse index the backend stores."""
    record_size: Callable[[Record], int] | None = None
    """The backend's measure of a record's stored metadata (user metadata, document and
    any reserved keys), compared with ``max_record_bytes``."""
    max_record_bytes: int | None = None
    record_size_bound: Callable[[int, int], int] | None = None
    """An upper bound of ``record_size`` for any record whose metadata takes at most the
    first argument's bytes as compact JSON and whose document (if any) at most the second
    argument's characters. With it the facade decides a whole call at once from the
    call's largest metadata and longest document, and measures each record only when the
    bound exceeds ``max_record_bytes``; without it every record is measured."""
    max_filter_terms: int | None = None
    """Nodes of a filter plus the values of its lists: a filter beyond it would exceed
    the engine's expression or parameter limits."""

    def describe(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                out[f.name] = "-"
            elif callable(value):
                out[f.name] = getattr(value, "__qualname__", "custom")
            elif isinstance(value, bool):
                out[f.name] = "yes" if value else "no"
            else:
                out[f.name] = str(value)
        return out


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Capabilities:
    """A frozen declaration of one adapter's abilities and limits."""

    metrics: frozenset[Metric] = frozenset(METRICS)
    filter_operators: frozenset[str] = ALL_FILTER_OPERATORS
    sparse: bool = False
    hybrid: HybridMode = "none"
    hints: frozenset[str] = frozenset()
    """Search hints the adapter applies: a subset of ``{"ef", "probes"}``."""
    consistency: frozenset[Consistency] = frozenset({"strong"})
    index_types: frozenset[IndexType] = frozenset({"auto"})
    documents: bool = True
    patch: bool = False
    list_ids: bool = False
    delete_by_filter: bool = True
    count_by_filter: bool = True
    native_async: bool = False
    max_dimension: int = 16_000
    max_top_k: int = 10_000
    max_batch_size: int = 1_000
    max_metadata_bytes: int = 40 * 1024
    write_concurrency: int = 1
    """How many upsert batches the facade may send at once."""
    limits: Limits = field(default=DEFAULT_LIMITS)
    """The backend's own storage rules, checked by the facade before any write."""

    def describe(self) -> dict[str, str]:
        """A flat, printable view, for the CLI table and the generated matrix."""
        out: dict[str, str] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Limits):
                out.update(value.describe())
            elif isinstance(value, frozenset):
                out[f.name] = " ".join(sorted(value)) or "-"
            elif isinstance(value, bool):
                out[f.name] = "yes" if value else "no"
            else:
                out[f.name] = str(value)
        return out

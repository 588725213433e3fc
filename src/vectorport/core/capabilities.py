"""What an adapter declares it can do (CONTRACT §7).

The facade refuses anything not declared here before any I/O, and the conformance suite
checks both directions: what is declared works, what is not raises
:class:`UnsupportedFeatureError`. The capability matrix in the docs is generated from
these values.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from vectorport.core.filters.ast import FIELD_OPERATORS, LOGICAL_OPERATORS
from vectorport.core.types import METRICS, Consistency, HybridMode, IndexType, Metric

ALL_FILTER_OPERATORS: frozenset[str] = FIELD_OPERATORS | LOGICAL_OPERATORS


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

    def describe(self) -> dict[str, str]:
        """A flat, printable view, for the CLI table and the generated matrix."""
        out: dict[str, str] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, frozenset):
                out[f.name] = " ".join(sorted(value)) or "-"
            elif isinstance(value, bool):
                out[f.name] = "yes" if value else "no"
            else:
                out[f.name] = str(value)
        return out

"""Which metadata fields an index has, and of which kinds, learned from a sample.

A model writes better filters when the tool's schema names the fields it may filter on
and their kinds (``year``: number, ``tags``: list of strings). No backend offers a
schema of its metadata, so the server reads a sample of records — inside the server's
scope, so a tenant never learns field names from outside it — and describes the keys it
saw. Only names and kinds are published, never values: the description goes to every
client of the server.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from vectorport.core.filters.ast import Filter
from vectorport.core.store import Index
from vectorport.core.types import MetadataValue

SAMPLE_SIZE = 200
"""Records read to learn the fields: enough to see the keys of a typical corpus, one
query's worth of work at startup."""

MAX_FIELDS = 40
"""Fields listed in a schema; beyond that the description would crowd out the rest."""

_KIND_WORDS = {"string": "string", "number": "number", "bool": "boolean",
               "list": "list of strings"}


@dataclass(frozen=True, slots=True)
class FieldKind:
    """One metadata key and the kinds of value it was seen with (sorted)."""

    name: str
    kinds: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.name} ({' or '.join(_KIND_WORDS[k] for k in self.kinds)})"


def kind_of_value(value: MetadataValue) -> str:
    """The filter language's kind of a stored value (numbers are one kind, as in
    comparisons; a list is a list of strings by the contract)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, (tuple, list)):
        return "list"
    return "string"


def field_kinds(metadatas: Iterable[Mapping[str, MetadataValue]]) -> tuple[FieldKind, ...]:
    """The keys seen in ``metadatas`` with their kinds, sorted by name."""
    seen: dict[str, set[str]] = {}
    for metadata in metadatas:
        for key, value in metadata.items():
            seen.setdefault(key, set()).add(kind_of_value(value))
    return tuple(FieldKind(name, tuple(sorted(kinds))) for name, kinds in sorted(seen.items()))


def sample_fields(index: Index, *, namespace: str = "", filter: Filter | None = None,
                  size: int = SAMPLE_SIZE) -> tuple[FieldKind, ...]:
    """Learn the fields from up to ``size`` records of ``index`` within the scope.

    A query with a fixed pseudo-random probe reads any ``size`` records (every backend
    can query; not every one can list ids), deterministically, so the schema a server
    publishes does not change between restarts over the same data.
    """
    top_k = max(1, min(size, index.store.capabilities.max_top_k))
    probe = np.random.default_rng(0).standard_normal(index.dimension)
    matches = index.query(probe, top_k=top_k, namespace=namespace, filter=filter,
                          include_metadata=True, include_documents=False)
    return field_kinds(m.metadata or {} for m in matches)


def describe_fields(fields: tuple[FieldKind, ...]) -> str:
    """The sentence appended to the filter's description."""
    if not fields:
        return "No metadata fields were seen in this index, so a filter is unlikely to help."
    shown = ", ".join(f.describe() for f in fields[:MAX_FIELDS])
    more = f", and {len(fields) - MAX_FIELDS} more" if len(fields) > MAX_FIELDS else ""
    lists = (" A list field matches $eq, $in and $all against its elements."
             if any("list" in f.kinds for f in fields) else "")
    return f"Fields of this index (kind of value): {shown}{more}.{lists}"

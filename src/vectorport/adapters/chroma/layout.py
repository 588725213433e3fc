"""How a record's keys and number kinds are kept beside its metadata, for the filters.

Chroma stores ``str``, ``int``, ``float``, ``bool`` and lists exactly, so user metadata
goes in unchanged and reads back with its kinds intact (floats it would read back
inexactly also in ``vectorport:exact``, see :mod:`.floats`). What Chroma's ``where`` lacks is
the filter compiler's business (:mod:`.filters`): it has no ``$exists``, and it compares
an int field with a float operand (or a float field with a big int operand) inexactly,
so an exact comparison must know the stored kind. Both facts are kept in reserved list
fields, which user keys (``^[A-Za-z_][A-Za-z0-9_]{0,63}$``) can never spell because of
the ``:``; the compiler asks for them with ``$contains`` / ``$not_contains``.

Every list element costs Chroma about as much as a user key, on each write and on each
match a query returns (measured on Chroma 1.5: ~3 µs per element per matched record),
so the layout keeps as few as the filters need. There are two:

- **kinds** (version 2, every collection created since): one list
  ``vectorport:kinds`` with one element per key that is not a bool: ``i:<key>`` for an
  int, ``f:<key>`` for a float, the bare ``<key>`` for a string or a list. A bool needs
  none: ``{key: {"$in": [True, False]}}`` finds exactly the bools (Chroma's kind rules
  never match ``1`` with ``True``) and ``$nin`` exactly the rest. So ``key`` exists iff
  one of the three elements is listed or it holds a bool, and ``key`` holds an int iff
  ``i:<key>`` is listed. For typical chunk metadata (six keys, one a list) this is six
  elements in one list where the lists layout has nine in three.
- **lists** (version 1, collections written before): ``vectorport:keys`` (every user
  key), ``vectorport:ints`` and ``vectorport:floats`` (the keys holding an int / a
  float). Collections created by earlier versions keep it, for reads and writes alike, so
  every record of a collection is in one layout and the compiler knows which to ask for.

A collection's layout is in its own metadata (``vectorport:layout``: 2; absent on the
lists layout), read with the collection handle, so knowing it costs no request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from vectorport.adapterkit import MetadataValue
from vectorport.adapters.chroma import floats

LAYOUT_KEY = "vectorport:layout"
"""Data collection metadata: the records' layout version (absent: the lists layout)."""

KINDS_FIELD = "vectorport:kinds"
KEYS_FIELD = "vectorport:keys"
INTS_FIELD = "vectorport:ints"
FLOATS_FIELD = "vectorport:floats"

ChromaMetadata = dict[str, Any]
Where = dict[str, Any]
NumberKind = Literal["int", "float"]
_BOOLS = [True, False]


class Layout(Protocol):
    """One way of keeping keys and kinds: the encoder and the clauses that read it."""

    @property
    def version(self) -> int: ...

    def encode(self, metadata: Mapping[str, MetadataValue]) -> ChromaMetadata:
        """The Chroma metadata for a record's user metadata (possibly empty)."""
        ...

    def has_key(self, field: str, present: bool) -> Where:
        """A clause true exactly where ``field`` is (``present``) or is not stored."""
        ...

    def holds(self, field: str, kind: NumberKind, yes: bool) -> Where:
        """A clause true exactly where ``field`` holds (``yes``) or does not hold a
        number of ``kind``."""
        ...


@dataclass(frozen=True, slots=True)
class KindsLayout:
    """Version 2: one ``vectorport:kinds`` list, nothing for bools."""

    version: int = 2

    def encode(self, metadata: Mapping[str, MetadataValue]) -> ChromaMetadata:
        out: ChromaMetadata = {}
        kinds: list[str] = []
        for key, value in metadata.items():
            if isinstance(value, tuple):
                out[key] = list(value)
                kinds.append(key)
                continue
            out[key] = value
            if isinstance(value, bool):
                continue  # found by $in / $nin [True, False]
            if isinstance(value, int):
                kinds.append("i:" + key)
            elif isinstance(value, float):
                kinds.append("f:" + key)
            else:
                kinds.append(key)
        if kinds:
            out[KINDS_FIELD] = kinds
        _keep_floats(out, metadata)
        return out

    def has_key(self, field: str, present: bool) -> Where:
        op = "$contains" if present else "$not_contains"
        clauses: list[Where] = [{KINDS_FIELD: {op: tag}}
                                for tag in (field, "i:" + field, "f:" + field)]
        clauses.append({field: {"$in" if present else "$nin": _BOOLS}})
        return {"$or" if present else "$and": clauses}

    def holds(self, field: str, kind: NumberKind, yes: bool) -> Where:
        tag = ("i:" if kind == "int" else "f:") + field
        return {KINDS_FIELD: {"$contains" if yes else "$not_contains": tag}}


@dataclass(frozen=True, slots=True)
class ListsLayout:
    """Version 1: ``vectorport:keys``, ``vectorport:ints`` and ``vectorport:floats``."""

    version: int = 1

    def encode(self, metadata: Mapping[str, MetadataValue]) -> ChromaMetadata:
        out: ChromaMetadata = {}
        ints: list[str] = []
        floats: list[str] = []
        for key, value in metadata.items():
            if isinstance(value, tuple):
                out[key] = list(value)
            else:
                out[key] = value
                if isinstance(value, int) and not isinstance(value, bool):
                    ints.append(key)
                elif isinstance(value, float):
                    floats.append(key)
        if out:
            out[KEYS_FIELD] = sorted(metadata)
        if ints:
            out[INTS_FIELD] = sorted(ints)
        if floats:
            out[FLOATS_FIELD] = sorted(floats)
        _keep_floats(out, metadata)
        return out

    def has_key(self, field: str, present: bool) -> Where:
        return {KEYS_FIELD: {"$contains" if present else "$not_contains": field}}

    def holds(self, field: str, kind: NumberKind, yes: bool) -> Where:
        lists = INTS_FIELD if kind == "int" else FLOATS_FIELD
        return {lists: {"$contains" if yes else "$not_contains": field}}


def _keep_floats(out: ChromaMetadata, metadata: Mapping[str, MetadataValue]) -> None:
    exact = floats.exact_field(metadata)
    if exact is not None:
        out[floats.EXACT_FIELD] = exact


KINDS = KindsLayout()
LISTS = ListsLayout()
CURRENT: Layout = KINDS
"""What new data collections are created with."""


def layout_of(collection_metadata: Mapping[str, Any] | None) -> Layout:
    """The layout of a data collection, from its metadata."""
    if collection_metadata and collection_metadata.get(LAYOUT_KEY) == KINDS.version:
        return KINDS
    return LISTS


__all__ = [
    "CURRENT",
    "FLOATS_FIELD",
    "INTS_FIELD",
    "KEYS_FIELD",
    "KINDS",
    "KINDS_FIELD",
    "LAYOUT_KEY",
    "LISTS",
    "KindsLayout",
    "Layout",
    "ListsLayout",
    "layout_of",
]

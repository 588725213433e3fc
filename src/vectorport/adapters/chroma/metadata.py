"""Record metadata as Chroma stores it: the user's keys plus three reserved lists.

Chroma keeps ``str``, ``int``, ``float``, ``bool`` and lists (of one kind) exactly,
ints as int64, so user metadata goes in unchanged (list values as lists) and comes back
with its kinds intact; lists come back as tuples, the canonical form.

Three reserved keys, which user keys (``^[A-Za-z_][A-Za-z0-9_]{0,63}$``) can never
spell because of the ``:``, give the filter compiler what Chroma's ``where`` lacks:

- ``vectorport:keys``: the record's user keys. ``$exists`` becomes ``$contains`` /
  ``$not_contains`` on it, which is exact (Chroma has no ``$exists``).
- ``vectorport:ints`` / ``vectorport:floats``: the keys holding an int / a float. Chroma
  compares an int field with a float operand after truncating the operand to an integer,
  and a float field with an int operand after rounding the operand to a double; with
  these lists a comparison can be split by the stored kind and given an operand of that
  kind, which is exact. They also say which records do *not* hold a number, the exact
  complement a negated range needs.

A list is stored only when non-empty (Chroma refuses empty lists). Reserved keys are
removed from everything read back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vectorport.core.types import MetadataValue

RESERVED_PREFIX = "vectorport:"
KEYS_FIELD = "vectorport:keys"
INTS_FIELD = "vectorport:ints"
FLOATS_FIELD = "vectorport:floats"

ChromaMetadata = dict[str, Any]


def encode_metadata(metadata: Mapping[str, MetadataValue]) -> ChromaMetadata:
    """The Chroma metadata for a record's user metadata (possibly empty)."""
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
    return out


def decode_metadata(stored: Mapping[str, Any] | None) -> dict[str, MetadataValue]:
    """User metadata in canonical form from what Chroma returned."""
    if not stored:
        return {}
    out: dict[str, MetadataValue] = {}
    for key, value in stored.items():
        if key.startswith(RESERVED_PREFIX) or value is None:
            continue
        out[key] = tuple(value) if isinstance(value, list) else value
    return out


def replacing(new: ChromaMetadata, old: Mapping[str, Any] | None) -> ChromaMetadata | None:
    """What to send so that a merging write leaves exactly ``new`` in place of ``old``.

    Chroma's ``upsert`` and ``update`` merge keys into the stored metadata, and delete a
    key given as ``None``. ``None`` as a result means "send no metadata" (nothing to set
    and nothing to remove).
    """
    out: ChromaMetadata = dict(new)
    for key in old or {}:
        if key not in out:
            out[key] = None
    return out or None


__all__ = [
    "FLOATS_FIELD",
    "INTS_FIELD",
    "KEYS_FIELD",
    "RESERVED_PREFIX",
    "decode_metadata",
    "encode_metadata",
    "replacing",
]

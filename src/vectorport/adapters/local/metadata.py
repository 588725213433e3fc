"""Metadata of one namespace, kept compactly: per row, its keys (a tuple shared by every
row with the same keys in the same order) and its values (a tuple, itself shared by the
rows holding exactly the same values of exactly the same kinds).

A dict per record costs ~184 bytes for a single key (the dict and its key table) plus
the pymalloc fragmentation of a million small long-lived objects made among the
temporaries of each upsert; that was most of the local store's memory beyond its
float32 matrix at 1M records. Here a row costs two list slots (16 bytes), plus a
values tuple (40 + 8 per key) unless an equal one is already stored. Sharing is exact
about kinds: ``1``, ``1.0`` and ``True`` are equal in Python and would share a tuple,
so the tuple is looked up together with the type of each value, and floats (where
``0.0 == -0.0``) are never shared. What callers get is always a fresh ``dict`` in the
stored key order, so nothing they change reaches what is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from vectorport.core.types import MetadataValue

Values = tuple[MetadataValue, ...]
_SHARED_LIMIT = 1 << 16
"""Distinct key tuples and value tuples remembered for sharing. Past that, new ones are
stored unshared: metadata unique to every record would otherwise only grow the table."""


class MetadataColumns:
    """Row-indexed metadata: ``extend``/``set``/``move``/``pop`` mirror the rows of
    the namespace's matrix, ``mapping(row)`` gives a record's metadata back."""

    def __init__(self) -> None:
        self._keys: list[tuple[str, ...]] = []
        self._values: list[Values] = []
        self._shared_keys: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._shared_values: dict[tuple[Values, tuple[type, ...]], Values] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def _split(self, metadata: Mapping[str, MetadataValue]) -> tuple[tuple[str, ...], Values]:
        if not metadata:
            return (), ()
        keys = tuple(metadata)
        shared = self._shared_keys.get(keys)
        if shared is not None:
            keys = shared
        elif len(self._shared_keys) < _SHARED_LIMIT:
            self._shared_keys[keys] = keys
        values = tuple(metadata.values())
        kinds = tuple(map(type, values))
        if float in kinds:  # 0.0 == -0.0 would share one: floats are kept as given
            return keys, values
        key = (values, kinds)
        same = self._shared_values.get(key)
        if same is not None:
            return keys, same
        if len(self._shared_values) < _SHARED_LIMIT:
            self._shared_values[key] = values
        return keys, values

    def extend(self, count: int) -> None:
        """``count`` new rows with no metadata (yet: :meth:`set` fills them)."""
        self._keys.extend([()] * count)
        self._values.extend([()] * count)

    def set(self, row: int, metadata: Mapping[str, MetadataValue]) -> None:
        self._keys[row], self._values[row] = self._split(metadata)

    def move(self, source: int, target: int) -> None:
        """Row ``target`` takes row ``source``'s metadata (a removal filling its hole)."""
        self._keys[target] = self._keys[source]
        self._values[target] = self._values[source]

    def pop(self) -> None:
        self._keys.pop()
        self._values.pop()

    def mapping(self, row: int) -> dict[str, MetadataValue]:
        """Row ``row``'s metadata, as a new dict in the order it was given."""
        return dict(zip(self._keys[row], self._values[row], strict=True))

    def evaluate(self, test: Callable[[Mapping[str, Any]], bool]) -> Iterator[bool]:
        """``test`` of every row's metadata, in row order, asked once per distinct
        (keys, values) pair: rows sharing their tuples share the answer."""
        known: dict[tuple[int, int], bool] = {}
        for keys, values in zip(self._keys, self._values, strict=True):
            pair = (id(keys), id(values))
            answer = known.get(pair)
            if answer is None:
                answer = test(dict(zip(keys, values, strict=True)))
                if len(known) < _SHARED_LIMIT:  # bounded: unique rows never hit anyway
                    known[pair] = answer
            yield answer

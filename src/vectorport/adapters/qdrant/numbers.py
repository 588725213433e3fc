"""Numbers as pairs of small integers, for engines that do not keep floats exactly.

Qdrant Edge (qdrant-edge-py 0.9) stores a payload float through a decimal text that it
reads back with a fast, not correctly rounded parser: about one float in eight with 16
or 17 significant digits comes back (and is compared in filters) one or two units in
the last place off, e.g. ``90.33333333333333`` as ``90.33333333333331``; a filter
``$eq``/``$gte`` on the value written then misses the record. Integers are kept
exactly (64-bit).

So on such an engine every number of the metadata (int or float, never a bool) also
gets its **order key**: the float64's bits mapped to an int64 that orders as the
numbers do (``key(a) < key(b)`` exactly when ``a < b``; ``-0.0`` and ``0.0`` share one
key, as they are equal), split into a high and a low part, both far below 2^53, which
Qdrant compares exactly (its ranges compare as float64). Filters on numbers compare
the pair lexicographically, and a float is read back from its key (``-0.0`` from the
stored value, whose sign survives). An int is keyed by ``float(value)``: exact below
2^53, and the filter compiler refuses operands from 2^53 on (:mod:`.filters`), which
rounding to float64 never crosses.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Mapping
from typing import Any

from vectorport.adapters.qdrant import naming

LOW_BITS = 26
"""The low part holds the key's last 26 bits, the high part the rest (|high| < 2^38)."""
_LOW_MASK = (1 << LOW_BITS) - 1
_SIGN = 1 << 63
_MAGNITUDE = _SIGN - 1
_DOUBLE = struct.Struct("<d")
_INT64 = struct.Struct("<q")

HIGH = "h"
LOW = "l"
"""The parts' letters in the payload field names (``_nh_<key>``, ``_nl_<key>``)."""


def order_key(value: float) -> int:
    """An int64 ordered as the float64 ``value`` is (``-0.0`` keyed as ``0.0``)."""
    bits: int = _INT64.unpack(_DOUBLE.pack(value))[0]
    return bits if bits >= 0 else -(bits & _MAGNITUDE)


def from_order_key(key: int) -> float:
    """The float64 of ``key`` (``0.0`` for the key of both zeros)."""
    bits = key if key >= 0 else -key | _SIGN
    if bits >= _SIGN:
        bits -= 1 << 64
    return float(_DOUBLE.unpack(_INT64.pack(bits))[0])


def split(key: int) -> tuple[int, int]:
    """``(high, low)`` with ``key == high * 2**LOW_BITS + low`` and ``0 <= low < 2**26``:
    pairs order lexicographically as keys do."""
    return key >> LOW_BITS, key & _LOW_MASK


def payload_keys(metadata: Mapping[str, Any]) -> dict[str, int]:
    """The payload fields of the order keys of the numbers (ints and floats, not bools)
    of ``metadata``: ``_nh_<key>`` and ``_nl_<key>`` (:func:`..naming.number_key`). Top
    level fields rather than one object per key: qdrant-edge-py converts a payload value
    by value, and the nested objects cost twice as much (≈ 3 against 1.5 ms for 100
    points of three numbers)."""
    fields: dict[str, int] = {}
    for key, value in metadata.items():
        kind = type(value)
        if kind is int or kind is float:
            order = order_key(float(value))
            high_name, low_name = _part_names(key)
            fields[high_name] = order >> LOW_BITS  # split(), inline: a call a number less
            fields[low_name] = order & _LOW_MASK
    return fields


@functools.lru_cache(maxsize=4_096)
def _part_names(key: str) -> tuple[str, str]:
    """The payload fields of the two parts of ``key``'s order key, formatted once."""
    return naming.number_key(key, HIGH), naming.number_key(key, LOW)


def read_float(stored: float, payload: Mapping[str, Any], key: str) -> float:
    """The float written under metadata ``key``, from the engine's ``stored`` value and
    the order key kept in ``payload`` (a zero's sign from ``stored``)."""
    high_name, low_name = _part_names(key)
    high = payload.get(high_name)
    low = payload.get(low_name)
    if type(high) is not int or type(low) is not int:
        return stored  # no key (written elsewhere): the engine's value
    value = from_order_key((high << LOW_BITS) + low)
    return stored if value == 0.0 else value


__all__ = ["HIGH", "LOW", "LOW_BITS", "from_order_key", "order_key", "payload_keys", "read_float",
           "split"]

"""Floats that Chroma would read back inexactly, kept exactly beside the metadata.

Chroma 1.x reads stored floats back through serde_json's default decimal parser, which
is not correctly rounded: it takes the digits as one integer, converts it to a float and
multiplies or divides once by a float power of ten (:func:`parsed`, which gave exactly
the value Chroma returned for 1,200 of 1,200 floats, 227 of them off). About one float in
five of ``random.uniform``'s came back one or two units in the last place off,
``-941989.5434327705`` as ``-941989.5434327704``. Ints, strings and bools read back
exactly, and the embedded engine compares floats exactly.

So a record whose metadata holds floats that parse as others also gets one reserved
string field, ``vectorport:exact``, with each of them as ``key=<float.hex()>``
(comma-separated; keys hold neither ``=`` nor ``,``), and reads take the floats from
it. The others (``0.5``, ``3.14``, ``1e-3``, most of what people store) need nothing.

A Chroma *server* parses a ``where`` clause's numbers the same way: of 1,200 floats,
every one that parses as itself found its own record as an ``$eq`` operand, and 62 of
the 231 that do not missed it. So over HTTP a filter with such an operand is refused
before any request (:func:`refuse_inexact_operands`), rather than answered for a
neighbouring number; the embedded engine takes operands exactly.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters.ast import Condition, Filter, walk

EXACT_FIELD = "vectorport:exact"
_POWERS = [float(f"1e{k}") for k in range(309)]
"""serde_json's table: the correctly rounded doubles of 1e0 … 1e308."""


def parsed(value: float) -> float:
    """What serde_json's default (not ``float_roundtrip``) parser makes of ``value``'s
    shortest repr, the text Python's JSON encoders send: the digits as one integer (at
    most 17 here, so no overflow), rounded to a double, then one multiplication or
    division by the power of ten, negative exponents beyond the table first divided by
    1e308."""
    text = repr(abs(value))
    mantissa, _, written = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    result = float(int(whole + fraction))
    exponent = (int(written) if written else 0) - len(fraction)
    while exponent < -308 and result != 0.0:
        result /= 1e308
        exponent += 308
    if exponent >= 0:
        result *= _POWERS[exponent]
    elif exponent >= -308:
        result /= _POWERS[-exponent]
    return -result if value < 0 else result


def read_exactly(value: float) -> bool:
    """Whether Chroma gives ``value`` back as it is (``-0.0``: no, Chroma reads it as
    ``0.0``)."""
    if value == 0.0:
        return str(value)[0] != "-"
    return parsed(value) == value


def exact_field(metadata: Mapping[str, Any]) -> str | None:
    """The ``vectorport:exact`` text for ``metadata`` (None: every float reads back)."""
    parts = [f"{key}={value.hex()}" for key, value in metadata.items()
             if type(value) is float and not read_exactly(value)]
    return ",".join(parts) if parts else None


def restore(metadata: dict[str, Any], text: Any) -> None:
    """Put the exact floats of a ``vectorport:exact`` text back into ``metadata``."""
    if not isinstance(text, str):
        return
    for part in text.split(","):
        key, _, hexed = part.partition("=")
        if type(metadata.get(key)) is float:
            metadata[key] = float.fromhex(hexed)


def inexact_operand(node: Filter) -> float | None:
    """The first float operand of ``node`` that Chroma's parser reads as another
    number, if any (``-0.0`` is not one: it compares as ``0.0``)."""
    for part in walk(node):
        if isinstance(part, Condition):
            for value in part.value if isinstance(part.value, tuple) else (part.value,):
                if type(value) is float and parsed(value) != value:
                    return value
    return None


@functools.lru_cache(maxsize=1_024)
def refuse_inexact_operands(node: Filter) -> None:
    """Raise :class:`UnsupportedFeatureError` if ``node`` compares with a float that a
    Chroma server would parse as another number (memoised: ASTs are immutable)."""
    value = inexact_operand(node)
    if value is not None:
        raise UnsupportedFeatureError(
            "chroma", f"the filter number {value!r} on a Chroma server",
            "the server parses it as a neighbouring number; round it to 15 significant "
            "digits, or use the embedded engine (chroma:///path), which compares it "
            "exactly")


__all__ = ["EXACT_FIELD", "exact_field", "inexact_operand", "parsed", "read_exactly",
           "refuse_inexact_operands", "restore"]

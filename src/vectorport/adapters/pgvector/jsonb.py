"""Metadata as ``jsonb``: an encoder that keeps every value's kind through PostgreSQL.

``jsonb`` stores numbers as ``numeric``, which is exact (an int64 stays exact, and
``2**53 + 3`` is not rounded) and keeps the scale it was given: ``2020.0`` comes back
as ``2020.0`` and ``2020`` as ``2020``. The one trap is an exponent: ``json.dumps(1e16)``
writes ``1e+16``, which ``numeric`` reads with scale 0 and prints back as the integer
``10000000000000000``. So floats are written here without an exponent whenever they are
integral (``10000000000000000.0``), and every float comes back a float, every int an int.

Strings cannot hold NUL in ``jsonb`` (nor in ``text``); :func:`check_text` refuses them
before any I/O rather than letting the server fail half-way through a batch.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from json.encoder import encode_basestring as _encode_basestring
from typing import Any

from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.types import MetadataValue

BACKEND = "pgvector"


def check_text(value: str, what: str) -> None:
    """Refuse text PostgreSQL cannot store: NUL characters and lone surrogates."""
    if "\x00" in value:
        raise UnsupportedFeatureError(BACKEND, f"NUL characters in {what}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UnsupportedFeatureError(BACKEND, f"lone surrogates in {what}") from None


def encode_string(value: str) -> str:
    # json.dumps(value, ensure_ascii=False) gives the same text, but its per-call setup
    # costs ~4x the escaping itself; this is the C escaper dumps uses underneath.
    return _encode_basestring(value)


def encode_float(value: float) -> str:
    """A JSON number that ``numeric`` keeps as a non-integer-looking value."""
    if value.is_integer():
        return f"{int(value)}.0"
    return repr(value)  # shortest round-trip form; never an exponent with no fraction


def encode_value(value: MetadataValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return encode_float(value)
    if isinstance(value, str):
        return encode_string(value)
    return "[" + ",".join(encode_string(item) for item in value) + "]"


def encode_metadata(metadata: Mapping[str, MetadataValue]) -> str:
    """The JSON text of a flat metadata mapping (keys are already safe identifiers)."""
    return "{" + ",".join(
        f"{encode_string(key)}:{encode_value(value)}" for key, value in metadata.items()
    ) + "}"


def check_metadata(metadata: Mapping[str, MetadataValue], what: str) -> None:
    for value in metadata.values():
        if isinstance(value, str):
            check_text(value, what)
        elif isinstance(value, tuple):
            for item in value:
                check_text(item, what)


def decode_metadata(raw: Any) -> dict[str, MetadataValue]:
    """The canonical form of a loaded ``jsonb`` object: lists become tuples."""
    if isinstance(raw, (str, bytes)):
        raw = json.loads(raw)
    return {
        key: tuple(value) if isinstance(value, list) else value for key, value in raw.items()
    }

"""Metadata as ``jsonb``: an encoder that keeps every value's kind through PostgreSQL.

``jsonb`` stores numbers as ``numeric``, which is exact (an int64 stays exact, and
``2**53 + 3`` is not rounded) and keeps the scale it was given: ``2020.0`` comes back
as ``2020.0`` and ``2020`` as ``2020``. The one trap is an exponent: ``json.dumps(1e16)``
writes ``1e+16``, which ``numeric`` reads with scale 0 and prints back as the integer
``10000000000000000``. So floats are written here without an exponent whenever they are
integral (``10000000000000000.0``), and every float comes back a float, every int an int.

Strings cannot hold NUL in ``jsonb`` (nor in ``text``); :func:`check_text` refuses them
before any I/O rather than letting the server fail half-way through a batch.

Reading: :func:`load_metadata` parses the server's text with orjson when it is installed
(the ``pgvector`` extra brings it): about 1.5 µs for typical chunk metadata against 9–11
µs for ``json.loads``, which was most of a top-10 query's client time. orjson keeps the
kinds ``json`` keeps (``1`` int, ``1.0`` float, ``true`` bool, int64 exact) with one
exception: an integer beyond 64 bits becomes a float. The contract's ints are int64, but
a table may hold anything, so a float that large sends the row to ``json.loads``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from json.encoder import encode_basestring as _encode_basestring
from typing import Any

try:  # a C parser ~7x faster than json's; optional so a bare psycopg install still works
    import orjson as _orjson
except ImportError:  # pragma: no cover - the pgvector extra installs it
    _orjson = None  # type: ignore[assignment]

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


_INT64_FLOAT_BOUND = 2.0**63
"""An integral float at least this large may be an integer orjson could not hold."""


def _canonical(raw: Any) -> Any:
    """``raw`` (a fresh value from ``json``) with its lists turned into tuples, in place."""
    if type(raw) is dict:
        for key, value in raw.items():
            if type(value) is list:
                raw[key] = tuple(value)  # replacing a value keeps the iteration valid
    return raw


def load_metadata(text: bytes | memoryview | str) -> Any:
    """The canonical value of one ``jsonb`` text: a metadata object with lists as tuples.

    The per-row path of every read, so written flat (each call level cost ~0.1 µs)."""
    if _orjson is not None:
        try:
            raw = _orjson.loads(text)
        except _orjson.JSONDecodeError:
            raw = None  # json may still read it (orjson is stricter on odd input): below
        else:
            if type(raw) is not dict:
                return raw
            for key, value in raw.items():
                kind = type(value)
                if kind is list:
                    raw[key] = tuple(value)  # replacing a value keeps the iteration valid
                elif kind is float and abs(value) >= _INT64_FLOAT_BOUND:
                    break  # maybe an integer beyond 64 bits: json keeps it an int
            else:
                return raw
    return _canonical(json.loads(bytes(text) if isinstance(text, memoryview) else text))


def decode_metadata(raw: Any) -> dict[str, MetadataValue]:
    """The canonical form of a ``jsonb`` value: JSON text is parsed, lists become tuples
    (values the connection's loader already made canonical pass through)."""
    if isinstance(raw, (str, bytes, memoryview)):
        result: dict[str, MetadataValue] = load_metadata(raw)
        return result
    return {
        key: tuple(value) if isinstance(value, list) else value for key, value in raw.items()
    }

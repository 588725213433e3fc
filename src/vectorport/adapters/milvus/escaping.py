"""The one place where a value becomes text inside a Milvus boolean expression.

Milvus takes filters only as expression strings. milvus-lite 3 has no expression
templates (``filter_params`` are ignored by it), so values cannot be bound; instead every
literal the adapter writes into an expression is produced here, and nowhere else:

- strings: :func:`quote_string`, a double-quoted literal in which the only characters
  with a meaning inside quotes (backslash and the double quote) and the line breaks
  the grammars refuse raw are written as escapes understood identically by the Milvus
  server grammar (``Plan.g4``, decoded like a Go string) and by milvus-lite's tokenizer;
- numbers and booleans: :func:`render_scalar`, from Python values only (never text);
- JSON keys: :func:`json_path`, a field identifier followed by a quoted key, and
  :func:`dynamic_key`, a quoted key of the dynamic field.

``tests/backends/milvus/test_escaping.py`` proves with hypothesis that no string changes the
structure of an expression: parsed by milvus-lite's own parser, a quoted string is
always exactly one string token whose value is the original string.
"""

from __future__ import annotations

import math
import re

from vectorport.core.errors import ValidationError

_ESCAPES: dict[str, str] = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_NEEDS_ESCAPE = re.compile(r'[\\"\n\r\t]')
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def quote_string(value: str) -> str:
    """``value`` as a double-quoted Milvus string literal that decodes to exactly ``value``.

    Raises ``ValidationError`` for strings that are not valid Unicode text (lone
    surrogates): they cannot be encoded as UTF-8, so no Milvus value can equal them.
    """
    if not isinstance(value, str):
        raise TypeError(f"quote_string takes a str, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(
            "a string with lone surrogates cannot be used in a Milvus filter"
        ) from None
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPES[m.group(0)], value) + '"'


def render_scalar(value: str | int | float | bool) -> str:
    """A literal for one filter value: quoted string, ``true``/``false``, an int, or a
    float written so that it parses back to the same float (never ``inf``/``nan``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(f"{value} cannot be used in a Milvus filter")
        text = repr(float(value))
        # repr gives "2020.0", "1e-05", "1e+300": always a float token, never an int one.
        return text
    if isinstance(value, str):
        return quote_string(value)
    raise TypeError(f"cannot render {type(value).__name__} as a Milvus literal")


def render_list(values: tuple[str | int | float | bool, ...]) -> str:
    """A list literal ``[a, b, …]`` of rendered scalars."""
    return "[" + ", ".join(render_scalar(v) for v in values) + "]"


def identifier(name: str) -> str:
    """A schema field name, checked to be a plain identifier (the adapter's own names)."""
    if not _IDENTIFIER.match(name):
        raise ValueError(f"{name!r} is not a Milvus field identifier")
    return name


def json_path(field: str, key: str) -> str:
    """``field["key"]``: the value under ``key`` in the JSON field ``field``."""
    return f"{identifier(field)}[{quote_string(key)}]"


def dynamic_key(key: str) -> str:
    """``$meta["key"]``: the value under ``key`` in the collection's dynamic field."""
    return f"$meta[{quote_string(key)}]"


__all__ = ["dynamic_key", "identifier", "json_path", "quote_string", "render_list",
           "render_scalar"]

"""The one place where a value becomes text inside a LanceDB SQL ``where``.

LanceDB takes filters only as SQL expression strings (parsed by Lance with DataFusion's
SQL parser) and has no bound parameters, so every literal the adapter writes into a
filter is produced here, and nowhere else:

- strings: :func:`quote_string`, a single-quoted literal. In this dialect the only
  character with a meaning inside single quotes is the single quote itself (written
  twice); backslashes, line breaks and NUL stand for themselves (there are no escape
  sequences in a plain ``'…'`` literal);
- integers, floats and booleans: :func:`render_int`, :func:`render_float`,
  :func:`render_bool`, from Python values only, never from text;
- column names: :func:`identifier`, the adapter's own fixed names, checked.

``tests/backends/lancedb/test_escaping.py`` proves with hypothesis, through LanceDB's own
parser, that a quoted string is always one literal whose value is the original string,
and that compiled filters keep their shape whatever the values.
"""

from __future__ import annotations

import math
import re

from vectorport.core.errors import ValidationError

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")


def quote_string(value: str) -> str:
    """``value`` as a single-quoted SQL literal that parses to exactly ``value``.

    Strings with lone surrogates cannot be encoded as UTF-8, so no stored value can
    equal them: they are refused with ``ValidationError``.
    """
    if not isinstance(value, str):
        raise TypeError(f"quote_string takes a str, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(
            "a string with lone surrogates cannot be used in a LanceDB filter"
        ) from None
    return "'" + value.replace("'", "''") + "'"


def render_int(value: int) -> str:
    """An Int64 literal. The smallest int64 is written as an expression: its magnitude
    alone (``9223372036854775808``) does not fit the parser's Int64 literal."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"render_int takes an int, got {type(value).__name__}")
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValidationError(f"{value} is outside the int64 range")
    if value == INT64_MIN:
        return f"({INT64_MIN + 1} - 1)"
    return str(int(value))


def render_float(value: float) -> str:
    """A Float64 literal that parses back to the same float: ``repr`` always writes a
    decimal point or an exponent (``2020.0``, ``1e-05``), never an integer token."""
    if not isinstance(value, float):
        raise TypeError(f"render_float takes a float, got {type(value).__name__}")
    if not math.isfinite(value):
        raise ValidationError(f"{value} cannot be used in a LanceDB filter")
    text = repr(float(value))
    if text.startswith("-"):
        return f"({text})"
    return text


def render_bool(value: bool) -> str:
    if not isinstance(value, bool):
        raise TypeError(f"render_bool takes a bool, got {type(value).__name__}")
    return "TRUE" if value else "FALSE"


def render_strings(values: tuple[str, ...] | list[str]) -> str:
    """An array literal ``make_array('a', 'b')`` of quoted strings."""
    return "make_array(" + ", ".join(quote_string(v) for v in values) + ")"


def identifier(name: str) -> str:
    """One of the adapter's own column names, checked to be a plain identifier."""
    if not _IDENTIFIER.match(name):
        raise ValueError(f"{name!r} is not a LanceDB column identifier")
    return name


__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "identifier",
    "quote_string",
    "render_bool",
    "render_float",
    "render_int",
    "render_strings",
]

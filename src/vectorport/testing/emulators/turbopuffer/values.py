"""Attribute types, value coercion and the service's documented limits.

turbopuffer keeps one type per attribute: declared in a write's ``schema`` or inferred from
the first non-null value written. Every later value must fit that type, and filter
operands must too, so all of that checking lives here, in one place.
"""

from __future__ import annotations

import base64
import json
import math
import re
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

MAX_ID_BYTES = 64
MAX_ATTRIBUTE_NAME_BYTES = 128
MAX_ATTRIBUTE_NAMES = 1_024
MAX_FILTERABLE_VALUE_BYTES = 4_096
MAX_DIMENSIONS = 10_752
MAX_LIMIT = 10_000
MAX_MULTI_QUERIES = 16
MAX_DELETE_BY_FILTER = 5_000_000
MAX_PATCH_BY_FILTER = 50_000
MAX_PAGE_SIZE = 1_000
DEFAULT_PAGE_SIZE = 100
NAMESPACE_RE = re.compile(r"^[A-Za-z0-9\-_.]{1,128}$")
DISTANCE_METRICS = ("cosine_distance", "euclidean_squared")

SCALAR_TYPES = frozenset({"string", "int", "uint", "float", "bool", "uuid"})
_VECTOR_RE = re.compile(r"^\[(\d+)\]f(16|32)$")
_INT64 = (-(2**63), 2**63 - 1)
_UINT64 = (0, 2**64 - 1)


class RequestError(ValueError):
    """A value that does not fit its attribute; the server answers 400 with the text."""


class ParseError(RequestError):
    """A body that does not deserialize into the request type: 422, as the service's JSON
    parser (serde) answers, with serde's wording (``invalid type: map, expected a
    sequence``) so that code matching on the message behaves as against the service."""


def serde_kind(value: object) -> str:
    """How serde names an unexpected JSON value in ``invalid type: ...`` messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f"string {json.dumps(value)}"
    if isinstance(value, dict):
        return "map"
    return "sequence"


def invalid_type(value: object, expected: str, where: str) -> ParseError:
    return ParseError(f"{where}: invalid type: {serde_kind(value)}, expected {expected}")


@dataclass
class AttributeSchema:
    """One attribute's type and indexing settings, as the metadata endpoint shows them."""

    type: str
    filterable: bool = True
    full_text_search: dict[str, Any] | None = None
    regex: bool = False
    glob: bool = False

    @property
    def is_vector(self) -> bool:
        return _VECTOR_RE.match(self.type) is not None

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def dimensions(self) -> int | None:
        m = _VECTOR_RE.match(self.type)
        return int(m.group(1)) if m else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.is_vector:
            out["ann"] = True
            return out
        out["filterable"] = self.filterable
        if self.full_text_search is not None:
            out["full_text_search"] = self.full_text_search
        if self.regex:
            out["regex"] = True
        if self.glob:
            out["glob"] = True
        return out


def check_type_name(name: str, type_name: object) -> str:
    if not isinstance(type_name, str):
        raise RequestError(f"schema for attribute {name!r}: type must be a string")
    if type_name in SCALAR_TYPES:
        return type_name
    if type_name.startswith("[]") and type_name[2:] in SCALAR_TYPES:
        return type_name
    m = _VECTOR_RE.match(type_name)
    if m:
        dims = int(m.group(1))
        if not 1 <= dims <= MAX_DIMENSIONS:
            raise RequestError(f"vector attribute {name!r}: at most {MAX_DIMENSIONS} dimensions")
        return type_name
    if type_name in ("datetime", "[]datetime", "{}f16"):
        raise RequestError(f"attribute type {type_name!r} is not emulated")
    raise RequestError(f"attribute {name!r}: unknown type {type_name!r}")


# Full-text options the tokenizer approximation honours, and for the others the one value
# that matches what it does; anything else is refused rather than silently ignored.
_FTS_EMULATED = frozenset({"case_sensitive", "max_token_length", "k1", "b"})
_FTS_ONLY_VALUE: dict[str, object] = {
    "tokenizer": "word_v3", "language": "english", "stemming": False,
    "remove_stopwords": False, "ascii_folding": False,
}


def check_fts_options(name: str, options: dict[str, Any]) -> None:
    for key, value in options.items():
        if key in _FTS_EMULATED:
            continue
        if key in _FTS_ONLY_VALUE:
            if value != _FTS_ONLY_VALUE[key]:
                raise RequestError(
                    f"full_text_search on {name!r}: the emulator does not implement "
                    f"{key}={json.dumps(value)} (only {json.dumps(_FTS_ONLY_VALUE[key])})")
            continue
        raise RequestError(f"full_text_search on {name!r}: the emulator does not implement "
                           f"the option {key!r}")


def parse_schema_entry(name: str, raw: object, existing: AttributeSchema | None) -> AttributeSchema:
    """A ``schema`` entry of a write: a type string or an object with ``type``."""
    if isinstance(raw, str):
        spec: dict[str, Any] = {"type": raw}
    elif isinstance(raw, dict):
        spec = dict(raw)
    else:
        raise RequestError(f"schema for attribute {name!r} must be a type string or an object")
    type_name = check_type_name(name, spec.pop("type", existing.type if existing else None))
    if existing is not None and existing.type != type_name:
        raise RequestError(
            f"cannot change the type of attribute {name!r} from {existing.type} to {type_name}"
        )
    fts = spec.pop("full_text_search", None)
    if fts is True:
        fts = {}
    elif fts is False:
        fts = None
    elif fts is not None and not isinstance(fts, dict):
        raise RequestError(f"schema for {name!r}: full_text_search must be a bool or an object")
    if fts is not None and type_name not in ("string", "[]string"):
        raise RequestError(f"full_text_search on {name!r} requires the string or []string type")
    if fts is not None:
        check_fts_options(name, fts)
    regex = bool(spec.pop("regex", False))
    glob = bool(spec.pop("glob", False))
    ann = spec.pop("ann", None)
    if _VECTOR_RE.match(type_name) and ann is False:
        raise RequestError(f"vector attribute {name!r} requires ann: true")
    default_filterable = not (fts is not None or regex or glob)
    filterable = spec.pop("filterable", default_filterable)
    if not isinstance(filterable, bool):
        raise RequestError(f"schema for {name!r}: filterable must be a bool")
    for key in ("embed", "fuzzy", "sparse_knn"):
        if spec.get(key) not in (None, False):
            raise RequestError(f"schema option {key!r} is not emulated")
        spec.pop(key, None)
    if spec:
        raise RequestError(f"unknown schema option(s) for {name!r}: {', '.join(sorted(spec))}")
    return AttributeSchema(
        type=type_name, filterable=filterable, full_text_search=fts, regex=regex, glob=glob,
    )


def infer_type(name: str, value: object) -> str | None:
    """The type turbopuffer infers from a first value, or ``None`` when it cannot."""
    if value is None:
        return None
    if name == "vector":
        if isinstance(value, str):
            return f"[{len(decode_base64_vector(value))}]f32"
        if isinstance(value, list) and value:
            return f"[{len(value)}]f32"
        raise RequestError("vector must be an array of numbers or a base64 string")
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        if not value:
            return None
        inner = {infer_type("", v) for v in value}
        if inner == {"string"}:
            return "[]string"
        if inner == {"bool"}:
            return "[]bool"
        if inner == {"int"}:
            return "[]int"
        if inner <= {"int", "float"}:
            return "[]float"
        raise RequestError(f"attribute {name!r}: arrays must hold values of one type")
    raise RequestError(f"attribute {name!r}: unsupported value of JSON type {type(value).__name__}")


def decode_base64_vector(text: str) -> npt.NDArray[np.float32]:
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise RequestError(f"invalid base64 vector: {exc}") from None
    if len(raw) % 4:
        raise RequestError("a base64 vector must hold little-endian float32 values")
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


def encode_base64_vector(vector: npt.NDArray[np.float32]) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def coerce_scalar(type_name: str, value: object, where: str) -> Any:
    """``value`` as the Python value stored for ``type_name``; ``RequestError`` if it does
    not fit. Integers are accepted for floats; nothing else converts."""
    if type_name == "string":
        if isinstance(value, str):
            return value
    elif type_name == "uuid":
        if isinstance(value, str):
            try:
                return str(uuid.UUID(value))
            except ValueError:
                raise RequestError(f"{where}: {value!r} is not a UUID") from None
    elif type_name == "bool":
        if isinstance(value, bool):
            return value
    elif type_name in ("int", "uint"):
        low, high = _INT64 if type_name == "int" else _UINT64
        if isinstance(value, int) and not isinstance(value, bool):
            if not low <= value <= high:
                raise RequestError(f"{where}: {value} is out of range for {type_name}")
            return value
    elif type_name == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        as_float = float(value)
        if not math.isfinite(as_float):
            raise RequestError(f"{where}: {value} is not a finite number")
        return as_float
    raise RequestError(
        f"{where}: expected a value of type {type_name}, got {_json_type(value)} {value!r}"
    )


def coerce_value(schema: AttributeSchema, value: object, where: str) -> Any:
    """A whole attribute value (scalar, array or vector) for storage."""
    if value is None:
        return None
    if schema.is_vector:
        dims = schema.dimensions
        if isinstance(value, str):
            vector = decode_base64_vector(value)
        elif isinstance(value, list) and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in value
        ):
            vector = np.asarray(value, dtype=np.float32)
        else:
            raise RequestError(f"{where}: a vector is an array of numbers or a base64 string")
        if len(vector) != dims:
            raise RequestError(
                f"{where}: vector has {len(vector)} dimensions, the namespace has {dims}"
            )
        if not np.isfinite(vector).all():
            raise RequestError(f"{where}: vector holds NaN or infinity")
        if schema.type.endswith("f16"):
            vector = vector.astype(np.float16).astype(np.float32)
        return vector
    if schema.is_array:
        if not isinstance(value, list):
            raise RequestError(f"{where}: expected an array of {schema.element_type}")
        return [coerce_scalar(schema.element_type, v, where) for v in value]
    return coerce_scalar(schema.type, value, where)


def filterable_size_problem(schema: AttributeSchema, value: Any, where: str) -> None:
    """Filterable strings are indexed, and the index takes values up to 4 KiB."""
    if not schema.filterable or value is None:
        return
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, str) and len(item.encode("utf-8")) > MAX_FILTERABLE_VALUE_BYTES:
            raise RequestError(
                f"{where}: filterable values are limited to {MAX_FILTERABLE_VALUE_BYTES} bytes; "
                "set filterable: false in the schema for larger values"
            )


def check_document_id(value: object, id_type: str | None) -> tuple[Any, str]:
    """A document id and its type (``string``, ``uint`` or ``uuid``)."""
    if isinstance(value, bool) or value is None:
        raise RequestError(f"invalid document id {value!r}")
    if isinstance(value, int):
        if id_type not in (None, "uint"):
            raise RequestError(f"document id {value!r} does not match the namespace id type {id_type}")
        return coerce_scalar("uint", value, "id"), "uint"
    if isinstance(value, str):
        if id_type == "uuid":
            return coerce_scalar("uuid", value, "id"), "uuid"
        if id_type == "uint":
            raise RequestError(f"document id {value!r} does not match the namespace id type uint")
        if not value:
            raise RequestError("document ids must not be empty")
        if len(value.encode("utf-8")) > MAX_ID_BYTES:
            raise RequestError(f"document ids are limited to {MAX_ID_BYTES} bytes")
        return value, "string"
    raise RequestError(f"invalid document id {value!r}")


def check_attribute_name(name: str) -> None:
    if not name:
        raise RequestError("attribute names must not be empty")
    if name.startswith("$"):
        raise RequestError(f"attribute name {name!r} must not start with '$'")
    if len(name.encode("utf-8")) > MAX_ATTRIBUTE_NAME_BYTES:
        raise RequestError(f"attribute names are limited to {MAX_ATTRIBUTE_NAME_BYTES} bytes")


def float32_json(value: float | np.floating[Any]) -> float:
    """A float32 as the service writes it in JSON: the shortest decimal that reads back
    as the same float32 (``0.7``, not the widened ``0.699999988079071``).

    numpy's ``str`` of a float32 is that shortest round-trip repr (Dragon4, unique mode);
    the Python float parsed from it is what ``json`` then prints.
    """
    return float(str(np.float32(value)))


def render_value(value: Any, vector_encoding: str) -> Any:
    """A stored value as JSON."""
    if isinstance(value, np.ndarray):
        if vector_encoding == "base64":
            return encode_base64_vector(value)
        return [float32_json(x) for x in value]
    if isinstance(value, list):
        return list(value)
    return value


def logical_bytes(doc: dict[str, Any]) -> int:
    """A rough size of a document, for billing fields and metadata."""
    total = 0
    for key, value in doc.items():
        total += len(key)
        if isinstance(value, np.ndarray):
            total += 4 * len(value)
        elif isinstance(value, str):
            total += len(value.encode("utf-8"))
        elif isinstance(value, list):
            total += sum(len(v.encode("utf-8")) if isinstance(v, str) else 8 for v in value)
        else:
            total += 8
    return total


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"

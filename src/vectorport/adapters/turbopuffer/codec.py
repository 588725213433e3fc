"""Records to turbopuffer rows and back (the column layout is in :mod:`.naming`)."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from vectorport.adapterkit import (
    DenseVector,
    MetadataValue,
    Record,
    ValidationError,
    read_only_float32,
)
from vectorport.adapters.turbopuffer.naming import (
    DOCUMENT_ATTRIBUTE,
    ID_ATTRIBUTE,
    KIND_TYPES,
    VECTOR_ATTRIBUTE,
    column,
    field_columns,
    parse_column,
)

MAX_FILTERABLE_VALUE_BYTES = 4_096
"""turbopuffer indexes filterable values of at most 4 KiB (its documented limit)."""


KINDS: dict[type, str] = {bool: "b", int: "i", float: "f", str: "s", tuple: "l"}
"""The kind of each canonical metadata type, as its value's exact type (:func:`kind_of`
also tells subclasses)."""


def kind_of(value: MetadataValue) -> str:
    kind = KINDS.get(value.__class__)
    if kind is not None:
        return kind
    if isinstance(value, bool):
        return "b"
    if isinstance(value, int):
        return "i"
    if isinstance(value, float):
        return "f"
    if isinstance(value, str):
        return "s"
    return "l"


def check_value_sizes(record_id: str, metadata: Mapping[str, MetadataValue]) -> None:
    """Refuse, before any write, strings turbopuffer could not index."""
    for key, value in metadata.items():
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            if isinstance(item, str) and len(item.encode("utf-8")) > MAX_FILTERABLE_VALUE_BYTES:
                raise ValidationError(
                    f"record {record_id!r}: metadata {key!r} holds a string of more than "
                    f"{MAX_FILTERABLE_VALUE_BYTES} bytes, turbopuffer's limit for "
                    "filterable values (keep long text in the document)"
                )


def metadata_patch(set_metadata: Mapping[str, MetadataValue],
                   unset: Iterable[str]) -> dict[str, Any]:
    """Attributes of a ``patch_rows`` row: the new kind column set, the other four null."""
    out: dict[str, Any] = {}
    for key in unset:
        out.update(dict.fromkeys(field_columns(key).values()))
    for key, value in set_metadata.items():
        out.update(dict.fromkeys(field_columns(key).values()))
        out[column(kind_of(value), key)] = list(value) if isinstance(value, tuple) else value
    return out


def schema_for(dimension: int | None, fields: Iterable[str]) -> dict[str, Any]:
    """The ``schema`` sent with a write: reserved attributes and, for every field written,
    all five typed columns (so that a field's columns exist together)."""
    schema: dict[str, Any] = {
        ID_ATTRIBUTE: {"type": "string"},
        DOCUMENT_ATTRIBUTE: {"type": "string", "filterable": False},
    }
    if dimension is not None:
        schema[VECTOR_ATTRIBUTE] = {"type": f"[{dimension}]f32", "ann": True}
    for field in fields:
        for kind, name in field_columns(field).items():
            schema[name] = {"type": KIND_TYPES[kind]}
    return schema


def fields_of(records: Sequence[Record]) -> set[str]:
    return {key for rec in records for key in rec.metadata}


def _metadata_value(kind: str, value: Any) -> MetadataValue:
    if kind == "s":
        return str(value)
    if kind == "i":
        return int(value)
    if kind == "f":
        return float(value)
    if kind == "b":
        return bool(value)
    return tuple(str(v) for v in value)


def decode_vector(value: Any) -> DenseVector:
    if isinstance(value, str):
        return read_only_float32(np.frombuffer(base64.b64decode(value), dtype="<f4"))
    return read_only_float32(value)


class DecodedRow:
    """The parts of a returned row, in vectorport terms."""

    __slots__ = ("distance", "document", "id", "metadata", "vector")

    def __init__(self, attributes: Mapping[str, Any]) -> None:
        self.id = str(attributes.get(ID_ATTRIBUTE) or attributes.get("id"))
        self.distance: float | None = attributes.get("$dist")
        document = attributes.get(DOCUMENT_ATTRIBUTE)
        self.document: str | None = document if isinstance(document, str) else None
        vector = attributes.get(VECTOR_ATTRIBUTE)
        self.vector = decode_vector(vector) if vector is not None else None
        metadata: dict[str, MetadataValue] = {}
        for name, value in attributes.items():
            if value is None:
                continue
            parsed = parse_column(name)
            if parsed is not None:
                metadata[parsed[1]] = _metadata_value(parsed[0], value)
        self.metadata = metadata

    def record(self, dimension: int) -> Record:
        vector = self.vector
        if vector is None:
            vector = read_only_float32(np.zeros(dimension))
        return Record(id=self.id, vector=vector, metadata=self.metadata,
                      document=self.document)


def row_attributes(row: Any) -> dict[str, Any]:
    """A response row (the SDK's ``Row`` model, or a plain dict) as a dict."""
    if isinstance(row, Mapping):
        return dict(row)
    out: dict[str, Any] = dict(getattr(row, "model_extra", None) or {})
    out["id"] = row.id
    out[VECTOR_ATTRIBUTE] = getattr(row, "vector", None)
    return out

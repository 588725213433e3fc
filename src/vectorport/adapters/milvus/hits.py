"""A search's hits read column-wise, where pymilvus would decode them cell by cell.

pymilvus decodes the hits of a search only when they are read, and then one cell at a
time: a type lookup per cell, each vector sliced out of the response's repeated float
field as a list of Python floats, each JSON value parsed in its own call. For the
adapter's top-10 search (12 hits, their vectors, metadata and documents) that took
430-480 µs of the calling thread per query on milvus-lite, about a tenth of the
query. Here the vectors come out of the response as one float32 matrix (the packed
field's bytes, :func:`.columns.unpacked_floats`) and each hit's row takes a row of it:
47 µs for the same hits.

Used only where it is proven, as the column-wise upserts are (:mod:`.columns`): the
first search whose hits carry a given set of lazily decoded fields is read both ways,
pymilvus' and ours, and the columns serve that set only when the rows are equal
(vectors as float32 values; every other field as pymilvus gives it). A pymilvus
that keeps its hits otherwise, a nullable or sparse vector, a dynamic field or any
field type not read here keeps pymilvus' own decoding, with nothing lost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vectorport.adapters.milvus import layout
from vectorport.adapters.milvus.columns import unpacked_floats

Row = Mapping[str, Any]

_FLOAT_VECTOR = 101
"""``DataType.FLOAT_VECTOR`` (schema.proto), the one vector type read here."""
_JSON = 23
"""``DataType.JSON``."""


def decoded_rows(hits: Any) -> list[Row]:
    """The hits as pymilvus decodes them: each entity with its ``pk``."""
    rows: list[Row] = []
    for hit in hits:
        entity = dict(hit.get("entity") or {})
        entity[layout.PK] = hit.get(layout.PK, entity.get(layout.PK))
        rows.append(entity)
    return rows


def _lazy_fields(hits: Any) -> Sequence[Any] | None:
    """The fields pymilvus left encoded in ``hits`` (one query's hits), when it kept
    them as this module reads them and has not decoded them yet; else None."""
    lazy = getattr(hits, "lazy_field_data", None)
    if (lazy is None or getattr(hits, "has_materialized", True)
            or not isinstance(getattr(hits, "start", None), int)
            or not hasattr(hits, "get_raw_item") or not hasattr(hits, "ids")):
        return None
    for field in lazy:
        if len(field.valid_data) or field.type not in (_FLOAT_VECTOR, _JSON) or (
                field.type == _JSON and field.is_dynamic):
            return None
    return list(lazy)


def column_rows(hits: Any, lazy: Sequence[Any]) -> Sequence[Row] | None:
    """The hits' rows read column-wise (``lazy``: :func:`_lazy_fields`), or None when
    the response holds fewer values than the hits."""
    import orjson

    start, count = hits.start, len(hits.ids)
    rows: list[dict[str, Any]] = []
    for i, pk in enumerate(hits.ids):
        hit = hits.get_raw_item(i)  # the hit without decoding its lazy fields
        entity = dict(hit.get("entity") or {})
        entity[layout.PK] = hit.get(layout.PK, pk)
        rows.append(entity)
    for field in lazy:
        name = field.field_name
        if field.type == _FLOAT_VECTOR:
            dim = field.vectors.dim
            values = unpacked_floats(field.vectors.float_vector.SerializeToString())
            if values is None or dim <= 0 or len(values) < (start + count) * dim:
                return None
            matrix = values[start * dim:(start + count) * dim].reshape(count, dim)
            for row, vector in zip(rows, matrix, strict=True):
                row[name] = vector
        else:
            data = field.scalars.json_data.data
            if len(data) < start + count:
                return None
            for i, row in enumerate(rows):
                row[name] = orjson.loads(data[start + i])
    return rows


def _equal(ours: Sequence[Row], theirs: Sequence[Row]) -> bool:
    if len(ours) != len(theirs):
        return False
    for mine, other in zip(ours, theirs, strict=True):
        if mine.keys() != other.keys():
            return False
        for key, value in mine.items():
            if isinstance(value, np.ndarray):
                if not np.array_equal(value, np.asarray(other[key], dtype=np.float32)):
                    return False
            elif value != other[key] or type(value) is not type(other[key]):
                return False
    return True


class ColumnHits:
    """Reads search hits column-wise for the sets of lazy fields where the first read
    both ways gave equal rows (see the module docstring)."""

    def __init__(self) -> None:
        self._proven: dict[tuple[tuple[str, int], ...], bool] = {}

    def rows(self, hits: Any) -> Sequence[Row]:
        """One query's hits as rows: field name → value, with ``pk``; dense vectors as
        read-only float32 arrays where read column-wise, lists of floats otherwise."""
        lazy = _lazy_fields(hits)
        if lazy is None:
            return decoded_rows(hits)
        shape = tuple((field.field_name, int(field.type)) for field in lazy)
        known = self._proven.get(shape)
        if known is False:
            return decoded_rows(hits)
        ours = column_rows(hits, lazy)
        if ours is None:
            return decoded_rows(hits)
        if known is None:
            if not ours:
                return ours  # no hits: nothing to compare yet
            theirs = decoded_rows(hits)
            self._proven[shape] = _equal(ours, theirs)
            return theirs
        return ours


__all__ = ["ColumnHits", "column_rows", "decoded_rows"]

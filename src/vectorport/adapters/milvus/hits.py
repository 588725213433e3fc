"""Search hits and query results read column-wise, where pymilvus would decode them
cell by cell.

pymilvus decodes the vectors and JSON values of a search's hits, and of a query's
rows, only when they are read, and then one cell at a time: a type lookup per cell,
each vector sliced out of the response's repeated float field as a list of Python
floats, each JSON value parsed in its own call. For the adapter's top-10 search (12
hits, their vectors, metadata and documents) that took 430-480 µs of the calling
thread per query on milvus-lite, about a tenth of the query. Here the vectors come out
of the response as one float32 matrix (the packed field's bytes,
:func:`.columns.unpacked_floats`) and each row takes a row of it: 47 µs for the same
hits.

Used only where it is proven, as the column-wise upserts are (:mod:`.columns`): the
first result of each kind (search or query) whose rows carry a given set of lazily
decoded fields is read both ways, pymilvus' and ours, and the columns serve that set
only when the rows are equal (vectors as float32 values; every other field as
pymilvus gives it; the dynamic field's keys merged into each row where it was asked
for, and left out where not, though milvus-lite sends it either way). A pymilvus that
keeps its results otherwise, a nullable or sparse vector or any field type not read
here keeps pymilvus' own decoding, with nothing lost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vectorport.adapters.milvus import layout
from vectorport.adapters.milvus.columns import unpacked_floats

Row = Mapping[str, Any]

_FLOAT_VECTOR = 101
"""``DataType.FLOAT_VECTOR`` (schema.proto), the one vector type read here."""
_JSON = 23
"""``DataType.JSON``."""


@dataclass(frozen=True)
class _Undecoded:
    """A result pymilvus has not decoded yet: each row's eagerly decoded fields (copies,
    with ``pk``), the fields left encoded, where the rows start in them, and whether
    the dynamic field was asked for (its keys then merged into each row, as pymilvus
    does; milvus-lite sends it either way)."""

    kind: str
    rows: list[dict[str, Any]]
    lazy: tuple[Any, ...]
    start: int
    dynamic: bool

    @property
    def shape(self) -> tuple[str, bool, tuple[tuple[str, int], ...]]:
        return self.kind, self.dynamic, tuple((f.field_name, int(f.type)) for f in self.lazy)


def _readable(lazy: Sequence[Any]) -> bool:
    return all(not len(f.valid_data) and f.type in (_FLOAT_VECTOR, _JSON) for f in lazy)


def _search_hits(hits: Any, dynamic: bool) -> _Undecoded | None:
    """One query's hits of a search (pymilvus' ``HybridHits``), undecoded."""
    lazy = getattr(hits, "lazy_field_data", None)
    if (lazy is None or getattr(hits, "has_materialized", True)
            or not isinstance(getattr(hits, "start", None), int)
            or not hasattr(hits, "get_raw_item") or not hasattr(hits, "ids")
            or not _readable(lazy)):
        return None
    rows = []
    for i, pk in enumerate(hits.ids):
        hit = hits.get_raw_item(i)  # the hit without decoding its lazy fields
        entity = dict(hit.get("entity") or {})
        entity[layout.PK] = hit.get(layout.PK, pk)
        rows.append(entity)
    return _Undecoded("search", rows, tuple(lazy), hits.start, dynamic)


def _query_rows(result: Any, dynamic: bool) -> _Undecoded | None:
    """A query's rows (pymilvus' ``HybridExtraList``), undecoded."""
    lazy = getattr(result, "_lazy_field_data", None)
    decoded = getattr(result, "_materialized_bitmap", None)
    if (lazy is None or not isinstance(decoded, list) or any(decoded)
            or getattr(result, "_strict_float32", True) or not _readable(lazy)):
        return None
    rows = [dict(list.__getitem__(result, i)) for i in range(len(result))]
    if any("_original_idx" in row for row in rows):  # rows expanded per element
        return None
    return _Undecoded("query", rows, tuple(lazy), 0, dynamic)


def column_rows(result: _Undecoded) -> list[Row] | None:
    """``result``'s rows with their lazy fields read column-wise, or None when the
    response holds fewer values than the rows."""
    import orjson

    rows, start, count = result.rows, result.start, len(result.rows)
    for field in result.lazy:
        name = field.field_name
        if field.is_dynamic and not result.dynamic:
            continue  # not asked for (milvus-lite sends it anyway): left out, as pymilvus does
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
            if field.is_dynamic:  # its keys merged into the row
                for i, row in enumerate(rows):
                    row.update(orjson.loads(data[start + i]))
            else:
                for i, row in enumerate(rows):
                    row[name] = orjson.loads(data[start + i])
    return list(rows)


def decoded_hits(hits: Any) -> list[Row]:
    """A search's hits as pymilvus decodes them: each entity with its ``pk``."""
    rows: list[Row] = []
    for hit in hits:
        entity = dict(hit.get("entity") or {})
        entity[layout.PK] = hit.get(layout.PK, entity.get(layout.PK))
        rows.append(entity)
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
    """Reads search hits and query rows column-wise for the sets of lazy fields where
    the first read both ways gave equal rows (see the module docstring)."""

    def __init__(self) -> None:
        self._proven: dict[tuple[str, bool, tuple[tuple[str, int], ...]], bool] = {}

    def rows(self, hits: Any, *, dynamic: bool = False) -> Sequence[Row]:
        """One query's hits of a search as rows: field name → value, with ``pk``; dense
        vectors as read-only float32 arrays where read column-wise, lists of floats
        otherwise; ``dynamic``: the search asked for the dynamic field, whose keys are
        then in the rows."""
        return self._read(_search_hits(hits, dynamic), hits, decoded_hits)

    def query_rows(self, result: Any, *, dynamic: bool = False) -> Sequence[Row]:
        """A query's rows, as :meth:`rows`."""
        return self._read(_query_rows(result, dynamic), result, list)

    def _read(self, undecoded: _Undecoded | None, result: Any,
              decode: Callable[[Any], Iterable[Row]]) -> Sequence[Row]:
        if undecoded is None:
            return list(decode(result))
        known = self._proven.get(undecoded.shape)
        if known is False:
            return list(decode(result))
        ours = column_rows(undecoded)
        if ours is None:
            return list(decode(result))
        if known is None:
            if not ours:
                return ours  # no rows: nothing to compare yet
            theirs = list(decode(result))
            self._proven[undecoded.shape] = _equal(ours, theirs)
            return theirs
        return ours


__all__ = ["ColumnHits", "column_rows", "decoded_hits"]

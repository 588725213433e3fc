"""Upserts of dense records as one column-wise request, on milvus-lite 3.

``MilvusClient.upsert`` takes row dicts and packs them value by value in Python (a type
lookup, a conversion and a protobuf append per field of every row): measured with the
benchmark's records (384 floats, five metadata keys, a document), pymilvus packed 500
of our rows in 32 ms of process CPU, where this module builds the same request from
the records in 13 ms: the ids and documents as two string lists, the vectors as one
float32 matrix, the metadata as the JSON bytes :mod:`.layout` encodes. The request is
the very message pymilvus would send (compared byte for byte, see below), sent over
the same client's gRPC stub.

Used only where it is proven: a milvus-lite 3 file (the engine runs in this process,
with the pymilvus that ``milvus-lite`` installs) and a dense collection of the current
layouts (list bounds in ``meta``, nullable documents, no ``aux``; with the dynamic field
of filter keys where the layout has it). The first write to a collection builds one
record both ways, pymilvus' and ours, and uses the columns only when the two messages
are equal: another pymilvus, another schema or another field order falls back to
pymilvus' own packing of rows with nothing lost. The request is an insert: on
milvus-lite 3 an insert replaces a record whole, where an upsert reads the stored
record and merges (``Engine.inserts_replace``). Milvus servers always take
``MilvusClient.upsert`` (its retries and call context stay in charge there).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from vectorport.adapters.milvus import layout
from vectorport.core.types import Record


def request(collection: str, pks: Sequence[str], namespace: str,
            records: Sequence[Record], schema_timestamp: int, *,
            filter_keys: bool = False) -> Any:
    """The ``InsertRequest`` of validated dense records (an insert replaces on
    milvus-lite 3, see the module docstring), fields in the schema's order
    (:func:`.collection.build_schema`); ``filter_keys``: the metadata in the dynamic
    field, last, as :func:`.layout.filter_keys` (the :data:`.layout.FILTER_KEYS`
    layout, which has no ``meta``), as pymilvus packs a row's keys outside the
    schema."""
    import orjson
    from pymilvus import DataType
    from pymilvus.grpc_gen import milvus_pb2

    message = milvus_pb2.InsertRequest(collection_name=collection, partition_name="",
                                       num_rows=len(records),
                                       schema_timestamp=schema_timestamp)
    message.fields_data.add(field_name=layout.PK, type=DataType.VARCHAR) \
        .scalars.string_data.data.extend(pks)
    message.fields_data.add(field_name=layout.NAMESPACE, type=DataType.VARCHAR) \
        .scalars.string_data.data.extend([namespace] * len(records))
    vectors = message.fields_data.add(field_name=layout.VECTOR, type=DataType.FLOAT_VECTOR)
    vectors.vectors.dim = len(records[0].vector) if records else 0
    if records:
        vectors.vectors.float_vector.MergeFromString(
            packed_floats(np.stack([r.vector for r in records])))
    if not filter_keys:
        message.fields_data.add(field_name=layout.META, type=DataType.JSON) \
            .scalars.json_data.data.extend(
                [layout.encode_metadata_bounds_first(r.metadata) for r in records])
    documents = message.fields_data.add(field_name=layout.DOCUMENT, type=DataType.VARCHAR)
    documents.valid_data.extend([r.document is not None for r in records])
    documents.scalars.string_data.data.extend(
        [r.document for r in records if r.document is not None])
    if filter_keys:
        message.fields_data.add(field_name=layout.DYNAMIC, type=DataType.JSON,
                                is_dynamic=True).scalars.json_data.data.extend(
            [orjson.dumps(layout.filter_keys(r.metadata)) for r in records])
    return message


def packed_floats(matrix: np.ndarray[Any, Any]) -> bytes:
    """The wire form of a ``FloatArray`` holding ``matrix``'s values in row order: its
    one field (``data``, 1) packed, which is a tag, a length and the little-endian
    float32s themselves. Merged into the message, it is the very field that extending
    ``data`` with the values as Python floats builds (float32 widened to a double and
    narrowed back is the same float32, signed zeros and denormals included), without
    making and converting a Python float per value: that took 3.1 of the 4.2 ms of
    building an upsert of 100 × 384 here."""
    values = np.ascontiguousarray(matrix, dtype="<f4").tobytes()
    return _FLOAT_DATA_TAG + _varint(len(values)) + values


_FLOAT_DATA_TAG = bytes([1 << 3 | 2])
"""Field 1 (``FloatArray.data``), wire type 2 (length-delimited: packed)."""


def unpacked_floats(wire: bytes) -> np.ndarray[Any, Any] | None:
    """The float32 values of a ``FloatArray``'s wire form, the inverse of
    :func:`packed_floats`: a read-only view of ``wire``, no copy. ``b""`` (no values)
    is empty; None when ``wire`` is not exactly that one packed field."""
    if not wire:
        return np.frombuffer(b"", dtype="<f4")
    if wire[:1] != _FLOAT_DATA_TAG:
        return None
    length, shift, position = 0, 0, 1
    while position < len(wire):
        byte = wire[position]
        position += 1
        length |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
    else:
        return None
    if length % 4 or position + length != len(wire):
        return None
    return np.frombuffer(wire, dtype="<f4", count=length // 4, offset=position)


def _varint(value: int) -> bytes:
    """``value`` (non-negative) as a protobuf base-128 varint."""
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class ColumnUpserts:
    """Sends column-wise upserts (inserts that replace, see the module docstring) over
    one ``MilvusClient``'s connection, for the collections where the probe proved them
    equal to pymilvus' own."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._proven: dict[str, bool] = {}

    def forget(self, collection: str) -> None:
        """The collection was dropped or created: probe it again on the next write."""
        self._proven.pop(collection, None)

    def _schema(self, collection: str) -> tuple[dict[str, Any], int]:
        schema, timestamp = self._client._get_connection()._get_schema(collection)
        return schema, int(timestamp or 0)

    def usable(self, collection: str, probe: Record, pk: str, namespace: str,
               row: Callable[[], dict[str, Any]], *, filter_keys: bool = False) -> bool:
        """Whether upserts into ``collection`` go column-wise: decided once, from one
        record's row as :func:`.rows.record_row` builds it for pymilvus (``row`` builds
        it, only for that first write); ``filter_keys`` as for :func:`request`."""
        known = self._proven.get(collection)
        if known is None:
            try:
                from pymilvus.client.prepare import Prepare

                schema, timestamp = self._schema(collection)
                theirs = Prepare.row_insert_param(
                    collection, [row()], "", schema["fields"],
                    schema.get("struct_array_fields", []),
                    enable_dynamic=bool(schema.get("enable_dynamic_field", False)),
                    schema_timestamp=timestamp)
                ours = request(collection, [pk], namespace, [probe], timestamp,
                               filter_keys=filter_keys)
                known = bool(theirs == ours)
            except Exception:  # another pymilvus: its own path, whatever the reason
                known = False
            self._proven[collection] = known
        return known

    def upsert(self, collection: str, pks: Sequence[str], namespace: str,
               records: Sequence[Record], timeout: float | None = None, *,
               filter_keys: bool = False) -> None:
        """What ``MilvusClient.insert`` does with the rows, from the columns."""
        from pymilvus.client import ts_utils
        from pymilvus.client.utils import check_status

        handler = self._client._get_connection()
        _, timestamp = self._schema(collection)
        message = request(collection, pks, namespace, records, timestamp,
                          filter_keys=filter_keys)
        response = handler._stub.Insert(message, timeout=timeout)
        check_status(response.status)
        ts_utils.update_collection_ts(collection, response.timestamp,
                                      handler.server_address, "")


__all__ = ["ColumnUpserts", "packed_floats", "request", "unpacked_floats"]

"""How one record is laid out in a LanceDB table, and back.

One table per index, with these columns:

``pk``      string, the merge key of upserts: ``namespace + "/" + id``. Namespaces never
            contain ``/``, so the split is unambiguous and the same id may live in
            several namespaces.
``ns``      string: the namespace (``""`` for the default one).
``id``      string: the record id (ordered listing sorts on it).
``vector``  fixed-size list of float32: the dense vector.
``meta``    ``lance.json`` (JSONB): the metadata, each key tagged with its kind —
            ``s_k`` (string), ``i_k`` (int), ``f_k`` (float), ``b_k`` (bool), ``l_k``
            (list of strings) — plus, for each list, its smallest and largest element
            (``a_k``, ``z_k``). LanceDB's ``json_get_*`` functions convert between JSON
            types (``json_get_string`` reads ``1`` as ``"1"``) or fail on a mismatch,
            so one key per kind means a comparison only ever meets values of its own
            kind: ``True`` never meets ``1``, ``"1"`` never meets ``1``, and ints keep
            all 64 bits (an int is never read through a float).
``tokens``  list of strings, never null: ``k`` for every key (``$exists``) and ``k=v``
            for every string value and list element (``$eq``/``$in``/``$all`` through
            ``array_has*``, which compare exactly: ``json_array_contains`` compares
            JSON-encoded text and misses elements holding quotes or backslashes). Keys
            never contain ``=``, so ``k=v`` is unambiguous.
``doc``     string, nullable: the document, out of reach of metadata and filters.

The IndexSpec is kept as JSON in the table schema's metadata (``vectorport.spec``);
a table without it is not a vectorport index and is never listed or touched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import accumulate, chain, repeat
from typing import Any, cast

import numpy as np
import orjson
import pyarrow as pa

from vectorport.core.types import IndexSpec, MetadataValue, Record

PK = "pk"
NAMESPACE = "ns"
ID = "id"
VECTOR = "vector"
META = "meta"
TOKENS = "tokens"
DOCUMENT = "doc"
SPEC_KEY = b"vectorport.spec"

STRING, INT, FLOAT, BOOL, LIST, LIST_MIN, LIST_MAX = "s", "i", "f", "b", "l", "a", "z"


def tagged(kind: str, key: str) -> str:
    """The JSON key holding ``key``'s value of ``kind``. Kind tags are single letters,
    so ``(kind, key) → tag`` is one-to-one."""
    return f"{kind}_{key}"


def value_token(key: str, value: str) -> str:
    return f"{key}={value}"


def make_pk(namespace: str, record_id: str) -> str:
    return f"{namespace}/{record_id}"


def schema(spec: IndexSpec) -> pa.Schema:
    fields = [
        pa.field(PK, pa.string(), nullable=False),
        pa.field(NAMESPACE, pa.string(), nullable=False),
        pa.field(ID, pa.string(), nullable=False),
        pa.field(VECTOR, pa.list_(pa.float32(), spec.dimension), nullable=False),
        pa.field(META, pa.json_(pa.string()), nullable=False),
        pa.field(TOKENS, pa.list_(pa.string()), nullable=False),
        pa.field(DOCUMENT, pa.string(), nullable=True),
    ]
    return pa.schema(fields, metadata={SPEC_KEY: spec_to_json(spec).encode()})


def spec_to_json(spec: IndexSpec) -> str:
    return json.dumps({
        "name": spec.name, "dimension": spec.dimension, "metric": spec.metric,
        "sparse": spec.sparse, "index_type": spec.index_type,
        "index_params": dict(spec.index_params),
        "backend_options": {k: dict(v) for k, v in spec.backend_options.items()},
    }, sort_keys=True)


def spec_from_schema(table_schema: pa.Schema) -> IndexSpec | None:
    raw = (table_schema.metadata or {}).get(SPEC_KEY)
    if raw is None:
        return None
    data = json.loads(raw)
    return IndexSpec(
        name=data["name"], dimension=int(data["dimension"]), metric=data["metric"],
        sparse=bool(data["sparse"]), index_type=data["index_type"],
        index_params={k: int(v) for k, v in data["index_params"].items()},
        backend_options=data["backend_options"],
    )



def _json_text(meta: dict[str, Any]) -> str:
    """Compact JSON text of one record's tagged metadata, by orjson: the metadata is
    validated (finite floats, 64-bit ints, valid Unicode, string keys), so its output
    parses to the same values as ``json.dumps``'s, about 30 times faster (the JSON was
    half of the adapter's work per upserted row)."""
    return orjson.dumps(meta).decode()


_S, _I, _F, _B, _L, _A, _Z = (tagged(kind, "") for kind in (
    STRING, INT, FLOAT, BOOL, LIST, LIST_MIN, LIST_MAX))
"""The tag prefixes (``tagged(kind, key) == prefix + key``): the per-key loop below
concatenates instead of calling :func:`tagged`, a third of its time."""


def encode_metadata(metadata: Mapping[str, MetadataValue]) -> tuple[str, list[str]]:
    """The ``meta`` JSON text and the ``tokens`` list of one record's metadata.

    Validated metadata holds exactly ``str``, ``bool``, ``int``, ``float`` and tuples of
    ``str``; those are dispatched on their exact type (``type(True) is bool``, so a bool
    never takes the int branch). Anything else (a subclass) takes :func:`_encode_other`."""
    meta: dict[str, Any] = {}
    tokens: list[str] = []
    add = tokens.append
    for key, value in metadata.items():
        add(key)
        kind = type(value)
        if kind is str:
            meta[_S + key] = value
            add(f"{key}={value}")  # value_token
        elif kind is int:
            meta[_I + key] = value
        elif kind is float:
            meta[_F + key] = value
        elif kind is bool:
            meta[_B + key] = value
        elif kind is tuple:
            items = cast("tuple[str, ...]", value)
            meta[_L + key] = items  # JSON writes a tuple as an array
            meta[_A + key] = min(items)
            meta[_Z + key] = max(items)
            tokens.extend([f"{key}={item}" for item in dict.fromkeys(items)])
        else:
            _encode_other(meta, tokens, key, value)
    return _json_text(meta), tokens


def _encode_other(meta: dict[str, Any], tokens: list[str], key: str, value: Any) -> None:
    """A value of a subclass of a metadata kind, stored as that kind's plain value."""
    if isinstance(value, bool):
        meta[tagged(BOOL, key)] = bool(value)
    elif isinstance(value, int):
        meta[tagged(INT, key)] = int(value)
    elif isinstance(value, float):
        meta[tagged(FLOAT, key)] = float(value)
    elif isinstance(value, str):
        meta[tagged(STRING, key)] = str(value)
        tokens.append(value_token(key, str(value)))
    else:
        items = [str(item) for item in value]
        meta[tagged(LIST, key)] = items
        meta[tagged(LIST_MIN, key)] = min(items)
        meta[tagged(LIST_MAX, key)] = max(items)
        tokens.extend(value_token(key, item) for item in dict.fromkeys(items))


def encode_batch(metadatas: Sequence[Mapping[str, MetadataValue]]
                 ) -> tuple[list[str], list[list[str]]]:
    """The ``meta`` texts and ``tokens`` lists of many records' metadata: for each record
    :func:`encode_metadata`'s JSON text, and its tokens (the same tokens, in another
    order: a token list is only ever searched with ``array_has*``).

    The records of one upsert usually share their keys and each key's kind; such a group
    is encoded column by column: each key's tag and token prefix made once, its values'
    kind checked once for the column, each row's JSON object made by
    ``dict(zip(tags, values))``. A group with a column of mixed or unusual kinds (a
    subclass, say) takes :func:`encode_metadata`, record by record."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for position, metadata in enumerate(metadatas):
        groups.setdefault(tuple(metadata), []).append(position)
    if len(groups) == 1:  # the usual upsert: one group, in order
        keys = next(iter(groups))
        encoded = _encode_group(keys, metadatas)
        return encoded if encoded is not None else _one_by_one(metadatas)
    count = len(metadatas)
    texts: list[str] = [""] * count
    tokens: list[list[str]] = [[]] * count
    for keys, positions in groups.items():
        rows = [metadatas[p] for p in positions]
        group = _encode_group(keys, rows)
        group_texts, group_tokens = group if group is not None else _one_by_one(rows)
        for position, text, row_tokens in zip(positions, group_texts, group_tokens,
                                               strict=True):
            texts[position] = text
            tokens[position] = row_tokens
    return texts, tokens


def _one_by_one(metadatas: Sequence[Mapping[str, MetadataValue]]
                ) -> tuple[list[str], list[list[str]]]:
    encoded = [encode_metadata(metadata) for metadata in metadatas]
    return [text for text, _ in encoded], [tokens for _, tokens in encoded]


def _encode_group(keys: tuple[str, ...], rows: Sequence[Mapping[str, MetadataValue]]
                  ) -> tuple[list[str], list[list[str]]] | None:
    """Rows sharing ``keys`` (in that order), each key's values of one exact kind,
    encoded by columns; ``None`` for any other group."""
    count = len(rows)
    tags: list[str] = []
    values: list[Any] = []
    strings: list[list[str]] = []  # per string key, each row's value token
    lists: list[list[list[str]]] = []  # per list key, each row's element tokens
    for key in keys:
        column: list[Any] = [row[key] for row in rows]  # one kind, checked next
        kinds = set(map(type, column))
        if len(kinds) != 1:
            return None
        kind = kinds.pop()
        if kind is str:
            tags.append(_S + key)
            values.append(column)
            prefix = f"{key}="
            strings.append([prefix + value for value in column])
        elif kind is tuple:
            items: list[tuple[str, ...]] = column
            if not all(type(item) is str for value in items for item in value):
                return None
            tags += (_L + key, _A + key, _Z + key)
            values += (items, list(map(min, items)), list(map(max, items)))
            prefix = f"{key}="
            lists.append([[prefix + item for item in dict.fromkeys(value)] for value in items])
        elif kind is int or kind is float or kind is bool:
            tags.append({int: _I, float: _F, bool: _B}[kind] + key)
            values.append(column)
        else:
            return None
    # every column holds one value per row, so the zips need no length check (strict
    # zips were a fifth of the JSON step)
    dumps = orjson.dumps
    texts = ([dumps(dict(zip(tags, row, strict=False))).decode()
              for row in zip(*values, strict=False)] if values else ["{}"] * count)
    fixed = list(keys)
    per_row_strings = zip(*strings, strict=False) if strings else repeat((), count)
    if lists:
        tokens = [[*fixed, *row_strings, *chain.from_iterable(row_lists)]
                  for row_strings, row_lists
                  in zip(per_row_strings, zip(*lists, strict=False), strict=False)]
    else:
        tokens = [[*fixed, *row_strings] for row_strings in per_row_strings]
    return texts, tokens


def record_batch(table_schema: pa.Schema, dimension: int, namespace: str,
                 records: Sequence[Record]) -> pa.Table:
    """One upsert's rows as an Arrow table of ``table_schema`` (:func:`schema`), column
    by column from the records' fields: the vectors one ``FixedSizeListArray`` of a
    float32 matrix, the metadata through :func:`encode_batch`, the tokens one list
    array of a flat string array and offsets, an all-``None`` document column a column
    of nulls."""
    count = len(records)
    texts, tokens = encode_batch([record.metadata for record in records])
    ids = [record.id for record in records]
    prefix = make_pk(namespace, "")
    flat = (np.concatenate([record.vector for record in records]).astype(np.float32, copy=False)
            if records else np.zeros(0, np.float32))
    documents = [record.document for record in records]
    offsets = pa.array([0, *accumulate(map(len, tokens))], pa.int32())
    columns = {
        PK: pa.array([prefix + rid for rid in ids], pa.string()),
        NAMESPACE: pa.array([namespace] * count, pa.string()),
        ID: pa.array(ids, pa.string()),
        VECTOR: pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), dimension),
        META: pa.array(texts, table_schema.field(META).type),
        TOKENS: pa.ListArray.from_arrays(
            offsets, pa.array(list(chain.from_iterable(tokens)), pa.string()),
            type=table_schema.field(TOKENS).type),
        DOCUMENT: (pa.nulls(count, pa.string()) if documents.count(None) == count
                   else pa.array(documents, pa.string())),
    }
    return pa.Table.from_arrays([columns[name] for name in table_schema.names],
                                schema=table_schema)


_DECODERS: dict[str, Any] = {
    STRING: str, INT: int, FLOAT: float, BOOL: bool,
    LIST: lambda items: tuple(str(item) for item in items),
}
"""The value of each kind tag from its JSON value (the list bounds have none: derived,
not metadata). ``float`` also turns a float the JSON text wrote without a fraction
back into one; the others only confirm what the text already holds."""


def decode_metadata(text: str | bytes | None) -> dict[str, MetadataValue]:
    if not text:
        return {}
    out: dict[str, MetadataValue] = {}
    for tag, value in orjson.loads(text).items():
        decode = _DECODERS.get(tag[0])
        if decode is not None:
            out[tag[2:]] = decode(value)
    return out


__all__ = [
    "DOCUMENT", "ID", "META", "NAMESPACE", "PK", "TOKENS", "VECTOR",
    "decode_metadata", "encode_batch", "encode_metadata", "make_pk", "record_batch", "schema",
    "spec_from_schema", "spec_to_json", "tagged", "value_token",
]

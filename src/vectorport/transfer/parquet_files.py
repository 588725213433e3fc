"""vectorport's open on-disk format for an index: Parquet, one folder of parts per
namespace (or one file for all), readable by pyarrow, pandas, Polars and DuckDB.

Layout of ``vectorport export URL/index PATH``::

    PATH/
      default/part-000000.parquet       the default namespace ("")
      ns-tenant-1/part-000000.parquet   namespace "tenant-1"
      ...

(every other namespace's folder has the ``ns-`` prefix, so ``default`` cannot clash, and
no folder starts with ``_`` or ``.``, which Parquet readers skip), or, for a ``PATH``
ending in ``.parquet``, a single file. Columns:

=================  ================================  ===================================
column             type                              holds
=================  ================================  ===================================
``namespace``      string                            the record's namespace
``id``             string                            the record id
``vector``         fixed_size_list<float32>[dim]     the dense vector
``sparse_indices`` list<int32>, null when none       the sparse vector's indices
``sparse_values``  list<float32>, null when none     its values
``metadata``       string (JSON)                     metadata; JSON keeps ``1``, ``1.0``
                                                     and ``true`` apart
``document``       string, nullable                  the document
=================  ================================  ===================================

Every file's key-value metadata has ``vectorport`` = JSON ``{"format_version": 1,
"index": {name, dimension, metric, sparse, index_type, index_params}}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vectorport.core.errors import ConfigError, ValidationError
from vectorport.core.types import IndexSpec, Record, SparseVector
from vectorport.extras import install_hint
from vectorport.transfer.canonical import metadata_json

FORMAT_VERSION = 1

_METADATA_DECODER = json.JSONDecoder()
"""``decode`` of one decoder: json.loads of a str does the same, behind checks that cost
as much as decoding a record's small metadata object."""
METADATA_KEY = b"vectorport"
DEFAULT_NAMESPACE_DIR = "default"


def require_pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ConfigError(
            f'export and import need pyarrow: {install_hint("parquet")}') from None
    return pyarrow


def namespace_dir(namespace: str) -> str:
    return f"ns-{namespace}" if namespace else DEFAULT_NAMESPACE_DIR


def spec_to_json(spec: IndexSpec) -> dict[str, Any]:
    data = asdict(spec)
    data.pop("backend_options", None)
    data["index_params"] = dict(spec.index_params)
    return data


def spec_from_json(data: dict[str, Any]) -> IndexSpec:
    return IndexSpec(name=data["name"], dimension=int(data["dimension"]), metric=data["metric"],
                     sparse=bool(data["sparse"]), index_type=data.get("index_type", "auto"),
                     index_params=dict(data.get("index_params") or {}))


def schema(spec: IndexSpec) -> Any:
    pa = require_pyarrow()
    fields = [
        pa.field("namespace", pa.string(), nullable=False),
        pa.field("id", pa.string(), nullable=False),
        pa.field("vector", pa.list_(pa.float32(), spec.dimension), nullable=False),
        pa.field("sparse_indices", pa.list_(pa.int32())),
        pa.field("sparse_values", pa.list_(pa.float32())),
        pa.field("metadata", pa.string(), nullable=False),
        pa.field("document", pa.string()),
    ]
    meta = {METADATA_KEY: json.dumps({"format_version": FORMAT_VERSION,
                                      "index": spec_to_json(spec)}).encode()}
    return pa.schema(fields, metadata=meta)


def _sparse_columns(records: Sequence[Record]) -> tuple[Any, Any]:
    """``sparse_indices`` and ``sparse_values`` of a page: all null when no record has a
    sparse vector (the usual case, one call), else built from offsets and flat arrays."""
    pa = require_pyarrow()
    kinds = (pa.list_(pa.int32()), pa.list_(pa.float32()))
    if all(r.sparse is None for r in records):
        return pa.nulls(len(records), kinds[0]), pa.nulls(len(records), kinds[1])
    lengths = np.array([0 if r.sparse is None else len(r.sparse.indices) for r in records])
    offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
    mask = pa.array([r.sparse is None for r in records])
    present = [r.sparse for r in records if r.sparse is not None]
    flat_indices = np.concatenate([np.asarray(s.indices, np.int32) for s in present])
    flat_values = np.concatenate([np.asarray(s.values, np.float32) for s in present])
    return (pa.ListArray.from_arrays(offsets, pa.array(flat_indices), mask=mask),
            pa.ListArray.from_arrays(offsets, pa.array(flat_values), mask=mask))


def to_table(spec: IndexSpec, namespace: str, records: Sequence[Record]) -> Any:
    """One page as a table of the export's columns, built column by column: the vectors
    as one float32 matrix under a fixed-size list, no per-row Python for them."""
    pa = require_pyarrow()
    matrix = np.stack([np.asarray(r.vector, dtype=np.float32) for r in records]) if records \
        else np.zeros((0, spec.dimension), dtype=np.float32)
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), spec.dimension)
    sparse_indices, sparse_values = _sparse_columns(records)
    columns = [
        pa.array([namespace] * len(records), pa.string()),
        pa.array([r.id for r in records], pa.string()),
        vectors,
        sparse_indices,
        sparse_values,
        pa.array([metadata_json(r.metadata) for r in records], pa.string()),
        pa.array([r.document for r in records], pa.string()),
    ]
    return pa.Table.from_arrays(columns, schema=schema(spec))


@dataclass(frozen=True, slots=True)
class PartFile:
    path: Path
    spec: IndexSpec
    rows: int


def read_header(path: Path) -> PartFile:
    require_pyarrow()
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(path)
    except (OSError, ValueError) as exc:
        raise ValidationError(f"{path} is not a Parquet file: {exc}") from None
    raw = (handle.schema_arrow.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise ValidationError(f"{path} was not written by vectorport export (no "
                              "'vectorport' key in its metadata)")
    header = json.loads(raw)
    if header.get("format_version") != FORMAT_VERSION:
        raise ValidationError(f"{path} has format version {header.get('format_version')}; "
                              f"this vectorport reads version {FORMAT_VERSION}")
    return PartFile(path, spec_from_json(header["index"]), handle.metadata.num_rows)


def part_files(path: Path) -> list[PartFile]:
    """The files of an export, in a stable order, all of one index spec."""
    if not path.exists():
        raise ValidationError(f"{path} does not exist")
    files = [path] if path.is_file() else sorted(path.rglob("*.parquet"))
    if not files:
        raise ValidationError(f"{path} holds no .parquet files")
    parts = [read_header(f) for f in files]
    first = parts[0].spec
    for part in parts[1:]:
        if part.spec != first:
            raise ValidationError(f"{part.path} belongs to another index than {parts[0].path}")
    return parts


def batches(part: PartFile, batch_size: int, skip: int = 0
            ) -> Iterator[tuple[int, list[tuple[str, tuple[Record, ...]]]]]:
    """``(batch number, [(namespace, records), ...])`` for each batch of ``part`` from
    batch ``skip`` on (a file written for one namespace gives one group a batch)."""
    import pyarrow.parquet as pq

    handle = pq.ParquetFile(part.path)
    for number, batch in enumerate(handle.iter_batches(batch_size=batch_size)):
        if number >= skip:
            yield number, list(_records(batch, part.spec.dimension))


def _sparse_of(batch: Any) -> list[SparseVector | None]:
    indices, values = batch.column("sparse_indices"), batch.column("sparse_values")
    if indices.null_count == len(indices):
        return [None] * len(indices)
    return [None if i is None else SparseVector(tuple(i), tuple(v))
            for i, v in zip(indices.to_pylist(), values.to_pylist(), strict=True)]


def _records(batch: Any, dimension: int) -> Iterator[tuple[str, tuple[Record, ...]]]:
    # column by column: the vectors straight into one float32 matrix (never a Python
    # list of floats), the string columns as lists
    vectors = batch.column("vector").flatten().to_numpy(zero_copy_only=False)
    vectors = vectors.astype(np.float32, copy=False).reshape(-1, dimension)
    vectors.flags.writeable = False
    namespaces = batch.column("namespace").to_pylist()
    rows = zip(namespaces, batch.column("id").to_pylist(), vectors,
               batch.column("metadata").to_pylist(), _sparse_of(batch),
               batch.column("document").to_pylist(), strict=True)
    if len(set(namespaces)) <= 1:  # a file of one namespace: one group, in file order
        records = tuple(Record(id=rid, vector=vector, metadata=_METADATA_DECODER.decode(meta),
                               sparse=sparse, document=document)
                        for _, rid, vector, meta, sparse, document in rows)
        if records:
            yield namespaces[0], records
        return
    groups: dict[str, list[Record]] = {}
    for ns, rid, vector, meta, sparse, document in rows:
        groups.setdefault(ns, []).append(Record(
            id=rid, vector=vector, metadata=_METADATA_DECODER.decode(meta), sparse=sparse,
            document=document))
    for ns, grouped in groups.items():
        yield ns, tuple(grouped)

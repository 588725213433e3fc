"""The collection behind one index: its schema, its vector index, and the IndexSpec.

The spec is kept as JSON in the collection property :data:`SPEC_PROPERTY` (on
milvus-lite 2, which keeps no properties, in a row of the catalog collection, see
:mod:`.engine_line`), so that ``describe_index`` gives back exactly what was created, and so
that collections that vectorport did not create are never taken for indexes.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from vectorport.adapterkit import Option, OptionSpec
from vectorport.adapters.milvus import layout
from vectorport.adapters.milvus.engine_line import CATALOG, CURRENT, Engine
from vectorport.core.errors import ValidationError
from vectorport.core.types import IndexSpec, Metric

SPEC_PROPERTY = "vectorport.spec"
BACKEND = "milvus"

MILVUS_METRICS: dict[Metric, str] = {"cosine": "COSINE", "dotproduct": "IP", "euclidean": "L2"}
_INDEX_TYPES = {"auto": "AUTOINDEX", "flat": "FLAT", "hnsw": "HNSW", "ivf": "IVF_FLAT"}
_INDEX_PARAMS: dict[str, dict[str, str]] = {
    "auto": {},
    "flat": {},
    "hnsw": {"m": "M", "ef_construction": "efConstruction"},
    "ivf": {"lists": "nlist"},
}


def spec_to_json(spec: IndexSpec) -> str:
    return json.dumps(asdict(spec), sort_keys=True)


def spec_from_json(text: str) -> IndexSpec:
    data: dict[str, Any] = json.loads(text)
    data["index_params"] = dict(data.get("index_params") or {})
    data["backend_options"] = dict(data.get("backend_options") or {})
    return IndexSpec(**data)


def native_index_params(spec: IndexSpec) -> tuple[str, dict[str, int]]:
    """The Milvus index type and build parameters for the spec's ``index_type``."""
    names = _INDEX_PARAMS[spec.index_type]
    OptionSpec(BACKEND, "index_params", tuple(Option(n, "int") for n in names)).parse(
        spec.index_params)
    return _INDEX_TYPES[spec.index_type], {names[k]: v for k, v in spec.index_params.items()}


def bounds_in_meta(engine: Engine) -> bool:
    """Whether new collections on ``engine`` get the :data:`.layout.BOUNDS_IN_META`
    layout (or :data:`.layout.FILTER_KEYS`, which keeps lists so too): engines that
    keep collection properties (where the marker lives)."""
    return engine.spec_in_properties


def new_layout(engine: Engine) -> str | None:
    """The :data:`.layout.LAYOUT_PROPERTY` marker of new collections on ``engine``."""
    if not engine.spec_in_properties:
        return None
    return layout.FILTER_KEYS if engine.filter_keys else layout.BOUNDS_IN_META


def has_aux(spec: IndexSpec, bounds_in_meta: bool) -> bool:
    """Whether the collection of ``spec`` in that layout has the ``aux`` field."""
    return spec.sparse or not bounds_in_meta


def build_schema(client: Any, spec: IndexSpec, engine: Engine = CURRENT, *,
                 bounds_in_meta: bool = False, filter_keys: bool = False) -> Any:
    """The collection's schema; ``filter_keys``: the :data:`.layout.FILTER_KEYS`
    layout's, the metadata in the dynamic field and no ``meta``."""
    from pymilvus import DataType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=filter_keys)
    # encoded ids (milvus-lite 2) can take twice the bytes
    pk_bytes = layout.PK_MAX_BYTES * (2 if engine.encoded_text else 1)
    schema.add_field(layout.PK, DataType.VARCHAR, is_primary=True, max_length=pk_bytes)
    namespace: dict[str, Any] = {"is_partition_key": True} if engine.partition_key else {}
    schema.add_field(layout.NAMESPACE, DataType.VARCHAR,
                     max_length=layout.NAMESPACE_MAX_BYTES, **namespace)
    schema.add_field(layout.VECTOR, DataType.FLOAT_VECTOR, dim=spec.dimension)
    if spec.sparse:
        schema.add_field(layout.SPARSE, DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field(layout.SPARSE_NEGATIVE, DataType.SPARSE_FLOAT_VECTOR)
    if not filter_keys:  # else the metadata is in the dynamic field
        schema.add_field(layout.META, DataType.JSON)
    if has_aux(spec, bounds_in_meta):
        schema.add_field(layout.AUX, DataType.JSON)
    document: dict[str, Any] = {"nullable": True} if engine.nullable_documents else {}
    schema.add_field(layout.DOCUMENT, DataType.VARCHAR, max_length=layout.DOCUMENT_MAX_BYTES,
                     **document)
    return schema


CATALOG_NAME = "name"
CATALOG_SPEC = "spec"
_CATALOG_VECTOR = "v"
SPEC_MAX_BYTES = 65_535


def catalog_schema(client: Any) -> tuple[Any, Any]:
    """The schema and index of :data:`CATALOG` (a name, its spec as JSON, and the vector
    field every Milvus collection must have)."""
    from pymilvus import DataType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field(CATALOG_NAME, DataType.VARCHAR, is_primary=True, max_length=256)
    schema.add_field(CATALOG_SPEC, DataType.VARCHAR, max_length=SPEC_MAX_BYTES)
    schema.add_field(_CATALOG_VECTOR, DataType.FLOAT_VECTOR, dim=2)
    index_params = client.prepare_index_params()
    index_params.add_index(_CATALOG_VECTOR, index_type="FLAT", metric_type="L2")
    return schema, index_params


def catalog_row(spec: IndexSpec) -> dict[str, Any]:
    text = spec_to_json(spec)
    if len(text.encode("utf-8")) > SPEC_MAX_BYTES:
        raise ValidationError(f"the index spec is over {SPEC_MAX_BYTES} bytes as JSON")
    return {CATALOG_NAME: spec.name, CATALOG_SPEC: text, _CATALOG_VECTOR: [0.0, 0.0]}


def build_index_params(client: Any, spec: IndexSpec) -> Any:
    index_type, params = native_index_params(spec)
    index_params = client.prepare_index_params()
    index_params.add_index(layout.VECTOR, index_type=index_type,
                           metric_type=MILVUS_METRICS[spec.metric], params=params)
    if spec.sparse:
        for field in (layout.SPARSE, layout.SPARSE_NEGATIVE):
            index_params.add_index(field, index_type="SPARSE_INVERTED_INDEX", metric_type="IP")
    return index_params


__all__ = [
    "CATALOG",
    "CATALOG_NAME",
    "CATALOG_SPEC",
    "MILVUS_METRICS",
    "SPEC_PROPERTY",
    "build_index_params",
    "build_schema",
    "catalog_row",
    "catalog_schema",
    "native_index_params",
    "new_layout",
    "spec_from_json",
    "spec_to_json",
]

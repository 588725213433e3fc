"""Names between vectorport and Pinecone, and what counts as a vectorport index.

Index names: Pinecone has no ``_`` and canonical names have no ``-`` (CONTRACT §1), so
``_`` ↔ ``-`` is one-to-one. Namespaces pass through, except that Pinecone reports its
default namespace as ``__default__``. An index is a Pinecone *vector* index: a schema
with the reserved ``_values`` dense field and, for sparse indexes, ``_sparse_values``.
"""

from __future__ import annotations

from typing import Any

from vectorport.adapterkit import BackendError, IndexSpec, Metric

DEFAULT_NAMESPACE_NAMES = frozenset({"", "__default__"})


def user_namespace(wire: str) -> str:
    """A namespace as Pinecone reports it (the default one is ``__default__``)."""
    return "" if wire in DEFAULT_NAMESPACE_NAMES else wire


def index_name_to_pinecone(name: str) -> str:
    return name.replace("_", "-")


def index_name_from_pinecone(name: str) -> str:
    return name.replace("-", "_")


def schema_fields(spec: IndexSpec) -> dict[str, Any]:
    fields: dict[str, Any] = {"_values": {
        "type": "dense_vector", "dimension": spec.dimension, "metric": spec.metric}}
    if spec.sparse:
        fields["_sparse_values"] = {"type": "sparse_vector"}
    return fields


def is_vector_index(model: Any) -> bool:
    fields = getattr(getattr(model, "schema", None), "fields", None) or {}
    return "_values" in fields and set(fields) <= {"_values", "_sparse_values"}


def spec_from_model(name: str, model: Any) -> IndexSpec:
    if not is_vector_index(model):
        fields = sorted(getattr(model.schema, "fields", {}) or {})
        raise BackendError(
            f"pinecone: index {name!r} is not a vector index (schema fields {fields}); "
            "vectorport uses indexes with the '_values' dense field"
        )
    dense = model.schema.fields["_values"]
    metric: Metric = dense.metric
    return IndexSpec(name=name, dimension=int(dense.dimension), metric=metric,
                     sparse="_sparse_values" in model.schema.fields)


def same_stored(one: IndexSpec, other: IndexSpec) -> bool:
    """Whether two specs are one index as Pinecone describes it: its schema holds the
    dimension, metric and sparse field, not the creation's backend options."""
    return (one.name, one.dimension, one.metric, one.sparse) == (
        other.name, other.dimension, other.metric, other.sparse)


__all__ = [
    "index_name_from_pinecone",
    "index_name_to_pinecone",
    "is_vector_index",
    "same_stored",
    "schema_fields",
    "spec_from_model",
    "user_namespace",
]

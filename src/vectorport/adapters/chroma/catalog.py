"""The index spec as Chroma collection metadata.

An index's catalog collection (see :mod:`.naming`) carries ``vectorport:kind = "index"``
and the spec as JSON in ``vectorport:spec``: dimension, metric, sparse flag, index type
and parameters, so ``describe_index`` gives back what ``create_index`` was given (the
``backend_options`` of other backends are not kept; the ``chroma`` section takes no keys).
Data collections carry ``vectorport:kind = "namespace"`` with their index and namespace,
for anyone looking at the Chroma database directly.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from vectorport.core.types import IndexSpec

KIND_KEY = "vectorport:kind"
SPEC_KEY = "vectorport:spec"
INDEX_KEY = "vectorport:index"
NAMESPACE_KEY = "vectorport:namespace"
SPEC_VERSION = 1


def catalog_metadata(spec: IndexSpec) -> dict[str, Any]:
    return {KIND_KEY: "index", SPEC_KEY: spec_to_json(spec)}


def data_metadata(index: str, namespace: str) -> dict[str, Any]:
    return {KIND_KEY: "namespace", INDEX_KEY: index, NAMESPACE_KEY: namespace}


def is_catalog(metadata: Mapping[str, Any] | None) -> bool:
    """Whether a collection with this metadata is a vectorport catalog (and not someone
    else's collection that happens to have such a name)."""
    if not metadata:
        return False
    return metadata.get(KIND_KEY) == "index" and SPEC_KEY in metadata


def spec_of(metadata: Mapping[str, Any]) -> IndexSpec:
    return spec_from_json(str(metadata[SPEC_KEY]))


def spec_to_json(spec: IndexSpec) -> str:
    return json.dumps({
        "version": SPEC_VERSION,
        "name": spec.name,
        "dimension": spec.dimension,
        "metric": spec.metric,
        "sparse": spec.sparse,
        "index_type": spec.index_type,
        "index_params": dict(spec.index_params),
    }, sort_keys=True)


def spec_from_json(text: str) -> IndexSpec:
    data = json.loads(text)
    return IndexSpec(
        name=data["name"],
        dimension=int(data["dimension"]),
        metric=data["metric"],
        sparse=bool(data["sparse"]),
        index_type=data["index_type"],
        index_params={str(k): int(v) for k, v in data["index_params"].items()},
    )


__all__ = ["catalog_metadata", "data_metadata", "is_catalog", "spec_from_json", "spec_of",
           "spec_to_json"]

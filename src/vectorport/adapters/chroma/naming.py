"""Index and namespace names ↔ Chroma collection names.

Chroma collection names must be 3–512 characters of ``[a-zA-Z0-9._-]``, start and end
with a letter or digit, hold no ``..`` and not look like an IPv4 address. Every
vectorport index owns:

- one *catalog* collection ``<index>.vp``: no records, its metadata holds the index
  spec, so an index exists (and round-trips through ``describe_index``) even with no data;
- one *data* collection per namespace ``<index>.vp.ns-<escaped namespace>-data``.

Index names (``^[a-z][a-z0-9_]{2,44}$``) hold no ``.``, so the text before the first
``.`` is always the index, and no index's collections can be mistaken for another's.
Namespaces (``^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$``, or ``""``) may hold ``..`` or end in
``.``/``-``, which Chroma refuses, so they are escaped with ``_`` as the escape
character: ``_`` → ``__`` and ``.`` → ``_d``. The escape is a prefix code (readable for
ordinary names: ``tenant-42`` stays ``tenant-42``), hence one-to-one, and its output
has no ``.`` at all. The fixed ``-data`` suffix makes every name end in a letter; the
longest name is well under 512 characters.

**Catalog.** The index spec as Chroma collection metadata.

An index's catalog collection (see :mod:`.naming`) carries ``vectorport:kind = "index"``
and the spec as JSON in ``vectorport:spec``: dimension, metric, sparse flag, index type
and parameters, so ``describe_index`` gives back what ``create_index`` was given (the
``backend_options`` of other backends are not kept; the ``chroma`` section takes no keys).
Data collections carry ``vectorport:kind = "namespace"`` with their index and namespace,
for anyone looking at the Chroma database directly, and ``vectorport:layout``, the way
their records keep keys and kinds (:mod:`.layout`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from vectorport.adapterkit import IndexSpec
from vectorport.adapters.chroma import written
from vectorport.adapters.chroma.layout import CURRENT, LAYOUT_KEY

CATALOG_SUFFIX = ".vp"
DATA_INFIX = ".vp.ns-"
DATA_SUFFIX = "-data"


def catalog_collection(index: str) -> str:
    """The collection that holds ``index``'s spec (and no records)."""
    return f"{index}{CATALOG_SUFFIX}"


@functools.lru_cache(maxsize=4096)
def data_collection(index: str, namespace: str) -> str:
    """The collection that holds ``index``'s records in ``namespace`` (memoised: it is
    on every query's path, and the escaping is the larger part of it)."""
    return f"{index}{DATA_INFIX}{escape_namespace(namespace)}{DATA_SUFFIX}"


def data_prefix(index: str) -> str:
    """What every data collection of ``index`` (and no other index) starts with."""
    return f"{index}{DATA_INFIX}"


def index_of_catalog(collection: str) -> str | None:
    """The index whose catalog this collection is, or ``None`` for any other name."""
    if not collection.endswith(CATALOG_SUFFIX):
        return None
    index = collection[: -len(CATALOG_SUFFIX)]
    return index if index and "." not in index else None


def namespace_of_data(index: str, collection: str) -> str | None:
    """The namespace of one of ``index``'s data collections, or ``None`` if it is not one."""
    prefix = data_prefix(index)
    if not (collection.startswith(prefix) and collection.endswith(DATA_SUFFIX)):
        return None
    if len(collection) < len(prefix) + len(DATA_SUFFIX):
        return None
    return unescape_namespace(collection[len(prefix): len(collection) - len(DATA_SUFFIX)])


def escape_namespace(namespace: str) -> str:
    return namespace.replace("_", "__").replace(".", "_d")


def unescape_namespace(escaped: str) -> str | None:
    """The inverse of :func:`escape_namespace`; ``None`` for text it never produces."""
    out: list[str] = []
    i = 0
    while i < len(escaped):
        char = escaped[i]
        if char == ".":
            return None
        if char != "_":
            out.append(char)
            i += 1
            continue
        following = escaped[i + 1: i + 2]
        if following == "_":
            out.append("_")
        elif following == "d":
            out.append(".")
        else:
            return None
        i += 2
    return "".join(out)


KIND_KEY = "vectorport:kind"
SPEC_KEY = "vectorport:spec"
INDEX_KEY = "vectorport:index"
NAMESPACE_KEY = "vectorport:namespace"
SPEC_VERSION = 1


def catalog_metadata(spec: IndexSpec) -> dict[str, Any]:
    return {KIND_KEY: "index", SPEC_KEY: spec_to_json(spec)}


def data_metadata(index: str, namespace: str) -> dict[str, Any]:
    """A new data collection's metadata, with the layout its records are written in."""
    return {KIND_KEY: "namespace", INDEX_KEY: index, NAMESPACE_KEY: namespace,
            LAYOUT_KEY: CURRENT.version, **written.initial()}


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


def same_stored(one: IndexSpec, other: IndexSpec) -> bool:
    """Whether two specs are one index as a catalog stores it (no backend options)."""
    return one == other or spec_to_json(one) == spec_to_json(other)


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


__all__ = [
    "catalog_collection",
    "catalog_metadata",
    "data_collection",
    "data_metadata",
    "data_prefix",
    "escape_namespace",
    "index_of_catalog",
    "is_catalog",
    "namespace_of_data",
    "spec_from_json",
    "spec_of",
    "spec_to_json",
    "unescape_namespace",
]

"""Which collection a name reaches now, as far as this process can tell without a
request: the token that lets a kept ``Index`` notice that its collection was dropped,
and perhaps created again under its name, through any client of the process.

pymilvus keeps one describe result per (server, database, collection) for the whole
process (its schema cache), reads it for every upsert, and drops it when any client of
the process drops or alters that collection (or when a server reports a schema
mismatch). The cached dict object is therefore a generation token: the adapter keeps
the object it saw when it read an index's spec, and another object (or none) means
the collection may have changed since, so the spec is read again. Identity, not
content: milvus-lite 3 gives every collection id 0 and no creation time, so the ids a
describe returns cannot tell a re-created collection from the old one there.

A pymilvus without this cache (the one milvus-lite 2 installs may differ) gives no
token (``None``): handles are then checked against deletes through this store, reads
of the spec and engine failures only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vectorport.adapters.milvus.errors import translated


class SchemaTokens:
    """pymilvus' cached schema of a collection, read through one ``MilvusClient``."""

    def __init__(self, client: Any, timeout: Callable[[], dict[str, float]]) -> None:
        self._client = client
        self._timeout = timeout  # the adapter's per-call ``timeout=``

    def current(self, collection: str) -> object | None:
        """The cached schema object of ``collection`` (described and cached on a miss,
        as pymilvus' own upsert would), or ``None`` if this pymilvus keeps none."""
        getter = getattr(self._client._get_connection(), "_get_schema", None)
        if getter is None:
            return None
        with translated("describe_collection", collection):
            found = getter(collection, **self._timeout())
        schema: object = found[0] if isinstance(found, tuple) else found
        return schema


__all__ = ["SchemaTokens"]

"""Registers the ``qdrant`` adapter: ``qdrant://host:6333`` / ``qdrants://`` (a Qdrant
server), ``qdrant+local:///path`` / ``qdrant+memory://`` (qdrant-client's local mode)
and ``qdrant+edge:///path`` (Qdrant Edge, the Rust engine embedded)."""

from collections.abc import Callable

import vectorport
from vectorport.adapters.qdrant.capabilities import QDRANT_CAPABILITIES


@vectorport.hookimpl
def vectorport_register_adapters(register: Callable[[vectorport.AdapterEntry], None]) -> None:
    register(vectorport.AdapterEntry(
        name="qdrant",
        schemes=("qdrant", "qdrants", "qdrant+local", "qdrant+memory", "qdrant+edge"),
        adapter="vectorport.adapters.qdrant.adapter:QdrantAdapter",
        capabilities=QDRANT_CAPABILITIES,
        summary="Qdrant: qdrant://host:6333 (server), qdrant+edge:///dir (Qdrant Edge), "
                "qdrant+local:///dir or qdrant+memory:// (qdrant-client local mode)",
        requires=("qdrant_client",),
        extra="qdrant",
        sdk_distributions=("qdrant-client", "qdrant-edge-py"),
        query_tool_keys={"consistency": "consistency", "ef": "ef", "hnsw_ef": "ef"},
        test_launcher="vectorport.testing.launchers:qdrant",
    ))

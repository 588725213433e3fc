"""Registers the ``qdrant`` adapter: ``qdrant://host:6333`` / ``qdrants://`` (a Qdrant
server), ``qdrant+local:///path`` / ``qdrant+memory://`` (qdrant-client's local mode)
and ``qdrant+edge:///path`` (Qdrant Edge, the Rust engine embedded)."""

from vectorport.adapters.qdrant.capabilities import QDRANT_CAPABILITIES
from vectorport.core.registry import AdapterEntry, register_adapter_function

vectorport_register_adapters = register_adapter_function(
    lambda: AdapterEntry(
        name="qdrant",
        schemes=("qdrant", "qdrants", "qdrant+local", "qdrant+memory", "qdrant+edge"),
        adapter="vectorport.adapters.qdrant.adapter:QdrantAdapter",
        capabilities=QDRANT_CAPABILITIES,
        summary="Qdrant: qdrant://host:6333 (server), qdrant+edge:///dir (Qdrant Edge), "
                "qdrant+local:///dir or qdrant+memory:// (qdrant-client local mode)",
        requires=("qdrant_client",),
        extra="qdrant",
    )
)

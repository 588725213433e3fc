"""Registers the ``chroma`` adapter (``chroma:///path``, ``chroma+memory://``,
``chroma+http://host:port``, ``chroma+https://host:port``)."""

from vectorport.adapters.chroma.capabilities import CHROMA_CAPABILITIES
from vectorport.core.registry import AdapterEntry, register_adapter_function

vectorport_register_adapters = register_adapter_function(
    lambda: AdapterEntry(
        name="chroma",
        schemes=("chroma", "chroma+memory", "chroma+http", "chroma+https"),
        adapter="vectorport.adapters.chroma.adapter:ChromaAdapter",
        capabilities=CHROMA_CAPABILITIES,
        summary="Chroma 1.x: persistent chroma:///path, in-memory, or a server over HTTP",
        requires=("chromadb",),
        extra="chroma",
    )
)

"""Registers the ``milvus`` adapter: ``milvus:///path/file.db`` (milvus-lite, a local
file), ``milvus://host:port`` and ``milvus+https://host:port`` (a Milvus server)."""

from vectorport.adapters.milvus.capabilities import MILVUS_CAPABILITIES
from vectorport.core.registry import AdapterEntry, register_adapter_function

vectorport_register_adapters = register_adapter_function(
    lambda: AdapterEntry(
        name="milvus",
        schemes=("milvus", "milvus+http", "milvus+https"),
        adapter="vectorport.adapters.milvus.adapter:MilvusAdapter",
        capabilities=MILVUS_CAPABILITIES,
        summary="Milvus through pymilvus: milvus:///file.db (milvus-lite) or milvus://host:port",
        requires=("pymilvus",),
        extra="milvus",
    )
)

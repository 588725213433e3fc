"""Registers the ``milvus`` adapter: ``milvus:///path/file.db`` (milvus-lite, a local
file), ``milvus://host:port`` and ``milvus+https://host:port`` (a Milvus server)."""

from collections.abc import Callable

import vectorport
from vectorport.adapters.milvus.capabilities import MILVUS_CAPABILITIES


@vectorport.hookimpl
def vectorport_register_adapters(register: Callable[[vectorport.AdapterEntry], None]) -> None:
    register(vectorport.AdapterEntry(
        name="milvus",
        schemes=("milvus", "milvus+http", "milvus+https"),
        adapter="vectorport.adapters.milvus.adapter:MilvusAdapter",
        capabilities=MILVUS_CAPABILITIES,
        summary="Milvus through pymilvus: milvus:///file.db (milvus-lite) or milvus://host:port",
        requires=("pymilvus",),
        extra="milvus",
        sdk_distributions=("pymilvus", "milvus-lite"),
        query_tool_keys={"consistency": "consistency", "ef": "ef", "nprobe": "probes"},
        test_launcher="vectorport.testing.launchers:milvus",
    ))

"""Registers the ``lancedb`` adapter: ``lancedb:///path`` (embedded, a folder) and
``db://database?api_key_env=VAR`` (LanceDB Cloud / Enterprise)."""

from vectorport.adapters.lancedb.capabilities import LANCEDB_CAPABILITIES
from vectorport.core.registry import AdapterEntry, register_adapter_function

vectorport_register_adapters = register_adapter_function(
    lambda: AdapterEntry(
        name="lancedb",
        schemes=("lancedb", "db"),
        adapter="vectorport.adapters.lancedb.adapter:LanceDBAdapter",
        capabilities=LANCEDB_CAPABILITIES,
        summary="LanceDB: lancedb:///path (embedded) or db://name?api_key_env=VAR (Cloud)",
        requires=("lancedb", "pyarrow"),
        extra="lancedb",
    )
)

"""Registers the ``local`` adapter (``memory://`` and ``local:///path``)."""

from vectorport.adapters.local.capabilities import LOCAL_CAPABILITIES
from vectorport.core.registry import AdapterEntry, register_adapter_function

vectorport_register_adapters = register_adapter_function(
    lambda: AdapterEntry(
        name="local",
        schemes=("local", "memory"),
        adapter="vectorport.adapters.local.adapter:LocalAdapter",
        capabilities=LOCAL_CAPABILITIES,
        summary="exact search in process; memory:// or durable local:///path (SQLite)",
    )
)

"""Registers the ``turbopuffer`` adapter (``turbopuffer://?region=…``)."""

from vectorport.adapters.turbopuffer.capabilities import TURBOPUFFER_CAPABILITIES
from vectorport.core.registry import AdapterEntry, register_adapter_function

vectorport_register_adapters = register_adapter_function(
    lambda: AdapterEntry(
        name="turbopuffer",
        schemes=("turbopuffer",),
        adapter="vectorport.adapters.turbopuffer.adapter:TurbopufferAdapter",
        capabilities=TURBOPUFFER_CAPABILITIES,
        summary="turbopuffer (hosted), through the official SDK; base_url= for the emulator",
        requires=("turbopuffer",),
        extra="turbopuffer",
    )
)

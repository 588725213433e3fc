"""Registers the ``turbopuffer`` adapter (``turbopuffer://?region=…``)."""

from collections.abc import Callable

import vectorport
from vectorport.adapters.turbopuffer.capabilities import TURBOPUFFER_CAPABILITIES


@vectorport.hookimpl
def vectorport_register_adapters(register: Callable[[vectorport.AdapterEntry], None]) -> None:
    register(vectorport.AdapterEntry(
        name="turbopuffer",
        schemes=("turbopuffer",),
        adapter="vectorport.adapters.turbopuffer.adapter:TurbopufferAdapter",
        capabilities=TURBOPUFFER_CAPABILITIES,
        summary="turbopuffer (hosted), through the official SDK; base_url= for the emulator",
        requires=("turbopuffer",),
        extra="turbopuffer",
        sdk_distributions=("turbopuffer",),
        query_tool_keys={"consistency": "consistency"},
        test_launcher="vectorport.testing.launchers:turbopuffer",
    ))

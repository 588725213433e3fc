"""Registers the ``local`` adapter (``memory://`` and ``local:///path``)."""

from collections.abc import Callable

import vectorport
from vectorport.adapters.local.capabilities import LOCAL_CAPABILITIES


@vectorport.hookimpl
def vectorport_register_adapters(register: Callable[[vectorport.AdapterEntry], None]) -> None:
    register(vectorport.AdapterEntry(
        name="local",
        schemes=("local", "memory"),
        adapter="vectorport.adapters.local.adapter:LocalAdapter",
        capabilities=LOCAL_CAPABILITIES,
        summary="exact search in process; memory:// or durable local:///path (SQLite)",
        query_tool_keys={},
        test_launcher="vectorport.testing.launchers:local",
    ))

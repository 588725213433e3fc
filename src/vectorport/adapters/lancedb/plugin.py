"""Registers the ``lancedb`` adapter: ``lancedb:///path`` (embedded, a folder) and
``db://database?api_key_env=VAR`` (LanceDB Cloud / Enterprise)."""

from collections.abc import Callable

import vectorport
from vectorport.adapters.lancedb.capabilities import LANCEDB_CAPABILITIES


@vectorport.hookimpl
def vectorport_register_adapters(register: Callable[[vectorport.AdapterEntry], None]) -> None:
    register(vectorport.AdapterEntry(
        name="lancedb",
        schemes=("lancedb", "db"),
        adapter="vectorport.adapters.lancedb.adapter:LanceDBAdapter",
        capabilities=LANCEDB_CAPABILITIES,
        summary="LanceDB: lancedb:///path (embedded) or db://name?api_key_env=VAR (Cloud)",
        requires=("lancedb", "pyarrow"),
        extra="lancedb",
        sdk_distributions=("lancedb", "pyarrow"),
        query_tool_keys={"consistency": "consistency", "ef": "ef", "nprobes": "probes"},
        test_launcher="vectorport.testing.launchers:lancedb",
    ))

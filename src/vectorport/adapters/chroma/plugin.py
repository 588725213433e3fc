"""Registers the ``chroma`` adapter (``chroma:///path``, ``chroma+memory://``,
``chroma+http://host:port``, ``chroma+https://host:port``)."""

from collections.abc import Callable

import vectorport
from vectorport.adapters.chroma.capabilities import CHROMA_CAPABILITIES


@vectorport.hookimpl
def vectorport_register_adapters(register: Callable[[vectorport.AdapterEntry], None]) -> None:
    register(vectorport.AdapterEntry(
        name="chroma",
        schemes=("chroma", "chroma+memory", "chroma+http", "chroma+https"),
        adapter="vectorport.adapters.chroma.adapter:ChromaAdapter",
        capabilities=CHROMA_CAPABILITIES,
        summary="Chroma 1.x: persistent chroma:///path, in-memory, or a server over HTTP",
        requires=("chromadb",),
        extra="chroma",
        sdk_distributions=("chromadb",),
        query_tool_keys={"where": "filter", "where_document": "backend:where_document"},
        test_launcher="vectorport.testing.launchers:chroma",
    ))

"""Registers the ``pinecone`` adapter: ``pinecone://?api_key_env=PINECONE_API_KEY``
(the hosted service) or ``pinecone://?api_key_env=…&host=http://127.0.0.1:5081`` (a local
emulator or a private control-plane endpoint)."""

from collections.abc import Callable

import vectorport
from vectorport.adapters.pinecone.capabilities import PINECONE_CAPABILITIES


@vectorport.hookimpl
def vectorport_register_adapters(register: Callable[[vectorport.AdapterEntry], None]) -> None:
    register(vectorport.AdapterEntry(
        name="pinecone",
        schemes=("pinecone",),
        adapter="vectorport.adapters.pinecone.adapter:PineconeAdapter",
        capabilities=PINECONE_CAPABILITIES,
        summary="Pinecone through the official SDK: pinecone://?api_key_env=PINECONE_API_KEY",
        requires=("pinecone",),
        extra="pinecone",
        sdk_distributions=("pinecone",),
        query_tool_keys={"sparse_vector": "sparse"},
        test_launcher="vectorport.testing.launchers:pinecone",
    ))

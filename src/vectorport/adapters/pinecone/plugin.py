"""Registers the ``pinecone`` adapter: ``pinecone://?api_key_env=PINECONE_API_KEY``
(the hosted service) or ``pinecone://?api_key_env=…&host=http://127.0.0.1:5081`` (a local
emulator or a private control-plane endpoint)."""

from vectorport.adapters.pinecone.capabilities import PINECONE_CAPABILITIES
from vectorport.core.registry import AdapterEntry, register_adapter_function

vectorport_register_adapters = register_adapter_function(
    lambda: AdapterEntry(
        name="pinecone",
        schemes=("pinecone",),
        adapter="vectorport.adapters.pinecone.adapter:PineconeAdapter",
        capabilities=PINECONE_CAPABILITIES,
        summary="Pinecone through the official SDK: pinecone://?api_key_env=PINECONE_API_KEY",
        requires=("pinecone",),
        extra="pinecone",
    )
)

"""A vector store per tenant, picked from the request context (Mastra's "Dynamic
Vector Store for Multi-Tenant Applications").

The resolver receives the request context and returns the tenant's store (cached); the
tool refuses to run when the context names no tenant. Each tenant here has its own
durable store in a temporary folder, standing in for a schema or database per tenant.
The resolver may also be async, with ``aexecute``.

Run: python examples/query_tool/multi_tenant.py
"""

import asyncio
import tempfile
from pathlib import Path

from _corpus import EMBEDDER, load

import vectorport
from vectorport.agent import RequestContext, create_vector_query_tool

TENANT_DOCS = {
    "acme-corp": [("acme-1", "Acme company policies: remote work is allowed on Fridays.",
                   {"category": "policy"})],
    "globex": [("globex-1", "Globex company policies: everyone works from the office.",
                {"category": "policy"})],
}

folder = tempfile.TemporaryDirectory()
vector_store_cache: dict[str, vectorport.Store] = {}


def vector_store_resolver(request_context: RequestContext) -> vectorport.Store:
    tenant_id = request_context.get("tenant_id")
    if not tenant_id:
        raise ValueError("tenant_id is required in request context")
    if tenant_id not in vector_store_cache:  # return the cached instance or create one
        store = vectorport.connect(f"local://{Path(folder.name) / tenant_id}.db")
        if not store.has_index("embeddings"):
            load(store.create_index("embeddings", dimension=EMBEDDER.dimension),
                 TENANT_DOCS.get(tenant_id, []))
        vector_store_cache[tenant_id] = store
    return vector_store_cache[tenant_id]


vector_query_tool = create_vector_query_tool(
    index_name="embeddings",
    model=EMBEDDER,
    vector_store=vector_store_resolver,  # dynamic resolution!
)

for tenant in ("acme-corp", "globex"):
    request_context = RequestContext()
    request_context.set("tenant_id", tenant)
    result = vector_query_tool.execute({"query_text": "company policies", "top_k": 5},
                                       request_context=request_context)
    print(f"{tenant}: {[s.id for s in result.sources]}  {result.relevant_context!r}")
    assert all(s.id.startswith(tenant.split("-")[0]) for s in result.sources)

try:
    vector_query_tool.execute({"query_text": "company policies"}, RequestContext())
except vectorport.ConfigError as exc:
    print("no tenant:", exc)


async def async_resolver(request_context: RequestContext) -> vectorport.Store:
    await asyncio.sleep(0)  # e.g. look the tenant's connection string up
    return vector_store_resolver(request_context)


async_tool = create_vector_query_tool(index_name="embeddings", model=EMBEDDER,
                                      vector_store=async_resolver)
result = asyncio.run(async_tool.aexecute({"query_text": "company policies", "top_k": 5},
                                         RequestContext(tenant_id="globex")))
print("async, globex:", [s.id for s in result.sources])
assert [s.id for s in result.sources] == ["globex-1"]

for store in vector_store_cache.values():
    store.close()
folder.cleanup()
print("ok")

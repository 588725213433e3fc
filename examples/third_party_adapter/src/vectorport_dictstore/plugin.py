"""The plugin module named in the ``vectorport`` entry point."""

from collections.abc import Callable

import vectorport
from vectorport import AdapterEntry, Capabilities

CAPABILITIES = Capabilities(
    metrics=frozenset({"cosine", "euclidean"}),
    filter_operators=frozenset(
        {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$and", "$or"}
    ),
    sparse=False,
    documents=True,
    max_top_k=1000,
    max_batch_size=100,
)


@vectorport.hookimpl
def vectorport_register_adapters(register: Callable[[AdapterEntry], None]) -> None:
    register(AdapterEntry(
        name="dictstore",
        schemes=("dictstore",),
        adapter="vectorport_dictstore.adapter:DictStoreAdapter",
        capabilities=CAPABILITIES,
        summary="example third-party adapter: a dict in memory",
    ))

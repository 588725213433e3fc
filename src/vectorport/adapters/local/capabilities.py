"""What the reference adapter declares: everything in the contract, exactly."""

from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities

LOCAL_CAPABILITIES = Capabilities(
    filter_operators=ALL_FILTER_OPERATORS,
    sparse=True,
    hybrid="sum",
    hints=frozenset(),  # exact search: there is no ANN structure for a hint to tune
    consistency=frozenset({"strong", "eventual"}),
    index_types=frozenset({"auto", "flat"}),
    documents=True,
    patch=True,
    list_ids=True,
    max_dimension=65_536,
    max_top_k=10_000,
    max_batch_size=10_000,
)

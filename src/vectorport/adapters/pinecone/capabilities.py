"""What the pinecone adapter declares (CONTRACT §7), and why each limit is what it is."""

from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities

PINECONE_CAPABILITIES = Capabilities(
    # Every operator compiles, a few shapes excepted (string ranges, numbers beyond 2^53:
    # see filters.py), which raise UnsupportedFeatureError at compile time.
    filter_operators=ALL_FILTER_OPERATORS,
    sparse=True,  # on dotproduct indexes only; create_index refuses the other metrics
    hybrid="sum",  # Pinecone scores dense + sparse natively
    hints=frozenset(),  # Pinecone has no per-query ef / probes
    consistency=frozenset({"strong", "eventual"}),  # strong: bounded wait on the LSN
    index_types=frozenset({"auto"}),
    documents=True,  # under a reserved metadata key
    patch=False,  # Pinecone's update cannot remove metadata keys: no exact native patch
    list_ids=True,  # native listing by prefix, in id order (without a filter)
    max_dimension=20_000,
    max_top_k=10_000,
    max_batch_size=1_000,  # records per upsert request; the adapter also splits by size
    # Pinecone holds 40 KB per record; 4 KB stay for the document's and the type
    # information's reserved keys (the adapter checks the total before sending).
    max_metadata_bytes=36 * 1024,
    write_concurrency=4,
)

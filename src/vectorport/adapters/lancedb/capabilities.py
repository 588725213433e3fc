"""What the lancedb adapter declares, each item proved on embedded LanceDB by the
conformance suite and ``tests/backends/lancedb/``."""

from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities

LANCEDB_CAPABILITIES = Capabilities(
    filter_operators=ALL_FILTER_OPERATORS,  # every node compiles exactly (filters.py)
    sparse=False,  # LanceDB has no sparse vector type or sparse search
    hybrid="none",  # its "hybrid" is dense + full-text with rank fusion, not dense+sparse
    hints=frozenset({"ef", "probes"}),  # ef → HNSW ef, probes → IVF nprobes
    consistency=frozenset({"strong", "eventual"}),  # every read checks the latest
    # version (read_consistency_interval=0); "eventual" is served the same way
    index_types=frozenset({"auto", "flat", "ivf", "hnsw"}),
    documents=True,
    patch=False,  # a patch would be read-modify-write of one row: not atomic across
    # processes, so the generic layer does it and says so
    list_ids=True,
    delete_by_filter=True,
    count_by_filter=True,
    max_dimension=16_000,
    max_top_k=10_000,
    max_batch_size=1_000,
    max_metadata_bytes=40 * 1024,
)

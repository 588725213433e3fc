"""What the pgvector adapter declares: the whole contract, proven by the conformance
suite on a real PostgreSQL with pgvector."""

import dataclasses

from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities, Limits

SPARSE_DIMENSIONS = 1_000_000_000
"""pgvector's largest ``sparsevec`` dimension: every stored and query sparse vector
uses it, so an index must be below it."""
SPARSE_MAX_NONZERO = 16_000
"""pgvector stores at most 16,000 non-zero elements in a ``sparsevec``."""

PGVECTOR_LIMITS = Limits(
    allow_nul=False,  # PostgreSQL text and jsonb cannot hold \u0000
    max_sparse_entries=SPARSE_MAX_NONZERO,
    max_sparse_index=SPARSE_DIMENSIONS - 1,
)

HALFVEC_MAX = 65504.0
"""The largest finite float16: a ``halfvec`` cannot hold a component beyond ±65504."""

HALFVEC_LIMITS = dataclasses.replace(PGVECTOR_LIMITS, max_abs_value=HALFVEC_MAX)
"""The limits of an index created with ``vector_type: halfvec`` (``index_limits``)."""

PGVECTOR_CAPABILITIES = Capabilities(
    filter_operators=ALL_FILTER_OPERATORS,
    sparse=True,
    hybrid="sum",
    hints=frozenset({"ef", "probes"}),
    consistency=frozenset({"strong", "eventual"}),
    index_types=frozenset({"auto", "flat", "hnsw", "ivf"}),
    documents=True,
    patch=True,
    list_ids=True,
    delete_by_filter=True,
    count_by_filter=True,
    native_async=True,
    max_dimension=16_000,  # pgvector's vector/halfvec limit; ANN indexes: 2,000 / 4,000
    max_top_k=10_000,
    max_batch_size=5_000,
    write_concurrency=2,
    limits=PGVECTOR_LIMITS,
)

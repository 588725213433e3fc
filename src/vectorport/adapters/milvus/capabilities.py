"""What the milvus adapter declares on the current engine line (Milvus servers,
milvus-lite 3), each item proved on milvus-lite 3 by the conformance suite and
``tests/backends/milvus/``. milvus-lite 2 declares less: see :mod:`.engine_line`."""

from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities, Limits

DOCUMENT_MAX_BYTES = 65_535
"""The largest VARCHAR Milvus declares: documents are one such field."""

MILVUS_LIMITS = Limits(max_document_bytes=DOCUMENT_MAX_BYTES)

MILVUS_MAX_TOP_K = 16_384
"""Milvus caps ``limit`` (and ``limit + offset``) of a search at 16,384."""

MILVUS_CAPABILITIES = Capabilities(
    filter_operators=ALL_FILTER_OPERATORS,
    sparse=True,
    hybrid="sum",  # two native searches, exact rescoring and a proven bound (see ranking.py)
    hints=frozenset({"ef", "probes"}),
    consistency=frozenset({"strong", "eventual"}),
    index_types=frozenset({"auto", "flat", "hnsw", "ivf"}),
    documents=True,
    patch=False,  # a partial upsert replaces the whole JSON field: merging keys would be
    # a read-modify-write, not atomic, so it is not offered
    list_ids=True,
    delete_by_filter=True,
    count_by_filter=True,
    max_dimension=32_768,
    max_top_k=10_000,
    max_batch_size=500,
    max_metadata_bytes=40 * 1024,
    limits=MILVUS_LIMITS,
)

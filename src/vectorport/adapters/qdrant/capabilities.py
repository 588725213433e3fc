"""What the qdrant adapter declares (CONTRACT §7), per engine, and why.

Every item is proved by the conformance suite on the engine that declares it
(``tests/backends/qdrant/test_conformance.py``) and by ``tests/backends/qdrant/``.
"""

from __future__ import annotations

import dataclasses

from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities

QDRANT_CAPABILITIES = Capabilities(
    # Every operator compiles; string ranges and numbers of magnitude >= 2^53 raise
    # UnsupportedFeatureError at compile time (see filters.py).
    filter_operators=ALL_FILTER_OPERATORS,
    sparse=True,  # a named sparse vector: Qdrant scores it as the dot product
    hybrid="sum",  # two native searches, exact rescoring and a proven bound (ranking.py)
    hints=frozenset({"ef"}),  # hnsw_ef on the HNSW search
    # strong: writes wait for the engine (wait=True) and server reads ask every replica;
    # eventual: reads from one replica (the same on a single node)
    consistency=frozenset({"strong", "eventual"}),
    index_types=frozenset({"auto", "flat", "hnsw"}),  # flat: HNSW graph off (m=0)
    documents=True,  # under a reserved payload key
    patch=True,  # compare-and-swap on a revision token with Qdrant's conditional update
    list_ids=True,  # a scan sorted by id: Qdrant orders by numeric fields only
    delete_by_filter=True,
    count_by_filter=True,
    max_dimension=65_536,  # Qdrant's limit on a dense vector
    max_top_k=10_000,
    max_batch_size=1_000,  # the adapter also splits upserts by size (see adapter.py)
    max_metadata_bytes=40 * 1024,
)
"""A Qdrant server (and Qdrant Edge, which runs the same engine)."""

EDGE_CAPABILITIES = QDRANT_CAPABILITIES
"""Qdrant Edge: the server's engine embedded, so the same declaration (booleans are
matched through shadows, see naming.py, which changes no result)."""

LOCAL_CAPABILITIES = dataclasses.replace(QDRANT_CAPABILITIES, hints=frozenset())
"""qdrant-client local mode searches by brute force: ``hnsw_ef`` has no effect there,
so no hint is declared (an undeclared hint is refused by the facade)."""

__all__ = ["EDGE_CAPABILITIES", "LOCAL_CAPABILITIES", "QDRANT_CAPABILITIES"]

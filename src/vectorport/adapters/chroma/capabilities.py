"""What the chroma adapter declares, each item proven by the conformance suite and
``tests/backends/chroma/`` on the real engine (in process and through ``chroma run``).

- Every filter operator: Chroma's ``where`` plus exact rewrites (see ``filters.py``);
  string ranges are the one shape refused (a known deviation, not an undeclared operator).
- No sparse vectors: local Chroma has none ("not implemented").
- No search hints: ``ef_search`` is a property of a Chroma collection, not of a query.
  Changing it per query would be a write on every query, visible to every other
  reader of the collection; set it once with ``index_params={"ef_search": …}``.
- Strong consistency: Chroma answers a read after a write returned with that write,
  in process and through the server; "eventual" is accepted and served the same way.
- Patch: Chroma's ``update`` changes a record in place (one read first, to report a
  missing record and remove keys exactly). Id listing is not declared: Chroma lists ids
  in insertion order only, so an ordered, cursor-paged listing would read every id.
"""

from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities, Limits
from vectorport.core.types import METRICS

MAX_FILTER_TERMS = 900
"""Chroma evaluates a ``where`` in SQLite, whose expression trees are at most 1,000
deep: a ``$in`` of 988 values or an ``$or`` of 989 clauses fails there ("Expression
tree is too large"), measured on chromadb 1.x in process. 900 keeps a margin for the
rewrites of ``filters.py``."""

CHROMA_LIMITS = Limits(max_filter_terms=MAX_FILTER_TERMS)

CHROMA_CAPABILITIES = Capabilities(
    metrics=frozenset(METRICS),
    filter_operators=ALL_FILTER_OPERATORS,
    sparse=False,
    hybrid="none",
    hints=frozenset(),
    consistency=frozenset({"strong", "eventual"}),
    index_types=frozenset({"auto", "hnsw"}),
    documents=True,
    patch=True,
    list_ids=False,
    delete_by_filter=True,
    count_by_filter=True,
    native_async=False,
    max_dimension=16_000,
    max_top_k=10_000,
    max_batch_size=1_000,
    limits=CHROMA_LIMITS,
)

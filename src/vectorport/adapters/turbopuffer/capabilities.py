"""What the turbopuffer adapter declares, each item proven by the conformance suite.

- metrics: turbopuffer ranks by ``cosine_distance`` and ``euclidean_squared`` only; a dot
  product ranking cannot be derived from either, so ``dotproduct`` is not declared.
- every filter operator: the typed-column layout makes each one exact (see ``filters``).
- no sparse vectors or hybrid queries: turbopuffer's sparse type stores f16 weights under
  string keys, which cannot give the exact ``Σ q·x`` the contract asks for.
- no search hints: turbopuffer exposes no ``ef`` or ``probes``.
- both consistency levels, natively.
- limits: 10,752 dimensions; ``limit.total`` is at most 10,000 and the adapter asks for one
  row more than ``top_k`` to order ties at the cut exactly, hence 9,999.
"""

from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities, Limits

MAX_FILTERABLE_VALUE_BYTES = 4_096
"""turbopuffer indexes filterable string values of at most 4 KiB (its documented
limit); every metadata string is filterable, so each is held to it."""

TURBOPUFFER_LIMITS = Limits(max_string_bytes=MAX_FILTERABLE_VALUE_BYTES)

TURBOPUFFER_CAPABILITIES = Capabilities(
    metrics=frozenset({"cosine", "euclidean"}),
    filter_operators=ALL_FILTER_OPERATORS,
    sparse=False,
    hybrid="none",
    hints=frozenset(),
    consistency=frozenset({"strong", "eventual"}),
    index_types=frozenset({"auto"}),
    documents=True,
    patch=True,
    list_ids=True,
    delete_by_filter=True,
    count_by_filter=True,
    native_async=False,
    max_dimension=10_752,
    max_top_k=9_999,
    max_batch_size=1_000,
    max_metadata_bytes=40 * 1024,
    write_concurrency=4,
    limits=TURBOPUFFER_LIMITS,
)

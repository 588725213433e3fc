"""The adapter kit: what an adapter author imports, inside vectorport or outside it.

An adapter is a class implementing :class:`Adapter` (see its docstrings for the
contract between facade and adapter). Everything an adapter needs is re-exported here,
so third-party adapters import only ``vectorport`` and ``vectorport.adapterkit`` and
never reach into ``vectorport.core``, whose layout may change.

The helpers each solve one sub-problem that every adapter meets, once:

- :mod:`.ranking`: candidates complete under ties at the ``top_k`` cut, widening the
  engine search until settled (:func:`fetch_until_settled`) and decoding only what can
  make the cut (:func:`at_or_above_cut`), or, for adapters that
  rescore exactly (:func:`exact_scores`), over one or more ranked lists until a proven
  bound is beaten (:func:`threshold_top_k`, e.g. "sum" hybrid scoring);
- :mod:`.batching`: requests cut by count and by cost (:func:`batches`), repeated ids
  dropped (:func:`unique`);
- :mod:`.options`: declared URL, index and query options (:class:`OptionSpec`),
  checked once before any I/O with one error wording;
- :mod:`.errors`: SDK exceptions to vectorport errors (:class:`ErrorTranslator`), with
  :class:`RetryPolicy` for calls safe to repeat;
- :mod:`.filters`: a memoising base for filter compilers (:class:`FilterCompiler`);
- :mod:`.handles`: which ``Index`` handles still reach the index they were opened on
  (:class:`Handles`), so a handle kept across a delete raises ``IndexNotFoundError``;
- :mod:`.upkeep`: upkeep an embedded engine runs only when asked (index new rows,
  compact, vacuum), run by the writes that make it due when it fits in their deadline
  (:class:`UpkeepSchedule`);
- :mod:`.wire`: prefix ranges (:func:`prefix_upper_bound`), read-only float32
  vectors (:func:`read_only_float32`) and IndexSpecs as JSON (:func:`spec_to_json`).
"""

from vectorport.adapterkit.batching import batches, unique, url_cost
from vectorport.adapterkit.errors import (
    TRANSIENT_BUILTINS,
    ErrorKind,
    ErrorTranslator,
    retry_after,
)
from vectorport.adapterkit.filters import (
    FLOAT64_EXACT_LIMIT,
    FilterCompiler,
    Memo,
    check_exact_number,
    refuse_inexact_numbers,
)
from vectorport.adapterkit.handles import Handles, same_index, stale_error
from vectorport.adapterkit.options import Option, OptionSpec, matching, positive, within
from vectorport.adapterkit.ranking import (
    DenseScores,
    RankedList,
    at_or_above_cut,
    complete_at_cut,
    contract_order,
    exact_scores,
    fetch_many_until_settled,
    fetch_until_settled,
    first_ask,
    first_depth,
    float32_slack,
    scan_top_k,
    threshold_top_k,
)
from vectorport.adapterkit.upkeep import UpkeepSchedule, say_deferred, time_short
from vectorport.adapterkit.wire import (
    prefix_upper_bound,
    read_only_float32,
    spec_from_json,
    spec_to_json,
)
from vectorport.core.adapter import (
    Adapter,
    BatchQueryAdapter,
    BulkLoadingAdapter,
    ExplainingAdapter,
    IdListingAdapter,
    NativeAsyncAdapter,
    OptimizingAdapter,
    PatchableAdapter,
    ScanningAdapter,
    UpkeepDeferringAdapter,
)
from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities, Limits
from vectorport.core.config import ConnectionURL, Secret
from vectorport.core.errors import (
    BackendError,
    ConfigError,
    ConsistencyTimeoutError,
    DeadlineExceededError,
    DimensionMismatchError,
    FilterError,
    IndexExistsError,
    IndexNotFoundError,
    TransientBackendError,
    UnsupportedFeatureError,
    ValidationError,
    VectorportError,
)
from vectorport.core.filters.ast import (
    FIELD_OPERATORS,
    LIST_OPERATORS,
    LOGICAL_OPERATORS,
    RANGE_OPERATORS,
    And,
    Condition,
    Filter,
    Nor,
    Not,
    Or,
    Scalar,
    fields_used,
    operators_used,
    walk,
)
from vectorport.core.filters.nnf import to_nnf
from vectorport.core.filters.oracle import matches
from vectorport.core.limits import IndexLimitsAdapter
from vectorport.core.retry import RetryPolicy, check_deadline, deadline, remaining, request_timeout
from vectorport.core.scoring import Distance, score_from_distance, sort_matches, sparse_dot
from vectorport.core.types import (
    METRICS,
    DenseMatrix,
    DenseVector,
    Explanation,
    IdPage,
    Include,
    IndexInfo,
    IndexSpec,
    Match,
    Metadata,
    MetadataValue,
    Metric,
    QueryRequest,
    Record,
    RecordPage,
    RecordPatch,
    SparseVector,
    match_of,
)

__all__ = [
    "ALL_FILTER_OPERATORS",
    "FIELD_OPERATORS",
    "FLOAT64_EXACT_LIMIT",
    "LIST_OPERATORS",
    "LOGICAL_OPERATORS",
    "METRICS",
    "RANGE_OPERATORS",
    "TRANSIENT_BUILTINS",
    "Adapter",
    "And",
    "BackendError",
    "BatchQueryAdapter",
    "BulkLoadingAdapter",
    "Capabilities",
    "Condition",
    "ConfigError",
    "ConnectionURL",
    "ConsistencyTimeoutError",
    "DeadlineExceededError",
    "DenseMatrix",
    "DenseScores",
    "DenseVector",
    "DimensionMismatchError",
    "Distance",
    "ErrorKind",
    "ErrorTranslator",
    "ExplainingAdapter",
    "Explanation",
    "Filter",
    "FilterCompiler",
    "FilterError",
    "Handles",
    "IdListingAdapter",
    "IdPage",
    "Include",
    "IndexExistsError",
    "IndexInfo",
    "IndexLimitsAdapter",
    "IndexNotFoundError",
    "IndexSpec",
    "Limits",
    "Match",
    "Memo",
    "Metadata",
    "MetadataValue",
    "Metric",
    "NativeAsyncAdapter",
    "Nor",
    "Not",
    "OptimizingAdapter",
    "Option",
    "OptionSpec",
    "Or",
    "PatchableAdapter",
    "QueryRequest",
    "RankedList",
    "Record",
    "RecordPage",
    "RecordPatch",
    "RetryPolicy",
    "Scalar",
    "ScanningAdapter",
    "Secret",
    "SparseVector",
    "TransientBackendError",
    "UnsupportedFeatureError",
    "UpkeepDeferringAdapter",
    "UpkeepSchedule",
    "ValidationError",
    "VectorportError",
    "at_or_above_cut",
    "batches",
    "check_deadline",
    "check_exact_number",
    "complete_at_cut",
    "contract_order",
    "deadline",
    "exact_scores",
    "fetch_many_until_settled",
    "fetch_until_settled",
    "fields_used",
    "first_ask",
    "first_depth",
    "float32_slack",
    "match_of",
    "matches",
    "matching",
    "operators_used",
    "positive",
    "prefix_upper_bound",
    "read_only_float32",
    "refuse_inexact_numbers",
    "remaining",
    "request_timeout",
    "retry_after",
    "same_index",
    "say_deferred",
    "scan_top_k",
    "score_from_distance",
    "sort_matches",
    "sparse_dot",
    "spec_from_json",
    "spec_to_json",
    "stale_error",
    "threshold_top_k",
    "time_short",
    "to_nnf",
    "unique",
    "url_cost",
    "walk",
    "within",
]

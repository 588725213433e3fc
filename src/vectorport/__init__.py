"""vectorport: one API and one filter language in front of many vector databases.

>>> import vectorport
>>> store = vectorport.connect("memory://")
>>> index = store.create_index("docs", dimension=3)
>>> index.upsert([("a", [1, 0, 0], {"year": 2024})])
1
>>> [m.id for m in index.query([1, 0, 0], filter={"year": {"$gte": 2020}})]
['a']
"""

from vectorport.core.adapter import (
    Adapter,
    ExplainingAdapter,
    IdListingAdapter,
    NativeAsyncAdapter,
    OptimizingAdapter,
    PatchableAdapter,
    ScanningAdapter,
    UpkeepDeferringAdapter,
)
from vectorport.core.async_store import (
    AsyncIndex,
    AsyncListableIndex,
    AsyncPatchableIndex,
    AsyncStore,
    connect_async,
)
from vectorport.core.capabilities import Capabilities
from vectorport.core.config import ConnectionURL, Secret, load_config, parse_url
from vectorport.core.errors import (
    BackendError,
    ConfigError,
    ConsistencyTimeoutError,
    DeadlineExceededError,
    DimensionMismatchError,
    FilterError,
    IndexExistsError,
    IndexNotFoundError,
    SourceNotFoundError,
    TransientBackendError,
    UnsupportedFeatureError,
    ValidationError,
    VectorportError,
)
from vectorport.core.filters import Filter, matches, parse_filter, render_filter, to_nnf
from vectorport.core.plugin import (
    AdapterEntry,
    OperationEvent,
    Registry,
    default_registry,
    hookimpl,
)
from vectorport.core.retry import RetryPolicy, deadline
from vectorport.core.scoring import hybrid_scale
from vectorport.core.store import Index, ListableIndex, PatchableIndex, Store, connect
from vectorport.core.types import (
    Explanation,
    IdPage,
    Include,
    IndexInfo,
    IndexSpec,
    Match,
    QueryRequest,
    Record,
    RecordPage,
    RecordPatch,
    SparseVector,
)

__version__ = "0.1.0"

__all__ = [
    "Adapter",
    "AdapterEntry",
    "AsyncIndex",
    "AsyncListableIndex",
    "AsyncPatchableIndex",
    "AsyncStore",
    "BackendError",
    "Capabilities",
    "ConfigError",
    "ConnectionURL",
    "ConsistencyTimeoutError",
    "DeadlineExceededError",
    "DimensionMismatchError",
    "ExplainingAdapter",
    "Explanation",
    "Filter",
    "FilterError",
    "IdListingAdapter",
    "IdPage",
    "Include",
    "Index",
    "IndexExistsError",
    "IndexInfo",
    "IndexNotFoundError",
    "IndexSpec",
    "ListableIndex",
    "Match",
    "NativeAsyncAdapter",
    "OperationEvent",
    "OptimizingAdapter",
    "PatchableAdapter",
    "PatchableIndex",
    "QueryRequest",
    "Record",
    "RecordPage",
    "RecordPatch",
    "Registry",
    "RetryPolicy",
    "ScanningAdapter",
    "Secret",
    "SourceNotFoundError",
    "SparseVector",
    "Store",
    "TransientBackendError",
    "UnsupportedFeatureError",
    "UpkeepDeferringAdapter",
    "ValidationError",
    "VectorportError",
    "__version__",
    "connect",
    "connect_async",
    "deadline",
    "default_registry",
    "hookimpl",
    "hybrid_scale",
    "load_config",
    "matches",
    "parse_filter",
    "parse_url",
    "render_filter",
    "to_nnf",
]

"""The values that travel between the user, the facade and the adapters.

All are frozen dataclasses: a request built once can be cached, hashed where it makes
sense, and handed to several layers without anyone changing it underneath the others.
Dense vectors are held as read-only float32 numpy arrays, the form every backend SDK
and the local engine take without another copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from vectorport.core.filters.ast import Filter

Metric: TypeAlias = Literal["cosine", "dotproduct", "euclidean"]
METRICS: tuple[Metric, ...] = ("cosine", "dotproduct", "euclidean")

Consistency: TypeAlias = Literal["strong", "eventual"]
HybridMode: TypeAlias = Literal["none", "sum", "rrf"]
IndexType: TypeAlias = Literal["flat", "hnsw", "ivf", "auto"]

MetadataValue: TypeAlias = str | int | float | bool | tuple[str, ...]
"""A stored metadata value. Lists come in as ``list[str]`` and are kept as tuples."""

Metadata: TypeAlias = Mapping[str, MetadataValue]
DenseVector: TypeAlias = npt.NDArray[np.float32]
DenseMatrix: TypeAlias = npt.NDArray[np.float32]
"""Several dense vectors as the rows of one C-contiguous float32 matrix."""


@dataclass(frozen=True, slots=True)
class SparseVector:
    """A sparse vector: ``indices`` unique non-negative int32 in ascending order.

    Construct through :func:`vectorport.core.validation.sparse_vector` (or the facade)
    to get the canonical, validated form; the constructor itself trusts its input.
    """

    indices: tuple[int, ...]
    values: tuple[float, ...]

    def as_dict(self) -> dict[int, float]:
        return dict(zip(self.indices, self.values, strict=True))


@dataclass(frozen=True, slots=True, eq=False)
class Record:
    """One stored item: id, dense vector, optional sparse vector, metadata, document."""

    id: str
    vector: DenseVector
    metadata: Mapping[str, MetadataValue] = field(default_factory=dict)
    sparse: SparseVector | None = None
    document: str | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return (
            self.id == other.id
            and np.array_equal(self.vector, other.vector)
            and dict(self.metadata) == dict(other.metadata)
            and self.sparse == other.sparse
            and self.document == other.document
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True, eq=False)
class Match:
    """One query result. Optional parts are present only when asked for."""

    id: str
    score: float
    metadata: Mapping[str, MetadataValue] | None = None
    vector: DenseVector | None = None
    sparse: SparseVector | None = None
    document: str | None = None

    def __repr__(self) -> str:
        parts = [f"id={self.id!r}", f"score={self.score:.6g}"]
        if self.metadata is not None:
            parts.append(f"metadata={dict(self.metadata)!r}")
        if self.document is not None:
            text = self.document if len(self.document) <= 60 else self.document[:57] + "..."
            parts.append(f"document={text!r}")
        if self.vector is not None:
            parts.append(f"vector=<{len(self.vector)} floats>")
        if self.sparse is not None:
            parts.append(f"sparse=<{len(self.sparse.indices)} terms>")
        return f"Match({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class IndexSpec:
    """What an index is: fixed at creation.

    ``index_type`` and ``index_params`` ask for an ANN structure (``hnsw`` with ``m`` and
    ``ef_construction``, ``ivf`` with ``lists``); ``auto`` lets the adapter choose.
    ``backend_options`` holds per-backend creation settings, one section per backend,
    each adapter reading only its own.
    """

    name: str
    dimension: int
    metric: Metric = "cosine"
    sparse: bool = False
    index_type: IndexType = "auto"
    index_params: Mapping[str, int] = field(default_factory=dict)
    backend_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """An index as it stands: its spec plus counts."""

    spec: IndexSpec
    count: int
    namespaces: Mapping[str, int]

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def dimension(self) -> int:
        return self.spec.dimension

    @property
    def metric(self) -> Metric:
        return self.spec.metric

    @property
    def sparse(self) -> bool:
        return self.spec.sparse


@dataclass(frozen=True, slots=True)
class Include:
    """Which optional parts of a match or fetched record to return."""

    metadata: bool = True
    vectors: bool = False
    documents: bool = True


@dataclass(frozen=True, slots=True, eq=False)
class QueryRequest:
    """A validated query, as the facade hands it to an adapter.

    At least one of ``vector`` and ``sparse`` is set. ``filter`` is a parsed AST (or
    ``None`` for everything). ``ef``/``probes`` are hints; ``backend_options`` is the
    caller's per-backend mapping, of which an adapter reads only its own section.
    """

    namespace: str
    top_k: int
    vector: DenseVector | None = None
    sparse: SparseVector | None = None
    filter: Filter | None = None
    include: Include = Include()
    min_score: float | None = None
    ef: int | None = None
    probes: int | None = None
    consistency: Consistency = "strong"
    backend_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def options_for(self, backend: str) -> Mapping[str, Any]:
        """The caller's options section for ``backend`` (empty when absent)."""
        return self.backend_options.get(backend, {})


@dataclass(frozen=True, slots=True)
class RecordPatch:
    """A partial update of one record: only the parts given change.

    ``set_metadata`` keys are merged in; ``unset_metadata`` keys are removed.
    """

    id: str
    vector: DenseVector | None = None
    sparse: SparseVector | None = None
    set_metadata: Mapping[str, MetadataValue] = field(default_factory=dict)
    unset_metadata: frozenset[str] = frozenset()
    document: str | None = None


@dataclass(frozen=True, slots=True)
class IdPage:
    """One page of ids from a listing; ``next_cursor`` is ``None`` on the last page."""

    ids: tuple[str, ...]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class RecordPage:
    """One page of a scan: whole records, and the opaque cursor that resumes after them
    (``None`` on the last page)."""

    records: tuple[Record, ...]
    next_cursor: str | None

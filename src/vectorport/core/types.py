"""The values that travel between the user, the facade and the adapters.

All are frozen dataclasses: a request built once can be cached, hashed where it makes
sense, and handed to several layers without anyone changing it underneath the others.
Dense vectors are held as read-only float32 numpy arrays, the form every backend SDK
and the local engine take without another copy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
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


_new = object.__new__
_set_id, _set_vector, _set_metadata, _set_sparse, _set_document = (
    Record.__dict__[name].__set__
    for name in ("id", "vector", "metadata", "sparse", "document"))


def records_of(ids: Iterable[str], vectors: Iterable[DenseVector],
               metadatas: Iterable[Mapping[str, MetadataValue]],
               sparses: Iterable[SparseVector | None],
               documents: Iterable[str | None]) -> list[Record]:
    """``Record(id, vector, metadata, sparse, document)`` for each position, for values
    already validated: the same frozen records, made in half the time of the dataclass
    ``__init__`` (which sets each field through ``object.__setattr__``), which is a
    sixth of validating a plain upsert."""
    made: list[Record] = []
    append = made.append
    for rid, vector, meta, sparse, document in zip(ids, vectors, metadatas, sparses,
                                                   documents, strict=True):
        record = _new(Record)
        _set_id(record, rid)
        _set_vector(record, vector)
        _set_metadata(record, meta)
        _set_sparse(record, sparse)
        _set_document(record, document)
        append(record)
    return made


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


_match_fields = tuple(Match.__dict__[name].__set__ for name in (
    "id", "score", "metadata", "vector", "sparse", "document"))


def match_of(id: str, score: float, metadata: Mapping[str, MetadataValue] | None = None,
             vector: DenseVector | None = None, sparse: SparseVector | None = None,
             document: str | None = None) -> Match:
    """``Match(id, score, metadata, vector, sparse, document)``, the same frozen value,
    in a third of the dataclass ``__init__``'s time: adapters make ``top_k`` of them per
    query, which was a tenth of the client time of a top-10 query on pgvector."""
    match = _new(Match)
    set_id, set_score, set_metadata, set_vector, set_sparse, set_document = _match_fields
    set_id(match, id)
    set_score(match, score)
    set_metadata(match, metadata)
    set_vector(match, vector)
    set_sparse(match, sparse)
    set_document(match, document)
    return match


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


ExplainSetting: TypeAlias = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class Explanation:
    """What one query would send to its backend, built by the adapter's own request
    builder without sending it (:meth:`vectorport.Index.explain`).

    - ``language``: how to read ``request`` (``"sql"``, ``"json"``, ``"milvus"``…).
    - ``request``: the request text: SQL with placeholders, a filter JSON, a boolean
      expression. Never holds the query vector; holds filter values only where the
      backend's own form is a document of them (Pinecone, Chroma, turbopuffer, LanceDB).
    - ``parameters``: the KINDS of the bound parameters (or ``?`` markers) of
      ``request``, in order: ``"text"``, ``"vector(3)"``, ``"jsonb"``…, never values.
    - ``filter``: the compiled filter alone, in the same form as in ``request``
      (``None`` without a filter).
    - ``settings``: what the query tunes, by the backend's own names (``hnsw.ef_search``,
      ``nprobe``, the over-fetch depth asked for first, consistency…).
    - ``statements``: further statements sent before ``request`` (pgvector's
      ``SET LOCAL``), as text with their placeholders.
    - ``notes``: how the adapter runs it beyond one request (widening under ties…).
    """

    backend: str
    index: str
    namespace: str
    top_k: int
    language: str
    request: str
    parameters: tuple[str, ...] = ()
    filter: str | None = None
    settings: Mapping[str, ExplainSetting] = field(default_factory=dict)
    statements: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Frozen means frozen: the settings an adapter passes are kept as a read-only copy.
        object.__setattr__(self, "settings", MappingProxyType(dict(self.settings)))

    __hash__ = None  # type: ignore[assignment]  # settings is a mapping

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (the CLI's ``--json``)."""
        return {
            "backend": self.backend, "index": self.index, "namespace": self.namespace,
            "top_k": self.top_k, "language": self.language, "request": self.request,
            "parameters": list(self.parameters), "filter": self.filter,
            "settings": dict(self.settings), "statements": list(self.statements),
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        lines = [f"{self.backend} query on index {self.index!r}, namespace "
                 f"{self.namespace!r}, top_k {self.top_k}"]
        if self.settings:
            lines.append("settings:")
            lines.extend(f"  {key} = {value}" for key, value in self.settings.items())
        if self.statements:
            lines.append("also sent:")
            lines.extend(f"  {text}" for text in self.statements)
        lines.append(f"request ({self.language}):")
        lines.extend(f"  {line}" for line in self.request.splitlines() or [""])
        if self.parameters:
            lines.append("parameters (kinds, in order): " + ", ".join(self.parameters))
        if self.filter is not None:
            lines.append(f"filter: {self.filter}")
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines)

"""The ``chroma`` sections of ``backend_options`` and the HNSW settings of an index.

Query options (``QueryRequest.backend_options["chroma"]``), validated strictly:

- ``where_document``: Chroma's document filter (``whereDocument`` in the
  ``databaseConfig.chroma`` settings of Mastra's createVectorQueryTool docs), with
  Chroma's own meaning: ``$contains``, ``$not_contains``, ``$regex``, ``$not_regex``
  (string operands) combined with ``$and``/``$or``. It is checked here, shape and
  types, before any I/O; a regex Chroma cannot parse fails in Chroma (``BackendError``).
- ``where``: a metadata filter, as in ``databaseConfig.chroma.where`` there. It is
  **not** passed to Chroma raw (that would bypass the contract's semantics): it is parsed
  as a vectorport filter and ANDed with the query's ``filter``.

Index options: ``index_params`` ``m`` (Chroma's ``max_neighbors``), ``ef_construction``
and ``ef_search`` set the HNSW configuration of every collection of the index; the
``chroma`` section of the index's ``backend_options`` takes no keys yet.

URL options: ``tenant`` and ``database`` (persistent and HTTP clients; an in-memory
client takes none); ``keep_log`` (``chroma:///path`` only, default true; see
:mod:`.recovery`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vectorport.adapterkit import (
    Filter,
    FilterError,
    IndexSpec,
    Metric,
    Option,
    OptionSpec,
    QueryRequest,
    ValidationError,
)
from vectorport.core.filters.parse import parse_filter

QUERY_OPTIONS = OptionSpec("chroma", "query", (Option("where", "any"),
                                               Option("where_document", "any")))
INDEX_OPTIONS = OptionSpec("chroma", "index")
INDEX_PARAMS_SPEC = OptionSpec("chroma", "index_params", tuple(
    Option(name, "int") for name in ("m", "ef_construction", "ef_search")))
URL_OPTIONS = OptionSpec("chroma", "URL", (
    Option("tenant"), Option("database"), Option("token", "credential"),
    Option("keep_log", "bool", True, help=(
        "chroma:///path: keep Chroma's write-ahead log (unpurged), so that a vector index "
        "torn by a process killed mid-write is rebuilt exactly at the next connect; false "
        "restores Chroma's default (the log purged, a smaller folder)"))))
MEMORY_URL_OPTIONS = OptionSpec("chroma", "URL")
INDEX_PARAMS = {"m": "max_neighbors", "ef_construction": "ef_construction",
                "ef_search": "ef_search"}
SPACES: dict[Metric, str] = {"cosine": "cosine", "euclidean": "l2", "dotproduct": "ip"}
_DOCUMENT_OPERATORS = frozenset({"$contains", "$not_contains", "$regex", "$not_regex"})
_MAX_DOCUMENT_DEPTH = 32


@dataclass(frozen=True, slots=True)
class QueryOptions:
    """The validated ``chroma`` query options."""

    where: Filter | None = None
    where_document: dict[str, Any] | None = None


def query_options(request: QueryRequest) -> QueryOptions:
    section = QUERY_OPTIONS.query(request)
    where: Filter | None = None
    if "where" in section:
        raw = section["where"]
        if not isinstance(raw, Mapping):
            raise FilterError("backend_options.chroma.where must be a filter object")
        try:
            where = parse_filter(raw)
        except FilterError as exc:
            path = f"chroma.where.{exc.path}" if exc.path else "chroma.where"
            raise FilterError(exc.reason, path) from None
    document = None
    if "where_document" in section:
        document = where_document(section["where_document"], "chroma.where_document", 0)
    return QueryOptions(where=where, where_document=document)


def where_document(raw: object, path: str, depth: int) -> dict[str, Any]:
    """A validated, normalised Chroma ``where_document`` (one-member ``$and``/``$or`` are
    unwrapped, since Chroma asks for at least two)."""
    if depth > _MAX_DOCUMENT_DEPTH:
        raise ValidationError(f"{path}: nested more than {_MAX_DOCUMENT_DEPTH} levels")
    if not isinstance(raw, Mapping) or len(raw) != 1:
        raise ValidationError(f"{path}: a document filter is an object with exactly one operator")
    ((op, operand),) = raw.items()
    if op in ("$and", "$or"):
        if not isinstance(operand, (list, tuple)) or not operand:
            raise ValidationError(f"{path}.{op}: needs a non-empty list of document filters")
        members = [where_document(item, f"{path}.{op}[{i}]", depth + 1)
                   for i, item in enumerate(operand)]
        return members[0] if len(members) == 1 else {op: members}
    if op not in _DOCUMENT_OPERATORS:
        known = ", ".join(sorted(_DOCUMENT_OPERATORS | {"$and", "$or"}))
        raise ValidationError(f"{path}: unknown document operator {op!r}; known: {known}")
    if not isinstance(operand, str) or not operand:
        raise ValidationError(f"{path}.{op}: takes a non-empty string")
    return {op: operand}


def collection_configuration(spec: IndexSpec) -> dict[str, Any]:
    """Chroma's ``configuration`` for every data collection of the index."""
    hnsw: dict[str, Any] = {"space": SPACES[spec.metric]}
    for key, value in spec.index_params.items():
        hnsw[INDEX_PARAMS[key]] = value
    return {"hnsw": hnsw}


def check_index_spec(spec: IndexSpec) -> None:
    """Refuse index parameters and options this adapter does not understand."""
    INDEX_PARAMS_SPEC.parse(spec.index_params)
    INDEX_OPTIONS.index(spec)


__all__ = [
    "INDEX_OPTIONS",
    "MEMORY_URL_OPTIONS",
    "QUERY_OPTIONS",
    "SPACES",
    "URL_OPTIONS",
    "QueryOptions",
    "check_index_spec",
    "collection_configuration",
    "query_options",
    "where_document",
]

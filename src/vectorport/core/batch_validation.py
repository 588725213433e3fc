"""One-pass validation of a whole upsert: the same answers as validating record by
record with :func:`vectorport.core.validation.record`, at a fraction of the cost.

Profiling a 100k-record load showed most of the facade's write time in per-record
numpy calls (a ``float32`` copy, ``isfinite`` and a float64 norm for each vector) and in
re-checking the same few metadata keys against a regular expression. Here the vectors of
a call are stacked into one ``float32`` matrix and checked with a handful of
vectorised operations, and metadata of the common kinds (str, int, float, bool, list of
str, under keys already seen valid) takes a path with no regular expression and no JSON
encoding when a cheap upper bound shows it is far below the size limit.

The rule that keeps this exact: the fast path either returns what the per-record path
returns, or returns ``None`` and the caller runs the per-record path from the start.
Anything unusual (a Mapping that is not a dict, a numpy scalar in metadata, a vector given
as a list, a sparse vector, a value near a limit) and every refusal goes to the
per-record path, so errors, their order (the first bad record in call order) and their
messages are those of :func:`validation.record` by construction.

What the fast path accepts also carries facts the backends' declared limits use
(:func:`vectorport.core.limits.plain_batch_holds`): every id is ASCII, and no id, metadata
string or document holds a NUL character.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

import numpy as np
import numpy.typing as npt

from vectorport.core import validation
from vectorport.core.types import MetadataValue, Record

_KNOWN_KEYS: set[str] = set()
"""Metadata keys already seen to match :data:`validation.METADATA_KEY_RE`; bounded, so
a stream of distinct keys cannot grow it without end."""
_KNOWN_KEYS_LIMIT = 4096
_NORM_CHUNK = 4096
"""Rows per float64 norm computation: bounds the temporary to a few MB at any size."""
_NORM_CEILING = validation.MAX_VECTOR_NORM * (1 - 1e-9)
"""Below this the vectorised norm (pairwise summation) cannot disagree with the
per-record one (a dot product) about the limit; at or above it the per-record path
decides, with its own arithmetic."""
_FIELDS = frozenset({"id", "vector", "values", "metadata", "sparse", "document"})
_FLOAT_JSON = 24  # len(repr(-1.7976931348623157e+308)): the longest float in JSON
_INT_JSON = 20  # len(str(-2**63))


@dataclass(frozen=True)
class ValidatedBatch:
    """A call's records validated in one pass, with what the backend limits need to know
    of their vectors (so :func:`limits.vector_limits_hold` need not look at each one)."""

    records: list[Record]
    min_squared_norm: float
    """The smallest squared float64 norm of a vector of the call (``inf`` if none)."""
    max_abs_component: float
    """The largest absolute float32 component of a vector of the call (0 if none)."""
    longest_text: int = 0
    """The most characters in one metadata string (or list item) of the call."""
    largest_metadata: int = 2
    """An upper bound of the largest record metadata's size as compact UTF-8 JSON (the
    measure of :func:`validation.metadata_size`)."""


def validated_batch(values: Sequence[Any], dimension: int) -> ValidatedBatch | None:
    """The validated records (in order, repeats kept) with their vector facts, or
    ``None`` when the per-record path must decide: anything unusual, and anything it
    would refuse."""
    ids: list[str] = []
    vectors: list[npt.NDArray[Any]] = []
    metas: list[dict[str, MetadataValue]] = []
    documents: list[str | None] = []
    longest = largest = 0
    for value in values:
        fields = _fields(value)
        if fields is None:
            return None
        raw_id, raw_vector, raw_meta, raw_sparse, raw_doc = fields
        if raw_sparse is not None or not _plain_vector(raw_vector, dimension):
            return None
        rid = _plain_id(raw_id)
        checked = _metadata(raw_meta)
        if rid is None or checked is None:
            return None
        meta, text_chars, size = checked
        longest = max(longest, text_chars)
        largest = max(largest, size)
        if raw_doc is not None and not _plain_document(raw_doc):
            return None
        ids.append(rid)
        vectors.append(raw_vector)
        metas.append(meta)
        documents.append(raw_doc if isinstance(raw_doc, str) else None)
    if not ids:
        return ValidatedBatch([], math.inf, 0.0)
    stacked = stacked_vectors(vectors)
    if stacked is None:
        return None
    matrix, min_squared_norm = stacked
    # rows of one read-only matrix: each Record's vector is a read-only float32 view,
    # and the caller's arrays are never aliased (the matrix is a fresh copy)
    rows = [Record(id=rid, vector=row, metadata=meta, document=doc)
            for rid, row, meta, doc in zip(ids, matrix, metas, documents, strict=True)]
    max_abs = float(np.abs(matrix).max()) if matrix.size else 0.0
    return ValidatedBatch(rows, min_squared_norm, max_abs, longest, largest)


def _fields(value: object) -> tuple[object, object, object, object, object] | None:
    """``(id, vector, metadata, sparse, document)`` of the common record forms."""
    if isinstance(value, Record):
        return value.id, value.vector, value.metadata, value.sparse, value.document
    if type(value) is dict:
        if not value.keys() <= _FIELDS:
            return None
        return (value.get("id"), value.get("vector", value.get("values")),
                value.get("metadata"), value.get("sparse"), value.get("document"))
    if type(value) is tuple and 2 <= len(value) <= 3:
        return value[0], value[1], value[2] if len(value) == 3 else None, None, None
    return None


def _plain_vector(value: object, dimension: int) -> TypeGuard[npt.NDArray[Any]]:
    return (isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "fiu"
            and value.shape[0] == dimension)


def _plain_id(value: object) -> str | None:
    # ASCII: its UTF-8 size is its length and it has no lone surrogate
    if (type(value) is str and value and value.isascii()
            and len(value) <= validation.MAX_ID_BYTES and "\x00" not in value):
        return value
    return None


def _plain_document(value: object) -> TypeGuard[str]:
    if type(value) is not str or "\x00" in value:
        return False
    return value.isascii() or _encodes(value)


def _encodes(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _plain_text(value: str) -> bool:
    # no NUL either: a backend that refuses NUL in metadata then needs no string walk of
    # its own for a record of this path (limits.plain_batch_holds); a NUL is rare, and the
    # per-record path decides it exactly as before
    return (value.isascii() or _encodes(value)) and "\x00" not in value


def _metadata(value: object) -> tuple[dict[str, MetadataValue], int, int] | None:
    """What :func:`validation.metadata` returns for metadata of the common kinds, with
    the most characters of one of its strings (or list items) and an upper bound of its
    size as compact UTF-8 JSON; ``None`` for anything else (then that function decides)."""
    if value is None:
        return {}, 0, 2
    if type(value) is not dict:
        return None
    longest = 0
    clean: dict[str, MetadataValue] = {}
    bound = 2  # an upper bound of its compact JSON size in UTF-8: {} and, per entry,
    for key, item in value.items():  # "key": (a valid key is ASCII), the value and a comma
        if type(key) is not str:
            return None
        if key not in _KNOWN_KEYS:
            if not validation.METADATA_KEY_RE.fullmatch(key):
                return None
            if len(_KNOWN_KEYS) < _KNOWN_KEYS_LIMIT:
                _KNOWN_KEYS.add(key)
        kind = type(item)
        bound += len(key) + 4
        if kind is str:
            if not _plain_text(item):
                return None
            chars = len(item)
            bound += 6 * chars + 2  # at worst every character a \uXXXX escape
            if chars > longest:
                longest = chars
        elif kind is bool:
            bound += 5
        elif kind is int:
            if not validation.INT64_MIN <= item <= validation.INT64_MAX:
                return None
            bound += _INT_JSON
        elif kind is float:
            if not math.isfinite(item):
                return None
            bound += _FLOAT_JSON
        elif kind is list or kind is tuple:
            if not item or not all(type(v) is str and _plain_text(v) for v in item):
                return None
            item = tuple(item)
            for text in item:
                chars = len(text)
                bound += 6 * chars + 3
                if chars > longest:
                    longest = chars
            bound += 2
        else:
            return None
        clean[key] = item
    if bound > validation.MAX_METADATA_BYTES:
        bound = validation.metadata_size(clean)  # near the limit: measured exactly
        if bound > validation.MAX_METADATA_BYTES:
            return None
    return clean, longest, bound


def stacked_vectors(vectors: Sequence[npt.NDArray[Any]]
                    ) -> tuple[npt.NDArray[np.float32], float] | None:
    """The vectors (1-d numeric arrays of one length) as one fresh read-only float32
    matrix with the smallest squared norm of its rows, or ``None`` if any is not finite
    in float32 or has a norm near or beyond :data:`validation.MAX_VECTOR_NORM` (the
    per-record path then refuses it)."""
    with np.errstate(over="ignore", invalid="ignore"):  # beyond float32 becomes inf
        # the same cast as the per-record ``ascontiguousarray(dtype=float32)``
        matrix = np.stack(vectors, dtype=np.float32, casting="unsafe")
    if not np.isfinite(matrix).all():
        return None
    smallest = math.inf
    for start in range(0, len(matrix), _NORM_CHUNK):
        block = matrix[start:start + _NORM_CHUNK].astype(np.float64)
        block *= block
        squared = block.sum(axis=1)
        if squared.max() >= _NORM_CEILING * _NORM_CEILING:
            return None
        smallest = min(smallest, float(squared.min()))
    matrix.setflags(write=False)
    return matrix, smallest

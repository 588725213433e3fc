"""Input validation to CONTRACT §1. Everything here runs before any I/O.

Each function takes what a user may pass and returns the canonical form the adapters
receive (float32 arrays, sorted sparse vectors, tuples for list metadata), or raises
:class:`ValidationError` naming what is wrong.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from vectorport.core.errors import DimensionMismatchError, ValidationError
from vectorport.core.types import (
    METRICS,
    DenseMatrix,
    DenseVector,
    MetadataValue,
    Metric,
    Record,
    SparseVector,
)

# Anchored with \Z, not $: Python's $ also matches before a final newline, and
# "docs\n" must not pass for "docs". Callers use fullmatch as well.
INDEX_NAME_RE = re.compile(r"[a-z][a-z0-9_]{2,44}\Z")
NAMESPACE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
METADATA_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
MAX_ID_BYTES = 512
MAX_METADATA_BYTES = 40 * 1024
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT32_MAX = 2**31 - 1
MAX_VECTOR_NORM = 1e18
"""The largest Euclidean norm of a dense vector (CONTRACT §1). Engines compute norms,
dot products and distances in float32: with both norms at most 1e18, every square,
product and ``|a - b|²`` stays below 4e36, far from float32's 3.4e38, so no backend
overflows to ``inf`` (a cosine of 0.0, a dot product of ``inf``)."""
MIN_COSINE_NORM = 1e-18
"""The smallest norm of a vector in a cosine index: below it the float32 squared norm
underflows to zero on the engines and the cosine is undefined, as for a zero vector."""
MAX_HINT = 1_000_000
"""The largest ``ef`` / ``probes`` accepted: beyond every engine's range, and far below
the integer sizes a driver can send."""


def text(value: str, what: str) -> str:
    """``value`` if it is valid Unicode text (no lone surrogates), else ValidationError."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(f"{what} is not valid Unicode text (lone surrogate)") from None
    return value


def positive_int(value: object, what: str, maximum: int) -> int:
    """A positive int at most ``maximum``: an int the size of ``2**64`` would not fit
    any engine's integer types."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{what} must be a positive int, got {value!r}")
    if value > maximum:
        raise ValidationError(f"{what} {value} exceeds the limit of {maximum}")
    return value


def score_bound(value: object, what: str = "min_score") -> float:
    """A number that is a finite float (``10**400`` is not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ValidationError(f"{what} must be a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        raise ValidationError(f"{what} {value!r} is beyond the float range") from None
    if not math.isfinite(number):
        raise ValidationError(f"{what} must be a finite number, got {value!r}")
    return number


def check_norm(array: npt.NDArray[np.float32], what: str) -> None:
    """Refuse vectors (rows of a matrix) whose norm is beyond :data:`MAX_VECTOR_NORM`."""
    if array.size:
        _check_norm64(array.astype(np.float64), what)


def _check_norm64(wide: npt.NDArray[np.float64], what: str) -> None:
    # numpy's norm(axis=-1) computed directly: the same sums, without its dispatch
    if (np.sqrt(np.add.reduce(wide * wide, axis=-1)) > MAX_VECTOR_NORM).any():
        raise ValidationError(
            f"{what} has a norm beyond {MAX_VECTOR_NORM:g}: engines compute in float32, "
            "where its scores would overflow (scale it down)"
        )


def index_name(name: object) -> str:
    if not isinstance(name, str) or not INDEX_NAME_RE.fullmatch(name):
        raise ValidationError(
            f"invalid index name {name!r}: use 3 to 45 characters of a-z, 0-9 and _, "
            "starting with a letter"
        )
    return name


def namespace(value: object) -> str:
    if value == "":
        return ""
    if not isinstance(value, str) or not NAMESPACE_RE.fullmatch(value):
        raise ValidationError(
            f"invalid namespace {value!r}: use '' or 1 to 64 characters of A-Z, a-z, 0-9, "
            "_ . -, starting with a letter or digit"
        )
    return value


def record_id(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValidationError(f"record id must be a non-empty str, got {value!r}")
    if "\x00" in value:
        raise ValidationError("record id must not contain NUL")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ValidationError("record id is not valid UTF-8 (lone surrogate)") from exc
    if size > MAX_ID_BYTES:
        raise ValidationError(f"record id is {size} bytes in UTF-8; at most {MAX_ID_BYTES}")
    return value


def record_ids(values: Iterable[object]) -> tuple[str, ...]:
    if isinstance(values, str):
        raise ValidationError("ids must be a sequence of str, not a single str")
    return tuple(record_id(v) for v in values)


def metric(value: object) -> Metric:
    for known in METRICS:
        if value == known:
            return known
    raise ValidationError(f"unknown metric {value!r}; use one of {', '.join(METRICS)}")


def dimension(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"dimension must be a positive int, got {value!r}")
    return value


def top_k(value: object, limit: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"top_k must be a positive int, got {value!r}")
    if value > limit:
        raise ValidationError(f"top_k {value} exceeds this backend's limit of {limit}")
    return value


def dense_vector(value: object, expected_dimension: int, what: str = "vector") -> DenseVector:
    """Canonical float32, read-only, 1-d array of finite values."""
    as32, _ = _checked_vector(value, expected_dimension, what)
    return _own(as32, value)


def query_vector(value: object, expected_dimension: int, cosine: bool) -> DenseVector:
    """:func:`dense_vector` of a query, and for a cosine index the refusal of a (near)
    zero vector, from the same one pass over it."""
    if (type(value) is np.ndarray and value.dtype is _FLOAT32 and value.ndim == 1
            and len(value) == expected_dimension):
        # the common case (a native float32 vector of the right length), checked as
        # _checked_vector checks it, in a third fewer calls: its own copy is made
        # directly (contiguous, never the caller's buffer)
        as32: npt.NDArray[np.float32] = value.copy()
        squared = _squared_norm(as32, "query vector")
        if cosine and math.sqrt(squared) < MIN_COSINE_NORM:  # numpy's 1-d norm: sqrt(x·x)
            raise ValidationError("a zero query vector has no cosine similarity")
        as32.setflags(write=False)
        return as32
    as32, squared = _checked_vector(value, expected_dimension, "query vector")
    if cosine and math.sqrt(squared) < MIN_COSINE_NORM:  # numpy's 1-d norm: sqrt(x·x)
        raise ValidationError("a zero query vector has no cosine similarity")
    return _own(as32, value)


_FLOAT32 = np.dtype(np.float32)


_NORM_MARGIN = MAX_VECTOR_NORM * (1 - 1e-9)


def _checked_vector(value: object, expected_dimension: int,
                    what: str) -> tuple[npt.NDArray[np.float32], float]:
    """The float32 vector, checked finite and within :data:`MAX_VECTOR_NORM`, and its
    squared norm ``x·x`` in float64. One dot product does the work of both checks: the
    float64 squares of float32 values cannot overflow, so ``x·x`` is finite exactly
    when every value is; only a norm near the limit is measured again the way
    :func:`check_norm` measures it, so the two never disagree."""
    as32 = _float32(value, expected_dimension, what)
    return as32, _squared_norm(as32, what)


def _squared_norm(as32: npt.NDArray[np.float32], what: str) -> float:
    """``x·x`` of a float32 vector in float64, refusing NaN, infinity and a norm beyond
    :data:`MAX_VECTOR_NORM` (see :func:`_checked_vector`)."""
    wide = as32.astype(np.float64)
    squared = float(wide.dot(wide))
    if not math.isfinite(squared):
        raise ValidationError(f"{what} holds NaN or infinity (or a value beyond float32)")
    if math.sqrt(squared) >= _NORM_MARGIN:
        _check_norm64(wide, what)
    return squared


def _float32(value: object, expected_dimension: int,
                    what: str) -> npt.NDArray[np.float32]:
    if type(value) is np.ndarray and value.dtype == np.float32 and value.ndim == 1:
        # already float32: no cast that could overflow, so no errstate (a third of the
        # cost of checking a query vector)
        _check_dimension(value, expected_dimension, what)
        return np.ascontiguousarray(value)
    if isinstance(value, np.ndarray):
        array = value
    elif isinstance(value, (list, tuple)):
        if not all(
            isinstance(x, (int, float, np.number)) and not isinstance(x, bool) for x in value
        ):
            raise ValidationError(f"{what} must hold only numbers")
        try:
            array = np.asarray(value, dtype=np.float64)
        except OverflowError:  # an int like 10**400 has no float
            raise ValidationError(f"{what} holds a value beyond float32") from None
    else:
        raise ValidationError(
            f"{what} must be a list, tuple or 1-d numpy array, got {type(value).__name__}"
        )
    if array.ndim != 1:
        raise ValidationError(f"{what} must be 1-dimensional, got shape {array.shape}")
    if array.dtype.kind not in "fiu":
        raise ValidationError(f"{what} must be numeric, got dtype {array.dtype}")
    _check_dimension(array, expected_dimension, what)
    with np.errstate(over="ignore", invalid="ignore"):  # beyond float32 becomes inf: refused next
        return np.ascontiguousarray(array, dtype=np.float32)


def _check_dimension(array: npt.NDArray[Any], expected_dimension: int, what: str) -> None:
    if len(array) != expected_dimension:
        raise DimensionMismatchError(
            f"{what} has {len(array)} dimensions; the index has {expected_dimension}"
        )


def _own(as32: npt.NDArray[np.float32], value: object) -> DenseVector:
    if as32 is value:
        as32 = as32.copy()  # never alias the caller's buffer: they may change it later
    as32.setflags(write=False)
    return as32


def dense_matrix(value: object, expected_dimension: int) -> DenseMatrix:
    """Canonical read-only float32 matrix of finite values, one vector per row."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"vectors must form a 2-d numeric array: {exc}") from None
    if array.ndim != 2 or array.dtype.kind not in "fiu":
        raise ValidationError("vectors must be a 2-d numeric array, one vector per row")
    if array.shape[1] != expected_dimension:
        raise DimensionMismatchError(
            f"vectors have {array.shape[1]} dimensions; the index has {expected_dimension}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        matrix = np.ascontiguousarray(array, dtype=np.float32)
    if not np.isfinite(matrix).all():
        raise ValidationError("vectors hold NaN or infinity (or a value beyond float32)")
    check_norm(matrix, "a vector")
    if matrix is value:
        matrix = matrix.copy()
    matrix.setflags(write=False)
    return matrix


def sparse_vector(value: object, what: str = "sparse vector") -> SparseVector:
    """Canonical sparse vector: indices ascending, values float32 (as Python floats)."""
    if isinstance(value, SparseVector):
        indices: Sequence[Any] = value.indices
        values: Sequence[Any] = value.values
    elif isinstance(value, Mapping) and set(value) == {"indices", "values"}:
        indices, values = value["indices"], value["values"]
    else:
        raise ValidationError(
            f"{what} must be a SparseVector or a mapping with 'indices' and 'values'"
        )
    indices = list(np.asarray(indices).tolist()) if isinstance(indices, np.ndarray) else indices
    values = list(np.asarray(values).tolist()) if isinstance(values, np.ndarray) else values
    if not isinstance(indices, (list, tuple)) or not isinstance(values, (list, tuple)):
        raise ValidationError(f"{what}: indices and values must be sequences")
    if len(indices) != len(values):
        raise ValidationError(
            f"{what}: {len(indices)} indices but {len(values)} values; they must match"
        )
    if not indices:
        raise ValidationError(f"{what} must have at least one entry")
    for i in indices:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i <= INT32_MAX:
            raise ValidationError(f"{what}: index {i!r} is not a non-negative int32")
    if len(set(indices)) != len(indices):
        raise ValidationError(f"{what}: indices must be unique")
    clean_values: list[float] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValidationError(f"{what}: value {v!r} is not a finite number")
        try:
            number = float(v)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise ValidationError(f"{what}: value {v!r} is not a finite number")
        clean_values.append(number)
    if math.hypot(*clean_values) > MAX_VECTOR_NORM:
        raise ValidationError(
            f"{what} has a norm beyond {MAX_VECTOR_NORM:g}: engines compute in float32, "
            "where its scores would overflow (scale it down)"
        )
    # values are float32, as dense vectors are: the engines with sparse vectors keep
    # them so (pgvector's sparsevec, Milvus, Qdrant's server and Edge, Pinecone), and the
    # in-process stores kept the float64 given, so the same record came back and scored
    # otherwise there (0.1 against 0.10000000149011612); now every backend holds, returns
    # and scores the same values
    stored: list[float] = np.asarray(clean_values, dtype=np.float32).tolist()
    order = sorted(range(len(indices)), key=indices.__getitem__)
    return SparseVector(
        indices=tuple(int(indices[k]) for k in order),
        values=tuple(stored[k] for k in order),
    )


def metadata_value(key: str, value: object) -> MetadataValue:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return text(value, f"metadata {key!r}")
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValidationError(f"metadata {key!r}: int {value} is outside the int64 range")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(f"metadata {key!r}: {value} is not finite")
        return value
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValidationError(f"metadata {key!r}: lists must not be empty")
        if not all(isinstance(v, str) for v in value):
            raise ValidationError(f"metadata {key!r}: lists may hold only str")
        return tuple(text(v, f"metadata {key!r}") for v in value)
    if isinstance(value, np.generic):
        return metadata_value(key, value.item())
    raise ValidationError(
        f"metadata {key!r}: {type(value).__name__} is not allowed; "
        "use str, int, float, bool or a non-empty list of str"
    )


def metadata_key(key: object) -> str:
    if not isinstance(key, str) or not METADATA_KEY_RE.fullmatch(key):
        raise ValidationError(
            f"invalid metadata key {key!r}: use 1 to 64 characters of A-Z, a-z, 0-9 and _, "
            "not starting with a digit"
        )
    return key


def metadata(value: object) -> dict[str, MetadataValue]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(f"metadata must be a dict, got {type(value).__name__}")
    clean = {metadata_key(k): metadata_value(k, v) for k, v in value.items()}
    size = metadata_size(clean)
    if size > MAX_METADATA_BYTES:
        raise ValidationError(f"metadata is {size} bytes as JSON; at most {MAX_METADATA_BYTES}")
    return clean


def metadata_size(clean: Mapping[str, MetadataValue]) -> int:
    """Size of the metadata as compact UTF-8 JSON, the measure of the 40 KiB limit."""
    return len(
        json.dumps(clean, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "replace")
    )


def document(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"document must be a str, got {type(value).__name__}")
    if "\x00" in value:
        raise ValidationError("document must not contain NUL")
    return text(value, "document")


def record(
    value: object, expected_dimension: int, sparse_allowed: bool, position: int = 0
) -> Record:
    """Validate one record given as a :class:`Record`, a mapping or an ``(id, vector)`` tuple."""
    where = f"record {position}"
    raw_id: object
    raw_vector: object
    if isinstance(value, Record):
        raw_id, raw_vector = value.id, value.vector
        raw_meta: object = value.metadata
        raw_sparse: object = value.sparse
        raw_doc: object = value.document
    elif isinstance(value, Mapping):
        unknown = set(value) - {"id", "vector", "values", "metadata", "sparse", "document"}
        if unknown:
            raise ValidationError(f"{where}: unknown fields {sorted(unknown)}")
        raw_id = value.get("id")
        raw_vector = value.get("vector", value.get("values"))
        raw_meta = value.get("metadata")
        raw_sparse = value.get("sparse")
        raw_doc = value.get("document")
    elif isinstance(value, tuple) and 2 <= len(value) <= 3:
        raw_id, raw_vector = value[0], value[1]
        raw_meta = value[2] if len(value) == 3 else None
        raw_sparse = raw_doc = None
    else:
        raise ValidationError(f"{where}: expected a Record, a dict or an (id, vector) tuple")
    try:
        rid = record_id(raw_id)
        vector = dense_vector(raw_vector, expected_dimension)
        sparse = None
        if raw_sparse is not None:
            if not sparse_allowed:
                raise ValidationError("this index was created without sparse vectors")
            sparse = sparse_vector(raw_sparse)
        return Record(
            id=rid,
            vector=vector,
            metadata=metadata(raw_meta),
            sparse=sparse,
            document=document(raw_doc),
        )
    except ValidationError as exc:
        label = f"{where} (id {raw_id!r})" if isinstance(raw_id, str) else where
        raise type(exc)(f"{label}: {exc}") from None

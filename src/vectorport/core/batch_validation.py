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
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any, TypeGuard

import numpy as np
import numpy.typing as npt

from vectorport.core import validation
from vectorport.core.types import MetadataValue, Record, records_of

_KNOWN_KEYS: set[str] = set()
"""Metadata keys already seen to match :data:`validation.METADATA_KEY_RE`; bounded, so
a stream of distinct keys cannot grow it without end."""
_KNOWN_KEYS_LIMIT = 4096
_NORM_CHUNK = 4096
"""Rows per float64 norm computation: bounds the temporary to a few MB at any size."""
_NORM_CEILING = validation.MAX_VECTOR_NORM * (1 - 1e-9)
"""Below this the vectorised norm (a float64 einsum) cannot disagree with the
per-record one (a dot product) about the limit; at or above it the per-record path
decides, with its own arithmetic."""
_SHAPE = attrgetter("shape")
_KIND = attrgetter("dtype.kind")
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
    longest_id: int = 0
    """The most characters of one id (ASCII: its UTF-8 bytes too)."""
    has_documents: bool = False
    """Whether any record has a document."""
    longest_document: int = 0
    """The most characters of one document of the call (0 without documents)."""


def validated_batch(values: Sequence[Any], dimension: int) -> ValidatedBatch | None:
    """The validated records (in order, repeats kept) with their vector facts, or
    ``None`` when the per-record path must decide: anything unusual, and anything it
    would refuse.

    Checked a column at a time (all ids, all vectors, then each metadata key across the
    records that share a key set) rather than a record at a time: the per-value Python
    work of the record loop was most of an upsert's cost in the facade."""
    if not values:
        return ValidatedBatch([], math.inf, 0.0)
    columns = _record_columns(values)
    if columns is None:
        return None
    ids, vectors, metas, sparses, documents = columns
    longest_id = _plain_ids(ids)
    if sparses.count(None) != len(sparses) or not longest_id:
        return None
    if not _plain_vectors(vectors, dimension):
        return None
    checked = _metadatas(metas)
    if checked is None:
        return None
    clean, longest, largest = checked
    has_documents = documents.count(None) != len(documents)
    longest_document = 0
    if has_documents:
        texts = [doc for doc in documents if doc is not None]
        if not all(map(_plain_document, texts)):
            return None
        longest_document = max(map(len, texts))
    stacked = stacked_vectors(vectors)
    if stacked is None:
        return None
    matrix, min_squared_norm = stacked
    # rows of one read-only matrix: each Record's vector is a read-only float32 view,
    # and the caller's arrays are never aliased (the matrix is a fresh copy)
    rows = records_of(ids, matrix, clean, sparses, documents)
    max_abs = max(float(matrix.max()), -float(matrix.min())) if matrix.size else 0.0
    return ValidatedBatch(rows, min_squared_norm, max_abs, longest, largest, longest_id,
                          has_documents, longest_document)


def _plain_ids(ids: tuple[object, ...]) -> int:
    """The longest id's length if every id is a non-empty ASCII str (its UTF-8 size is
    its length, no lone surrogate) of at most :data:`validation.MAX_ID_BYTES`, without
    NUL; else 0."""
    if set(map(type, ids)) != {str}:
        return 0
    texts: tuple[str, ...] = ids  # type: ignore[assignment]
    longest = max(map(len, texts))
    if (longest > validation.MAX_ID_BYTES or min(map(len, texts)) == 0
            or not all(map(str.isascii, texts)) or "\x00" in "".join(texts)):
        return 0
    return longest


def _plain_vectors(vectors: tuple[object, ...], dimension: int) -> bool:
    """Every vector a 1-d numeric numpy array of ``dimension`` values."""
    shape = (dimension,)
    if set(map(type, vectors)) != {np.ndarray} or set(map(_SHAPE, vectors)) != {shape}:
        return False
    return all(kind in "fiu" for kind in set(map(_KIND, vectors)))


def _record_columns(values: Sequence[Any]) -> tuple[tuple[Any, ...], ...] | None:
    """The ids, vectors, metadata, sparse vectors and documents of ``values``, a column
    each; ``None`` if one of them is not of a common record form."""
    if set(map(type, values)) == {tuple} and set(map(len, values)) == {3}:
        ids, vectors, metas = zip(*values, strict=True)  # (id, vector, metadata), the usual
        nones = (None,) * len(values)
        return ids, vectors, metas, nones, nones
    fields = [_fields(value) for value in values]
    if None in fields:
        return None
    return tuple(zip(*fields, strict=True))


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


def _plain_document(value: object) -> TypeGuard[str]:
    return type(value) is str and _plain_text(value)


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


def _known_key(key: object) -> bool:
    """Whether ``key`` is a valid metadata key (:data:`validation.METADATA_KEY_RE`),
    remembered once seen so that the regular expression runs once per key."""
    if type(key) is not str:  # (a str subclass takes the per-record path)
        return False
    if key in _KNOWN_KEYS:
        return True
    if not validation.METADATA_KEY_RE.fullmatch(key):
        return False
    if len(_KNOWN_KEYS) < _KNOWN_KEYS_LIMIT:
        _KNOWN_KEYS.add(key)
    return True


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
        if not _known_key(key):
            return None
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


def _metadatas(values: tuple[Any, ...]
               ) -> tuple[list[dict[str, MetadataValue]], int, int] | None:
    """:func:`_metadata` for every record of a call: the clean dicts in order, the most
    characters of one string, and an upper bound of the largest one's JSON size.

    Records whose metadata has the same keys are checked together, one key at a time
    across them, where a column holds one kind of value; anything else (a mixed column,
    a value the checks are unsure of) is checked record by record with
    :func:`_metadata`, which decides exactly as before."""
    clean: list[dict[str, MetadataValue] | None] = [None] * len(values)
    groups: dict[Collection[str], list[int]] = {}
    first = values[0]
    if (set(map(type, values)) == {dict}  # the common call: one key set throughout
            and all(map(first.keys().__eq__, map(dict.keys, values)))):
        groups[tuple(first)] = list(range(len(values)))
    else:
        for position, value in enumerate(values):
            if type(value) is dict:
                groups.setdefault(frozenset(value), []).append(position)
            elif value is None:
                clean[position] = {}
            else:
                return None
    longest = 0
    largest = 2
    for keys, positions in groups.items():
        rows: list[dict[str, Any]] = [values[p] for p in positions]
        column = _columns(keys, rows)
        if column is None:  # record by record: the exact rule, and exact bounds
            for position, row in zip(positions, rows, strict=True):
                one = _metadata(row)
                if one is None:
                    return None
                clean[position], text_chars, size = one
                longest, largest = max(longest, text_chars), max(largest, size)
            continue
        copies, text_chars, size = column
        longest, largest = max(longest, text_chars), max(largest, size)
        for position, copy in zip(positions, copies, strict=True):
            clean[position] = copy
    return clean, longest, largest  # type: ignore[return-value]


def _columns(keys: Collection[str], rows: list[dict[str, Any]]
             ) -> tuple[list[dict[str, MetadataValue]], int, int] | None:
    """Metadata dicts that all have ``keys``, checked a key at a time: fresh copies (lists
    become tuples), the most characters of one string, and a bound of every row's JSON
    size (the sum of each key's largest value bound). ``None``: not decided here."""
    if not all(map(_known_key, keys)):
        return None
    copies: list[dict[str, Any]] | None = None  # made once: what the caller passed stays theirs
    longest = 0
    bound = 2  # {} and, per entry, "key": (a valid key is ASCII), the value and a comma
    keys = tuple(keys)
    if not keys:
        return list(map(dict, rows)), 0, bound
    # every column at once: each row's values in ``keys`` order, transposed (all in C)
    picked = map(itemgetter(*keys), rows) if len(keys) > 1 else (
        (value,) for value in map(itemgetter(keys[0]), rows))
    for key, column in zip(keys, zip(*picked, strict=True), strict=True):
        kinds = set(map(type, column))
        if len(kinds) != 1:
            return None
        kind = kinds.pop()
        bound += len(key) + 4
        if kind is str:
            if not _plain_texts(column):
                return None
            chars = max(map(len, column))
            bound += 6 * chars + 2  # at worst every character a \uXXXX escape
            longest = max(longest, chars)
        elif kind is bool:
            bound += 5
        elif kind is int:
            if not (min(column) >= validation.INT64_MIN
                    and max(column) <= validation.INT64_MAX):
                return None
            bound += _INT_JSON
        elif kind is float:
            if not math.isfinite(sum(column)):  # NaN and ±inf carry into the sum (and a
                return None  # sum beyond float range merely sends the rows one by one)
            bound += _FLOAT_JSON
        elif kind is list or kind is tuple:
            items = list(chain.from_iterable(column))
            if (not all(column) or set(map(type, items)) != {str}
                    or not _plain_texts(items)):
                return None
            longest = max(longest, max(map(len, items)))
            # each list's characters and items at most the column's most of either
            bound += (2 + 6 * max(map(len, map("".join, column)))
                      + 3 * max(map(len, column)))
            tuples: list[tuple[str, ...]] = list(map(tuple, column))
            if copies is None:  # the copy and the list's tuple in one pass
                copies = [{**row, key: item} for row, item in zip(rows, tuples, strict=True)]
            else:
                for copy, item in zip(copies, tuples, strict=True):
                    copy[key] = item
        else:
            return None
    if bound > validation.MAX_METADATA_BYTES:
        return None  # near the limit: measured record by record
    if copies is None:
        copies = list(map(dict, rows))
    return copies, longest, bound


def _plain_texts(texts: Sequence[str]) -> bool:
    """:func:`_plain_text` of every string of ``texts``, asked of them joined (a
    surrogate, which UTF-8 cannot encode, stays one code point when joined)."""
    joined = "".join(texts)
    return "\x00" not in joined and (joined.isascii() or _encodes(joined))


def stacked_vectors(vectors: Sequence[npt.NDArray[Any]]
                    ) -> tuple[npt.NDArray[np.float32], float] | None:
    """The vectors (1-d numeric arrays of one length) as one fresh read-only float32
    matrix with the smallest squared norm of its rows, or ``None`` if any is not finite
    in float32 or has a norm near or beyond :data:`validation.MAX_VECTOR_NORM` (the
    per-record path then refuses it)."""
    with np.errstate(over="ignore", invalid="ignore"):  # beyond float32 becomes inf
        # the same cast as the per-record ``ascontiguousarray(dtype=float32)``
        # (concatenated, then shaped: half the time of np.stack, same values)
        matrix = np.concatenate(vectors, dtype=np.float32, casting="unsafe").reshape(
            len(vectors), -1)
    smallest = math.inf
    for start in range(0, len(matrix), _NORM_CHUNK):
        # float64 squares of float32 values cannot overflow, so a row's squared norm is
        # finite exactly when all its values are: one pass checks both (NaN fails the <)
        squared = np.einsum("ij,ij->i", matrix[start:start + _NORM_CHUNK],
                            matrix[start:start + _NORM_CHUNK], dtype=np.float64)
        if not squared.max() < _NORM_CEILING * _NORM_CEILING:
            return None
        smallest = min(smallest, float(squared.min()))
    matrix.setflags(write=False)
    return matrix, smallest

"""Pinecone's wire format for the emulator: limits, error bodies, request parsing and
validation, and response rendering. Parsing raises :class:`HttpError` with the body
Pinecone's control plane or data plane answers with."""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from vectorport.testing.emulators.http import HttpError, Request
from vectorport.testing.emulators.pinecone.filters import (
    FilterSyntaxError,
    Predicate,
    compile_filter,
)
from vectorport.testing.emulators.pinecone.store import (
    DEFAULT_NAMESPACE,
    IndexState,
    SparseValues,
    StoredVector,
)

API_VERSION = "2026-07"
LEGACY_API_VERSION = "2025-10"
"""The control-plane version of SDKs before 10 (flat ``dimension`` / ``metric`` / ``spec``)."""
CONTROL_API_VERSIONS = frozenset({LEGACY_API_VERSION, API_VERSION})
DATA_API_VERSIONS = frozenset({"2025-04", "2025-10", "2026-01", "2026-04", API_VERSION})

MAX_UPSERT_VECTORS = 1000
MAX_UPSERT_BYTES = 2 * 1024 * 1024
MAX_METADATA_BYTES = 40 * 1024
MAX_TOP_K = 10_000
MAX_ID_LENGTH = 512
MAX_FETCH_DELETE_IDS = 1000
MAX_DIMENSION = 20_000
MAX_SPARSE_VALUES = 2048
MAX_LIST_LIMIT = 100
MAX_FETCH_BY_METADATA_LIMIT = 10_000
MAX_NAMESPACE_LENGTH = 512

LSN_COMMITTED = "x-pinecone-request-lsn"
LSN_RECONCILED = "x-pinecone-max-indexed-lsn"

INDEX_NAME_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,43}[a-z0-9])?$")
_TAG_KEY_RE = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
_TAG_VALUE_RE = re.compile(r"^[A-Za-z0-9;@_\-. +]{0,120}$")
_METRICS = ("cosine", "euclidean", "dotproduct")
_GRPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 409: 6, 412: 9, 413: 8, 429: 8, 500: 13,
               503: 14}
_CONTROL_CODES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "FORBIDDEN",
                  404: "NOT_FOUND", 409: "ALREADY_EXISTS", 412: "FAILED_PRECONDITION",
                  429: "RESOURCE_EXHAUSTED", 500: "UNKNOWN", 503: "UNAVAILABLE"}


def data_error(status: int, message: str) -> dict[str, Any]:
    """A data-plane error body (gRPC status JSON, as Pinecone's data plane answers)."""
    return {"code": _GRPC_CODES.get(status, 2), "message": message, "details": []}


def control_error(status: int, message: str) -> dict[str, Any]:
    """A control-plane error body."""
    return {"error": {"code": _CONTROL_CODES.get(status, "UNKNOWN"), "message": message},
            "status": status}


class Plane:
    def __init__(self, body: Callable[[int, str], dict[str, Any]]) -> None:
        self.body = body

    def fail(self, status: int, message: str) -> HttpError:
        return HttpError(status, self.body(status, message))


CONTROL = Plane(control_error)
DATA = Plane(data_error)


def header(request: Request, name: str) -> str | None:
    wanted = name.lower()
    for key, value in request.headers.items():
        if key.lower() == wanted:
            return value
    return None


# -- request parsing ----------------------------------------------------------------------------


def parse_object(value: object, plane: Plane, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise plane.fail(400, f"{what} must be a JSON object")
    return value


def parse_schema(raw: object) -> tuple[int, str, bool]:
    if not isinstance(raw, dict) or not isinstance(raw.get("fields"), dict):
        raise CONTROL.fail(400, "schema must be an object with 'fields'")
    fields: dict[str, Any] = raw["fields"]
    unknown = set(fields) - {"_values", "_sparse_values"}
    if unknown or "_values" not in fields:
        raise CONTROL.fail(400, "The emulator serves vector indexes only: a schema with a "
                                "'_values' dense_vector field and optionally a "
                                "'_sparse_values' sparse_vector field; document indexes "
                                f"are not emulated (got fields {sorted(fields)})")
    dense = fields["_values"]
    if not isinstance(dense, dict) or dense.get("type") != "dense_vector":
        raise CONTROL.fail(400, "'_values' must be a dense_vector field")
    dimension = dense.get("dimension")
    if isinstance(dimension, bool) or not isinstance(dimension, int) or not (
        1 <= dimension <= MAX_DIMENSION
    ):
        raise CONTROL.fail(400, f"dimension must be an integer from 1 to {MAX_DIMENSION}")
    metric = dense.get("metric", "cosine")
    if metric not in _METRICS:
        raise CONTROL.fail(400, f"metric must be one of {', '.join(_METRICS)}")
    sparse = "_sparse_values" in fields
    if sparse:
        field = fields["_sparse_values"]
        if not isinstance(field, dict) or field.get("type") != "sparse_vector":
            raise CONTROL.fail(400, "'_sparse_values' must be a sparse_vector field")
    return dimension, metric, sparse


def parse_legacy_create(body: dict[str, Any]) -> tuple[int, str, bool, dict[str, Any]]:
    """A 2025-10 create-index body: ``dimension``, ``metric``, ``vector_type``, ``spec``."""
    if body.get("vector_type", "dense") != "dense":
        raise CONTROL.fail(400, "The vectorport Pinecone emulator does not implement sparse "
                                "(vector_type 'sparse') indexes")
    if body.get("embed") is not None:
        raise CONTROL.fail(400, "The vectorport Pinecone emulator does not implement "
                                "integrated embedding")
    fields = {"_values": {"type": "dense_vector", "dimension": body.get("dimension"),
                          "metric": body.get("metric", "cosine")}}
    dimension, metric, sparse = parse_schema({"fields": fields})
    spec = body.get("spec")
    if not isinstance(spec, dict) or len(spec) != 1:
        raise CONTROL.fail(400, "spec must hold exactly one of serverless, pod, byoc")
    (kind, detail), = spec.items()
    detail = detail if isinstance(detail, dict) else {}
    if kind == "serverless":
        deployment = {"deployment_type": "managed", "cloud": detail.get("cloud", "aws"),
                      "region": detail.get("region", "us-east-1")}
    elif kind == "pod":
        deployment = parse_deployment({"deployment_type": "pod", **detail})
    elif kind == "byoc":
        deployment = {"deployment_type": "byoc", **detail}
    else:
        raise CONTROL.fail(400, f"Unknown spec {kind!r}: use serverless, pod or byoc")
    return dimension, metric, sparse, deployment


def legacy_spec(deployment: dict[str, Any]) -> dict[str, Any]:
    """The 2025-10 ``spec`` describing a deployment."""
    kind = deployment.get("deployment_type")
    detail = {k: v for k, v in deployment.items() if k != "deployment_type"}
    if kind == "pod":
        return {"pod": detail}
    if kind == "byoc":
        return {"byoc": detail}
    return {"serverless": detail}


def parse_deployment(raw: object) -> dict[str, Any]:
    if raw is None:
        return {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"}
    if not isinstance(raw, dict) or raw.get("deployment_type") not in ("managed", "pod", "byoc"):
        raise CONTROL.fail(400, "deployment_type must be 'managed', 'pod' or 'byoc'")
    deployment = dict(raw)
    if deployment["deployment_type"] == "managed":
        deployment.setdefault("cloud", "aws")
        deployment.setdefault("region", "us-east-1")
    if deployment["deployment_type"] == "pod":
        deployment.setdefault("environment", "us-east-1-aws")
        deployment.setdefault("pod_type", "p1.x1")
        deployment.setdefault("replicas", 1)
        deployment.setdefault("shards", 1)
    return deployment


def parse_tags(raw: object) -> dict[str, str] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise CONTROL.fail(400, "tags must be an object")
    for key, value in raw.items():
        if not _TAG_KEY_RE.match(key) or not isinstance(value, str) or not _TAG_VALUE_RE.match(
            value
        ):
            raise CONTROL.fail(400, f"Invalid tag {key!r}: keys are 1-80 characters of "
                                    "A-Z a-z 0-9 _ -; values at most 120 characters")
    return dict(raw) or None


def parse_namespace(raw: object) -> str:
    if raw is None or raw == "" or raw == DEFAULT_NAMESPACE:
        return DEFAULT_NAMESPACE
    if not isinstance(raw, str) or len(raw) > MAX_NAMESPACE_LENGTH or not raw.isascii() or (
        "\x00" in raw
    ):
        raise DATA.fail(400, f"Invalid namespace {raw!r}")
    return raw


def parse_id(raw: object, what: str) -> str:
    if not isinstance(raw, str) or not raw:
        raise DATA.fail(400, f"{what}: a vector id must be a non-empty string")
    if len(raw) > MAX_ID_LENGTH:
        raise DATA.fail(400, f"{what}: vector id is {len(raw)} characters; "
                             f"at most {MAX_ID_LENGTH}")
    if not raw.isascii() or "\x00" in raw:
        raise DATA.fail(400, f"{what}: vector ids must be ASCII without NUL")
    return raw


def parse_ids(raw: object) -> list[str]:
    if not isinstance(raw, list) or not raw:
        raise DATA.fail(400, "ids must be a non-empty array")
    if len(raw) > MAX_FETCH_DELETE_IDS:
        raise DATA.fail(400, f"Too many ids: {len(raw)}; at most {MAX_FETCH_DELETE_IDS}")
    return [parse_id(rid, f"ids[{i}]") for i, rid in enumerate(raw)]


_NUMBER_TYPES = frozenset({int, float})


def parse_dense(
    index: IndexState, raw: object, what: str, *, query: bool = False
) -> npt.NDArray[np.float32]:
    # JSON numbers decode to exactly int or float (a bool is neither type): one set of
    # the element types checks a vector of 384 in a tenth of a per-element test's time
    if not isinstance(raw, list) or not set(map(type, raw)) <= _NUMBER_TYPES:
        raise DATA.fail(400, f"{what} must be an array of numbers")
    if len(raw) != index.dimension:
        raise DATA.fail(400, f"Vector dimension {len(raw)} does not match the dimension of "
                             f"the index {index.dimension}")
    values = np.asarray(raw, dtype=np.float64).astype(np.float32)
    if not np.isfinite(values).all():
        raise DATA.fail(400, f"{what} holds a value that is not a finite float32")
    if not query and not values.any():  # the rule is documented for stored vectors
        raise DATA.fail(400, "Dense vectors must contain at least one non-zero value")
    values.setflags(write=False)
    return values


def parse_sparse(index: IndexState, raw: object, what: str) -> SparseValues:
    # A dense index created the documented way (dimension + metric) takes sparse values
    # when its metric is dotproduct, as the service does; other metrics need the
    # '_sparse_values' field declared.
    if not index.sparse and index.metric != "dotproduct":
        raise DATA.fail(400, "Index configuration does not support sparse values: only "
                             "indexes using the dotproduct metric, or declaring a "
                             "'_sparse_values' field, take them")
    if not isinstance(raw, dict):
        raise DATA.fail(400, f"{what} must be an object with indices and values")
    indices, values = raw.get("indices"), raw.get("values")
    if not isinstance(indices, list) or not isinstance(values, list) or len(indices) != len(
        values
    ):
        raise DATA.fail(400, f"{what}: indices and values must be arrays of the same length")
    if not indices:
        raise DATA.fail(400, f"{what} must have at least one value")
    if len(indices) > MAX_SPARSE_VALUES:
        raise DATA.fail(400, f"{what} has {len(indices)} values; at most {MAX_SPARSE_VALUES}")
    for i in indices:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 2**32:
            raise DATA.fail(400, f"{what}: index {i!r} is not an unsigned 32-bit integer")
    if len(set(indices)) != len(indices):
        raise DATA.fail(400, f"{what}: indices must be unique")
    floats = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise DATA.fail(400, f"{what}: value {v!r} is not a number")
        as32 = float(np.float32(v))
        if not math.isfinite(as32):
            raise DATA.fail(400, f"{what}: value {v!r} is not a finite float32")
        floats.append(as32)
    return SparseValues(tuple(indices), tuple(floats))


def stored_metadata(raw: object, what: str = "metadata", *, limit: bool = True) -> dict[str, Any]:
    """Pinecone's metadata rules: numbers become floats, nulls are dropped."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise DATA.fail(400, f"{what} must be an object")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if not key or key.startswith("$"):
            raise DATA.fail(400, f"{what}: invalid key {key!r}")
        if value is None:
            continue
        if isinstance(value, (bool, str)):
            out[key] = value
        elif isinstance(value, (int, float)):
            number = float(value)
            if not math.isfinite(number):
                raise DATA.fail(400, f"{what}: {key!r} is not a finite number")
            out[key] = number
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[key] = list(value)
        else:
            raise DATA.fail(400, f"Metadata value must be a string, number, boolean or list "
                                 f"of strings, got {json.dumps(value)[:16]!r} for field {key!r}")
    if limit:
        check_metadata_size(out, what)
    return out


def check_metadata_size(metadata: Mapping[str, Any], what: str) -> None:
    size = len(json.dumps(render_metadata(metadata), separators=(",", ":"),
                          ensure_ascii=False).encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise DATA.fail(400, f"{what} size is {size} bytes, which exceeds the limit of "
                             f"{MAX_METADATA_BYTES} bytes per vector")


def parse_vector(index: IndexState, raw: object, position: int) -> StoredVector:
    where = f"vectors[{position}]"
    if not isinstance(raw, dict):
        raise DATA.fail(400, f"{where} must be an object")
    rid = parse_id(raw.get("id"), where)
    values = parse_dense(index, raw.get("values"), f"{where}.values")
    raw_sparse = raw.get("sparseValues", raw.get("sparse_values"))
    sparse = parse_sparse(index, raw_sparse, f"{where}.sparseValues") if raw_sparse else None
    metadata = stored_metadata(raw.get("metadata"), f"{where}.metadata")
    return StoredVector(rid, values, sparse, metadata)


def parse_filter(raw: object) -> Predicate:
    try:
        return compile_filter(raw)
    except FilterSyntaxError as exc:
        raise DATA.fail(400, f"Invalid filter: {exc}") from None


def paginate(ids: list[str], after: str | None, limit: int) -> tuple[list[str], bool]:
    if after is not None:
        ids = [rid for rid in ids if rid > after]
    return ids[:limit], len(ids) > limit


def make_token(last_id: str) -> str:
    return base64.urlsafe_b64encode(last_id.encode("utf-8")).decode("ascii")


def parse_token(raw: object) -> str | None:
    if raw is None or raw == "":
        return None
    try:
        return base64.urlsafe_b64decode(str(raw).encode("ascii")).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError):
        raise DATA.fail(400, "Invalid pagination token") from None


# -- response rendering ---------------------------------------------------------------------------


def _render_number(value: float) -> int | float:
    """Integral floats render without a fraction, as protobuf's JSON does (``2020``)."""
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def render_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _render_number(v) if isinstance(v, float) else v for k, v in metadata.items()}


def render_sparse(sparse: SparseValues) -> dict[str, Any]:
    return {"indices": list(sparse.indices), "values": list(sparse.values)}


def render_vector(record: StoredVector) -> dict[str, Any]:
    item: dict[str, Any] = {"id": record.id, "values": record.values.tolist()}
    if record.sparse is not None:
        item["sparseValues"] = render_sparse(record.sparse)
    if record.metadata:
        item["metadata"] = render_metadata(record.metadata)
    return item



__all__ = [
    "API_VERSION",
    "CONTROL",
    "CONTROL_API_VERSIONS",
    "DATA",
    "DATA_API_VERSIONS",
    "INDEX_NAME_RE",
    "LEGACY_API_VERSION",
    "LSN_COMMITTED",
    "LSN_RECONCILED",
    "MAX_FETCH_BY_METADATA_LIMIT",
    "MAX_LIST_LIMIT",
    "MAX_TOP_K",
    "MAX_UPSERT_BYTES",
    "MAX_UPSERT_VECTORS",
    "Plane",
    "check_metadata_size",
    "control_error",
    "data_error",
    "header",
    "legacy_spec",
    "make_token",
    "paginate",
    "parse_dense",
    "parse_deployment",
    "parse_filter",
    "parse_id",
    "parse_ids",
    "parse_legacy_create",
    "parse_namespace",
    "parse_object",
    "parse_schema",
    "parse_sparse",
    "parse_tags",
    "parse_token",
    "parse_vector",
    "render_metadata",
    "render_sparse",
    "render_vector",
    "stored_metadata",
]

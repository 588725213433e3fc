"""``POST /v2/namespaces/{ns}``: validating and applying one write request.

A request is checked completely before anything changes (a bad request writes nothing),
then applied in the documented order: ``delete_by_filter``, ``patch_by_filter``, then
upserts, patches and deletes, each honouring its ``*_condition``. What changed is
recorded as resolved effects (put / delete of whole documents) so that eventually
consistent reads can replay them after the configured lag.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vectorport.testing.emulators.turbopuffer.filters import (
    FilterCompiler,
    FilterRequestError,
    Predicate,
)
from vectorport.testing.emulators.turbopuffer.namespace import Effect, Namespace
from vectorport.testing.emulators.turbopuffer.values import (
    DISTANCE_METRICS,
    MAX_ATTRIBUTE_NAMES,
    MAX_DELETE_BY_FILTER,
    MAX_PATCH_BY_FILTER,
    AttributeSchema,
    RequestError,
    check_attribute_name,
    check_document_id,
    check_type_name,
    coerce_value,
    filterable_size_problem,
    infer_type,
    invalid_type,
    logical_bytes,
    parse_schema_entry,
)

Doc = dict[str, Any]

WRITE_KEYS = frozenset({
    "upsert_rows", "upsert_columns", "patch_rows", "patch_columns", "deletes",
    "delete_by_filter", "delete_by_filter_allow_partial", "patch_by_filter",
    "patch_by_filter_allow_partial", "upsert_condition", "patch_condition",
    "delete_condition", "distance_metric", "schema", "return_affected_ids",
    "create_namespace", "disable_backpressure", "encryption", "copy_from_namespace",
    "branch_from_namespace", "sharding",
})


@dataclass
class PlannedWrite:
    """A validated write, ready to apply to a namespace (new or existing)."""

    schema: dict[str, AttributeSchema]
    id_type: str | None
    distance_metric: str | None
    upserts: list[Doc] = field(default_factory=list)
    patches: list[Doc] = field(default_factory=list)
    deletes: list[Any] = field(default_factory=list)
    delete_filter: Predicate | None = None
    delete_allow_partial: bool = False
    patch_filter: tuple[Predicate, Doc] | None = None
    patch_allow_partial: bool = False
    upsert_condition: Predicate | None = None
    patch_condition: Predicate | None = None
    delete_condition: Predicate | None = None
    return_ids: bool = False

    @property
    def writes_documents(self) -> bool:
        return bool(self.upserts)


def _rows_from_columns(columns: object, what: str) -> list[dict[str, Any]]:
    if not isinstance(columns, dict):
        raise invalid_type(columns, "a map", what)
    if "id" not in columns:
        raise RequestError(f"{what} must be an object of columns including 'id'")
    ids = columns["id"]
    if not isinstance(ids, list):
        raise invalid_type(ids, "a sequence", f"{what}.id")
    rows: list[dict[str, Any]] = [{"id": i} for i in ids]
    for name, values in columns.items():
        if name == "id":
            continue
        if isinstance(values, str) and name == "vector":
            raise RequestError(f"{what}.vector must be an array of vectors")
        if not isinstance(values, list) or len(values) != len(ids):
            raise RequestError(f"{what}: column {name!r} must have one value per id")
        for row, value in zip(rows, values, strict=True):
            row[name] = value
    return rows


class WritePlanner:
    """Builds a :class:`PlannedWrite` from a request body, checking everything."""

    def __init__(self, namespace: Namespace | None) -> None:
        self.namespace = namespace
        self.schema: dict[str, AttributeSchema] = dict(namespace.schema) if namespace else {}
        self.id_type = namespace.id_type if namespace else None
        self.metric = namespace.distance_metric if namespace else None

    def plan(self, body: dict[str, Any]) -> PlannedWrite:
        unknown = set(body) - WRITE_KEYS
        if unknown:
            raise RequestError(f"unknown write parameter(s): {', '.join(sorted(unknown))}")
        for key in ("branch_from_namespace", "sharding"):
            if body.get(key) is not None:
                raise RequestError(f"{key} is not emulated")
        encryption = body.get("encryption")
        if encryption is not None and encryption != {"mode": "default"}:
            raise RequestError("only the default encryption is emulated")
        metric = body.get("distance_metric")
        if metric is not None:
            if metric not in DISTANCE_METRICS:
                raise RequestError(
                    f"distance_metric must be one of {', '.join(DISTANCE_METRICS)}"
                )
            if self.metric is not None and metric != self.metric:
                raise RequestError(
                    f"distance_metric {metric} differs from the namespace's {self.metric}"
                )
            self.metric = metric
        self._declare_schema(body.get("schema"))
        plan = PlannedWrite(schema=self.schema, id_type=self.id_type, distance_metric=self.metric)
        plan.return_ids = bool(body.get("return_affected_ids", False))
        upsert_rows = self._rows(body, "upsert_rows", "upsert_columns")
        patch_rows = self._rows(body, "patch_rows", "patch_columns")
        for i, row in enumerate(upsert_rows):
            plan.upserts.append(self._document(row, f"upsert_rows[{i}]", patch=False))
        for i, row in enumerate(patch_rows):
            plan.patches.append(self._document(row, f"patch_rows[{i}]", patch=True))
        deletes = body.get("deletes")
        if deletes is not None:
            if not isinstance(deletes, list):
                raise invalid_type(deletes, "a sequence", "deletes")
            for raw in deletes:
                value, id_type = check_document_id(raw, self.id_type)
                self.id_type = self.id_type or id_type
                plan.deletes.append(value)
        plan.id_type = self.id_type
        self._check_vectors(plan)
        compiler = FilterCompiler(self.schema, self.id_type)
        if body.get("delete_by_filter") is not None:
            plan.delete_filter = compiler.compile(body["delete_by_filter"], "delete_by_filter")
            plan.delete_allow_partial = bool(body.get("delete_by_filter_allow_partial", False))
        if body.get("patch_by_filter") is not None:
            plan.patch_filter = self._patch_by_filter(compiler, body["patch_by_filter"])
            plan.patch_allow_partial = bool(body.get("patch_by_filter_allow_partial", False))
        for key in ("upsert_condition", "patch_condition", "delete_condition"):
            if body.get(key) is not None:
                setattr(plan, key, compiler.compile(body[key], key))
        if len(self.schema) + 1 > MAX_ATTRIBUTE_NAMES:
            raise RequestError(f"a namespace may have at most {MAX_ATTRIBUTE_NAMES} attributes")
        return plan

    def _declare_schema(self, raw: object) -> None:
        if raw is None:
            return
        if not isinstance(raw, dict):
            raise RequestError("schema must be an object mapping attribute names to types")
        for name, entry in raw.items():
            if name == "id":
                type_name = entry if isinstance(entry, str) else (
                    entry.get("type") if isinstance(entry, dict) else None)
                if type_name not in ("string", "uint", "uuid"):
                    raise RequestError("the id type must be string, uint or uuid")
                if self.id_type is not None and self.id_type != type_name:
                    raise RequestError(f"cannot change the id type from {self.id_type}")
                self.id_type = type_name
                continue
            check_attribute_name(name)
            self.schema[name] = parse_schema_entry(name, entry, self.schema.get(name))

    def _rows(self, body: dict[str, Any], rows_key: str, columns_key: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        raw_rows = body.get(rows_key)
        if raw_rows is not None:
            if not isinstance(raw_rows, list):
                raise invalid_type(raw_rows, "a sequence", rows_key)
            for i, raw in enumerate(raw_rows):
                if not isinstance(raw, dict):
                    raise invalid_type(raw, "a map", f"{rows_key}[{i}]")
            rows.extend(raw_rows)
        if body.get(columns_key) is not None:
            rows.extend(_rows_from_columns(body[columns_key], columns_key))
        return rows

    def _document(self, row: dict[str, Any], where: str, *, patch: bool) -> Doc:
        if "id" not in row:
            raise RequestError(f"{where}: every document needs an id")
        doc_id, id_type = check_document_id(row["id"], self.id_type)
        self.id_type = self.id_type or id_type
        doc: Doc = {"id": doc_id}
        for name, value in row.items():
            if name == "id":
                continue
            check_attribute_name(name)
            schema = self.schema.get(name)
            if schema is None:
                inferred = infer_type(name, value)
                if inferred is None:
                    doc[name] = None
                    continue
                check_type_name(name, inferred)
                schema = self.schema[name] = AttributeSchema(type=inferred)
            if patch and schema.is_vector:
                raise RequestError(f"{where}: vector attributes cannot be patched")
            stored = coerce_value(schema, value, f"{where}.{name}")
            filterable_size_problem(schema, stored, f"{where}.{name}")
            doc[name] = stored
        return doc

    def _check_vectors(self, plan: PlannedWrite) -> None:
        vector_names = [n for n, s in self.schema.items() if s.is_vector]
        if not vector_names:
            return
        if self.metric is None:
            raise RequestError("distance_metric is required for a namespace with vectors")
        for i, doc in enumerate(plan.upserts):
            missing = [n for n in vector_names if doc.get(n) is None]
            if missing:
                raise RequestError(
                    f"upsert_rows[{i}]: documents must include vector attribute(s) "
                    f"{', '.join(missing)}"
                )

    def _patch_by_filter(self, compiler: FilterCompiler, raw: object) -> tuple[Predicate, Doc]:
        if not isinstance(raw, dict) or set(raw) != {"filters", "patch"}:
            raise RequestError("patch_by_filter takes an object with filters and patch")
        predicate = compiler.compile(raw["filters"], "patch_by_filter.filters")
        if not isinstance(raw["patch"], dict) or "id" in raw["patch"]:
            raise RequestError("patch_by_filter.patch is an object of attributes (no id)")
        patch = self._document({"id": "__patch__", **raw["patch"]}, "patch_by_filter.patch",
                               patch=True)
        patch.pop("id")
        return predicate, patch


@dataclass
class WriteOutcome:
    upserted: list[Any] = field(default_factory=list)
    patched: list[Any] = field(default_factory=list)
    deleted: list[Any] = field(default_factory=list)
    remaining: bool = False
    bytes_written: int = 0


def apply_write(namespace: Namespace, plan: PlannedWrite) -> tuple[WriteOutcome, list[Effect]]:
    """Apply a planned write to the current (strong) state; return what changed."""
    namespace.schema = plan.schema
    namespace.id_type = plan.id_type
    namespace.distance_metric = plan.distance_metric
    docs = namespace.docs
    outcome = WriteOutcome()
    effects: list[Effect] = []

    def put(doc: Doc) -> None:
        docs[doc["id"]] = doc
        effects.append(("put", doc["id"], doc))
        outcome.bytes_written += logical_bytes(doc)

    def remove(doc_id: Any) -> None:
        del docs[doc_id]
        effects.append(("delete", doc_id, None))

    if plan.delete_filter is not None:
        hits = [i for i, d in docs.items() if plan.delete_filter(d, None)]
        if len(hits) > MAX_DELETE_BY_FILTER:
            outcome.remaining = True
            hits = hits[:MAX_DELETE_BY_FILTER]
        for doc_id in hits:
            remove(doc_id)
            outcome.deleted.append(doc_id)
    if plan.patch_filter is not None:
        predicate, patch = plan.patch_filter
        hits = [i for i, d in docs.items() if predicate(d, None)]
        if len(hits) > MAX_PATCH_BY_FILTER:
            outcome.remaining = True
            hits = hits[:MAX_PATCH_BY_FILTER]
        for doc_id in hits:
            put(_merged(docs[doc_id], patch))
            outcome.patched.append(doc_id)
    for doc in plan.upserts:
        current = docs.get(doc["id"])
        condition = plan.upsert_condition
        if current is not None and condition is not None and not condition(current, doc):
            continue
        put({k: v for k, v in doc.items() if v is not None})
        outcome.upserted.append(doc["id"])
    for patch in plan.patches:
        current = docs.get(patch["id"])
        if current is None:
            continue
        if plan.patch_condition is not None and not plan.patch_condition(current, patch):
            continue
        put(_merged(current, patch))
        outcome.patched.append(patch["id"])
    for doc_id in plan.deletes:
        current = docs.get(doc_id)
        if current is None:
            continue
        if plan.delete_condition is not None and not plan.delete_condition(current, {}):
            continue
        remove(doc_id)
        outcome.deleted.append(doc_id)
    return outcome, effects


def _merged(current: Doc, patch: Doc) -> Doc:
    merged = dict(current)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def check_limits_before_apply(namespace: Namespace, plan: PlannedWrite) -> None:
    """Filter-based writes that match too many documents fail unless partial is allowed."""
    if plan.delete_filter is not None and not plan.delete_allow_partial:
        hits = sum(1 for d in namespace.docs.values() if plan.delete_filter(d, None))
        if hits > MAX_DELETE_BY_FILTER:
            raise RequestError(
                f"delete_by_filter matched {hits} documents; at most {MAX_DELETE_BY_FILTER} "
                "per request (set delete_by_filter_allow_partial to delete in batches)"
            )
    if plan.patch_filter is not None and not plan.patch_allow_partial:
        predicate = plan.patch_filter[0]
        hits = sum(1 for d in namespace.docs.values() if predicate(d, None))
        if hits > MAX_PATCH_BY_FILTER:
            raise RequestError(
                f"patch_by_filter matched {hits} documents; at most {MAX_PATCH_BY_FILTER} "
                "per request (set patch_by_filter_allow_partial to patch in batches)"
            )


__all__ = [
    "FilterRequestError",
    "PlannedWrite",
    "WriteOutcome",
    "WritePlanner",
    "apply_write",
    "check_limits_before_apply",
]

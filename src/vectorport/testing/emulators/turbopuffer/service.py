"""The emulated service: namespaces in memory behind one lock, and the JSON each
endpoint answers with. HTTP concerns (routes, auth, status codes) live in ``server``.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

from vectorport.testing.emulators.http import Faults
from vectorport.testing.emulators.turbopuffer.namespace import Namespace
from vectorport.testing.emulators.turbopuffer.queries import QueryRunner, consistency_level
from vectorport.testing.emulators.turbopuffer.values import (
    DEFAULT_PAGE_SIZE,
    MAX_MULTI_QUERIES,
    MAX_PAGE_SIZE,
    NAMESPACE_RE,
    RequestError,
    parse_schema_entry,
)
from vectorport.testing.emulators.turbopuffer.writes import (
    WritePlanner,
    apply_write,
    check_limits_before_apply,
)


class NamespaceNotFoundError(Exception):
    """The namespace does not exist (404)."""


class ReadOnlyError(Exception):
    """The namespace is read-only (403)."""


def _check_name(name: str) -> None:
    if not NAMESPACE_RE.match(name):
        raise RequestError(
            f"invalid namespace name {name!r}: use 1 to 128 characters of A-Z a-z 0-9 - _ ."
        )


def _billing_query(rows: int) -> dict[str, int]:
    return {"billable_logical_bytes_queried": 0, "billable_logical_bytes_returned": rows * 64}


def _elapsed_ms(started: float) -> int:
    """Measured time in whole milliseconds, rounded up: work that took any time reports at
    least 1 ms, as the service's counters do (they were always 0 here before)."""
    return max(1, math.ceil((time.perf_counter() - started) * 1000))


def _query_performance(started: float, size: int) -> dict[str, Any]:
    elapsed = _elapsed_ms(started)
    return {
        "approx_namespace_size": size,
        "cache_hit_ratio": 1.0,
        "cache_temperature": "hot",
        "exhaustive_search_count": size,
        "query_execution_ms": elapsed,
        "server_total_ms": elapsed,
    }


class TurbopufferService:
    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self.namespaces: dict[str, Namespace] = {}
        self.lock = threading.RLock()

    def _get(self, name: str) -> Namespace:
        _check_name(name)
        namespace = self.namespaces.get(name)
        if namespace is None:
            raise NamespaceNotFoundError(f"namespace {name!r} was not found")
        return namespace

    # -- writes -------------------------------------------------------------------

    def write(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        _check_name(name)
        with self.lock:
            existing = self.namespaces.get(name)
            if existing is not None and existing.read_only:
                raise ReadOnlyError(f"namespace {name!r} is read-only")
            copy_from = body.get("copy_from_namespace")
            if copy_from is not None:
                return self._copy(name, existing, body, copy_from)
            plan = WritePlanner(existing).plan(body)
            create = body.get("create_namespace")
            if existing is None:
                if create is False or not (plan.writes_documents or create):
                    raise NamespaceNotFoundError(f"namespace {name!r} was not found")
                if create and not plan.writes_documents and plan.id_type is None:
                    raise RequestError("creating an empty namespace requires the id type "
                                       "to be declared in schema")
            namespace = existing or Namespace(name)
            check_limits_before_apply(namespace, plan)
            outcome, effects = apply_write(namespace, plan)
            self.namespaces[name] = namespace
            namespace.record(effects, self.faults.visible_at())
        response: dict[str, Any] = {
            "status": "OK",
            "message": "write applied",
            "rows_affected": len(outcome.upserted) + len(outcome.patched) + len(outcome.deleted),
            "billing": {"billable_logical_bytes_written": outcome.bytes_written},
            "performance": {"server_total_ms": _elapsed_ms(started)},
        }
        if plan.upserts:
            response["rows_upserted"] = len(outcome.upserted)
        if plan.patches or plan.patch_filter is not None:
            response["rows_patched"] = len(outcome.patched)
        if plan.deletes or plan.delete_filter is not None:
            response["rows_deleted"] = len(outcome.deleted)
        if plan.delete_filter is not None or plan.patch_filter is not None:
            response["rows_remaining"] = outcome.remaining
        if plan.return_ids:
            for key, ids in (("upserted_ids", outcome.upserted), ("patched_ids", outcome.patched),
                             ("deleted_ids", outcome.deleted)):
                if ids:
                    response[key] = ids
        return response

    def _copy(self, name: str, existing: Namespace | None, body: dict[str, Any],
              source: object) -> dict[str, Any]:
        if set(body) - {"copy_from_namespace", "encryption"}:
            raise RequestError("a copy_from_namespace request cannot contain other writes")
        if isinstance(source, dict):
            if set(source) - {"source_namespace"}:
                raise RequestError("cross-organisation and cross-region copies are not emulated")
            source = source.get("source_namespace")
        if not isinstance(source, str):
            raise RequestError("copy_from_namespace names a namespace")
        origin = self._get(source)
        if existing is not None and existing.docs:
            raise RequestError("the destination namespace must be empty")
        target = Namespace(name, schema=dict(origin.schema), id_type=origin.id_type,
                           distance_metric=origin.distance_metric)
        target.docs = dict(origin.docs)
        self.namespaces[name] = target
        target.record([("put", i, d) for i, d in target.docs.items()], self.faults.visible_at())
        count = len(target.docs)
        return {"status": "OK", "message": "copy applied", "rows_affected": count,
                "rows_upserted": count, "billing": {"billable_logical_bytes_written": 0}}

    # -- reads --------------------------------------------------------------------

    def query(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        with self.lock:
            namespace = self._get(name)
            if "queries" in body:
                return self._multi_query(namespace, body, started)
            level = consistency_level(body.get("consistency"))
            encoding = body.get("vector_encoding", "float")
            if encoding not in ("float", "base64"):
                raise RequestError("vector_encoding is float or base64")
            docs = namespace.view(level)
            sub = {k: v for k, v in body.items() if k not in ("consistency", "vector_encoding")}
            result = QueryRunner(namespace, docs, encoding).run(sub)
            size = len(docs)
        result["billing"] = _billing_query(len(result.get("rows", [])))
        result["performance"] = _query_performance(started, size)
        return result

    def _multi_query(self, namespace: Namespace, body: dict[str, Any],
                     started: float) -> dict[str, Any]:
        extra = set(body) - {"queries", "consistency", "vector_encoding"}
        if extra:
            raise RequestError("a multi-query takes only queries, consistency and vector_encoding")
        queries = body["queries"]
        if not isinstance(queries, list) or not queries or len(queries) > MAX_MULTI_QUERIES:
            raise RequestError(f"queries holds 1 to {MAX_MULTI_QUERIES} query objects")
        level = consistency_level(body.get("consistency"))
        encoding = body.get("vector_encoding", "float")
        docs = namespace.view(level)
        results = []
        for i, query in enumerate(queries):
            if not isinstance(query, dict):
                raise RequestError(f"queries[{i}] must be an object")
            if "consistency" in query or "vector_encoding" in query:
                raise RequestError("set consistency and vector_encoding on the request root")
            results.append(QueryRunner(namespace, docs, encoding).run(query))
        return {"results": results, "billing": _billing_query(0),
                "performance": _query_performance(started, len(docs))}

    def delete_namespace(self, name: str) -> dict[str, Any]:
        with self.lock:
            namespace = self._get(name)
            if namespace.read_only:
                raise ReadOnlyError(f"namespace {name!r} is read-only")
            del self.namespaces[name]
        return {"status": "OK"}

    def metadata(self, name: str) -> dict[str, Any]:
        with self.lock:
            return self._get(name).metadata()

    def schema(self, name: str) -> dict[str, Any]:
        with self.lock:
            return self._get(name).schema_json()

    def update_schema(self, name: str, body: object) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise RequestError("the schema is an object mapping attribute names to types")
        with self.lock:
            namespace = self._get(name)
            updated = dict(namespace.schema)
            for attr, entry in body.items():
                updated[attr] = parse_schema_entry(attr, entry, updated.get(attr))
            namespace.schema = updated
            return namespace.schema_json()

    def update_metadata(self, name: str, body: object) -> dict[str, Any]:
        if not isinstance(body, dict) or set(body) - {"read_only", "pinning"}:
            raise RequestError("metadata updates take read_only (pinning is not emulated)")
        if body.get("pinning") not in (None, False):
            raise RequestError("pinning is not emulated")
        with self.lock:
            namespace = self._get(name)
            if "read_only" in body:
                namespace.read_only = bool(body["read_only"])
            return namespace.metadata()

    def hint_cache_warm(self, name: str) -> dict[str, Any]:
        with self.lock:
            self._get(name)
        return {"status": "ACCEPTED", "message": "cache is always warm in the emulator"}

    def list_namespaces(self, prefix: str | None, cursor: str | None,
                        page_size: int | None) -> dict[str, Any]:
        size = DEFAULT_PAGE_SIZE if page_size is None else page_size
        if not 1 <= size <= MAX_PAGE_SIZE:
            raise RequestError(f"page_size must be between 1 and {MAX_PAGE_SIZE}")
        with self.lock:
            names = sorted(
                n for n in self.namespaces
                if (prefix is None or n.startswith(prefix)) and (cursor is None or n > cursor)
            )
        page = names[:size]
        out: dict[str, Any] = {"namespaces": [{"id": n} for n in page]}
        if len(names) > size:
            out["next_cursor"] = page[-1]
        return out

"""The HTTP routes of the Pinecone emulator: control plane and vectors data plane.

Shapes follow the installed official SDK (API version ``2026-07``): the control plane
describes an index by a ``schema`` whose reserved fields ``_values`` (dense) and
``_sparse_values`` (sparse) make it a vector index, a ``deployment`` and a ``host``; the
data plane speaks the vectors API in camelCase JSON. Each index's data plane is served on
this same server under ``/data/<index name>``, and that URL is the index ``host``.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from vectorport.testing.emulators.http import (
    EmulatorServer,
    Faults,
    HttpError,
    Request,
    Response,
    Router,
)
from vectorport.testing.emulators.pinecone import namespaces
from vectorport.testing.emulators.pinecone.filters import Predicate
from vectorport.testing.emulators.pinecone.store import (
    IndexState,
    Namespace,
    SparseValues,
    StoredVector,
    best_positions,
    delete_all_op,
    delete_filter_op,
    delete_ids_op,
    dense_scores,
    tie_break,
    update_op,
    upsert_op,
)
from vectorport.testing.emulators.pinecone.wire import (
    CONTROL,
    CONTROL_API_VERSIONS,
    DATA,
    DATA_API_VERSIONS,
    INDEX_NAME_RE,
    LSN_COMMITTED,
    LSN_RECONCILED,
    MAX_FETCH_BY_METADATA_LIMIT,
    MAX_LIST_LIMIT,
    MAX_TOP_K,
    MAX_UPSERT_BYTES,
    MAX_UPSERT_VECTORS,
    Plane,
    check_metadata_size,
    data_error,
    header,
    legacy_spec,
    make_token,
    paginate,
    parse_dense,
    parse_deployment,
    parse_filter,
    parse_id,
    parse_ids,
    parse_legacy_create,
    parse_namespace,
    parse_object,
    parse_schema,
    parse_sparse,
    parse_tags,
    parse_token,
    parse_vector,
    render_metadata,
    render_sparse,
    render_vector,
    stored_metadata,
)

log = logging.getLogger("vectorport.emulator.pinecone")


class PineconeEmulator:
    """An in-memory Pinecone serving the control plane and the vectors data plane.

    ``faults`` may be changed while running. ``retry_after_seconds`` is sent as a
    ``Retry-After`` header with injected 429/503 answers (``None``: no header); the SDK
    honours it when it retries. ``report_lsn=False`` drops the LSN headers, as an index
    that does not report data freshness would.
    """

    def __init__(
        self,
        *,
        api_key: str = "emulator-key",
        faults: Faults | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        retry_after_seconds: float | None = 0.0,
    ) -> None:
        self.api_key = api_key
        self.faults = faults or Faults()
        self.retry_after_seconds = retry_after_seconds
        self.report_lsn = True
        self.indexes: dict[str, IndexState] = {}
        self.lock = threading.RLock()
        router = Router()
        self._register(router)
        self.server = EmulatorServer(
            router,
            host=host,
            port=port,
            faults=self.faults,
            error_body=data_error,
            authorize=self._authorize,
            fault_exempt=lambda request: True,  # injected here, with Pinecone's bodies
            unrouted=self._not_implemented,
        )

    # -- plumbing -----------------------------------------------------------------------

    def _authorize(self, request: Request) -> None:
        plane = DATA if request.path.startswith("/data/") else CONTROL
        key = header(request, "Api-Key")
        if key is None or not secrets.compare_digest(key.encode(), self.api_key.encode()):
            raise plane.fail(401, "Invalid API Key")
        version = header(request, "X-Pinecone-Api-Version")
        allowed = DATA_API_VERSIONS if plane is DATA else CONTROL_API_VERSIONS
        if version is not None and version not in allowed:
            raise plane.fail(
                400,
                f"Unsupported API version {version!r}; this emulator implements "
                f"{', '.join(sorted(allowed))}",
            )

    def _not_implemented(self, request: Request) -> Response:
        """A route the emulator does not serve, in the plane's own error format. 400, not
        404 (the SDK would report a missing index) nor 5xx (the SDK would retry)."""
        plane = DATA if request.path.startswith("/data/") else CONTROL
        path = request.path
        if path.startswith("/data/"):
            path = "/" + path.split("/", 3)[3] if path.count("/") >= 3 else "/"
        return Response(400, plane.body(400, f"The vectorport Pinecone emulator does not "
                                             f"implement {request.method} {path}"))

    def _route(
        self, router: Router, method: str, pattern: str, plane: Plane,
        handler: Callable[[Request], Response],
    ) -> None:
        def guarded(request: Request) -> Response:
            status = self.faults.injected_status()
            if status is not None:
                headers: tuple[tuple[str, str], ...] = ()
                if self.retry_after_seconds is not None and status in (429, 503):
                    headers = (("Retry-After", f"{self.retry_after_seconds:g}"),)
                message = ("Too many requests (injected fault)" if status == 429
                           else "Service unavailable (injected fault)")
                return Response(status, plane.body(status, message), headers)
            try:
                with self.lock:
                    return handler(request)
            except HttpError:
                raise
            except json.JSONDecodeError as exc:
                raise plane.fail(400, f"Invalid JSON: {exc}") from None
            except Exception:  # a bug in the emulator: answer like a server would
                log.exception("pinecone emulator failed on %s %s", request.method, request.path)
                raise plane.fail(500, "Internal error in the emulator") from None

        router.route(method, pattern)(guarded)

    def _register(self, router: Router) -> None:
        c, d = CONTROL, DATA
        self._route(router, "POST", "/indexes", c, self.create_index)
        self._route(router, "GET", "/indexes", c, self.list_indexes)
        self._route(router, "GET", "/indexes/{name}", c, self.describe_index)
        self._route(router, "DELETE", "/indexes/{name}", c, self.delete_index)
        self._route(router, "PATCH", "/indexes/{name}", c, self.configure_index)
        base = "/data/{index}"
        self._route(router, "POST", base + "/vectors/upsert", d, self.upsert)
        self._route(router, "POST", base + "/query", d, self.query)
        self._route(router, "GET", base + "/vectors/fetch", d, self.fetch)
        self._route(router, "POST", base + "/vectors/fetch_by_metadata", d,
                    self.fetch_by_metadata)
        self._route(router, "POST", base + "/vectors/delete", d, self.delete)
        self._route(router, "POST", base + "/vectors/update", d, self.update)
        self._route(router, "POST", base + "/describe_index_stats", d, self.describe_index_stats)
        self._route(router, "GET", base + "/vectors/list", d, self.list_vectors)
        self._route(router, "GET", base + "/namespaces", d, self.list_namespaces)
        self._route(router, "POST", base + "/namespaces", d, self.create_namespace)
        self._route(router, "GET", base + "/namespaces/{namespace}", d, self.describe_namespace)
        self._route(router, "DELETE", base + "/namespaces/{namespace}", d,
                    self.delete_namespace)

    # -- control plane --------------------------------------------------------------------

    def _model(self, request: Request, index: IndexState) -> dict[str, Any]:
        fields: dict[str, Any] = {"_values": {
            "type": "dense_vector", "dimension": index.dimension, "metric": index.metric}}
        if index.sparse:
            fields["_sparse_values"] = {"type": "sparse_vector"}
        host = header(request, "Host") or self.server.url.removeprefix("http://")
        model: dict[str, Any] = {
            "name": index.name,
            "host": f"http://{host}/data/{index.name}",
            "status": {"ready": True, "state": "Ready"},
            "schema": {"fields": fields},
            "deployment": index.deployment,
            "deletion_protection": index.deletion_protection,
            "tags": index.tags,
        }
        # The 2025-10 API's index model (what SDKs before 10 read): flat dimension /
        # metric / vector_type and a spec. Both shapes are sent; each SDK ignores the other.
        model.update(dimension=index.dimension, metric=index.metric, vector_type="dense",
                     spec=legacy_spec(index.deployment))
        if index.deployment.get("deployment_type") != "pod":
            model["read_capacity"] = {"mode": "OnDemand", "status": {"state": "Ready"}}
        return model

    def _index_for_control(self, request: Request) -> IndexState:
        name = request.match["name"]
        index = self.indexes.get(name)
        if index is None:
            raise CONTROL.fail(404, f"Resource {name} not found")
        return index

    def create_index(self, request: Request) -> Response:
        body = parse_object(request.json(), CONTROL, "request body")
        name = body.get("name")
        if name is None:
            name = f"index-{secrets.token_hex(4)}"
        if not isinstance(name, str) or not INDEX_NAME_RE.match(name):
            raise CONTROL.fail(400, f"Invalid index name {name!r}: use 1-45 lowercase "
                                    "alphanumeric characters or '-', starting and ending "
                                    "with an alphanumeric character")
        if "schema" not in body and ("dimension" in body or "spec" in body):
            dimension, metric, sparse, deployment = parse_legacy_create(body)
        else:
            dimension, metric, sparse = parse_schema(body.get("schema"))
            deployment = parse_deployment(body.get("deployment"))
        protection = body.get("deletion_protection", "disabled")
        if protection not in ("enabled", "disabled"):
            raise CONTROL.fail(400, "deletion_protection must be 'enabled' or 'disabled'")
        tags = parse_tags(body.get("tags"))
        if name in self.indexes:
            raise CONTROL.fail(409, f"Resource {name} already exists")
        index = IndexState(name=name, dimension=dimension, metric=metric, sparse=sparse,
                           deployment=deployment, deletion_protection=protection, tags=tags)
        self.indexes[name] = index
        return Response(201, self._model(request, index))

    def list_indexes(self, request: Request) -> Response:
        return Response(200, {"indexes": [self._model(request, i)
                                          for i in self.indexes.values()]})

    def describe_index(self, request: Request) -> Response:
        return Response(200, self._model(request, self._index_for_control(request)))

    def delete_index(self, request: Request) -> Response:
        index = self._index_for_control(request)
        if index.deletion_protection == "enabled":
            raise CONTROL.fail(403, "Deletion protection is enabled for this index. "
                                    "Disable deletion protection before retrying.")
        del self.indexes[index.name]
        return Response(202)

    def configure_index(self, request: Request) -> Response:
        index = self._index_for_control(request)
        body = parse_object(request.json(), CONTROL, "request body")
        unknown = set(body) - {"deletion_protection", "tags"}
        if unknown:
            raise CONTROL.fail(400, f"The emulator cannot configure {sorted(unknown)}")
        if "deletion_protection" in body:
            if body["deletion_protection"] not in ("enabled", "disabled"):
                raise CONTROL.fail(400, "deletion_protection must be 'enabled' or 'disabled'")
            index.deletion_protection = body["deletion_protection"]
        if "tags" in body:
            merged = dict(index.tags or {})
            for key, value in (parse_tags(body["tags"]) or {}).items():
                if value == "":
                    merged.pop(key, None)
                else:
                    merged[key] = value
            index.tags = merged or None
        return Response(200, self._model(request, index))

    # -- data plane: helpers ------------------------------------------------------------------

    def _index(self, request: Request) -> IndexState:
        index = self.indexes.get(request.match["index"])
        if index is None:
            raise DATA.fail(404, f"Index {request.match['index']!r} not found")
        index.advance(time.monotonic())
        return index

    def _written(self, lsn: int, body: dict[str, Any] | None = None) -> Response:
        headers = ((LSN_COMMITTED, str(lsn)),) if self.report_lsn else ()
        return Response(200, body if body is not None else {}, headers)

    def _read_headers(self, ns: Namespace | None) -> tuple[tuple[str, str], ...]:
        if not self.report_lsn:
            return ()
        return ((LSN_RECONCILED, str(ns.reconciled if ns is not None else 0)),)

    # -- data plane: writes ---------------------------------------------------------------------

    def upsert(self, request: Request) -> Response:
        index = self._index(request)
        if len(request.body) > MAX_UPSERT_BYTES:
            raise DATA.fail(413, f"Request size {len(request.body)} bytes exceeds the "
                                 f"maximum supported size of {MAX_UPSERT_BYTES} bytes")
        body = parse_object(request.json(), DATA, "request body")
        raw_vectors = body.get("vectors")
        if not isinstance(raw_vectors, list) or not raw_vectors:
            raise DATA.fail(400, "vectors must be a non-empty array")
        if len(raw_vectors) > MAX_UPSERT_VECTORS:
            raise DATA.fail(400, f"Too many vectors in one upsert: {len(raw_vectors)}; "
                                 f"at most {MAX_UPSERT_VECTORS} per request")
        vectors = [parse_vector(index, raw, position) for position, raw in enumerate(raw_vectors)]
        ns = index.namespace(parse_namespace(body.get("namespace")))
        lsn = ns.commit(upsert_op(vectors), self.faults.visible_at())
        return self._written(lsn, {"upsertedCount": len(vectors)})

    def delete(self, request: Request) -> Response:
        index = self._index(request)
        body = parse_object(request.json(), DATA, "request body")
        name = parse_namespace(body.get("namespace"))
        if body.get("deleteAll") or body.get("delete_all"):
            operation = delete_all_op()
        elif body.get("filter") is not None:
            if body["filter"] == {}:
                raise DATA.fail(400, "Delete with empty metadata filter is not allowed")
            operation = delete_filter_op(parse_filter(body["filter"]))
        elif body.get("ids") is not None:
            operation = delete_ids_op(parse_ids(body["ids"]))
        else:
            raise DATA.fail(400, "Delete needs ids, a filter or deleteAll")
        lsn = index.namespace(name).commit(operation, self.faults.visible_at())
        return self._written(lsn)

    def update(self, request: Request) -> Response:
        index = self._index(request)
        body = parse_object(request.json(), DATA, "request body")
        rid = body.get("id")
        raw_filter = body.get("filter")
        if (rid is None) == (raw_filter is None):
            raise DATA.fail(400, "Update needs exactly one of id and filter")
        values = sparse = None
        if body.get("values") is not None:
            values = parse_dense(index, body["values"], "values")
        raw_sparse = body.get("sparseValues", body.get("sparse_values"))
        if raw_sparse is not None:
            sparse = parse_sparse(index, raw_sparse, "sparseValues")
        set_metadata = body.get("setMetadata", body.get("set_metadata"))
        if set_metadata is not None:
            set_metadata = stored_metadata(set_metadata, "setMetadata", limit=False)
        ns = index.namespace(parse_namespace(body.get("namespace")))
        if rid is not None:
            rid = parse_id(rid, "id")
            old = ns.latest.get(rid)
            if old is not None and set_metadata:
                check_metadata_size({**old.metadata, **set_metadata}, "metadata")
            lsn = ns.commit(update_op(rid, None, values, sparse, set_metadata),
                            self.faults.visible_at())
            return self._written(lsn)
        if values is not None or sparse is not None:
            raise DATA.fail(400, "An update by filter can only set metadata")
        if raw_filter == {}:
            raise DATA.fail(400, "Update with empty metadata filter is not allowed")
        predicate = parse_filter(raw_filter)
        matched = [r for r in ns.latest.values() if predicate(r.metadata)]
        for record in matched:
            check_metadata_size({**record.metadata, **(set_metadata or {})}, "metadata")
        if body.get("dryRun") or body.get("dry_run"):
            return Response(200, {"matchedRecords": len(matched)})
        lsn = ns.commit(update_op(None, predicate, None, None, set_metadata),
                        self.faults.visible_at())
        return self._written(lsn, {"matchedRecords": len(matched)})

    # -- data plane: reads -----------------------------------------------------------------------

    def query(self, request: Request) -> Response:
        index = self._index(request)
        body = parse_object(request.json(), DATA, "request body")
        top_k = body.get("topK", body.get("top_k"))
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise DATA.fail(400, f"topK must be an integer between 1 and {MAX_TOP_K}, "
                                 f"got {top_k!r}")
        for knob in ("scanFactor", "maxCandidates"):
            if body.get(knob) is not None:
                raise DATA.fail(400, f"{knob} is only available on dedicated read nodes")
        raw_sparse = body.get("sparseVector", body.get("sparse_vector"))
        vector_given, id_given = body.get("vector") is not None, body.get("id") is not None
        if id_given and (vector_given or raw_sparse is not None):
            raise DATA.fail(400, "Query by id cannot also carry a vector")
        if not (vector_given or id_given or raw_sparse is not None):
            raise DATA.fail(400, "Query needs a vector, a sparseVector or an id")
        name = parse_namespace(body.get("namespace"))
        ns = index.namespaces.get(name)
        predicate = parse_filter(body["filter"]) if body.get("filter") is not None else None
        query_sparse = None
        if raw_sparse is not None:
            query_sparse = parse_sparse(index, raw_sparse, "sparseVector")
            if index.metric != "dotproduct":
                raise DATA.fail(400, f"Cannot query with sparse values on an index with "
                                     f"metric {index.metric}; sparse-dense queries need "
                                     "dotproduct")

        query_dense: npt.NDArray[np.float32] | None = None
        if vector_given:
            query_dense = parse_dense(index, body["vector"], "vector", query=True)
        elif id_given:
            source = ns.visible.get(parse_id(body["id"], "id")) if ns is not None else None
            if source is None:
                return Response(200, {"matches": [], "namespace": body.get("namespace") or "",
                                      "usage": {"readUnits": 1}}, self._read_headers(ns))
            query_dense = source.values
        matches = self._search(index, ns, query_dense, query_sparse, predicate, top_k)
        include_values = bool(body.get("includeValues", body.get("include_values", False)))
        include_metadata = bool(body.get("includeMetadata",
                                         body.get("include_metadata", False)))
        out = []
        for record, score in matches:
            item: dict[str, Any] = {"id": record.id, "score": score,
                                    "values": record.values.tolist() if include_values else []}
            if include_values and record.sparse is not None:
                item["sparseValues"] = render_sparse(record.sparse)
            if include_metadata:
                item["metadata"] = render_metadata(record.metadata)
            out.append(item)
        return Response(200, {"matches": out, "namespace": body.get("namespace") or "",
                              "usage": {"readUnits": 1 + len(out) // 100}},
                        self._read_headers(ns))

    def _search(
        self,
        index: IndexState,
        ns: Namespace | None,
        dense: npt.NDArray[np.float32] | None,
        sparse: SparseValues | None,
        predicate: Predicate | None,
        top_k: int,
    ) -> list[tuple[StoredVector, float]]:
        if ns is None:
            return []
        table = ns.rows()
        records = table.records
        if not records:
            return []
        rows = (list(range(len(records))) if predicate is None
                else [i for i, r in enumerate(records) if predicate(r.metadata)])
        if not rows:
            return []
        scores = np.zeros(len(rows), dtype=np.float64)
        if dense is not None:
            scores += dense_scores(index.metric, table, None if predicate is None else rows,
                                   dense)
        if sparse is not None:
            shared: list[bool] = []
            for position, row in enumerate(rows):
                stored = records[row].sparse
                overlap = stored is not None and not set(stored.indices).isdisjoint(
                    sparse.indices)
                shared.append(overlap)
                if overlap:
                    assert stored is not None
                    scores[position] += stored.dot(sparse)
            if dense is None:  # a sparse-only search returns only records sharing a term
                kept = [p for p, ok in enumerate(shared) if ok]
                rows = [rows[p] for p in kept]
                scores = scores[kept]
        ascending = index.metric == "euclidean" and sparse is None
        order = best_positions(scores if ascending else -scores, top_k,
                               lambda p: tie_break(records[rows[p]].id))
        return [(records[rows[p]], float(scores[p])) for p in order]

    def fetch(self, request: Request) -> Response:
        index = self._index(request)
        ids = parse_ids(request.params.get("ids", []))
        raw_ns = request.param("namespace")
        ns = index.namespaces.get(parse_namespace(raw_ns))
        found = {}
        if ns is not None:
            for rid in ids:
                record = ns.visible.get(rid)
                if record is not None:
                    found[rid] = render_vector(record)
        return Response(200, {"vectors": found, "namespace": raw_ns or "",
                              "usage": {"readUnits": 1}})

    def fetch_by_metadata(self, request: Request) -> Response:
        index = self._index(request)
        body = parse_object(request.json(), DATA, "request body")
        raw_filter = body.get("filter")
        if not raw_filter:
            raise DATA.fail(400, "Empty filter provided for fetch by metadata request")
        predicate = parse_filter(raw_filter)
        limit = body.get("limit", 100)
        if isinstance(limit, bool) or not isinstance(limit, int) or not (
            1 <= limit <= MAX_FETCH_BY_METADATA_LIMIT
        ):
            raise DATA.fail(400, f"limit must be between 1 and {MAX_FETCH_BY_METADATA_LIMIT}")
        after = parse_token(body.get("paginationToken", body.get("pagination_token")))
        ns = index.namespaces.get(parse_namespace(body.get("namespace")))
        ids = sorted(r.id for r in ns.visible.values() if predicate(r.metadata)) if ns else []
        page, more = paginate(ids, after, limit)
        result: dict[str, Any] = {
            "vectors": {rid: render_vector(ns.visible[rid]) for rid in page} if ns else {},
            "namespace": body.get("namespace") or "",
            "usage": {"readUnits": 1},
        }
        if more:
            result["pagination"] = {"next": make_token(page[-1])}
        return Response(200, result)

    def describe_index_stats(self, request: Request) -> Response:
        index = self._index(request)
        body = parse_object(request.json(), DATA, "request body")
        predicate = None
        if body.get("filter"):
            if index.deployment.get("deployment_type") != "pod":
                raise DATA.fail(400, "Serverless and starter indexes do not support "
                                     "describing index stats with metadata filtering")
            predicate = parse_filter(body["filter"])
        namespaces = {}
        for name, ns in index.namespaces.items():
            count = sum(1 for r in ns.visible.values()
                        if predicate is None or predicate(r.metadata))
            if count:
                namespaces[name] = {"vectorCount": count}
        return Response(200, {
            "namespaces": namespaces,
            "dimension": index.dimension,
            "indexFullness": 0.0,
            "totalVectorCount": sum(n["vectorCount"] for n in namespaces.values()),
            "metric": index.metric,
            "vectorType": "dense",
        })

    def list_vectors(self, request: Request) -> Response:
        index = self._index(request)
        raw_limit = request.param("limit", str(MAX_LIST_LIMIT))
        try:
            limit = int(raw_limit or "")
        except ValueError:
            raise DATA.fail(400, f"limit must be an integer, got {raw_limit!r}") from None
        if not 1 <= limit <= MAX_LIST_LIMIT:
            raise DATA.fail(400, f"limit must be between 1 and {MAX_LIST_LIMIT}")
        prefix = request.param("prefix") or ""
        after = parse_token(request.param("paginationToken"))
        raw_ns = request.param("namespace")
        ns = index.namespaces.get(parse_namespace(raw_ns))
        ids = sorted(rid for rid in ns.visible if rid.startswith(prefix)) if ns else []
        page, more = paginate(ids, after, limit)
        result: dict[str, Any] = {"vectors": [{"id": rid} for rid in page],
                                  "namespace": raw_ns or "", "usage": {"readUnits": 1}}
        if more:
            result["pagination"] = {"next": make_token(page[-1])}
        return Response(200, result)

    def create_namespace(self, request: Request) -> Response:
        return namespaces.create_namespace(self._index(request), request)

    def list_namespaces(self, request: Request) -> Response:
        return namespaces.list_namespaces(self._index(request), request)

    def describe_namespace(self, request: Request) -> Response:
        return namespaces.describe_namespace(self._index(request), request)

    def delete_namespace(self, request: Request) -> Response:
        index = self._index(request)
        return self._written(namespaces.delete_namespace(index, request,
                                                         self.faults.visible_at()))


__all__ = ["PineconeEmulator"]

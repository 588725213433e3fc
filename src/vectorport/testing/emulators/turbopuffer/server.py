"""Routes of the emulated turbopuffer HTTP API, on the shared emulator server.

Errors answer with turbopuffer's body shape, ``{"status": "error", "error": "..."}``:
422 for bodies that do not parse into the request type (malformed JSON, a wrongly typed
field), worded like the service's JSON parser; 400 for invalid requests, 401 for a
missing or wrong ``Authorization: Bearer`` key,
403 for writes to read-only namespaces, 404 for unknown namespaces, and the injected
429 / 503 of :class:`~vectorport.testing.emulators.http.Faults`. A route the emulator
does not serve (``recall``, exports, ...) answers 400 saying the emulator does not
implement it: a 404 would read as "namespace not found" in the SDK, and a 5xx would be
retried.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable
from typing import Any

from vectorport.testing.emulators.http import (
    EmulatorServer,
    Faults,
    HttpError,
    Request,
    Response,
    Router,
)
from vectorport.testing.emulators.turbopuffer.service import (
    NamespaceNotFoundError,
    ReadOnlyError,
    TurbopufferService,
)
from vectorport.testing.emulators.turbopuffer.values import ParseError, RequestError, serde_kind

GZIP_MIN_BYTES = 1024
"""Answers at least this large are gzip-compressed for clients that accept it."""


def error_body(status: int, message: str) -> dict[str, str]:
    return {"status": "error", "error": message}


def _header(request: Request, name: str) -> str | None:
    wanted = name.lower()
    for key, value in request.headers.items():
        if key.lower() == wanted:
            return value
    return None


def _body(request: Request) -> Any:
    raw = request.body
    encoding = (_header(request, "Content-Encoding") or "").lower()
    try:
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
    except (OSError, zlib.error) as exc:
        raise HttpError(400, error_body(400, f"cannot decode {encoding} body: {exc}")) from None
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:  # serde's wording: "... at line 1 column 5"
        raise HttpError(422, error_body(
            422, f"failed to parse the request body as JSON: {exc.msg.lower()} at line "
                 f"{exc.lineno} column {exc.colno}")) from None
    except UnicodeDecodeError:
        raise HttpError(422, error_body(422, "failed to parse the request body as JSON: "
                                             "invalid UTF-8")) from None


def _object_body(request: Request) -> dict[str, Any]:
    body = _body(request)
    if not isinstance(body, dict):
        raise HttpError(422, error_body(
            422, f"failed to deserialize the request body: invalid type: {serde_kind(body)}, "
                 "expected a map"))
    return body


def not_implemented(request: Request) -> Response:
    return Response(400, error_body(
        400, f"the vectorport turbopuffer emulator does not implement {request.method} "
             f"{request.path}"))


def _guard(call: Callable[[], Any]) -> Response:
    try:
        return Response(200, call())
    except ParseError as exc:
        return Response(422, error_body(422, str(exc)))
    except RequestError as exc:
        return Response(400, error_body(400, str(exc)))
    except NamespaceNotFoundError as exc:
        return Response(404, error_body(404, str(exc)))
    except ReadOnlyError as exc:
        return Response(403, error_body(403, str(exc)))
    except Exception as exc:  # an emulator bug must answer, not drop the connection
        return Response(500, error_body(500, f"internal emulator error: {exc!r}"))


def build_router(service: TurbopufferService) -> Router:
    router = Router()

    @router.route("POST", "/v2/namespaces/{namespace}")
    def write(request: Request) -> Response:
        if request.param("stainless_overload") in ("branchFrom",):
            return Response(400, error_body(400, "the vectorport turbopuffer emulator does not "
                                                 "implement branch_from_namespace"))
        body = _object_body(request)
        return _guard(lambda: service.write(request.match["namespace"], body))

    @router.route("DELETE", "/v2/namespaces/{namespace}")
    def delete_namespace(request: Request) -> Response:
        return _guard(lambda: service.delete_namespace(request.match["namespace"]))

    @router.route("POST", "/v2/namespaces/{namespace}/query")
    def query(request: Request) -> Response:
        body = _object_body(request)
        return _guard(lambda: service.query(request.match["namespace"], body))

    @router.route("GET", "/v2/namespaces/{namespace}/metadata")
    def metadata(request: Request) -> Response:
        return _guard(lambda: service.metadata(request.match["namespace"]))

    @router.route("PATCH", "/v1/namespaces/{namespace}/metadata")
    def update_metadata(request: Request) -> Response:
        body = _body(request)
        return _guard(lambda: service.update_metadata(request.match["namespace"], body))

    @router.route("GET", "/v1/namespaces/{namespace}/schema")
    def schema(request: Request) -> Response:
        return _guard(lambda: service.schema(request.match["namespace"]))

    @router.route("POST", "/v1/namespaces/{namespace}/schema")
    def update_schema(request: Request) -> Response:
        body = _body(request)
        return _guard(lambda: service.update_schema(request.match["namespace"], body))

    @router.route("GET", "/v1/namespaces/{namespace}/hint_cache_warm")
    def hint_cache_warm(request: Request) -> Response:
        return _guard(lambda: service.hint_cache_warm(request.match["namespace"]))

    @router.route("GET", "/v1/namespaces")
    def list_namespaces(request: Request) -> Response:
        raw_size = request.param("page_size")
        try:
            page_size = int(raw_size) if raw_size is not None else None
        except ValueError:
            return Response(400, error_body(400, "page_size must be an integer"))
        return _guard(lambda: service.list_namespaces(
            request.param("prefix"), request.param("cursor"), page_size))

    return router


class TurbopufferEmulator(EmulatorServer):
    """An emulator server with its own, initially empty, service."""

    def __init__(
        self, *, host: str = "127.0.0.1", port: int = 0, faults: Faults | None = None,
        api_key: str = "emulator-key",
    ) -> None:
        faults = faults if faults is not None else Faults()
        self.service = TurbopufferService(faults)
        self._expected_auth = f"Bearer {api_key}"
        super().__init__(
            build_router(self.service), host=host, port=port, faults=faults,
            error_body=error_body, authorize=self._authorize,
            unrouted=not_implemented, gzip_min_bytes=GZIP_MIN_BYTES,
        )

    def _authorize(self, request: Request) -> None:
        given = _header(request, "Authorization")
        if given is None:
            raise HttpError(401, error_body(401, "missing Authorization header"))
        if given != self._expected_auth:
            raise HttpError(401, error_body(401, "invalid API key"))

"""The Pinecone emulator's namespaces API: create, describe, list and delete.

A namespace exists from its creation (``create_namespace`` or the first write into it)
until ``delete_namespace``, whether or not it holds records: Pinecone reports an empty
namespace with ``record_count`` 0 rather than as missing. Listing takes ``prefix``,
``limit`` and ``paginationToken`` and pages in name order, like listing vector ids.
"""

from __future__ import annotations

from typing import Any

from vectorport.testing.emulators.http import Request, Response
from vectorport.testing.emulators.pinecone.store import IndexState, Namespace, delete_all_op
from vectorport.testing.emulators.pinecone.wire import (
    DATA,
    MAX_LIST_LIMIT,
    make_token,
    paginate,
    parse_namespace,
    parse_object,
    parse_token,
)

_NAMESPACE_FIELDS = frozenset({"name", "schema"})


def describe(name: str, ns: Namespace) -> dict[str, Any]:
    # record_count is a string: the API's JSON renders this 64-bit count as protobuf does.
    return {"name": name, "record_count": str(len(ns.visible))}


def _existing(index: IndexState, raw: str) -> tuple[str, Namespace]:
    name = parse_namespace(raw)
    ns = index.namespaces.get(name)
    if ns is None:
        raise DATA.fail(404, f"Namespace {raw!r} not found")
    return name, ns


def create_namespace(index: IndexState, request: Request) -> Response:
    body = parse_object(request.json(), DATA, "request body")
    unknown = set(body) - _NAMESPACE_FIELDS
    if unknown:
        raise DATA.fail(400, f"Unknown field(s) {sorted(unknown)} in create namespace request")
    raw = body.get("name")
    if not isinstance(raw, str) or not raw.strip():
        raise DATA.fail(400, "name must be a non-empty string")
    schema = body.get("schema")
    if schema is not None:
        fields = schema.get("fields") if isinstance(schema, dict) else None
        if not isinstance(fields, dict) or not all(
            isinstance(f, dict) and set(f) <= {"filterable"} for f in fields.values()
        ):
            raise DATA.fail(400, "schema must be {\"fields\": {name: {\"filterable\": bool}}}")
    name = parse_namespace(raw)
    if name in index.namespaces:
        raise DATA.fail(409, f"Namespace {raw!r} already exists")
    # The schema only marks fields filterable; the emulator filters on every field, so an
    # accepted schema changes nothing observable except that it was valid.
    ns = index.namespace(name)
    return Response(201, describe(name, ns))


def describe_namespace(index: IndexState, request: Request) -> Response:
    name, ns = _existing(index, request.match["namespace"])
    return Response(200, describe(name, ns))


def list_namespaces(index: IndexState, request: Request) -> Response:
    raw_limit = request.param("limit", str(MAX_LIST_LIMIT))
    try:
        limit = int(raw_limit or "")
    except ValueError:
        raise DATA.fail(400, f"limit must be an integer, got {raw_limit!r}") from None
    if not 1 <= limit <= MAX_LIST_LIMIT:
        raise DATA.fail(400, f"limit must be between 1 and {MAX_LIST_LIMIT}")
    prefix = request.param("prefix") or ""
    after = parse_token(request.param("paginationToken"))
    names = sorted(n for n in index.namespaces if n.startswith(prefix))
    page, more = paginate(names, after, limit)
    result: dict[str, Any] = {
        "namespaces": [describe(n, index.namespaces[n]) for n in page],
        "total_count": len(names),
    }
    if more:
        result["pagination"] = {"next": make_token(page[-1])}
    return Response(200, result)


def delete_namespace(index: IndexState, request: Request, visible_at: float) -> int:
    """Delete every record and the namespace itself; returns the write's LSN."""
    name, ns = _existing(index, request.match["namespace"])
    lsn = ns.commit(delete_all_op(), visible_at)
    del index.namespaces[name]
    return lsn


__all__ = ["create_namespace", "delete_namespace", "describe", "describe_namespace",
           "list_namespaces"]

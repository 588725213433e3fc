"""``navigate``, ``read``, ``get_chunk`` and ``grep`` over the navigable indexes, and
the workspace search tool.

One tool of each name serves every navigable index of the server (an ``index``
argument picks one when there are several), so a model sees one stable vocabulary.

Navigation takes no filter, so the server's scope filter is applied here, with the
reference evaluator (:func:`vectorport.core.filters.oracle.matches`): a chunk outside
the scope is never returned, and a source with no chunk inside it answers exactly like a
source that does not exist, so a client cannot even learn which sources other tenants
have.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from vectorport.chunks.model import (
    CHUNK_INDEX,
    END_OFFSET,
    SOURCE_ID,
    START_OFFSET,
    ChunkResult,
    check_source_id,
    check_span,
    check_top_k,
)
from vectorport.chunks.navigation import direction_of, mode_of
from vectorport.chunks.protocols import NavigableIndex
from vectorport.core.errors import SourceNotFoundError, ValidationError
from vectorport.core.filters.ast import And, Condition, Filter
from vectorport.core.filters.oracle import matches
from vectorport.core.store import Index
from vectorport.mcp.tools import ToolDef
from vectorport.workspace.workspace import Workspace

MAX_CHUNKS = 100
"""The largest ``top_k`` a client may ask of a navigation tool: one answer stays a
size a model can read."""

_CHUNK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "chunk_id": {"type": "string"}, "source_id": {"type": "string"},
        "start_offset": {"type": "integer"}, "end_offset": {"type": "integer"},
        "chunk_index": {"type": "integer"}, "text": {"type": "string"},
        "metadata": {"type": "object"},
        "spans": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
    },
    "required": ["chunk_id", "source_id", "start_offset", "end_offset", "chunk_index", "text",
                 "metadata"],
}
_CHUNKS_OUTPUT: dict[str, Any] = {
    "type": "object", "properties": {"chunks": {"type": "array", "items": _CHUNK_SCHEMA}},
    "required": ["chunks"],
}
_ONE_CHUNK_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"chunk": {"anyOf": [_CHUNK_SCHEMA, {"type": "null"}]}},
    "required": ["chunk"],
}


def chunk_dict(chunk: ChunkResult) -> dict[str, Any]:
    return {
        "chunk_id": chunk.chunk_id, "source_id": chunk.source_id,
        "start_offset": chunk.start_offset, "end_offset": chunk.end_offset,
        "chunk_index": chunk.chunk_index, "text": chunk.text,
        "metadata": {k: list(v) if isinstance(v, tuple) else v for k, v in chunk.metadata.items()},
        "spans": [list(span) for span in chunk.spans],
    }


def _stored_metadata(chunk: ChunkResult) -> dict[str, Any]:
    """The record's metadata as the scope filter sees it (position keys included)."""
    return {**chunk.metadata, SOURCE_ID: chunk.source_id, START_OFFSET: chunk.start_offset,
            END_OFFSET: chunk.end_offset, CHUNK_INDEX: chunk.chunk_index}


class ScopedChunks:
    """One navigable index seen through the server's scope filter."""

    def __init__(self, index: Index, chunks: NavigableIndex, namespace: str,
                 scope: Filter | None) -> None:
        self.index = index
        self.chunks = chunks
        self.namespace = namespace
        self.scope = scope

    def visible(self, chunk: ChunkResult | None) -> bool:
        return chunk is not None and (self.scope is None or matches(self.scope,
                                                                    _stored_metadata(chunk)))

    def check_source(self, source_id: str) -> None:
        """A source with no chunk in the scope does not exist for this client."""
        if self.scope is None:
            return
        node = And((self.scope, Condition(SOURCE_ID, "$eq", source_id)))
        probe = np.random.default_rng(0).standard_normal(self.index.dimension)
        if not self.index.query(probe, top_k=1, namespace=self.namespace, filter=node,
                                include_metadata=False, include_documents=False):
            raise SourceNotFoundError(source_id)

    def keep(self, found: list[ChunkResult]) -> dict[str, Any]:
        return {"chunks": [chunk_dict(c) for c in found if self.visible(c)]}


def _arguments(raw: Mapping[str, Any], required: tuple[str, ...], optional: tuple[str, ...]
               ) -> dict[str, Any]:
    unknown = sorted(set(raw) - set(required) - set(optional))
    if unknown:
        raise ValidationError(f"unknown argument(s) {unknown}; this tool takes "
                              f"{', '.join(required + optional)}")
    missing = [k for k in required if raw.get(k) is None]
    if missing:
        raise ValidationError(f"missing argument(s) {missing}")
    return dict(raw)


def _top_k(args: Mapping[str, Any], default: int) -> int:
    top_k = check_top_k(args.get("top_k", default))
    if top_k > MAX_CHUNKS:
        raise ValidationError(f"top_k must be at most {MAX_CHUNKS}, got {top_k}")
    return top_k


def _top_k_schema(default: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "maximum": MAX_CHUNKS, "default": default,
            "description": "How many chunks to return at most."}


_SOURCE = {"type": "string", "minLength": 1,
           "description": "The source (document) id, as in a search result's metadata.source_id."}
_OFFSET = {"type": "integer", "minimum": 0}


class NavigationTools:
    """The four navigation tools over one or more :class:`ScopedChunks`."""

    def __init__(self, indexes: Mapping[str, ScopedChunks]) -> None:
        if not indexes:
            raise ValueError("navigation needs at least one navigable index")
        self.indexes = dict(indexes)
        self.names = tuple(sorted(indexes))

    def _schema(self, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
        props = dict(properties)
        req = list(required)
        if len(self.names) > 1:
            props = {"index": {"type": "string", "enum": list(self.names),
                               "description": "Which index to read."}, **props}
            req.insert(0, "index")
        return {"type": "object", "properties": props, "required": req,
                "additionalProperties": False}

    def _pick(self, args: dict[str, Any]) -> ScopedChunks:
        name = args.pop("index", None)
        if name is None and len(self.names) == 1:
            return self.indexes[self.names[0]]
        if name not in self.indexes:
            raise ValidationError(f"index must be one of {list(self.names)}, got {name!r}")
        return self.indexes[name]

    def _optional(self) -> tuple[str, ...]:
        return ("index",)

    def navigate(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        args = _arguments(raw, ("source_id", "start_offset", "end_offset", "direction"),
                          ("top_k", *self._optional()))
        scoped = self._pick(args)
        source = check_source_id(args["source_id"])
        start, end = check_span(args["start_offset"], args["end_offset"])
        direction = direction_of(args["direction"])
        top_k = _top_k(args, 1)
        scoped.check_source(source)
        return scoped.keep(scoped.chunks.navigate(source, start, end, direction, top_k=top_k))

    def read(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        args = _arguments(raw, ("source_id", "start_offset", "end_offset"),
                          ("top_k", *self._optional()))
        scoped = self._pick(args)
        source = check_source_id(args["source_id"])
        start, end = check_span(args["start_offset"], args["end_offset"])
        top_k = _top_k(args, 20)
        scoped.check_source(source)
        return scoped.keep(scoped.chunks.read(source, start, end, top_k=top_k))

    def get_chunk(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        args = _arguments(raw, ("chunk_id",), self._optional())
        scoped = self._pick(args)
        chunk_id = args["chunk_id"]
        if not isinstance(chunk_id, str) or not chunk_id:
            raise ValidationError(f"chunk_id must be a non-empty string, got {chunk_id!r}")
        chunk = scoped.chunks.get_chunk(chunk_id)
        return {"chunk": chunk_dict(chunk) if chunk is not None and scoped.visible(chunk)
                else None}

    def grep(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        args = _arguments(raw, ("source_id", "pattern"), ("mode", "top_k", *self._optional()))
        scoped = self._pick(args)
        source = check_source_id(args["source_id"])
        mode = mode_of(args.get("mode", "phrase"))
        top_k = _top_k(args, 5)
        scoped.check_source(source)
        return scoped.keep(scoped.chunks.grep(source, args["pattern"], mode=mode, top_k=top_k))

    def definitions(self) -> list[ToolDef]:
        span = {"start_offset": {**_OFFSET, "description": "Start of the span (character "
                                 "offset into the source, inclusive)."},
                "end_offset": {**_OFFSET, "description": "End of the span (exclusive)."}}
        return [
            ToolDef("navigate",
                 "The chunks right before or after a span of a source document, nearest "
                 "first: use it to read on from a search result (give the result's "
                 "start_offset and end_offset).",
                 self._schema({"source_id": _SOURCE, **span,
                               "direction": {"type": "string", "enum": ["next", "previous"]},
                               "top_k": _top_k_schema(1)},
                              ["source_id", "start_offset", "end_offset", "direction"]),
                 _CHUNKS_OUTPUT, self.navigate),
            ToolDef("read",
                 "The chunks of a source document lying within a span, in document order.",
                 self._schema({"source_id": _SOURCE, **span, "top_k": _top_k_schema(20)},
                              ["source_id", "start_offset", "end_offset"]),
                 _CHUNKS_OUTPUT, self.read),
            ToolDef("get_chunk", "One chunk by its id (a search result's id); null when there "
                 "is none.",
                 self._schema({"chunk_id": {"type": "string", "minLength": 1}}, ["chunk_id"]),
                 _ONE_CHUNK_OUTPUT, self.get_chunk),
            ToolDef("grep",
                 "The chunks of one source document containing a phrase (case-insensitive) "
                 "or matching a regular expression, in document order, with the match "
                 "offsets in spans.",
                 self._schema({"source_id": _SOURCE,
                               "pattern": {"type": "string", "minLength": 1},
                               "mode": {"type": "string", "enum": ["phrase", "regex"],
                                        "default": "phrase"},
                               "top_k": _top_k_schema(5)},
                              ["source_id", "pattern"]),
                 _CHUNKS_OUTPUT, self.grep),
        ]


_WORKSPACE_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"results": {"type": "array", "items": {
        "type": "object",
        "properties": {"id": {"type": "string"}, "score": {"type": "number"},
                       "lines": {"type": ["array", "null"], "items": {"type": "integer"}},
                       "content": {"type": "string"}},
        "required": ["id", "score", "lines", "content"]}}},
    "required": ["results"],
}


def workspace_tool(workspace: Workspace, max_top_k: int) -> ToolDef:
    """``workspace_search``: BM25, vector or hybrid search over the files of a folder."""
    modes = [str(m) for m in workspace.modes]

    def run(raw: Mapping[str, Any]) -> dict[str, Any]:
        args = _arguments(raw, ("query",), ("top_k", "mode"))
        query = args["query"]
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query is required and must be a non-empty string")
        top_k = check_top_k(args.get("top_k", 5))
        if top_k > max_top_k:
            raise ValidationError(f"top_k must be at most {max_top_k}, got {top_k}")
        mode = args.get("mode")
        if mode is not None and mode not in modes:
            raise ValidationError(f"mode must be one of {modes}, got {mode!r}")
        results = workspace.search(query, top_k=top_k, mode=mode)
        return {"results": [
            {"id": r.id, "score": r.score,
             "lines": [r.line_range.start, r.line_range.end] if r.line_range else None,
             "content": r.content}
            for r in results]}

    return ToolDef(
        "workspace_search",
        "Search the files of the workspace folder by words (BM25), by meaning (vector) or "
        "both (hybrid, the default); returns file paths, matching lines and contents.",
        {"type": "object",
         "properties": {"query": {"type": "string", "minLength": 1},
                        "top_k": {"type": "integer", "minimum": 1, "maximum": max_top_k,
                                  "default": 5},
                        "mode": {"type": "string", "enum": modes}},
         "required": ["query"], "additionalProperties": False},
        _WORKSPACE_OUTPUT, run)

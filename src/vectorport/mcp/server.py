"""The MCP server: the tools of :mod:`vectorport.mcp.tools` on the SDK's ``MCPServer``.

``MCPServer`` usually derives a tool's schema from a Python signature and validates the
arguments with pydantic. Our tools already have JSON schemas (the query tool's is the
one it publishes to every function-calling API) and their own validation, with the
messages the Python tool gives. So each tool is registered with its schema as written
and an argument model that passes the client's object through untouched: the tool
itself validates it, and a :class:`VectorportError` comes back to the model as a tool
error with the tool's own message. Anything else is a crash, which the SDK reports
without its text (which could hold internals).
"""

from __future__ import annotations

import json
from typing import Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict

from vectorport.chunks.chunked import ChunkedIndex
from vectorport.chunks.protocols import NavigableIndex
from vectorport.core.errors import ConfigError, VectorportError
from vectorport.core.store import Store
from vectorport.embedders.base import Embedder
from vectorport.mcp.chunk_tools import NavigationTools, ScopedChunks, workspace_tool
from vectorport.mcp.config import ServerConfig, check
from vectorport.mcp.fields import sample_fields
from vectorport.mcp.tools import QueryToolDef, ToolDef
from vectorport.workspace.cli import make_embedder
from vectorport.workspace.workspace import Workspace

Transport = Literal["stdio", "http"]


class _RawArguments(ArgModelBase):
    """Keeps the client's whole argument object, for the tool to validate itself."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


def _sdk_tool(definition: ToolDef) -> Tool:
    async def call(arguments: dict[str, Any]) -> CallToolResult:
        try:
            # Stores and embedders are sync (or wrap their own loops): a worker thread
            # keeps the server answering other requests meanwhile.
            result = await anyio.to_thread.run_sync(definition.run, arguments)
        except VectorportError as exc:
            return CallToolResult(content=[TextContent(type="text", text=str(exc))],
                                  is_error=True)
        text = json.dumps(result, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=result)

    return Tool(
        fn=call,
        name=definition.name,
        title=None,
        description=definition.description,
        parameters=dict(definition.input_schema),
        fn_metadata=FuncMetadata(arg_model=_RawArguments,
                                 output_schema=(dict(definition.output_schema)
                                                if definition.output_schema else None)),
        is_async=True,
        context_kwarg=None,
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )


def tool_definitions(store: Store, config: ServerConfig,
                     embedder: Embedder | None = None) -> list[ToolDef]:
    """Every tool the server offers for ``config``, over an open ``store``."""
    check(config, store.backend)
    if not config.indexes and config.workspace is None:
        raise ConfigError("nothing to serve: give at least one --index (or --workspace)")
    model = embedder if embedder is not None else make_embedder(config.embedder)
    scope = config.scope
    definitions: list[ToolDef] = []
    navigable: dict[str, ScopedChunks] = {}
    for name in config.indexes:
        index = store.index(name)  # IndexNotFoundError names it
        if model.dimension is not None and model.dimension != index.dimension:
            raise ConfigError(f"the embedder makes {model.dimension}-dimensional vectors but "
                              f"index {name!r} has dimension {index.dimension}: pick the "
                              "embedder the index was built with (--embedder)")
        fields = sample_fields(index, namespace=scope.namespace, filter=scope.filter)
        definitions.append(QueryToolDef(store, name, model, config, fields).definition)
        chunks = ChunkedIndex(index, namespace=scope.namespace)
        if isinstance(chunks, NavigableIndex):
            navigable[name] = ScopedChunks(index, chunks, scope.namespace, scope.filter)
    if navigable:
        definitions.extend(NavigationTools(navigable).definitions())
    if config.workspace is not None:
        workspace = Workspace(config.workspace, bm25=True, vector_store=store, embedder=model,
                              auto_index_paths=["."], namespace=scope.namespace)
        workspace.sync()  # embeds new and changed files only
        definitions.append(workspace_tool(workspace, config.max_top_k))
    names = [d.name for d in definitions]
    if len(set(names)) != len(names):
        raise ConfigError(f"two tools would share a name: {sorted(names)}")
    return definitions


def build_server(store: Store, config: ServerConfig, *,
                 embedder: Embedder | None = None) -> MCPServer[Any]:
    """An ``MCPServer`` with the tools of ``config`` over ``store`` (not yet running)."""
    tools = [_sdk_tool(d) for d in tool_definitions(store, config, embedder)]
    return MCPServer(
        config.name,
        instructions=("Semantic search over vectorport indexes: call a search_* tool with a "
                      "question; read on from a result with navigate, read, get_chunk and "
                      "grep when they are offered."),
        tools=tools,
    )


def serve(store: Store, config: ServerConfig, transport: Transport = "stdio", *,
          host: str = "127.0.0.1", port: int = 8000, path: str = "/mcp",
          embedder: Embedder | None = None) -> None:
    """Run the server until the client disconnects (stdio) or the process is stopped."""
    server = build_server(store, config, embedder=embedder)
    if transport == "stdio":
        server.run("stdio")
    elif transport == "http":
        server.run("streamable-http", host=host, port=port, streamable_http_path=path)
    else:
        raise ConfigError(f"transport must be stdio or http, got {transport!r}")


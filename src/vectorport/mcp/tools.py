"""The tools one MCP server offers, independent of the MCP SDK.

Each :class:`ToolDef` is a name, a description, JSON schemas and a function of the
client's arguments returning a JSON-ready object. A failure the model can correct (bad
input, a filter the backend cannot express) is a :class:`VectorportError` whose message
goes back to the model as the tool error, word for word as the Python tool raises it;
:mod:`vectorport.mcp.server` turns these into MCP tools.

The vector query tool is :func:`~vectorport.agent.create_vector_query_tool` itself,
called with the server's scope as its request context: the scope filter is the
context's enforced ``filter`` and the scope namespace its tenant namespace, so a
client's filter (or options) can narrow a search and never widen it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from vectorport.agent.context import RequestContext
from vectorport.agent.database_config import OTHER_BACKEND_KEYS, SECTION_KEYS
from vectorport.agent.query_tool import VectorQueryTool, create_vector_query_tool
from vectorport.agent.schema import DEFAULT_DESCRIPTION
from vectorport.core.errors import ConfigError, ValidationError
from vectorport.core.filters.parse import render_filter
from vectorport.core.store import Store
from vectorport.embedders.base import Embedder
from vectorport.mcp.config import ServerConfig
from vectorport.mcp.fields import FieldKind, describe_fields

Handler = Callable[[Mapping[str, Any]], dict[str, Any]]

TENANT_KEY = "tenant_id"
"""The request-context key that carries the scope namespace to the query tool."""

CLIENT_OPTION_SCHEMAS: Mapping[str, Mapping[str, Any]] = {
    "min_score": {"type": "number",
                  "description": "Drop results scoring below this (it can only raise the "
                                 "server's own minimum)."},
    "ef": {"type": "integer", "minimum": 1,
           "description": "HNSW search breadth: higher finds more of the true neighbours, slower."},
    "probes": {"type": "integer", "minimum": 1,
               "description": "IVF lists to search: higher is more exact, slower."},
    "nprobe": {"type": "integer", "minimum": 1,
               "description": "IVF lists to search: higher is more exact, slower."},
    "consistency": {"type": "string", "enum": ["strong", "eventual"],
                    "description": "'strong' reads every acknowledged write; 'eventual' is faster."},
    "where": {"type": "object",
              "description": "Another metadata filter, AND-ed with the filter above."},
    "where_document": {"type": "object",
                       "description": "A condition on the document text, such as "
                                      "{\"$contains\": \"word\"}."},
}
"""The per-database options a client may set per call. ``namespace`` is not among them
(the server's scope fixes it), nor ``sparse_vector`` (not something a model writes)."""

_NARROWING = ("where", "where_document")


@dataclass(frozen=True, slots=True)
class ToolDef:
    """One tool, as the MCP layer publishes it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    run: Handler


def client_option_keys(backend: str) -> tuple[str, ...]:
    """The options a client may pass for a store of ``backend``, in a stable order."""
    allowed = SECTION_KEYS.get(backend, OTHER_BACKEND_KEYS)
    return tuple(key for key in CLIENT_OPTION_SCHEMAS if key in allowed)


class QueryToolDef:
    """The vector query tool of one index, with the server's scope and options."""

    def __init__(self, store: Store, index_name: str, embedder: Embedder, config: ServerConfig,
                 fields: tuple[FieldKind, ...]) -> None:
        self.backend = store.backend
        self.option_keys = client_option_keys(self.backend)
        self.server_section: Mapping[str, Any] = dict(
            (config.database_config or {}).get(self.backend) or {})
        self.tool: VectorQueryTool = create_vector_query_tool(
            model=embedder,
            vector_store=store,
            index_name=index_name,
            id=f"search {index_name}",
            description=(f"{DEFAULT_DESCRIPTION} Searches the index {index_name!r} by meaning; "
                         "returns the best passages and their sources."),
            enable_filter=True,
            top_k=config.top_k,
            max_top_k=config.max_top_k,
            database_config=config.database_config,
            tenant_key=TENANT_KEY,
            tenant_namespace=bool(config.scope.namespace),
        )
        self.context: dict[str, Any] = {}
        if config.scope.filter is not None:
            self.context["filter"] = render_filter(config.scope.filter)
        if config.scope.namespace:
            self.context[TENANT_KEY] = config.scope.namespace
        self.definition = ToolDef(self.tool.name, self.tool.description,
                                  self._schema(fields), self.tool.output_schema, self.run)

    def _schema(self, fields: tuple[FieldKind, ...]) -> dict[str, Any]:
        schema = self.tool.input_schema
        prop = schema["properties"]["filter"]
        prop["description"] = f"{prop['description']} {describe_fields(fields)}"
        if self.option_keys:
            schema["properties"]["options"] = {
                "type": "object",
                "description": f"Optional search settings of this database ({self.backend}).",
                "properties": {k: copy.deepcopy(dict(CLIENT_OPTION_SCHEMAS[k]))
                               for k in self.option_keys},
                "additionalProperties": False,
            }
        return schema

    def request_context(self, options: object) -> RequestContext:
        """The scope, and the client's options merged under the server's own ones."""
        ctx = RequestContext(self.context)
        if options is None:
            return ctx
        if not isinstance(options, Mapping):
            raise ValidationError(f"options must be an object, got {type(options).__name__}")
        unknown = sorted(set(options) - set(self.option_keys))
        if unknown:
            raise ValidationError(f"unknown option(s) {unknown} for {self.backend}; "
                                  f"the options are {', '.join(self.option_keys) or 'none'}")
        section = dict(self.server_section)
        for key, value in options.items():
            if key in _NARROWING and key in section:
                section[key] = {"$and": [section[key], value]}  # both hold: narrower
            elif key == "min_score" and isinstance(section.get(key), (int, float)) \
                    and isinstance(value, (int, float)) and not isinstance(value, bool):
                section[key] = max(section[key], value)
            else:
                section[key] = value
        ctx["database_config"] = {self.backend: section}
        return ctx

    def run(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        args = dict(arguments)
        ctx = self.request_context(args.pop("options", None))
        try:
            return self.tool.execute(args, ctx).to_dict()
        except ConfigError as exc:
            # Only the client's options can be wrong here (the server's were checked at
            # startup): name them as the client wrote them.
            message = str(exc).replace(f"database_config.{self.backend}.", "options.")
            raise ValidationError(message) from None

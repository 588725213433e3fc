"""The tool's JSON schemas, written once in the subset every function-calling API takes.

OpenAI (``parameters``), Anthropic (``input_schema``) and MCP (``inputSchema``) all take
a JSON-schema object; this one uses only ``type``, ``description``, ``properties``,
``required``, ``default``, ``minimum``, ``maximum``, ``minLength`` and
``additionalProperties``, so it works as-is with each of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What OpenAI and Anthropic accept as a tool name."""

DEFAULT_DESCRIPTION = (
    "Access the knowledge base to find information needed to answer user questions."
)

QUERY_TEXT_DESCRIPTION = (
    "The text to search the knowledge base for: a question or a short statement of the "
    "information needed, in natural language."
)
TOP_K_DESCRIPTION = (
    "How many results to return. Use the default ({default}) when unsure; more (such as "
    "20) for broad questions that need more context, fewer (such as 3) for a precise fact."
)
FILTER_DESCRIPTION = (
    "Optional metadata filter, Mongo-style. {{\"field\": value}} matches equality; "
    "{{\"field\": {{\"$op\": value}}}} uses an operator: {field_ops}. Combine clauses with "
    "{logical_ops}. Example, for content whose version is above 2.0: "
    "{{\"version\": {{\"$gt\": 2.0}}}}. Leave it out to search everything."
)

_FIELD_ORDER = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$all")
_LOGICAL_ORDER = ("$and", "$or", "$nor", "$not")


def tool_name(tool_id: str) -> str:
    """``tool_id`` made into a valid function name: runs of other characters become
    ``_``, cut to 64 characters (``"VectorQuery docs Tool"`` → ``"VectorQuery_docs_Tool"``)."""
    name = re.sub(r"[^a-zA-Z0-9_-]+", "_", tool_id).strip("_")[:64].rstrip("_")
    return name or "vector_query"


def filter_description(operators: Iterable[str] | None = None) -> str:
    ops = set(operators) if operators is not None else set(_FIELD_ORDER + _LOGICAL_ORDER)
    field_ops = ", ".join(op for op in _FIELD_ORDER if op in ops) or "none"
    logical = [op for op in _LOGICAL_ORDER if op in ops]
    return FILTER_DESCRIPTION.format(field_ops=field_ops,
                                     logical_ops=", ".join(logical) if logical else "several keys")


def input_schema(*, enable_filter: bool, default_top_k: int, max_top_k: int,
                 operators: Iterable[str] | None = None) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "query_text": {"type": "string", "description": QUERY_TEXT_DESCRIPTION, "minLength": 1},
        "top_k": {
            "type": "integer",
            "description": TOP_K_DESCRIPTION.format(default=default_top_k),
            "default": default_top_k,
            "minimum": 1,
            "maximum": max_top_k,
        },
    }
    if enable_filter:
        properties["filter"] = {"type": "object", "description": filter_description(operators)}
    return {
        "type": "object",
        "properties": properties,
        "required": ["query_text"],
        "additionalProperties": False,
    }


OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "relevant_context": {
            "type": "string",
            "description": "Combined text of the most relevant chunks, best first.",
        },
        "sources": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "metadata": {"type": "object"},
                    "vector": {"type": ["array", "null"], "items": {"type": "number"}},
                    "score": {"type": "number"},
                    "document": {"type": ["string", "null"]},
                    "rerank": {"type": "object"},
                },
                "required": ["id", "metadata", "vector", "score", "document"],
            },
        },
    },
    "required": ["relevant_context", "sources"],
}

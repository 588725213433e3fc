"""Tools for LLM agents on top of vectorport.

- :func:`create_vector_query_tool` — semantic search as a function-calling tool
  (OpenAI, Anthropic and MCP definitions), with filters, reranking, per-database
  options, runtime overrides and multi-tenant stores.
- :class:`RequestContext` — what the application decides per request.
- :class:`Reranker`, :func:`rerank` and the scorers — reranking by semantic relevance,
  vector similarity and position.
- :func:`options_for_backend` — how a ``database_config`` maps onto query options.
"""

from vectorport.agent.context import RequestContext
from vectorport.agent.database_config import (
    SECTION_KEYS,
    QueryOptions,
    options_for_backend,
)
from vectorport.agent.query_tool import (
    StoreResolver,
    VectorQueryTool,
    create_vector_query_tool,
)
from vectorport.agent.rerank import (
    BatchScorer,
    RerankedMatch,
    Reranker,
    RerankScore,
    RerankWeights,
    Scorer,
    rerank,
)
from vectorport.agent.result import QuerySource, VectorQueryResult
from vectorport.agent.schema import DEFAULT_DESCRIPTION, tool_name
from vectorport.agent.scorers import CrossEncoderScorer, LLMScorer, TermOverlapScorer

__all__ = [
    "DEFAULT_DESCRIPTION",
    "SECTION_KEYS",
    "BatchScorer",
    "CrossEncoderScorer",
    "LLMScorer",
    "QueryOptions",
    "QuerySource",
    "RequestContext",
    "RerankScore",
    "RerankWeights",
    "RerankedMatch",
    "Reranker",
    "Scorer",
    "StoreResolver",
    "TermOverlapScorer",
    "VectorQueryResult",
    "VectorQueryTool",
    "create_vector_query_tool",
    "options_for_backend",
    "rerank",
    "tool_name",
]

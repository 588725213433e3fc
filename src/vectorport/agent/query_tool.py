"""The agent-facing vector query tool: :func:`create_vector_query_tool`.

A model calls the tool with ``{"query_text": ..., "top_k": ..., "filter": ...}``; the
tool embeds the text, queries a vectorport index and returns the combined text of the
best chunks with their sources. Everything else comes from the application, never from
the model:

- at creation: ``model``, ``id`` and ``description`` (creation only), and defaults for
  every other setting;
- per request, from a :class:`RequestContext`: ``vector_store``, ``vector_store_name``,
  ``index_name``, ``top_k``, ``filter``, ``include_vectors``, ``include_sources``,
  ``reranker``, ``database_config``, ``provider_options`` and the tenant
  (``tenant_id`` by default). A context value wins over the input and the creation
  default; a context ``filter`` is not a replacement but an enforced condition.

Filters are AND-ed, never replaced: the context's filter, the tenant filter and the
``where`` of a Chroma ``database_config`` all hold whatever the model puts in its own
filter, so a model's filter can narrow a search but never widen it (an ``$or`` in the
input sits inside the ``$and``, under the enforced conditions).

Precedence of ``top_k``: context, then input, then the creation default; the input's
value is bounded by ``max_top_k``.

The model must be the embedder that built the index: an index recording another one
is refused with ``EmbedderMismatchError`` (see :mod:`vectorport.agent.identity`).
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from vectorport.agent.context import RequestContext
from vectorport.agent.database_config import QueryOptions, options_for_backend
from vectorport.agent.identity import IdentityGuard
from vectorport.agent.rerank import Reranker
from vectorport.agent.result import QuerySource, VectorQueryResult
from vectorport.agent.schema import (
    DEFAULT_DESCRIPTION,
    OUTPUT_SCHEMA,
    input_schema,
    tool_name,
)
from vectorport.core.async_store import AsyncIndex, AsyncStore
from vectorport.core.errors import ConfigError, FilterError, ValidationError
from vectorport.core.filters.ast import And, Filter
from vectorport.core.filters.parse import parse_filter
from vectorport.core.scoring import hybrid_scale
from vectorport.core.store import Index, Store
from vectorport.core.types import Match, SparseVector
from vectorport.embedders.base import (
    ConfigurableEmbedder,
    Embedder,
    SparseEncoder,
    Vector,
    aembed,
    embed_one,
    run_sync,
)
from vectorport.embedders.function import as_embedder

StoreResolver: TypeAlias = Callable[[RequestContext], "Store | AsyncStore | Awaitable[Store | AsyncStore]"]
"""Picks the store for a request (multi-tenant apps); may be a coroutine function."""

VectorStoreSource: TypeAlias = "Store | AsyncStore | Mapping[str, Store | AsyncStore] | StoreResolver"

CONTEXT_SEPARATOR = "\n\n"
INPUT_KEYS = frozenset({"query_text", "top_k", "filter"})


@dataclass(frozen=True, slots=True)
class _Call:
    """One validated call, everything decided except the store's answer."""

    query_text: str
    top_k: int
    index_name: str
    store_name: str | None
    include_vectors: bool
    include_sources: bool
    reranker: Reranker | None
    database_config: Mapping[str, Any] | None
    provider_options: Mapping[str, Mapping[str, Any]] | None
    filters: tuple[Filter, ...]
    tenant: str | None


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be True or False, got {value!r}")
    return value


def _positive_int(name: str, value: object, error: type[Exception] = ConfigError) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON numbers from a model may arrive as 5.0
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise error(f"{name} must be a positive int, got {value!r}")
    return value


def _name(name: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{name} must be a non-empty str, got {value!r}")
    return value


def _mapping(name: str, value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{name} must be a mapping, got {type(value).__name__}")
    return value


def _provider_options(name: str, value: object) -> Mapping[str, Mapping[str, Any]]:
    options = _mapping(name, value)
    for provider, section in options.items():
        if not isinstance(provider, str) or not isinstance(section, Mapping):
            raise ConfigError(f"{name} maps a provider name to a mapping of its options")
    return options


def _parse(source: str, raw: object) -> Filter | None:
    """Parse one filter, naming where it came from in the error."""
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            return None
        try:  # models often send the filter as JSON text
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FilterError(f"{source} is not valid JSON: {exc.msg}") from None
    if raw is not None and not isinstance(raw, Mapping):
        raise FilterError(f"{source} must be an object, got {type(raw).__name__}")
    try:
        return parse_filter(raw)
    except FilterError as exc:
        raise FilterError(f"{source}: {exc.reason}", exc.path) from None


def _all_of(filters: list[Filter]) -> Filter | None:
    if not filters:
        return None
    return filters[0] if len(filters) == 1 else And(tuple(filters))


def _text_of(match: Match) -> str | None:
    if match.document is not None:
        return match.document
    text = (match.metadata or {}).get("text")
    return text if isinstance(text, str) else None


class VectorQueryTool:
    """A semantic search tool for agents; made by :func:`create_vector_query_tool`."""

    def __init__(
        self,
        *,
        model: Embedder,
        vector_store: VectorStoreSource | None,
        vector_store_name: str | None,
        index_name: str | None,
        id: str,
        description: str,
        enable_filter: bool,
        include_vectors: bool,
        include_sources: bool,
        reranker: Reranker | None,
        database_config: Mapping[str, Any] | None,
        provider_options: Mapping[str, Mapping[str, Any]] | None,
        top_k: int,
        max_top_k: int,
        sparse_encoder: SparseEncoder | None,
        hybrid_alpha: float | None,
        tenant_key: str | None,
        tenant_filter: str | Callable[[str], Mapping[str, Any]] | None,
        tenant_namespace: bool,
    ) -> None:
        self.model = model
        self.vector_store = vector_store
        self.vector_store_name = vector_store_name
        self.index_name = index_name
        self.id = id
        self.name = tool_name(id)
        self.description = description
        self.enable_filter = enable_filter
        self.include_vectors = include_vectors
        self.include_sources = include_sources
        self.reranker = reranker
        self.database_config = database_config
        self.provider_options = provider_options
        self.top_k = top_k
        self.max_top_k = max_top_k
        self.sparse_encoder = sparse_encoder
        self.hybrid_alpha = hybrid_alpha
        self.tenant_key = tenant_key
        self.tenant_filter = tenant_filter
        self.tenant_namespace = tenant_namespace
        self._identity = IdentityGuard()
        operators = None
        if isinstance(vector_store, (Store, AsyncStore)):
            store = vector_store.store if isinstance(vector_store, AsyncStore) else vector_store
            operators = store.capabilities.filter_operators
        self._input_schema = input_schema(enable_filter=enable_filter, default_top_k=top_k,
                                          max_top_k=max_top_k, operators=operators)

    def __repr__(self) -> str:
        return f"VectorQueryTool(id={self.id!r}, index_name={self.index_name!r})"

    # -- definitions for function-calling APIs -------------------------------------------

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the input (a copy: change it freely)."""
        return copy.deepcopy(self._input_schema)

    @property
    def output_schema(self) -> dict[str, Any]:
        return copy.deepcopy(OUTPUT_SCHEMA)

    def to_openai_tool(self) -> dict[str, Any]:
        """``{"type": "function", "function": {...}}`` for OpenAI-style chat APIs."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.input_schema,
        }}

    def to_anthropic_tool(self) -> dict[str, Any]:
        """``{"name", "description", "input_schema"}`` for the Anthropic Messages API."""
        return {"name": self.name, "description": self.description,
                "input_schema": self.input_schema}

    def to_mcp_tool(self) -> dict[str, Any]:
        """``{"name", "description", "inputSchema"}`` for a Model Context Protocol server."""
        return {"name": self.name, "description": self.description,
                "inputSchema": self.input_schema}

    # -- validation of one call ------------------------------------------------------------

    def _read_input(self, raw: Mapping[str, Any] | str) -> tuple[str, int | None, object]:
        if isinstance(raw, str):  # OpenAI hands arguments over as JSON text
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ValidationError(f"tool input is not valid JSON: {exc.msg}") from None
        if not isinstance(raw, Mapping):
            raise ValidationError(f"tool input must be an object, got {type(raw).__name__}")
        allowed = INPUT_KEYS if self.enable_filter else INPUT_KEYS - {"filter"}
        unknown = set(raw) - allowed
        if unknown:
            hint = ("; this tool was created without enable_filter=True"
                    if "filter" in unknown else "")
            raise ValidationError(f"unknown tool input key(s) {sorted(unknown)}{hint}; "
                                  f"the input takes {', '.join(sorted(allowed))}")
        text = raw.get("query_text")
        if not isinstance(text, str) or not text.strip():
            raise ValidationError("query_text is required and must be a non-empty string")
        top_k = raw.get("top_k")
        if top_k is not None:
            top_k = _positive_int("top_k", top_k, ValidationError)
            if top_k > self.max_top_k:
                raise ValidationError(f"top_k must be at most {self.max_top_k}, got {top_k}")
        return text, top_k, raw.get("filter")

    def _tenant(self, ctx: RequestContext, required: bool) -> str | None:
        if self.tenant_key is None:
            return None
        value = ctx.get(self.tenant_key)
        if value is None:
            if required:
                raise ConfigError(
                    f"{self.tenant_key!r} is required in the request context: this tool "
                    "picks its store or filter per tenant"
                )
            return None
        if not isinstance(value, str) or not value:
            raise ConfigError(f"request context {self.tenant_key!r} must be a non-empty str")
        return value

    def _uses_resolver(self, ctx: RequestContext) -> bool:
        source = ctx.get("vector_store", self.vector_store)
        return callable(source) and not isinstance(source, (Store, AsyncStore, Mapping))

    def _plan(self, raw: Mapping[str, Any] | str, ctx: RequestContext) -> _Call:
        text, input_top_k, input_filter = self._read_input(raw)
        needs_tenant = (self.tenant_filter is not None or self.tenant_namespace
                        or self._uses_resolver(ctx))
        tenant = self._tenant(ctx, needs_tenant)

        def pick(key: str, default: Any) -> Any:
            return ctx.get(key, default)

        top_k = (_positive_int("request context top_k", ctx["top_k"]) if "top_k" in ctx
                 else input_top_k if input_top_k is not None else self.top_k)
        index_name = pick("index_name", self.index_name)
        if index_name is None:
            raise ConfigError("index_name is required: set it at creation or in the request "
                              "context ('index_name')")
        index_name = _name("index_name", index_name)
        store_name = pick("vector_store_name", self.vector_store_name)
        if store_name is not None:
            store_name = _name("vector_store_name", store_name)
        reranker = pick("reranker", self.reranker)
        if reranker is not None:
            reranker = Reranker.from_value(reranker)
        database_config = pick("database_config", self.database_config)
        if database_config is not None:
            database_config = _mapping("database_config", database_config)
        provider_options = pick("provider_options", self.provider_options)
        if provider_options is not None:
            provider_options = _provider_options("provider_options", provider_options)

        filters: list[Filter] = []
        enforced = _parse("request context filter", ctx.get("filter"))
        if enforced is not None:
            filters.append(enforced)
        if self.tenant_filter is not None and tenant is not None:
            if isinstance(self.tenant_filter, str):
                raw_tenant: object = {self.tenant_filter: {"$eq": tenant}}
            else:
                raw_tenant = self.tenant_filter(tenant)
            tenant_node = _parse("tenant filter", raw_tenant)
            if tenant_node is None:
                raise ConfigError("the tenant filter is empty: it would match every tenant")
            filters.append(tenant_node)
        from_model = _parse("input filter", input_filter)
        if from_model is not None:
            filters.append(from_model)
        return _Call(
            query_text=text,
            top_k=top_k,
            index_name=index_name,
            store_name=store_name,
            include_vectors=_bool("include_vectors", pick("include_vectors", self.include_vectors)),
            include_sources=_bool("include_sources", pick("include_sources", self.include_sources)),
            reranker=reranker,
            database_config=database_config,
            provider_options=provider_options,
            filters=tuple(filters),
            tenant=tenant,
        )

    # -- the store ----------------------------------------------------------------------------

    def _store_or_pending(self, call: _Call, ctx: RequestContext) -> object:
        """The store, or the awaitable an async resolver returned."""
        source = ctx.get("vector_store", self.vector_store)
        if source is None:
            raise ConfigError("no vector_store: give one at creation or in the request context")
        if isinstance(source, (Store, AsyncStore)):
            return source
        if isinstance(source, Mapping):
            if call.store_name is None:
                raise ConfigError(
                    "vector_store_name is required to pick one of the named stores "
                    f"({', '.join(sorted(map(str, source)))}): set it at creation or in the "
                    "request context"
                )
            if call.store_name not in source:
                raise ConfigError(f"no vector store named {call.store_name!r}; known: "
                                  f"{', '.join(sorted(map(str, source)))}")
            return source[call.store_name]
        if callable(source):
            return source(ctx)
        raise ConfigError(f"vector_store must be a Store, a mapping of named stores or a "
                          f"resolver function, got {type(source).__name__}")

    @staticmethod
    def _as_store(value: object) -> Store:
        if isinstance(value, AsyncStore):
            return value.store
        if not isinstance(value, Store):
            raise ConfigError(f"the vector store resolver returned {type(value).__name__}, "
                              "not a vectorport Store")
        return value

    # -- the query ----------------------------------------------------------------------------

    def _embedder(self, call: _Call) -> Embedder:
        if not call.provider_options:
            return self.model
        if not isinstance(self.model, ConfigurableEmbedder):
            raise ConfigError(f"{type(self.model).__name__} takes no provider_options; "
                              "configure the model when you create it")
        return self.model.with_options(call.provider_options)

    def _query_kwargs(self, call: _Call, store: Store) -> tuple[dict[str, Any], QueryOptions]:
        options = options_for_backend(call.database_config, store.backend)
        kwargs = options.query_kwargs()
        if self.tenant_namespace and call.tenant is not None:
            if options.namespace is not None and options.namespace != call.tenant:
                raise ConfigError(
                    f"database_config.{store.backend}.namespace {options.namespace!r} "
                    f"conflicts with the tenant namespace {call.tenant!r}"
                )
            kwargs["namespace"] = call.tenant
        filters = list(call.filters)
        if options.filter is not None:
            filters.insert(0, options.filter)
        kwargs.update(
            top_k=call.top_k,
            filter=_all_of(filters),
            include_metadata=True,
            include_documents=True,
            include_vectors=call.include_vectors,
        )
        return kwargs, options

    def _sparse(self, call: _Call, options: QueryOptions) -> SparseVector | None:
        if options.sparse is not None:
            return options.sparse  # an explicit database_config sparse vector wins
        if self.sparse_encoder is not None:
            return self.sparse_encoder.encode_query(call.query_text)
        return None

    def _hybrid(self, metric: str, vector: Vector, sparse: SparseVector | None,
                kwargs: dict[str, Any]) -> tuple[Any, SparseVector | None, float]:
        """The dense and sparse query parts weighted by ``hybrid_alpha``, and the factor
        that turns the store's scores into ``alpha·dense + (1 − alpha)·sparse``.

        Scaling the dense query by alpha scales a dot product, but not a cosine or a
        euclidean score; for those the sparse part is scaled by ``(1 − alpha)/alpha``
        instead (the same ranking), the scores multiplied back by alpha, and a
        ``min_score`` divided by it, so every metric reports the same weighted score.
        """
        alpha = self.hybrid_alpha
        if alpha is None or sparse is None:
            return vector, sparse, 1.0
        if alpha == 1.0:
            return vector, None, 1.0
        if alpha == 0.0:
            return None, sparse, 1.0
        if metric == "dotproduct":
            dense, weighted = hybrid_scale(vector.tolist(), sparse, alpha)
            return dense, weighted, 1.0
        ratio = (1.0 - alpha) / alpha
        weighted = SparseVector(sparse.indices, tuple(v * ratio for v in sparse.values))
        if kwargs.get("min_score") is not None:
            kwargs["min_score"] = kwargs["min_score"] / alpha
        return vector, weighted, alpha

    @staticmethod
    def _rescale(matches: list[Match], factor: float) -> list[Match]:
        if factor == 1.0:
            return matches
        return [replace(m, score=m.score * factor) for m in matches]

    def _result(self, call: _Call, matches: list[Match]) -> VectorQueryResult:
        scored = (call.reranker.rerank(call.query_text, matches) if call.reranker is not None
                  else None)
        sources: list[QuerySource] = []
        texts: list[str] = []
        items = ([(r.match, r.rerank) for r in scored] if scored is not None
                 else [(m, None) for m in matches])
        for match, rerank in items:
            text = _text_of(match)
            if text:
                texts.append(text)
            sources.append(QuerySource(
                id=match.id,
                score=rerank.total if rerank is not None else match.score,
                metadata=dict(match.metadata or {}),
                vector=(tuple(float(x) for x in match.vector)
                        if call.include_vectors and match.vector is not None else None),
                document=match.document,
                rerank=rerank,
            ))
        return VectorQueryResult(
            relevant_context=CONTEXT_SEPARATOR.join(texts),
            sources=tuple(sources) if call.include_sources else (),
        )

    # -- running ------------------------------------------------------------------------------

    def execute(self, input: Mapping[str, Any] | str,
                request_context: RequestContext | Mapping[str, Any] | None = None
                ) -> VectorQueryResult:
        """Run the tool. ``input`` is the model's arguments (a dict, or JSON text)."""
        ctx = _context(request_context)
        call = self._plan(input, ctx)
        pending = self._store_or_pending(call, ctx)
        store = self._as_store(run_sync(pending) if inspect.isawaitable(pending) else pending)
        kwargs, options = self._query_kwargs(call, store)  # config errors before any I/O
        index = store.index(call.index_name)
        embedder = self._embedder(call)
        self._identity.check(index, embedder, kwargs.get("namespace", ""))
        vector = embed_one(embedder, call.query_text)
        dense, sparse, factor = self._hybrid(index.metric, vector, self._sparse(call, options),
                                             kwargs)
        matches = index.query(dense, sparse=sparse, **kwargs)
        return self._result(call, self._rescale(matches, factor))

    async def aexecute(self, input: Mapping[str, Any] | str,
                       request_context: RequestContext | Mapping[str, Any] | None = None
                       ) -> VectorQueryResult:
        """:meth:`execute` for async code: the resolver, the embedder and the store are
        awaited natively where they can be, else run in worker threads."""
        ctx = _context(request_context)
        call = self._plan(input, ctx)
        pending = self._store_or_pending(call, ctx)
        store = self._as_store(await pending if inspect.isawaitable(pending) else pending)
        kwargs, options = self._query_kwargs(call, store)
        index: Index = await asyncio.to_thread(store.index, call.index_name)
        embedder = self._embedder(call)
        await asyncio.to_thread(self._identity.check, index, embedder,
                                kwargs.get("namespace", ""))
        vector = (await aembed(embedder, [call.query_text]))[0]
        dense, sparse, factor = self._hybrid(index.metric, vector, self._sparse(call, options),
                                             kwargs)
        matches = self._rescale(await AsyncIndex(index).query(dense, sparse=sparse, **kwargs),
                                factor)
        if call.reranker is not None:
            return await asyncio.to_thread(self._result, call, matches)
        return self._result(call, matches)

    def __call__(self, input: Mapping[str, Any] | str,
                 request_context: RequestContext | Mapping[str, Any] | None = None
                 ) -> VectorQueryResult:
        return self.execute(input, request_context)


def _context(value: RequestContext | Mapping[str, Any] | None) -> RequestContext:
    if value is None:
        return RequestContext()
    if isinstance(value, RequestContext):
        return value
    if isinstance(value, Mapping):
        return RequestContext(value)
    raise ConfigError(f"request_context must be a RequestContext, got {type(value).__name__}")


def create_vector_query_tool(
    *,
    model: Embedder | Callable[..., Any] | None = None,
    vector_store: VectorStoreSource | None = None,
    vector_store_name: str | None = None,
    index_name: str | None = None,
    id: str | None = None,
    description: str | None = None,
    enable_filter: bool = False,
    include_vectors: bool = False,
    include_sources: bool = True,
    reranker: Reranker | Mapping[str, Any] | None = None,
    database_config: Mapping[str, Any] | None = None,
    provider_options: Mapping[str, Mapping[str, Any]] | None = None,
    top_k: int = 10,
    max_top_k: int = 100,
    sparse_encoder: SparseEncoder | None = None,
    hybrid_alpha: float | None = None,
    tenant_key: str | None = "tenant_id",
    tenant_filter: str | Callable[[str], Mapping[str, Any]] | None = None,
    tenant_namespace: bool = False,
) -> VectorQueryTool:
    """Create a semantic search tool over a vectorport index (Mastra's
    ``createVectorQueryTool``).

    ``model`` embeds the query (an :class:`~vectorport.embedders.Embedder`, or a function
    of one text). ``vector_store`` is a :class:`~vectorport.Store`, a mapping of named
    stores (``vector_store_name`` picks one), or a resolver ``(request_context) -> Store``
    for multi-tenant apps (it may be async); with a resolver the request context must
    name the tenant (``tenant_key``, default ``"tenant_id"``). ``tenant_filter`` (a
    metadata field, or a function of the tenant returning a filter) and
    ``tenant_namespace`` (search the namespace named like the tenant) enforce tenancy in
    a shared index. ``sparse_encoder`` (such as a fitted
    :class:`~vectorport.embedders.BM25Encoder`) adds a sparse query for hybrid search,
    weighted by ``hybrid_alpha`` when given.

    ``model``, ``id`` and ``description`` are fixed at creation; everything else is a
    default that the request context may override per call.
    """
    if model is None:
        raise ConfigError("model is required: the embedder that turns the query into a vector "
                          "(for example vectorport.embedders.HashingEmbedder())")
    embedder = as_embedder(model)
    if vector_store is not None and not isinstance(vector_store, (Store, AsyncStore, Mapping)) \
            and not callable(vector_store):
        raise ConfigError(f"vector_store must be a Store, a mapping of named stores or a "
                          f"resolver function, got {type(vector_store).__name__}")
    if isinstance(vector_store, Mapping):
        for key, named in vector_store.items():
            if not isinstance(key, str) or not isinstance(named, (Store, AsyncStore)):
                raise ConfigError("a vector_store mapping maps names to vectorport Stores")
    for label, value in (("vector_store_name", vector_store_name), ("index_name", index_name)):
        if value is not None:
            _name(label, value)
    enable_filter = _bool("enable_filter", enable_filter)
    include_vectors = _bool("include_vectors", include_vectors)
    include_sources = _bool("include_sources", include_sources)
    tenant_namespace = _bool("tenant_namespace", tenant_namespace)
    top_k = _positive_int("top_k", top_k)
    max_top_k = _positive_int("max_top_k", max_top_k)
    if top_k > max_top_k:
        raise ConfigError(f"top_k ({top_k}) cannot exceed max_top_k ({max_top_k})")
    if database_config is not None:
        _mapping("database_config", database_config)
    if provider_options is not None:
        _provider_options("provider_options", provider_options)
        if not isinstance(embedder, ConfigurableEmbedder):
            raise ConfigError(f"{type(embedder).__name__} takes no provider_options; "
                              "configure the model when you create it")
    if sparse_encoder is not None and not isinstance(sparse_encoder, SparseEncoder):
        raise ConfigError("sparse_encoder needs encode_query(text) -> SparseVector | None")
    if hybrid_alpha is not None and (
        isinstance(hybrid_alpha, bool) or not isinstance(hybrid_alpha, (int, float))
        or not math.isfinite(hybrid_alpha) or not 0.0 <= hybrid_alpha <= 1.0
    ):
        raise ConfigError(f"hybrid_alpha must be in [0, 1], got {hybrid_alpha!r}")
    if tenant_key is not None:
        _name("tenant_key", tenant_key)
    if (tenant_filter is not None or tenant_namespace) and tenant_key is None:
        raise ConfigError("tenant_filter and tenant_namespace need a tenant_key")
    if tenant_filter is not None and not (isinstance(tenant_filter, str) or callable(tenant_filter)):
        raise ConfigError("tenant_filter is a metadata field name or a function of the tenant")
    if isinstance(tenant_filter, str):
        _parse("tenant filter", {tenant_filter: "check"})  # a valid field name
    if description is not None and (not isinstance(description, str) or not description.strip()):
        raise ConfigError("description must be a non-empty str")
    if id is not None and (not isinstance(id, str) or not id.strip()):
        raise ConfigError("id must be a non-empty str")

    static: Store | None = None
    if isinstance(vector_store, (Store, AsyncStore)):
        static = vector_store.store if isinstance(vector_store, AsyncStore) else vector_store
        options_for_backend(database_config, static.backend)  # fail at creation, not mid-chat
    store_label = vector_store_name or (static.backend if static is not None else "dynamic")
    tool_id = id or f"VectorQuery {store_label} {index_name or 'dynamic'} Tool"
    return VectorQueryTool(
        model=embedder,
        vector_store=vector_store,
        vector_store_name=vector_store_name,
        index_name=index_name,
        id=tool_id,
        description=description or DEFAULT_DESCRIPTION,
        enable_filter=enable_filter,
        include_vectors=include_vectors,
        include_sources=include_sources,
        reranker=Reranker.from_value(reranker) if reranker is not None else None,
        database_config=database_config,
        provider_options=provider_options,
        top_k=top_k,
        max_top_k=max_top_k,
        sparse_encoder=sparse_encoder,
        hybrid_alpha=float(hybrid_alpha) if hybrid_alpha is not None else None,
        tenant_key=tenant_key,
        tenant_filter=tenant_filter,
        tenant_namespace=tenant_namespace,
    )

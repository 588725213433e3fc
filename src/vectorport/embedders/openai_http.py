"""Embeddings from any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

OpenAI itself, Azure-style gateways, vLLM, Ollama, LM Studio, LiteLLM and many others
speak this shape, so one small client covers them without pulling in a vendor SDK.
``httpx`` is imported when the embedder is created, so importing vectorport never
needs it. The API key is held as a :class:`~vectorport.core.config.Secret` and scrubbed
from every error message. 429, 5xx, timeouts and dropped connections are retried with
the core :class:`~vectorport.core.retry.RetryPolicy`; anything else fails at once.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from vectorport.core.config import Secret
from vectorport.core.errors import (
    BackendError,
    ConfigError,
    TransientBackendError,
    ValidationError,
)
from vectorport.core.retry import RetryPolicy
from vectorport.embedders.base import ProviderOptions, Vector, as_vectors, check_texts
from vectorport.extras import install_hint

_RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_OPTION_KEYS = frozenset({"dimensions", "user"})


def _import_httpx() -> Any:
    try:
        import httpx
    except ImportError as exc:  # pragma: no cover - httpx ships with the test environment
        raise ConfigError(
            f"OpenAICompatibleEmbedder needs httpx: {install_hint('openai')}"
        ) from exc
    return httpx


class OpenAICompatibleEmbedder:
    """An embedder over HTTP. ``api_key`` (or the ``api_key_env`` variable) is optional,
    for local servers that take none. ``dimensions`` asks models that support it for
    shorter vectors. Requests carry at most ``max_batch_size`` texts, up to
    ``max_concurrency`` at once; results keep the caller's order.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | Secret | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        dimensions: int | None = None,
        user: str | None = None,
        max_batch_size: int = 256,
        max_concurrency: int = 4,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        provider: str = "openai",
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ConfigError("model must be a non-empty str, such as 'text-embedding-3-small'")
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must be an http(s) URL, got {base_url!r}")
        for label, value in (("max_batch_size", max_batch_size),
                             ("max_concurrency", max_concurrency), ("dimensions", dimensions)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):
                raise ConfigError(f"{label} must be a positive int, got {value!r}")
        self._httpx = _import_httpx()
        if isinstance(api_key, str):
            api_key = Secret(api_key)
        if api_key is None and api_key_env and os.environ.get(api_key_env):
            api_key = Secret(os.environ[api_key_env])
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.provider = provider
        self.dimensions = dimensions
        self.user = user
        self.max_batch_size = max_batch_size
        self.max_concurrency = max_concurrency
        self.timeout = float(timeout)
        self.retry = retry or RetryPolicy(attempts=4, base_seconds=0.2, cap_seconds=5.0)
        self._api_key = api_key
        self._headers = {"Content-Type": "application/json", **dict(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key.reveal()}"
        self._client: Any = None
        self._seen_dimension: int | None = dimensions

    def __repr__(self) -> str:
        return (f"OpenAICompatibleEmbedder(model={self.model!r}, base_url={self.base_url!r}, "
                f"dimensions={self.dimensions})")

    @property
    def dimension(self) -> int | None:
        return self._seen_dimension

    # -- per-request options (Mastra's providerOptions) ----------------------------

    def with_options(self, provider_options: ProviderOptions) -> OpenAICompatibleEmbedder:
        """A copy using this provider's section of ``provider_options`` (``dimensions``,
        ``user``); other sections are ignored, unknown keys in this one rejected."""
        section = provider_options.get(self.provider)
        if section is None:
            return self
        if not isinstance(section, Mapping):
            raise ConfigError(f"provider_options[{self.provider!r}] must be a mapping")
        unknown = set(section) - _OPTION_KEYS
        if unknown:
            raise ConfigError(f"unknown provider_options[{self.provider!r}] keys "
                              f"{sorted(unknown)}; known: {sorted(_OPTION_KEYS)}")
        clone = object.__new__(OpenAICompatibleEmbedder)
        clone.__dict__.update(self.__dict__)
        dims = section.get("dimensions", self.dimensions)
        if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
            raise ConfigError(f"dimensions must be a positive int, got {dims!r}")
        clone.dimensions = dims
        clone._seen_dimension = dims if dims is not None else self._seen_dimension
        clone.user = section.get("user", self.user)
        return clone

    # -- requests ----------------------------------------------------------------------

    def _body(self, texts: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        if self.user is not None:
            body["user"] = self.user
        return body

    def _scrub(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key.reveal(), "********")
        return text

    def _error(self, exc: Exception) -> BackendError:
        httpx = self._httpx
        if isinstance(exc, (httpx.TimeoutException, httpx.TransportError)):
            return TransientBackendError(
                self._scrub(f"embedding request to {self.base_url} failed: "
                            f"{type(exc).__name__}: {exc}"))
        return BackendError(self._scrub(f"embedding request failed: {exc}"))

    def _parse(self, response: Any, texts: list[str]) -> list[Vector]:
        status = response.status_code
        if status >= 400:
            detail = self._scrub(response.text[:300])
            message = f"embedding endpoint answered HTTP {status}: {detail}"
            if status in _RETRYABLE_STATUS:
                raise TransientBackendError(message)
            raise BackendError(message)
        try:
            items = response.json()["data"]
            ordered = sorted(items, key=lambda item: item["index"])
            if [item["index"] for item in ordered] != list(range(len(texts))):
                raise ValueError("the 'index' fields do not cover the input")
            raw = [item["embedding"] for item in ordered]
        except (ValueError, KeyError, TypeError) as exc:
            raise BackendError(f"unexpected embeddings response: {exc}") from exc
        try:
            vectors = as_vectors(raw, texts, f"model {self.model!r}", self.dimensions)
        except ValidationError as exc:
            raise BackendError(str(exc)) from exc
        if vectors and self._seen_dimension is None:
            self._seen_dimension = len(vectors[0])
        return vectors

    def _client_sync(self) -> Any:
        if self._client is None:
            self._client = self._httpx.Client(timeout=self.timeout, headers=self._headers)
        return self._client

    def _post(self, texts: list[str]) -> list[Vector]:
        def attempt() -> list[Vector]:
            try:
                response = self._client_sync().post(f"{self.base_url}/embeddings",
                                                    json=self._body(texts))
            except self._httpx.HTTPError as exc:
                raise self._error(exc) from exc
            return self._parse(response, texts)

        return self.retry.call("embed", attempt)

    def _chunks(self, texts: list[str]) -> list[list[str]]:
        size = self.max_batch_size
        return [texts[i:i + size] for i in range(0, len(texts), size)]

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        chunks = self._chunks(check_texts(texts))
        if len(chunks) <= 1 or self.max_concurrency == 1:
            return [v for c in chunks for v in self._post(c)]
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(chunks)),
                                thread_name_prefix="vectorport-embed") as pool:
            return [v for part in pool.map(self._post, chunks) for v in part]

    async def aembed(self, texts: Sequence[str]) -> list[Vector]:
        chunks = self._chunks(check_texts(texts))
        if not chunks:
            return []
        gate = asyncio.Semaphore(self.max_concurrency)
        httpx = self._httpx
        async with httpx.AsyncClient(timeout=self.timeout, headers=self._headers) as client:

            async def one(chunk: list[str]) -> list[Vector]:
                async def attempt() -> list[Vector]:
                    try:
                        response = await client.post(f"{self.base_url}/embeddings",
                                                     json=self._body(chunk))
                    except httpx.HTTPError as exc:
                        raise self._error(exc) from exc
                    return self._parse(response, chunk)

                async with gate:
                    return await self.retry.acall("embed", attempt)

            parts = await asyncio.gather(*(one(c) for c in chunks))
        return [v for part in parts for v in part]

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> OpenAICompatibleEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


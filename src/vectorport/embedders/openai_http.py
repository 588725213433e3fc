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
import email.utils
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
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
DEFAULT_BASE_URL = "https://api.openai.com/v1"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"


class _RetryLaterError(TransientBackendError):
    """A transient answer that said how long to wait (``Retry-After``)."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds to wait: delta-seconds or an HTTP date; ``None`` when
    absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


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
        base_url: str | None = None,
        api_key: str | Secret | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        dimensions: int | None = None,
        user: str | None = None,
        max_batch_size: int = 256,
        max_concurrency: int = 4,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        retry_budget_seconds: float = 30.0,
        headers: Mapping[str, str] | None = None,
        provider: str = "openai",
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ConfigError("model must be a non-empty str, such as 'text-embedding-3-small'")
        if base_url is None:
            base_url = os.environ.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL
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
        self.retry_budget_seconds = float(retry_budget_seconds)
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
                wait = retry_after_seconds(response.headers.get("retry-after"))
                if wait is not None:
                    raise _RetryLaterError(f"{message} (Retry-After: {wait:g}s)", wait)
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

        deadline = time.monotonic() + self.retry_budget_seconds
        tries = 0
        while True:
            try:
                return attempt()
            except TransientBackendError as exc:
                tries += 1
                time.sleep(self._wait(exc, tries, deadline))

    def _wait(self, exc: TransientBackendError, tries: int, deadline: float) -> float:
        """How long to wait before the next try, or re-raise ``exc`` when the answer gave
        no ``Retry-After`` and the attempts are spent, or the wait overruns the budget."""
        told = getattr(exc, "retry_after", None)
        if told is None and tries >= self.retry.attempts:
            raise exc
        wait = float(told) if told is not None else self.retry.delay(tries - 1)
        if time.monotonic() + wait > deadline:
            raise TransientBackendError(
                f"{exc}; gave up: waiting {wait:g}s more would pass the "
                f"{self.retry_budget_seconds:g}s retry budget") from exc
        return wait

    async def _apost(self, attempt: Callable[[], Awaitable[list[Vector]]]) -> list[Vector]:
        deadline = time.monotonic() + self.retry_budget_seconds
        tries = 0
        while True:
            try:
                return await attempt()
            except TransientBackendError as exc:
                tries += 1
                await asyncio.sleep(self._wait(exc, tries, deadline))

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
                    return await self._apost(attempt)

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


"""An LRU cache in front of any embedder.

Agents ask the same questions again and re-index the same chunks; a remote embedding
call costs money and latency, a dictionary lookup does not. Only the texts missing from
the cache are sent, once each even when repeated in one call, in a single call to the
wrapped embedder (which does its own batching). Cached vectors are read-only arrays, so
no caller can change what another one gets.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vectorport.core.errors import ConfigError, ValidationError
from vectorport.embedders.base import (
    ConfigurableEmbedder,
    Embedder,
    ProviderOptions,
    Vector,
    aembed,
    check_texts,
)


@dataclass(frozen=True, slots=True)
class CacheInfo:
    hits: int
    misses: int
    size: int
    maxsize: int


class _LruStore:
    """The shared storage; keys are ``(options fingerprint, text)``."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple[str, str], Vector] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def lookup(self, scope: str, texts: list[str]) -> tuple[dict[str, Vector], list[str]]:
        found: dict[str, Vector] = {}
        missing: dict[str, None] = {}
        with self.lock:
            for text in texts:
                key = (scope, text)
                vector = self.items.get(key)
                if vector is not None:
                    self.items.move_to_end(key)
                    found[text] = vector
                    self.hits += 1
                elif text not in missing and text not in found:
                    missing[text] = None
                    self.misses += 1
                else:
                    self.hits += 1  # a repeat within the call is served from this call
        return found, list(missing)

    def store(self, scope: str, texts: list[str], vectors: list[Vector]) -> None:
        with self.lock:
            for text, vector in zip(texts, vectors, strict=True):
                self.items[(scope, text)] = vector
                self.items.move_to_end((scope, text))
            while len(self.items) > self.maxsize:
                self.items.popitem(last=False)


class CachedEmbedder:
    """Wrap ``embedder`` with an LRU cache of at most ``maxsize`` vectors."""

    def __init__(self, embedder: Embedder, maxsize: int = 4096, *,
                 _store: _LruStore | None = None, _scope: str = "") -> None:
        if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 1:
            raise ValidationError(f"maxsize must be a positive int, got {maxsize!r}")
        self.inner = embedder
        self._store = _store or _LruStore(maxsize)
        self._scope = _scope

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, maxsize={self._store.maxsize})"

    @property
    def dimension(self) -> int | None:
        return self.inner.dimension

    def cache_info(self) -> CacheInfo:
        with self._store.lock:
            return CacheInfo(self._store.hits, self._store.misses, len(self._store.items),
                             self._store.maxsize)

    def cache_clear(self) -> None:
        with self._store.lock:
            self._store.items.clear()
            self._store.hits = self._store.misses = 0

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        clean = check_texts(texts)
        found, missing = self._store.lookup(self._scope, clean)
        if missing:
            fresh = self.inner.embed(missing)
            self._store.store(self._scope, missing, fresh)
            found.update(zip(missing, fresh, strict=True))
        return [found[t] for t in clean]

    async def aembed(self, texts: Sequence[str]) -> list[Vector]:
        clean = check_texts(texts)
        found, missing = self._store.lookup(self._scope, clean)
        if missing:
            fresh = await aembed(self.inner, missing)
            self._store.store(self._scope, missing, fresh)
            found.update(zip(missing, fresh, strict=True))
        return [found[t] for t in clean]

    def with_options(self, provider_options: ProviderOptions) -> Embedder:
        """The wrapped embedder configured with ``provider_options``, sharing this cache
        under a key of its own (vectors made with other options never mix)."""
        if not isinstance(self.inner, ConfigurableEmbedder):
            raise ConfigError(
                f"{type(self.inner).__name__} takes no provider_options; configure the "
                "model when you create it"
            )
        configured = self.inner.with_options(provider_options)
        scope = self._scope + "|" + _fingerprint(provider_options)
        return CachedEmbedder(configured, self._store.maxsize, _store=self._store, _scope=scope)


def _fingerprint(options: Any) -> str:
    return json.dumps(options, sort_keys=True, default=repr, separators=(",", ":"))

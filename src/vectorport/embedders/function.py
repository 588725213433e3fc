"""Adapt a plain function (one text, or a batch of texts; sync or async) to the protocol.

Remote embedding APIs take batches of bounded size; ``max_batch_size`` splits a large
call into chunks that are sent concurrently (a thread pool for sync functions, tasks
for async ones) and reassembled in the caller's order, whatever order they finish in.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from vectorport.core.errors import ValidationError
from vectorport.embedders.base import Embedder, Vector, as_vectors, check_texts, run_sync


def _is_async(fn: Any) -> bool:
    """A coroutine function, or an object whose ``__call__`` is one."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(fn.__call__)


class FunctionEmbedder:
    """An embedder made from ``fn(text) -> vector`` or, with ``batch=True``,
    ``fn(texts) -> vectors``. ``fn`` may be a coroutine function.

    Without ``batch``, texts are embedded one call each, ``max_concurrency`` at a time.
    With ``batch``, calls carry at most ``max_batch_size`` texts (all of them when
    ``None``) and up to ``max_concurrency`` calls are in flight at once.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        batch: bool = False,
        max_batch_size: int | None = None,
        max_concurrency: int = 4,
        dimension: int | None = None,
        name: str | None = None,
    ) -> None:
        if not callable(fn):
            raise ValidationError("FunctionEmbedder needs a callable")
        for label, value in (("max_batch_size", max_batch_size),
                             ("max_concurrency", max_concurrency), ("dimension", dimension)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):
                raise ValidationError(f"{label} must be a positive int, got {value!r}")
        if max_batch_size is not None and not batch:
            raise ValidationError("max_batch_size only applies to batch functions (batch=True)")
        self.fn = fn
        self.batch = batch
        self.max_batch_size = max_batch_size
        self.max_concurrency = max_concurrency
        self.name = name or getattr(fn, "__name__", type(fn).__name__)
        self.is_async = _is_async(fn)
        self._dimension = dimension

    def __repr__(self) -> str:
        return (f"FunctionEmbedder({self.name}, batch={self.batch}, "
                f"max_batch_size={self.max_batch_size}, dimension={self._dimension})")

    @property
    def dimension(self) -> int | None:
        return self._dimension

    def _chunks(self, texts: list[str]) -> list[list[str]]:
        if not self.batch:
            return [[t] for t in texts]
        size = self.max_batch_size or max(len(texts), 1)
        return [texts[i:i + size] for i in range(0, len(texts), size)]

    def _check(self, raw: Any, chunk: list[str]) -> list[Vector]:
        if not self.batch:
            raw = [raw]
        if isinstance(raw, (str, bytes)) or not hasattr(raw, "__len__"):
            raise ValidationError(f"embedder {self.name!r} returned {type(raw).__name__}, "
                                  "not a sequence of vectors")
        return as_vectors(list(raw), chunk, f"embedder {self.name!r}", self._dimension)

    def _remember(self, vectors: list[Vector]) -> list[Vector]:
        if vectors:
            if self._dimension is None:
                self._dimension = len(vectors[0])
            elif any(len(v) != self._dimension for v in vectors):
                raise ValidationError(f"embedder {self.name!r} returned vectors of "
                                      f"inconsistent dimension (expected {self._dimension})")
        return vectors

    def _call_chunk(self, chunk: list[str]) -> list[Vector]:
        arg: Any = chunk if self.batch else chunk[0]
        return self._check(self.fn(arg), chunk)

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        clean = check_texts(texts)
        if not clean:
            return []
        if self.is_async:
            return run_sync(self.aembed(clean))
        chunks = self._chunks(clean)
        if len(chunks) == 1 or self.max_concurrency == 1:
            results = [self._call_chunk(c) for c in chunks]
        else:
            with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(chunks)),
                                    thread_name_prefix="vectorport-embed") as pool:
                results = list(pool.map(self._call_chunk, chunks))  # map keeps the order
        return self._remember([v for chunk in results for v in chunk])

    async def aembed(self, texts: Sequence[str]) -> list[Vector]:
        clean = check_texts(texts)
        if not clean:
            return []
        if not self.is_async:
            return await asyncio.to_thread(self.embed, clean)
        gate = asyncio.Semaphore(self.max_concurrency)

        async def one(chunk: list[str]) -> list[Vector]:
            async with gate:
                arg: Any = chunk if self.batch else chunk[0]
                pending: Awaitable[Any] = self.fn(arg)
                return self._check(await pending, chunk)

        results = await asyncio.gather(*(one(c) for c in self._chunks(clean)))
        return self._remember([v for chunk in results for v in chunk])


def as_embedder(model: Any, **options: Any) -> Embedder:
    """``model`` itself when it already is an :class:`Embedder`; a plain callable becomes
    a :class:`FunctionEmbedder` (``options`` are its keyword arguments)."""
    if isinstance(model, Embedder) and not options:
        return model
    if callable(model) and not isinstance(model, Embedder):
        return FunctionEmbedder(model, **options)
    raise ValidationError(
        f"{type(model).__name__} is not an embedder: pass an object with embed(texts) and "
        "dimension, or a function of one text (or of a list of texts, with batch=True)"
    )

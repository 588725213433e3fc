"""The embedder protocol, and the helpers every embedder and caller share.

An embedder turns texts into dense vectors, one per text, in the order given. That one
batch-shaped method is the whole protocol, so a caller never has to know whether the
model behind it embeds one text per request or thousands: :class:`FunctionEmbedder`
adapts single-text and batch functions to it, and :class:`CachedEmbedder` wraps any of
them. Async, and per-request provider options, are optional protocols that callers
test with ``isinstance``.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from vectorport.core.errors import ValidationError
from vectorport.core.types import SparseVector

Vector: TypeAlias = npt.NDArray[np.float32]
"""One embedding: a read-only, 1-d float32 array."""

ProviderOptions: TypeAlias = Mapping[str, Mapping[str, Any]]
"""Per-provider embedding options, one section per provider (``{"openai": {...}}``)."""

T = TypeVar("T")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into dense vectors: ``embed(texts)[i]`` embeds ``texts[i]``.

    ``dimension`` is the length of every vector, or ``None`` while it is not known yet
    (a remote model reports it with its first answer).
    """

    @property
    def dimension(self) -> int | None: ...

    def embed(self, texts: Sequence[str]) -> list[Vector]: ...


@runtime_checkable
class AsyncEmbedder(Protocol):
    """An embedder with its own async I/O (otherwise async callers use a worker thread)."""

    async def aembed(self, texts: Sequence[str]) -> list[Vector]: ...


@runtime_checkable
class ConfigurableEmbedder(Protocol):
    """An embedder that takes per-request provider options (Mastra's ``providerOptions``).

    ``with_options`` reads only its own provider's section, validates it strictly and
    returns an embedder configured with it; other sections are ignored, so one mapping
    can serve several providers.
    """

    def with_options(self, provider_options: ProviderOptions) -> Embedder: ...


@runtime_checkable
class SparseEncoder(Protocol):
    """Turns a query into a sparse vector for hybrid search (:class:`BM25Encoder` is one);
    ``None`` when the query has no term the encoder knows."""

    def encode_query(self, text: str) -> SparseVector | None: ...


def as_vectors(raw: Sequence[Any], texts: Sequence[str], who: str,
               dimension: int | None = None) -> list[Vector]:
    """Check what an embedding model returned and turn it into read-only float32 arrays.

    A model that returns the wrong number of vectors, ragged or non-finite ones is a
    bug somewhere upstream; failing loudly here beats storing garbage.
    """
    if len(raw) != len(texts):
        raise ValidationError(f"{who} returned {len(raw)} vectors for {len(texts)} texts")
    out: list[Vector] = []
    for position, value in enumerate(raw):
        try:
            array = np.asarray(value, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"{who}: vector {position} is not a list of numbers") from exc
        if array.ndim != 1 or array.size == 0:
            raise ValidationError(f"{who}: vector {position} is not a non-empty 1-d vector")
        if not np.isfinite(array).all():
            raise ValidationError(f"{who}: vector {position} holds NaN or infinity")
        expected = dimension if dimension is not None else (len(out[0]) if out else None)
        if expected is not None and array.size != expected:
            raise ValidationError(
                f"{who}: vector {position} has {array.size} dimensions, expected {expected}"
            )
        if array is value:
            array = array.copy()
        array.setflags(write=False)
        out.append(array)
    return out


def check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise ValidationError("embed() takes a sequence of texts, not a single str")
    clean = list(texts)
    for position, text in enumerate(clean):
        if not isinstance(text, str):
            raise ValidationError(f"text {position} is a {type(text).__name__}, not a str")
    return clean


def embed_one(embedder: Embedder, text: str) -> Vector:
    """Embed a single text with any embedder."""
    return embedder.embed([text])[0]


async def aembed(embedder: Embedder, texts: Sequence[str]) -> list[Vector]:
    """Embed asynchronously: native async where the embedder has it, else a worker thread."""
    if isinstance(embedder, AsyncEmbedder):
        return await embedder.aembed(texts)
    return await asyncio.to_thread(embedder.embed, texts)


def l2_normalize(vector: npt.NDArray[np.floating[Any]]) -> Vector:
    norm = float(np.linalg.norm(vector))
    out = (vector / norm if norm > 0 and math.isfinite(norm) else vector).astype(np.float32)
    out.setflags(write=False)
    return out


def run_sync(awaitable: Awaitable[T]) -> T:
    """Run a coroutine from sync code, also when an event loop already runs in this thread
    (then in a worker thread with its own loop, so the caller's loop is never re-entered)."""

    async def wrapper() -> T:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrapper())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(wrapper())
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=target, name="vectorport-run-sync")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]

"""Which embedder built an index: a small, frozen identity with a stable fingerprint.

Vectors from two embedders (or one model with other options) are not comparable: a
query embedded by one against vectors of the other returns unrelated results with
plausible scores. Features that embed for the user (Workspace, SemanticRecall, the query
tool) therefore record the :class:`EmbedderIdentity` that built an index and refuse, or
re-embed when asked, an index built by another one.

An embedder can state its identity with an ``identity`` attribute; otherwise it is
derived from the built-in classes' settings, or from the class (and the wrapped
function, for :class:`FunctionEmbedder`). Nothing secret goes in: no API key, no URL.

**Where an index keeps it.** One small record per namespace of the index, id
``ns:<namespace>``, in the reserved namespace ``vp.embedder`` of the same index: it
travels with the index (copy, export) and no search of the data namespace sees it.
:func:`record_identity`, :func:`stored_identity` and :func:`check_identity` are the one
implementation the Workspace, SemanticRecall and the query tool share.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from vectorport.core.errors import ConfigError

if TYPE_CHECKING:  # the store imports much more than this early module should
    from vectorport.core.store import Index

IDENTITY_NAMESPACE = "vp.embedder"
"""Where an index keeps the identity of the embedder that built each of its namespaces."""


@dataclass(frozen=True, slots=True)
class EmbedderIdentity:
    """``name`` (the kind of embedder), ``model``, ``dimension`` and ``options`` (sorted
    ``(key, value)`` text pairs); ``fingerprint`` is stable across processes."""

    name: str
    model: str | None = None
    dimension: int | None = None
    options: tuple[tuple[str, str], ...] = ()

    @property
    def fingerprint(self) -> str:
        raw = json.dumps([self.name, self.model, self.dimension, list(self.options)],
                         separators=(",", ":"))
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def compatible(self, other: EmbedderIdentity) -> bool:
        """Same embedder: name, model and options equal, dimensions equal where known."""
        if (self.name, self.model, self.options) != (other.name, other.model, other.options):
            return False
        return self.dimension is None or other.dimension is None or self.dimension == other.dimension

    def with_dimension(self, dimension: int | None) -> EmbedderIdentity:
        return self if dimension is None or self.dimension is not None else replace(
            self, dimension=dimension)

    def describe(self) -> str:
        parts = [self.name]
        if self.model:
            parts.append(f"model={self.model}")
        if self.dimension is not None:
            parts.append(f"dimension={self.dimension}")
        parts.extend(f"{k}={v}" for k, v in self.options)
        return " ".join(parts)

    def as_metadata(self) -> dict[str, Any]:
        out: dict[str, Any] = {"embedder": self.name, "fingerprint": self.fingerprint,
                               "options": json.dumps(list(self.options))}
        if self.model is not None:
            out["model"] = self.model
        if self.dimension is not None:
            out["dimension"] = self.dimension
        return out

    @classmethod
    def from_metadata(cls, meta: Mapping[str, Any]) -> EmbedderIdentity | None:
        try:
            options = tuple((str(k), str(v)) for k, v in json.loads(str(meta["options"])))
            dimension = meta.get("dimension")
            model = meta.get("model")
            return cls(str(meta["embedder"]), model if isinstance(model, str) else None,
                       dimension if isinstance(dimension, int) else None, options)
        except (KeyError, TypeError, ValueError):
            return None


class EmbedderMismatchError(ConfigError):
    """An index was built by another embedder than the one given now."""


def _options(**values: Any) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, repr(v)) for k, v in values.items()))


def identity_of(embedder: Any, dimension: int | None = None) -> EmbedderIdentity:
    """The identity of ``embedder`` (``dimension``, when known, fills an unknown one)."""
    explicit = getattr(embedder, "identity", None)
    if isinstance(explicit, EmbedderIdentity):
        return explicit.with_dimension(dimension)
    # imported here: these modules import heavier things, and this one is imported early
    from vectorport.embedders.cache import CachedEmbedder
    from vectorport.embedders.function import FunctionEmbedder
    from vectorport.embedders.hashing import HashingEmbedder
    from vectorport.embedders.openai_http import OpenAICompatibleEmbedder
    from vectorport.embedders.sbert import SentenceTransformerEmbedder

    known = getattr(embedder, "dimension", None)
    dim = known if isinstance(known, int) else dimension
    if isinstance(embedder, CachedEmbedder):  # a cache does not change the vectors
        return identity_of(embedder.inner, dimension)
    if isinstance(embedder, HashingEmbedder):
        return EmbedderIdentity("hashing", None, dim, _options(
            ngram_range=embedder.ngram_range, word_weight=embedder.word_weight,
            char_weight=embedder.char_weight))
    if isinstance(embedder, OpenAICompatibleEmbedder):
        return EmbedderIdentity("openai-compatible", embedder.model, dim)
    if isinstance(embedder, SentenceTransformerEmbedder):
        return EmbedderIdentity("sentence-transformers", embedder.name, dim,
                                _options(normalize=embedder.normalize))
    if isinstance(embedder, FunctionEmbedder):
        fn = embedder.fn
        where = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', embedder.name)}"
        return EmbedderIdentity("function", where, dim)
    kind = type(embedder)
    return EmbedderIdentity(f"{kind.__module__}.{kind.__qualname__}", None, dim)


def identity_record_id(namespace: str) -> str:
    """The id of the identity record of ``namespace`` (in :data:`IDENTITY_NAMESPACE`)."""
    return f"ns:{namespace}"


def stored_identity(index: Index, namespace: str = "") -> EmbedderIdentity | None:
    """The identity recorded for ``namespace`` of ``index``; ``None`` when there is none
    (an index written before identities were recorded, or by other code) or when the
    record is unreadable."""
    record_id = identity_record_id(namespace)
    record = index.fetch([record_id], namespace=IDENTITY_NAMESPACE).get(record_id)
    return None if record is None else EmbedderIdentity.from_metadata(record.metadata)


def record_identity(index: Index, identity: EmbedderIdentity, namespace: str = "") -> None:
    """Record ``identity`` as the embedder of ``namespace`` of ``index`` (replacing any)."""
    # a unit vector: valid under every metric (a zero vector has no cosine)
    unit = [1.0] + [0.0] * (index.dimension - 1)
    index.upsert([{"id": identity_record_id(namespace), "vector": unit,
                   "metadata": identity.as_metadata()}], namespace=IDENTITY_NAMESPACE)


@dataclass(frozen=True, slots=True)
class IdentityCheck:
    """The embedder given now (``current``) against the one recorded (``stored``) for
    ``namespace`` of the index ``index_name``."""

    index_name: str
    namespace: str
    current: EmbedderIdentity
    stored: EmbedderIdentity | None

    @property
    def recorded(self) -> bool:
        return self.stored is not None

    @property
    def compatible(self) -> bool:
        """No record (nothing to contradict), or a record of the same embedder."""
        return self.stored is None or self.stored.compatible(self.current)

    def mismatch_error(self, remedy: str) -> EmbedderMismatchError:
        """The error refusing this index; ``remedy`` says what the caller can do."""
        stored = self.stored.describe() if self.stored is not None else "unknown"
        return EmbedderMismatchError(
            f"index {self.index_name!r} (namespace {self.namespace!r}) was built by embedder "
            f"[{stored}], not [{self.current.describe()}]: its vectors cannot be searched "
            f"with this one. {remedy}"
        )


def check_identity(index: Index, embedder: Any, namespace: str = "",
                   dimension: int | None = None) -> IdentityCheck:
    """Compare ``embedder`` with what ``index`` records for ``namespace`` (one fetch, no
    write). ``dimension`` (the length of vectors the embedder produced) fills an unknown
    one; it defaults to the index's."""
    current = identity_of(embedder, dimension if dimension is not None else index.dimension)
    return IdentityCheck(index.name, namespace, current, stored_identity(index, namespace))


__all__ = [
    "IDENTITY_NAMESPACE",
    "EmbedderIdentity",
    "EmbedderMismatchError",
    "IdentityCheck",
    "check_identity",
    "identity_of",
    "identity_record_id",
    "record_identity",
    "stored_identity",
]

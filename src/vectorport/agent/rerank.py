"""Rerank vector search results by semantic relevance, vector similarity and position.

For the ``n`` candidates of a search, in the order the store returned them
(``i = 0 … n−1``), the combined score is::

    weights.semantic · semantic(query, text_i)     a scorer's relevance, in [0, 1]
  + weights.vector   · vector(score_i)             the store's similarity, in [0, 1]
  + weights.position · (1 − i/n)                   the original rank

The weights must sum to 1, so the combined score is in [0, 1] too. ``vector`` is the
match score clipped to [0, 1] (cosine and euclidean scores are already at most 1);
``vector_normalization="minmax"`` rescales the candidates' scores to [0, 1] instead,
for dot-product or hybrid scores that may exceed 1. Results are sorted by combined score
descending, ties by id ascending, so the same input always gives the same order,
however the scorer calls were scheduled.

The semantic scorer is pluggable: any ``(query, text) -> float`` callable (see
:mod:`vectorport.agent.scorers` for an LLM wrapper, a cross-encoder and an offline
term-overlap scorer), or an object with ``score_batch(query, texts)``. It is not
called at all when the semantic weight is 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from vectorport.core.errors import ValidationError
from vectorport.core.types import Match

WEIGHT_TOLERANCE = 1e-6
Scorer: TypeAlias = Callable[[str, str], float]
VectorNormalization: TypeAlias = Literal["clip", "minmax"]


@runtime_checkable
class BatchScorer(Protocol):
    """A scorer that rates many texts in one call (one model forward pass, one prompt)."""

    def score_batch(self, query: str, texts: Sequence[str]) -> Sequence[float]: ...


@dataclass(frozen=True, slots=True)
class RerankWeights:
    """How much each component counts; the three must sum to 1 (within 1e-6)."""

    semantic: float = 0.4
    vector: float = 0.4
    position: float = 0.2

    def __post_init__(self) -> None:
        for name in ("semantic", "vector", "position"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and 0.0 <= value <= 1.0
            ):
                raise ValidationError(f"rerank weight {name!r} must be a number in [0, 1], "
                                      f"got {value!r}")
        total = self.semantic + self.vector + self.position
        if abs(total - 1.0) > WEIGHT_TOLERANCE:
            raise ValidationError(
                f"rerank weights must sum to 1, got semantic={self.semantic} + "
                f"vector={self.vector} + position={self.position} = {total:g}"
            )

    @classmethod
    def from_value(cls, value: RerankWeights | Mapping[str, Any] | None) -> RerankWeights:
        """Weights from a mapping: missing keys take their defaults, unknown keys fail."""
        if value is None:
            return cls()
        if isinstance(value, RerankWeights):
            return value
        if not isinstance(value, Mapping):
            raise ValidationError(f"rerank weights must be a mapping, got {type(value).__name__}")
        unknown = set(value) - {"semantic", "vector", "position"}
        if unknown:
            raise ValidationError(f"unknown rerank weight(s) {sorted(unknown)}; "
                                  "use semantic, vector and position")
        return cls(**value)


@dataclass(frozen=True, slots=True)
class RerankScore:
    """The components of one combined score, each in [0, 1]."""

    semantic: float
    vector: float
    position: float
    total: float


@dataclass(frozen=True, slots=True)
class RerankedMatch:
    match: Match
    rerank: RerankScore
    original_rank: int
    """0-based place in the store's answer."""


def default_text(match: Match) -> str:
    """The text a scorer reads: the document, else a ``text`` metadata field, else ``""``."""
    if match.document is not None:
        return match.document
    text = (match.metadata or {}).get("text")
    return text if isinstance(text, str) else ""


def _semantic_scores(scorer: Scorer | BatchScorer, query: str, texts: list[str],
                     max_concurrency: int) -> list[float]:
    if isinstance(scorer, BatchScorer):
        raw = list(scorer.score_batch(query, texts))
        if len(raw) != len(texts):
            raise ValidationError(f"scorer returned {len(raw)} scores for {len(texts)} texts")
    elif len(texts) > 1 and max_concurrency > 1:
        with ThreadPoolExecutor(max_workers=min(max_concurrency, len(texts)),
                                thread_name_prefix="vectorport-rerank") as pool:
            raw = list(pool.map(lambda t: scorer(query, t), texts))
    else:
        raw = [scorer(query, t) for t in texts]
    out: list[float] = []
    for position, value in enumerate(raw):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and 0.0 <= value <= 1.0
        ):
            raise ValidationError(
                f"semantic scorer returned {value!r} for result {position}; scores must be "
                "numbers in [0, 1]"
            )
        out.append(float(value))
    return out


def _vector_scores(scores: list[float], normalization: VectorNormalization) -> list[float]:
    if normalization == "clip":
        return [min(1.0, max(0.0, s)) for s in scores]
    low, high = min(scores), max(scores)
    if high - low <= 0.0:
        return [1.0 for _ in scores]
    return [(s - low) / (high - low) for s in scores]


def rerank(
    query: str,
    matches: Sequence[Match],
    scorer: Scorer | BatchScorer | None,
    *,
    weights: RerankWeights | Mapping[str, Any] | None = None,
    top_k: int | None = None,
    text_of: Callable[[Match], str] = default_text,
    vector_normalization: VectorNormalization = "clip",
    max_concurrency: int = 4,
) -> list[RerankedMatch]:
    """Rerank ``matches`` (in the store's order) for ``query``; keep the best ``top_k``."""
    w = RerankWeights.from_value(weights)
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise ValidationError(f"rerank top_k must be a positive int, got {top_k!r}")
    if vector_normalization not in ("clip", "minmax"):
        raise ValidationError("vector_normalization must be 'clip' or 'minmax'")
    n = len(matches)
    if n == 0:
        return []
    if w.semantic > 0:
        if scorer is None:
            raise ValidationError("a semantic weight above 0 needs a scorer")
        semantic = _semantic_scores(scorer, query, [text_of(m) for m in matches],
                                    max_concurrency)
    else:
        semantic = [0.0] * n
    vector = _vector_scores([m.score for m in matches], vector_normalization)
    out = []
    for i, match in enumerate(matches):
        position = 1.0 - i / n
        total = w.semantic * semantic[i] + w.vector * vector[i] + w.position * position
        out.append(RerankedMatch(match, RerankScore(semantic[i], vector[i], position, total), i))
    out.sort(key=lambda r: (-r.rerank.total, r.match.id))
    return out[:top_k] if top_k is not None else out


@dataclass(frozen=True, slots=True)
class Reranker:
    """A reranking configuration for the query tool (Mastra's ``reranker``).

    ``scorer`` rates semantic relevance (an LLM wrapper, a cross-encoder, ...);
    ``weights`` defaults to semantic 0.4, vector 0.4, position 0.2; ``top_k`` keeps
    that many results after reranking (all when ``None``).
    """

    scorer: Scorer | BatchScorer | None = None
    weights: RerankWeights | Mapping[str, Any] = RerankWeights()
    """A :class:`RerankWeights` (a mapping is converted to one on creation)."""
    top_k: int | None = None
    vector_normalization: VectorNormalization = "clip"
    max_concurrency: int = 4

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", RerankWeights.from_value(self.weights))
        if self.top_k is not None and (isinstance(self.top_k, bool)
                                       or not isinstance(self.top_k, int) or self.top_k < 1):
            raise ValidationError(f"reranker top_k must be a positive int, got {self.top_k!r}")
        if self.weight_values.semantic > 0 and self.scorer is None:
            raise ValidationError("a reranker with a semantic weight above 0 needs a scorer")
        if self.scorer is not None and not (callable(self.scorer)
                                            or isinstance(self.scorer, BatchScorer)):
            raise ValidationError("scorer must be a (query, text) -> float callable or have "
                                  "score_batch(query, texts)")
        if self.vector_normalization not in ("clip", "minmax"):
            raise ValidationError("vector_normalization must be 'clip' or 'minmax'")
        if isinstance(self.max_concurrency, bool) or not isinstance(self.max_concurrency, int) \
                or self.max_concurrency < 1:
            raise ValidationError("max_concurrency must be a positive int")

    @property
    def weight_values(self) -> RerankWeights:
        return RerankWeights.from_value(self.weights)

    @classmethod
    def from_value(cls, value: Reranker | Mapping[str, Any]) -> Reranker:
        """A :class:`Reranker`, or one built from a mapping of its fields."""
        if isinstance(value, Reranker):
            return value
        if not isinstance(value, Mapping):
            raise ValidationError(f"reranker must be a Reranker or a mapping, "
                                  f"got {type(value).__name__}")
        fields = {"scorer", "weights", "top_k", "vector_normalization", "max_concurrency"}
        unknown = set(value) - fields
        if unknown:
            raise ValidationError(f"unknown reranker option(s) {sorted(unknown)}; "
                                  f"known: {sorted(fields)}")
        return cls(**value)

    def rerank(self, query: str, matches: Sequence[Match],
               text_of: Callable[[Match], str] = default_text) -> list[RerankedMatch]:
        return rerank(query, matches, self.scorer, weights=self.weight_values, top_k=self.top_k,
                      text_of=text_of, vector_normalization=self.vector_normalization,
                      max_concurrency=self.max_concurrency)

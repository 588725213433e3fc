"""Semantic relevance scorers for the reranker: ``(query, text) -> float in [0, 1]``.

- :class:`LLMScorer` wraps any text-completion callable (an LLM client you already
  have), asks for a relevance number and parses it.
- :class:`CrossEncoderScorer` uses a sentence-transformers cross-encoder (imported when
  created; the ``[sentence-transformers]`` extra).
- :class:`TermOverlapScorer` is offline and deterministic, for examples and tests: the
  share of the query's words found in the text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from vectorport.core.errors import ValidationError
from vectorport.embedders.bm25 import DEFAULT_STOPWORDS
from vectorport.embedders.hashing import words
from vectorport.embedders.sbert import load_sentence_transformers

DEFAULT_LLM_PROMPT = (
    "Rate how relevant the passage is to the query, from 0 (unrelated) to 1 (answers it "
    "fully). Reply with the number only.\n\nQuery: {query}\n\nPassage: {text}\n\nRelevance:"
)
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)")


class LLMScorer:
    """Relevance from a language model: ``complete(prompt) -> reply text``.

    ``prompt`` is formatted with ``{query}`` and ``{text}``; the first number of the
    reply, divided by ``scale`` (for prompts asking for 0–10, say), is clipped to
    [0, 1]. A reply with no number is an error, so a broken model is noticed.
    """

    def __init__(self, complete: Callable[[str], str], *, prompt: str = DEFAULT_LLM_PROMPT,
                 scale: float = 1.0) -> None:
        if not callable(complete):
            raise ValidationError("LLMScorer needs a callable complete(prompt) -> str")
        if "{query}" not in prompt or "{text}" not in prompt:
            raise ValidationError("the prompt must contain {query} and {text}")
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
            raise ValidationError("scale must be a positive number")
        self.complete = complete
        self.prompt = prompt
        self.scale = float(scale)

    def __call__(self, query: str, text: str) -> float:
        reply = self.complete(self.prompt.format(query=query, text=text))
        if not isinstance(reply, str):
            raise ValidationError(f"the LLM callable returned {type(reply).__name__}, not str")
        found = _NUMBER.search(reply)
        if found is None:
            excerpt = reply if len(reply) <= 80 else reply[:77] + "..."
            raise ValidationError(f"no relevance number in the LLM reply {excerpt!r}")
        value = float(found.group()) / self.scale
        return min(1.0, max(0.0, value)) if math.isfinite(value) else 0.0


class TermOverlapScorer:
    """The share of the query's distinct words (stopwords aside) present in the text."""

    def __init__(self, stopwords: frozenset[str] = DEFAULT_STOPWORDS) -> None:
        self.stopwords = stopwords

    def _terms(self, text: str) -> set[str]:
        return {w for w in words(text) if w not in self.stopwords}

    def __call__(self, query: str, text: str) -> float:
        wanted = self._terms(query)
        if not wanted:
            return 0.0
        return len(wanted & self._terms(text)) / len(wanted)


class CrossEncoderScorer:
    """Relevance from a cross-encoder such as ``cross-encoder/ms-marco-MiniLM-L-6-v2``.

    Raw logits go through a sigmoid (``sigmoid=False`` for models that already output
    probabilities). Pass a loaded model as ``model=`` to share it.
    """

    def __init__(self, model_name: str | None = None, *, model: Any = None,
                 sigmoid: bool = True, batch_size: int = 32, **model_kwargs: Any) -> None:
        if (model_name is None) == (model is None):
            raise ValidationError("give a model_name or a loaded model=, exactly one of them")
        if model is None:
            model = load_sentence_transformers().CrossEncoder(model_name, **model_kwargs)
        self.model = model
        self.sigmoid = sigmoid
        self.batch_size = batch_size

    def score_batch(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        raw = self.model.predict([(query, t) for t in texts], batch_size=self.batch_size,
                                 show_progress_bar=False)
        out = []
        for value in list(raw):
            x = float(value)
            if self.sigmoid:
                x = 1.0 / (1.0 + math.exp(-x)) if x >= -700 else 0.0
            out.append(min(1.0, max(0.0, x)))
        return out

    def __call__(self, query: str, text: str) -> float:
        return self.score_batch(query, [text])[0]

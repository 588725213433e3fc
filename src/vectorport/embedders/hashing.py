"""The offline default embedder: hashed word and character n-gram features.

It needs no download, no network and no randomness, so examples and tests run anywhere
and give the same vectors on every machine and Python version (the feature hash is
BLAKE2b, not Python's salted ``hash``). It is a lexical model: texts that share words
or word pieces ("index", "indexes", "indexing") come out similar, paraphrases with no
shared vocabulary do not. Use a real model for semantic search in production.

Each feature is hashed to one of ``dimension`` buckets with a sign (the "hashing
trick" with signed buckets, which keeps colliding features from only ever adding up),
weighted by ``1 + log(count)``, and the vector is L2-normalized, so the cosine of two
embeddings measures their overlap.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from vectorport.core.errors import ValidationError
from vectorport.embedders.base import Vector, check_texts, l2_normalize

_WORD = re.compile(r"\w+", re.UNICODE)
_EMPTY_FEATURE = "\x00empty"


def normalize_text(text: str) -> str:
    """NFKC, case-folded: the form both embedders and the BM25 tokenizer work on."""
    return unicodedata.normalize("NFKC", text).casefold()


def words(text: str) -> list[str]:
    return _WORD.findall(normalize_text(text))


@lru_cache(maxsize=1 << 16)
def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(),
                            "little")
    return digest % dimension, (1.0 if digest >> 63 else -1.0)


class HashingEmbedder:
    """Deterministic hashed n-gram embeddings of ``dimension`` floats (default 384).

    ``ngram_range`` are the character n-gram lengths taken inside each word padded with
    spaces; ``word_weight`` and ``char_weight`` balance whole words against word pieces.
    An empty text (no word characters) embeds to one fixed unit vector.
    """

    def __init__(
        self,
        dimension: int = 384,
        *,
        ngram_range: tuple[int, int] = (3, 5),
        word_weight: float = 1.0,
        char_weight: float = 0.5,
    ) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 2:
            raise ValidationError(f"dimension must be an int >= 2, got {dimension!r}")
        low, high = ngram_range
        if not (isinstance(low, int) and isinstance(high, int) and 1 <= low <= high <= 16):
            raise ValidationError(f"ngram_range must be (low, high) with 1 <= low <= high <= 16, "
                                  f"got {ngram_range!r}")
        for label, weight in (("word_weight", word_weight), ("char_weight", char_weight)):
            if not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight < 0:
                raise ValidationError(f"{label} must be a finite number >= 0")
        if word_weight == 0 and char_weight == 0:
            raise ValidationError("word_weight and char_weight cannot both be 0")
        self._dimension = dimension
        self.ngram_range = (low, high)
        self.word_weight = float(word_weight)
        self.char_weight = float(char_weight)

    def __repr__(self) -> str:
        return f"HashingEmbedder(dimension={self._dimension}, ngram_range={self.ngram_range})"

    @property
    def dimension(self) -> int:
        return self._dimension

    def features(self, text: str) -> dict[str, float]:
        """The weighted features of ``text`` (before hashing), for inspection and tests."""
        tokens = words(text)
        if not tokens:
            return {_EMPTY_FEATURE: 1.0}
        low, high = self.ngram_range
        counts: Counter[str] = Counter()
        if self.word_weight:
            counts.update("w:" + t for t in tokens)
        if self.char_weight:
            for token in tokens:
                padded = f" {token} "
                for n in range(low, high + 1):
                    counts.update("c:" + padded[i:i + n] for i in range(len(padded) - n + 1))
        out: dict[str, float] = {}
        for feature, count in counts.items():
            weight = self.word_weight if feature.startswith("w:") else self.char_weight
            out[feature] = weight * (1.0 + math.log(count))
        return out

    def embed_text(self, text: str) -> Vector:
        vector = np.zeros(self._dimension, dtype=np.float64)
        for feature, weight in self.features(text).items():
            slot, sign = _bucket(feature, self._dimension)
            vector[slot] += sign * weight
        if not vector.any():  # every feature cancelled out: fall back to a fixed vector
            slot, sign = _bucket(_EMPTY_FEATURE, self._dimension)
            vector[slot] = sign
        return l2_normalize(vector)

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return [self.embed_text(t) for t in check_texts(texts)]


def default_embedder() -> HashingEmbedder:
    """The embedder examples and tests use when none is given: offline and deterministic."""
    return HashingEmbedder()

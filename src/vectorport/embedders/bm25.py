"""BM25 as sparse vectors, for hybrid (dense + sparse) queries.

Okapi BM25 splits into a document side and a query side whose dot product is the BM25
score, which is exactly what a sparse index computes::

    document value of term t = tf·(k1 + 1) / (tf + k1·(1 − b + b·|d|/avgdl))
    query value of term t    = idf(t) · (count of t in the query)
    idf(t)                   = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))

so ``sparse_dot(encode_query(q, normalize=False), encode_documents([d])[0])`` is the
BM25 score of ``d`` for ``q`` against the fitted corpus statistics. By default query
weights are scaled to sum to 1 (as pinecone-text does), which keeps the sparse part of
a "sum" hybrid score on a scale comparable to a cosine similarity; the ranking by the
sparse score alone is unchanged.

Term ids are the low ``id_bits`` bits (default 29) of the term's BLAKE2b hash: stable
across processes and machines, needing no shared vocabulary file, and below 2^29 so
they fit every backend's sparse index range (pgvector's ``sparsevec`` takes indices
below 10^9; the contract allows int32). Two terms that collide add up in one slot
(rare: about four pairs in a corpus of 65,000 distinct terms).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from vectorport.core.errors import ValidationError
from vectorport.core.types import SparseVector
from vectorport.embedders.hashing import words

DEFAULT_STOPWORDS: frozenset[str] = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for",
    "from", "has", "have", "he", "her", "his", "i", "if", "in", "into",
    "is", "it", "its", "me", "my", "no", "not", "of", "on", "or",
    "our", "she", "so", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "to", "was", "we", "were", "what", "when", "where",
    "which", "who", "will", "with", "you", "your",
})


DEFAULT_ID_BITS = 29


def term_id(term: str, bits: int = DEFAULT_ID_BITS) -> int:
    """The stable sparse index of a term: the low ``bits`` bits of its BLAKE2b hash."""
    digest = hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "little") & ((1 << bits) - 1)


def _sparse(weights: Mapping[int, float]) -> SparseVector | None:
    if not weights:
        return None
    ordered = sorted(weights)
    return SparseVector(tuple(ordered), tuple(float(weights[i]) for i in ordered))


class BM25Encoder:
    """Fit on a corpus, then encode documents and queries as :class:`SparseVector`.

    ``tokenizer`` defaults to case-folded word characters without ``stopwords``;
    ``id_bits`` sets the range of term ids (``0 … 2^id_bits − 1``).
    """

    def __init__(
        self,
        k1: float = 1.2,
        b: float = 0.75,
        *,
        tokenizer: Callable[[str], list[str]] | None = None,
        stopwords: Iterable[str] = DEFAULT_STOPWORDS,
        id_bits: int = DEFAULT_ID_BITS,
    ) -> None:
        if not isinstance(k1, (int, float)) or not math.isfinite(k1) or k1 < 0:
            raise ValidationError(f"k1 must be a finite number >= 0, got {k1!r}")
        if not isinstance(b, (int, float)) or not 0.0 <= b <= 1.0:
            raise ValidationError(f"b must be in [0, 1], got {b!r}")
        if isinstance(id_bits, bool) or not isinstance(id_bits, int) or not 8 <= id_bits <= 31:
            raise ValidationError(f"id_bits must be an int in [8, 31], got {id_bits!r}")
        self.id_bits = id_bits
        self.k1 = float(k1)
        self.b = float(b)
        self.stopwords = frozenset(stopwords)
        self._tokenizer = tokenizer
        self.n_docs = 0
        self.avgdl = 0.0
        self.doc_freq: dict[int, int] = {}

    def __repr__(self) -> str:
        return (f"BM25Encoder(k1={self.k1}, b={self.b}, n_docs={self.n_docs}, "
                f"terms={len(self.doc_freq)})")

    def tokenize(self, text: str) -> list[str]:
        if not isinstance(text, str):
            raise ValidationError(f"BM25 encodes str, got {type(text).__name__}")
        tokens = self._tokenizer(text) if self._tokenizer else words(text)
        return [t for t in tokens if t not in self.stopwords]

    def term_id(self, term: str) -> int:
        return term_id(term, self.id_bits)

    @property
    def fitted(self) -> bool:
        return self.n_docs > 0

    def fit(self, corpus: Iterable[str]) -> BM25Encoder:
        """Learn document frequencies and the average length (replacing earlier ones)."""
        n_docs, total_len = 0, 0
        doc_freq: Counter[int] = Counter()
        for text in corpus:
            tokens = self.tokenize(text)
            n_docs += 1
            total_len += len(tokens)
            doc_freq.update({self.term_id(t) for t in tokens})
        if n_docs == 0:
            raise ValidationError("BM25Encoder.fit needs at least one document")
        self.n_docs, self.avgdl, self.doc_freq = n_docs, total_len / n_docs, dict(doc_freq)
        return self

    def _require_fit(self) -> None:
        if not self.fitted:
            raise ValidationError("BM25Encoder is not fitted: call fit(corpus) first")

    def idf(self, term: str) -> float:
        self._require_fit()
        df = self.doc_freq.get(self.term_id(term), 0)
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def encode_document(self, text: str) -> SparseVector | None:
        """The document side; ``None`` for a text with no terms (store it without one)."""
        self._require_fit()
        tokens = self.tokenize(text)
        length_norm = 1.0 - self.b + self.b * (len(tokens) / self.avgdl if self.avgdl else 0.0)
        weights: dict[int, float] = {}
        for term, tf in Counter(tokens).items():
            value = tf * (self.k1 + 1.0) / (tf + self.k1 * length_norm)
            slot = self.term_id(term)
            weights[slot] = weights.get(slot, 0.0) + value
        return _sparse(weights)

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector | None]:
        return [self.encode_document(t) for t in texts]

    def encode_query(self, text: str, *, normalize: bool = True) -> SparseVector | None:
        """The query side; ``None`` when no query term occurs in the fitted corpus (a
        sparse query could then match nothing, so leave it out of the query)."""
        self._require_fit()
        weights: dict[int, float] = {}
        for term, count in Counter(self.tokenize(text)).items():
            slot = self.term_id(term)
            df = self.doc_freq.get(slot, 0)
            if df == 0:
                continue
            idf = math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))
            weights[slot] = weights.get(slot, 0.0) + idf * count
        if normalize and weights:
            total = sum(weights.values())
            weights = {k: v / total for k, v in weights.items()}
        return _sparse(weights)

    def encode_queries(self, texts: Sequence[str], *, normalize: bool = True
                       ) -> list[SparseVector | None]:
        return [self.encode_query(t, normalize=normalize) for t in texts]

    # -- persistence: fit once on the corpus, reuse at query time ----------------------

    def to_dict(self) -> dict[str, Any]:
        """The fitted statistics as JSON-ready data (the tokenizer is not included)."""
        return {
            "k1": self.k1, "b": self.b, "id_bits": self.id_bits, "n_docs": self.n_docs,
            "avgdl": self.avgdl,
            "stopwords": sorted(self.stopwords),
            "doc_freq": {str(k): v for k, v in sorted(self.doc_freq.items())},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any],
                  tokenizer: Callable[[str], list[str]] | None = None) -> BM25Encoder:
        try:
            encoder = cls(data["k1"], data["b"], tokenizer=tokenizer,
                          stopwords=data.get("stopwords", DEFAULT_STOPWORDS),
                          id_bits=data.get("id_bits", DEFAULT_ID_BITS))
            encoder.n_docs = int(data["n_docs"])
            encoder.avgdl = float(data["avgdl"])
            encoder.doc_freq = {int(k): int(v) for k, v in data["doc_freq"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValidationError(f"not a saved BM25Encoder: {exc}") from exc
        return encoder

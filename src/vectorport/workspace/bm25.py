"""An in-process BM25 index that takes documents one at a time.

A sparse BM25 vector (:class:`~vectorport.embedders.BM25Encoder`) freezes the corpus
statistics at fit time; a workspace changes file by file. This index keeps term
frequencies, document lengths and document frequencies, and scores at query time
against the statistics as they are now, with the same formula and tokenizer as the
encoder (Okapi BM25 with the Lucene idf)::

    score(q, d) = Σ_t  count(t, q) · idf(t) · tf·(k1 + 1) / (tf + k1·(1 − b + b·|d|/avgdl))
    idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))

so its scores equal the encoder's sparse dot products on the same corpus. Only
documents sharing a term with the query are scored (through the postings lists).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from typing import Any

from vectorport.core.errors import ValidationError
from vectorport.embedders.bm25 import BM25Encoder

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75


def bm25_settings(value: bool | Mapping[str, Any]) -> tuple[float, float] | None:
    """``bm25=`` as ``(k1, b)``: ``True`` for the defaults, ``{k1, b}`` to tune, ``False``
    or ``None`` for no BM25."""
    if value is None or value is False:
        return None
    if value is True:
        return DEFAULT_K1, DEFAULT_B
    if isinstance(value, Mapping):
        unknown = set(value) - {"k1", "b"}
        if unknown:
            raise ValidationError(f"bm25 takes 'k1' and 'b', not {sorted(unknown)}")
        k1, b = value.get("k1", DEFAULT_K1), value.get("b", DEFAULT_B)
        BM25Encoder(k1, b)  # the same validation as the encoder
        return float(k1), float(b)
    raise ValidationError(f"bm25 must be True, False or {{'k1': ..., 'b': ...}}, got {value!r}")


class BM25Index:
    """Documents by key; :meth:`scores` gives the raw BM25 score of each matching one."""

    def __init__(self, k1: float = DEFAULT_K1, b: float = DEFAULT_B, *,
                 tokenizer: Callable[[str], list[str]] | None = None) -> None:
        encoder = BM25Encoder(k1, b, tokenizer=tokenizer)  # validates k1 and b
        self.k1, self.b = encoder.k1, encoder.b
        self.tokenize: Callable[[str], list[str]] = encoder.tokenize
        self._terms: dict[str, Counter[str]] = {}
        self._lengths: dict[str, int] = {}
        self._postings: dict[str, set[str]] = {}
        self._total_length = 0

    def __repr__(self) -> str:
        return f"BM25Index(k1={self.k1}, b={self.b}, documents={len(self)})"

    def __len__(self) -> int:
        return len(self._terms)

    def __contains__(self, key: object) -> bool:
        return key in self._terms

    @property
    def avgdl(self) -> float:
        return self._total_length / len(self._terms) if self._terms else 0.0

    def add(self, key: str, text: str) -> None:
        """Index ``text`` under ``key``, replacing what the key held."""
        self.remove(key)
        tokens = self.tokenize(text)
        counts = Counter(tokens)
        self._terms[key] = counts
        self._lengths[key] = len(tokens)
        self._total_length += len(tokens)
        for term in counts:
            self._postings.setdefault(term, set()).add(key)

    def remove(self, key: str) -> None:
        counts = self._terms.pop(key, None)
        if counts is None:
            return
        self._total_length -= self._lengths.pop(key)
        for term in counts:
            holders = self._postings[term]
            holders.discard(key)
            if not holders:
                del self._postings[term]

    def idf(self, term: str) -> float:
        n, df = len(self._terms), len(self._postings.get(term, ()))
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def query_terms(self, query: str) -> Counter[str]:
        return Counter(self.tokenize(query))

    def scores(self, query: str, keys: Collection[str] | None = None) -> dict[str, float]:
        """Raw BM25 scores of the documents sharing a term with ``query`` (among ``keys``
        when given)."""
        terms = self.query_terms(query)
        avgdl = self.avgdl
        out: dict[str, float] = {}
        for term, count in terms.items():
            holders = self._postings.get(term)
            if not holders:
                continue
            weight = count * self.idf(term)
            for key in holders:
                if keys is not None and key not in keys:
                    continue
                tf = self._terms[key][term]
                norm = 1.0 - self.b + self.b * (self._lengths[key] / avgdl if avgdl else 0.0)
                out[key] = out.get(key, 0.0) + weight * tf * (self.k1 + 1.0) / (tf + self.k1 * norm)
        return out

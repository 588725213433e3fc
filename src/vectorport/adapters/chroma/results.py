"""Chroma answers → matches and records, with CONTRACT §3 scores and the contract's cut.

Scores from Chroma's distances: ``cosine`` → ``1 - d``; ``l2`` (Chroma reports the
*squared* distance) → ``1 / (1 + sqrt(d))``; ``ip`` (``d = 1 - q·x``) → ``1 - d``.

Chroma orders records at equal distance arbitrarily; the contract orders them by id.
An answer of ``n`` neighbours is *settled* when it surely holds the contract's top_k:
see :func:`settled`. Otherwise the adapter asks again for twice as many.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from vectorport.adapters.chroma.metadata import decode_metadata
from vectorport.core.scoring import score_from_distance
from vectorport.core.types import DenseVector, Match, Metric, QueryRequest, Record


def chroma_score(metric: Metric, distance: float) -> float:
    """The CONTRACT §3 score of a Chroma distance in the index's space."""
    if metric == "euclidean":
        return score_from_distance("l2_squared", distance)
    return 1.0 - distance  # cosine: d = 1 - cos(q, x); ip: d = 1 - q·x


def settled(scores: list[float], asked: int, request: QueryRequest) -> bool:
    """Whether ``asked`` neighbours (scores in any order) surely hold the top_k: fewer
    came back (every match is there), or the last is below the k-th (so every record
    tied with the k-th is there), or the k-th is below ``min_score`` (so nothing tied
    with it is returned anyway)."""
    if len(scores) < asked:
        return True
    kth = sorted(scores, reverse=True)[request.top_k - 1]
    if min(scores) < kth:
        return True
    return request.min_score is not None and kth < request.min_score


def best(matches: list[Match], request: QueryRequest) -> list[Match]:
    """``min_score`` (inclusive), the contract's order, cut at top_k."""
    if request.min_score is not None:
        matches = [m for m in matches if m.score >= request.min_score]
    matches.sort(key=lambda m: (-m.score, m.id))
    return matches[: request.top_k]


def as_vector(raw: Any) -> DenseVector:
    vector = np.array(raw, dtype=np.float32)
    vector.setflags(write=False)
    return vector


@dataclass(frozen=True, slots=True)
class QueryRow:
    """One query's neighbours in a Chroma answer (parts not asked for are ``None``)."""

    ids: list[str]
    distances: list[float]
    metadatas: list[Any] | None
    documents: list[Any] | None
    embeddings: Any | None

    @classmethod
    def of(cls, result: Any, row: int) -> QueryRow:
        def part(key: str) -> Any:
            value = result.get(key)
            return None if value is None else value[row]

        return cls(result["ids"][row], [float(d) for d in part("distances") or []],
                   part("metadatas"), part("documents"), part("embeddings"))

    def scores(self, metric: Metric) -> list[float]:
        return [chroma_score(metric, d) for d in self.distances]

    def match(self, i: int, score: float, request: QueryRequest) -> Match:
        include = request.include
        metadata = None
        if include.metadata:
            metadata = decode_metadata(self.metadatas[i] if self.metadatas is not None else None)
        vector = None
        if include.vectors and self.embeddings is not None:
            vector = as_vector(self.embeddings[i])
        document = None
        if include.documents and self.documents is not None:
            document = self.documents[i]
        return Match(id=self.ids[i], score=score, metadata=metadata, vector=vector,
                     document=document)


def records_of(result: Any) -> list[Record]:
    """The records of a Chroma ``get`` that included embeddings, metadatas and documents."""
    embeddings = result["embeddings"]
    metadatas = result.get("metadatas")
    documents = result.get("documents")
    return [
        Record(
            id=rid,
            vector=as_vector(embeddings[i]),
            metadata=decode_metadata(metadatas[i] if metadatas is not None else None),
            document=documents[i] if documents is not None else None,
        )
        for i, rid in enumerate(result["ids"])
    ]


__all__ = ["QueryRow", "as_vector", "best", "chroma_score", "records_of", "settled"]

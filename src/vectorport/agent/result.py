"""What the query tool returns: the combined text, and the sources it came from."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vectorport.agent.rerank import RerankScore
from vectorport.core.types import MetadataValue


@dataclass(frozen=True, slots=True)
class QuerySource:
    """One retrieved chunk (Mastra's ``QueryResult``).

    ``vector`` is present only when vectors were asked for; ``document`` when the chunk
    has one; ``rerank`` holds the score components when a reranker ran, and ``score``
    is then the reranked (combined) score.
    """

    id: str
    score: float
    metadata: Mapping[str, MetadataValue]
    vector: tuple[float, ...] | None = None
    document: str | None = None
    rerank: RerankScore | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: metadata lists as lists, the vector as a list of floats."""
        out: dict[str, Any] = {
            "id": self.id,
            "metadata": {k: list(v) if isinstance(v, tuple) else v
                         for k, v in self.metadata.items()},
            "vector": list(self.vector) if self.vector is not None else None,
            "score": self.score,
            "document": self.document,
        }
        if self.rerank is not None:
            r = self.rerank
            out["rerank"] = {"semantic": r.semantic, "vector": r.vector,
                             "position": r.position, "total": r.total}
        return out


@dataclass(frozen=True, slots=True)
class VectorQueryResult:
    """``relevant_context`` joins the texts of the results, best first; ``sources`` lists
    the results themselves (empty when the tool was made with ``include_sources=False``)."""

    relevant_context: str
    sources: tuple[QuerySource, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"relevant_context": self.relevant_context,
                "sources": [s.to_dict() for s in self.sources]}

    def to_json(self) -> str:
        """The result as the JSON text of a tool message for a model."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

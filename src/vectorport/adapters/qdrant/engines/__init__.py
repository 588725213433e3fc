"""The two ways the adapter reaches a Qdrant engine, behind one protocol.

- :class:`~.client.ClientEngine`: the official ``qdrant-client``, against a Qdrant
  server (REST) or in its local mode (``path=`` / ``":memory:"``, the vendor's own
  re-implementation in Python, which searches by brute force and keeps no payload
  indexes).
- :class:`~.edge.EdgeEngine`: ``qdrant-edge-py``, Qdrant's Rust storage and search
  engine embedded in the process, one shard per index.

Both take filters as Qdrant's REST filter documents (:mod:`..filters`) and speak in
:class:`~..codec.Point` / :class:`~..codec.Hit`, so that the adapter holds the layout
and the ranking once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from vectorport.adapters.qdrant.codec import Hit, Point, QueryValue
from vectorport.adapters.qdrant.filters import QdrantFilter
from vectorport.adapters.qdrant.options import CollectionLayout, SearchOptions
from vectorport.core.types import DenseVector


class Engine(Protocol):
    name: str
    """For messages and the capability matrix: "Qdrant server", "qdrant-client local
    mode", "Qdrant Edge"."""
    bools_native: bool
    """Filters can match a JSON bool (else :data:`..naming.BOOLS` shadows are used)."""
    numbers_exact: bool
    """Payload floats are kept, read and compared exactly (else every metadata number
    also has its order key under :data:`..naming.NUMBERS`, see :mod:`..numbers`)."""
    applies_hints: bool
    """``hnsw_ef`` and ``exact`` reach an HNSW search (local mode is brute force)."""
    uses_acorn: bool
    """Filtered searches of an HNSW graph ask for ACORN, which the ``acorn`` query
    option can turn off (Edge)."""
    max_request_bytes: int | None
    """Upserts are split to stay under this (a server's request limit); None: no limit."""

    def create(self, name: str, layout: CollectionLayout, spec_json: str) -> None:
        """Create the collection; ``IndexExistsError`` when it exists."""
        ...

    def drop(self, name: str) -> None: ...

    def incarnation(self, name: str) -> int | None:
        """A number that changes whenever collection ``name`` is created or dropped
        again, where this process is its one writer (Edge, local mode); None where it
        cannot tell (a server has other writers; an Edge shard not open yet)."""
        ...

    def names(self) -> list[str]:
        """Collections holding a vectorport IndexSpec."""
        ...

    def optimize(self, name: str) -> None:
        """Run Qdrant's optimizers on collection ``name`` now, where the engine runs
        them only when asked (Edge); elsewhere nothing (a server runs them in the
        background, local mode has none)."""
        ...

    def spec_json(self, name: str) -> str | None:
        """The stored IndexSpec, or None for no (vectorport) collection of that name."""
        ...

    def upsert(self, name: str, points: Sequence[Point]) -> None: ...

    def replace_if(self, name: str, point: Point, condition: QdrantFilter) -> None:
        """Replace ``point`` only if it exists and matches ``condition`` (Qdrant's
        conditional update: ``update_filter`` with ``update_mode`` "update_only")."""
        ...

    def delete_points(self, name: str, uids: Sequence[str]) -> None: ...

    def delete_by_filter(self, name: str, flt: QdrantFilter) -> None: ...

    def search(self, name: str, using: str, query: QueryValue, flt: QdrantFilter,
               limit: int, vectors: Sequence[str], options: SearchOptions,
               strong: bool) -> list[Hit]: ...

    def search_payloads(self, name: str, query: DenseVector, flt: QdrantFilter, limit: int,
                        options: SearchOptions, strong: bool) -> list[dict[str, Any]]:
        """The payloads of the points of a search by the dense vector (no vectors asked):
        what the common query needs when the payload holds the vectors as written."""
        ...

    def scroll(self, name: str, flt: QdrantFilter, limit: int, offset: str | None,
               vectors: Sequence[str], strong: bool = True) -> tuple[list[Hit], str | None]:
        """A page in point-id order and the offset of the next (None: last page)."""
        ...

    def retrieve(self, name: str, uids: Sequence[str], vectors: Sequence[str]) -> list[Hit]: ...

    def count(self, name: str, flt: QdrantFilter) -> int: ...

    def facet(self, name: str, key: str, flt: QdrantFilter | None,
              limit: int) -> list[tuple[str, int]]:
        """Exact counts of the values of keyword field ``key``."""
        ...

    def close(self) -> None: ...


__all__ = ["Engine"]

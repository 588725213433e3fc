"""What a workspace search and a sync return."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from vectorport.core.types import MetadataValue


@dataclass(frozen=True, slots=True)
class LineRange:
    """1-based, inclusive lines of the document."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ScoreDetails:
    """The parts of a hybrid score, each in [0, 1]."""

    vector: float
    bm25: float


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One hit: ``id`` is the document path; ``score`` is in [0, 1].

    ``line_range`` holds the lines where query terms occur (BM25 and hybrid), or the
    lines of the matching entry; ``score_details`` is set in hybrid mode only.
    """

    id: str
    content: str
    score: float
    line_range: LineRange | None = None
    metadata: Mapping[str, MetadataValue] = field(default_factory=dict)
    score_details: ScoreDetails | None = None


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What :meth:`Workspace.sync` did: paths indexed (new or changed), left as they
    were, skipped with the reason, and how many index entries of vanished files were
    removed."""

    indexed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    removed_entries: int = 0

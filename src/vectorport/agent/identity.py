"""The query tool checks that its ``model`` built the index it searches.

The tool only reads an index, so it never records an identity: it compares its model's
:class:`~vectorport.embedders.identity.EmbedderIdentity` with the one the index records
for the namespace searched (written by the Workspace, SemanticRecall, or
:func:`~vectorport.embedders.identity.record_identity` in an ingestion script) and
refuses another one with :class:`EmbedderMismatchError`, before the query is embedded
(an embedding API call is not spent on a search that cannot be right). An index with
no record (written by other code) is searched as before, and a log line says the check
was not possible, once per tool, index and namespace.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from vectorport.core.store import Index
from vectorport.embedders.identity import check_identity

logger = logging.getLogger("vectorport.agent")

REMEDY = ("Create the tool with the model that built the index, or index the data again "
          "with this one")


class IdentityGuard:
    """Checks each searched index; remembers which unrecorded ones it has logged."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._logged: set[tuple[str, str, str]] = set()

    def check(self, index: Index, embedder: Any, namespace: str) -> None:
        """Raise ``EmbedderMismatchError`` when ``index`` records another embedder for
        ``namespace``; log (once) when it records none."""
        result = check_identity(index, embedder, namespace)
        if not result.compatible:
            raise result.mismatch_error(REMEDY)
        if result.recorded:
            return
        key = (index.store.backend, index.name, namespace)
        with self._lock:
            first = key not in self._logged
            self._logged.add(key)
        if first:
            logger.info("index %r (namespace %r) records no embedder: searching it with "
                        "[%s] unchecked", index.name, namespace, result.current.describe())

"""One namespace: its schema, its documents, and a lagging view for eventual reads.

Strongly consistent reads see ``docs``, the state after every acknowledged write.
Eventually consistent reads see ``visible``: the same writes, replayed in order once
each is older than the lag configured in :class:`~vectorport.testing.emulators.http.Faults`
(as the service's eventual reads can miss recent, not yet indexed writes).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from vectorport.testing.emulators.turbopuffer.values import AttributeSchema, logical_bytes

Doc = dict[str, Any]
Effect = tuple[Literal["put", "delete"], Any, "Doc | None"]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Namespace:
    name: str
    schema: dict[str, AttributeSchema] = field(default_factory=dict)
    id_type: str | None = None
    distance_metric: str | None = None
    docs: dict[Any, Doc] = field(default_factory=dict)
    visible: dict[Any, Doc] = field(default_factory=dict)
    pending: deque[tuple[float, list[Effect]]] = field(default_factory=deque)
    created_at: datetime = field(default_factory=_now)
    updated_at: datetime = field(default_factory=_now)
    read_only: bool = False

    def record(self, effects: list[Effect], visible_at: float) -> None:
        """Queue a write's effects for the eventual view."""
        if effects:
            self.pending.append((visible_at, effects))
            self.updated_at = _now()
        self.catch_up()

    def catch_up(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        while self.pending and self.pending[0][0] <= now:
            _, effects = self.pending.popleft()
            for kind, doc_id, doc in effects:
                if kind == "put":
                    assert doc is not None
                    self.visible[doc_id] = doc
                else:
                    self.visible.pop(doc_id, None)

    def view(self, level: str) -> dict[Any, Doc]:
        if level == "strong":
            return self.docs
        self.catch_up()
        return self.visible

    def vector_attributes(self) -> list[str]:
        return [name for name, s in self.schema.items() if s.is_vector]

    def metadata(self) -> dict[str, Any]:
        self.catch_up()
        unindexed_rows = sum(len(effects) for _, effects in self.pending)
        index: dict[str, Any] = {"status": "up-to-date"}
        if unindexed_rows:
            unindexed_bytes = sum(
                logical_bytes(doc) for _, effects in self.pending for _, _, doc in effects if doc
            )
            index = {"status": "updating", "unindexed_rows": unindexed_rows,
                     "unindexed_bytes": unindexed_bytes}
        out: dict[str, Any] = {
            "approx_logical_bytes": sum(logical_bytes(d) for d in self.docs.values()),
            "approx_row_count": len(self.docs),
            "created_at": self.created_at.isoformat().replace("+00:00", "Z"),
            "updated_at": self.updated_at.isoformat().replace("+00:00", "Z"),
            "encryption": {"mode": "default"},
            "index": index,
            "schema": self.schema_json(),
        }
        if self.read_only:
            out["read_only"] = True
        return out

    def schema_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.id_type is not None:
            out["id"] = {"type": self.id_type, "filterable": True}
        for name, schema in self.schema.items():
            entry = schema.to_json()
            if schema.is_vector and self.distance_metric is not None:
                entry["ann"] = {"distance_metric": self.distance_metric}
            out[name] = entry
        return out

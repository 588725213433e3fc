"""Checkpoints of a copy or an import: where each namespace resumes.

A checkpoint is a small JSON file replaced atomically (write, fsync, rename), so a
process killed at any instant leaves either the previous state or the next one. It only
ever advances over pages whose write has returned, and is saved at most once a second
(and at the end of each unit), so resuming re-sends the pages that were in flight and
those of the last second at most; upserts are idempotent, so nothing is duplicated.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vectorport.core.errors import ValidationError
from vectorport.transfer.canonical import Checksum

_VERSION = 1


def default_checkpoint_path(identity: str) -> Path:
    """Where the same command finds its checkpoint again: under the user's state folder
    (``$XDG_STATE_HOME``, else ``~/.local/state``), named by a digest of the job."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    digest = hashlib.sha256(identity.encode()).hexdigest()[:20]
    return base / "vectorport" / "transfers" / f"{digest}.json"


@dataclass
class Checkpoint:
    """Progress of one job (``identity`` says which: redacted URLs and index names)."""

    path: Path
    identity: str
    positions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per unit (a namespace, or a file of an import): ``cursor``, ``done``, ``written``,
    and ``checksums``: per namespace, the :class:`~vectorport.transfer.canonical.Checksum`
    of the source records written so far (absent in a checkpoint that kept none)."""
    prechecked: bool = False
    resumed: bool = False
    interval: float = 1.0
    """Seconds between two saves by :meth:`advance`: each save is an fsync, which on a
    busy disk costs as much as writing a page; a checkpoint a second old only means a
    resumed job writes a second's pages again (upserts are idempotent)."""
    _advanced_at: float = field(default=-math.inf, repr=False)

    @classmethod
    def open(cls, path: Path, identity: str, *, restart: bool = False) -> Checkpoint:
        if restart or not path.exists():
            return cls(path, identity)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise ValidationError(f"checkpoint {path} cannot be read ({exc}); "
                                  "pass restart=True (--restart) to start over") from None
        if data.get("version") != _VERSION or data.get("identity") != identity:
            raise ValidationError(
                f"checkpoint {path} belongs to another job; pass restart=True (--restart) "
                "to start over, or another checkpoint path"
            )
        return cls(path, identity, dict(data["positions"]), bool(data["prechecked"]), True)

    def unit(self, name: str) -> dict[str, Any]:
        return self.positions.setdefault(
            name, {"cursor": None, "done": False, "written": 0, "checksums": {}})

    def advance(self, name: str, cursor: Any, written: int,
                sums: Mapping[str, Checksum] | None = None) -> None:
        state = self.unit(name)
        state["cursor"] = cursor
        state["written"] += written
        state["done"] = cursor is None
        kept = state.get("checksums")
        if sums and kept is not None:
            for namespace, more in sums.items():
                running = Checksum.from_json(kept[namespace]) if namespace in kept else Checksum()
                running.merge(more)
                kept[namespace] = running.to_json()
        now = time.monotonic()
        if state["done"] or now - self._advanced_at >= self.interval:
            self._advanced_at = now
            self.save()

    def checksums(self, name: str) -> dict[str, Checksum] | None:
        """Per namespace, the checksum of every source record of unit ``name`` written;
        ``None`` when this job did not keep them from its start."""
        kept = self.unit(name).get("checksums")
        if kept is None:
            return None
        return {namespace: Checksum.from_json(data) for namespace, data in kept.items()}

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        payload = {"version": _VERSION, "identity": self.identity,
                   "prechecked": self.prechecked, "positions": self.positions}
        with open(tmp, "w") as handle:
            json.dump(payload, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)

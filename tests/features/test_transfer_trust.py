"""A copy without verification takes no checksums, and says so in its checkpoint: a run
stopped part way with ``verify=False`` and resumed with ``verify=True`` still verifies
the whole destination (reading the source again rather than trusting a partial sum)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import vectorport
from vectorport.adapters.local.adapter import LocalAdapter
from vectorport.core.hooks import OperationEvent, hookimpl
from vectorport.core.plugin import Registry
from vectorport.transfer import copy_index
from vectorport.transfer.checkpoint import Checkpoint
from vectorport.transfer.copying import copy_identity


class _StopAfter:
    """A policy plugin refusing writes after the first ``pages`` (a copy stopped part
    way, with its checkpoint kept)."""

    def __init__(self, pages: int) -> None:
        self.left = pages

    @hookimpl
    def vectorport_before_operation(self, event: OperationEvent) -> None:
        if event.operation in ("upsert", "upsert_bulk"):
            if self.left <= 0:
                raise PermissionError("stopped by the test's policy")
            self.left -= 1


def _rows(count: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(7)
    return [{"id": f"r{i:04d}", "vector": rng.normal(size=8).astype(np.float32),
             "metadata": {"n": i, "f": i / 2, "b": i % 2 == 0}, "document": f"doc {i}"}
            for i in range(count)]


def test_a_copy_without_verify_resumed_with_verify_checks_everything(tmp_path: Path) -> None:
    rows = _rows(300)
    source = vectorport.connect("memory://").create_index("src", 8, "cosine")
    source.upsert(rows)
    stopper = _StopAfter(pages=2)
    registry = Registry(load_entry_points=False)
    registry.register_plugin(stopper, "stopper")
    destination = vectorport.Store(LocalAdapter(None), registry=registry)
    checkpoint = tmp_path / "c.json"
    with pytest.raises(PermissionError):
        copy_index(source, destination, batch_size=50, workers=1, checkpoint=checkpoint,
                   verify=False, progress=False)
    kept = Checkpoint.open(checkpoint, copy_identity(source, destination, "src"))
    assert kept.unit("")["written"] > 0
    assert kept.checksums("") is None  # none taken: a later verify must read the source
    stopper.left = 10**6
    report = copy_index(source, destination, batch_size=50, workers=1, checkpoint=checkpoint,
                        verify=True, progress=False)
    assert report.resumed
    assert report.verification is not None and report.verification.ok
    copied = destination.index("src")
    got = copied.fetch([r["id"] for r in rows])
    assert len(got) == len(rows) == copied.count()
    for row in rows:
        record = got[row["id"]]
        np.testing.assert_array_equal(record.vector, row["vector"])
        assert dict(record.metadata) == row["metadata"]
        assert {k: type(v) for k, v in record.metadata.items()} == {
            k: type(v) for k, v in row["metadata"].items()}
        assert record.document == row["document"]

"""The collector is paused only for large calls, and always runs again afterwards,
also when the call raises; an application that paused it keeps it paused."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import vectorport
from vectorport.core import gc_pause, requests
from vectorport.core.errors import ValidationError


@pytest.fixture
def target() -> requests.Target:
    with vectorport.connect("memory://") as store:
        spec = store.build_spec("gc_pause", 4, "cosine")
        return requests.Target(store.backend, store.capabilities, spec)


def _rows(count: int, bad_at: int | None = None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = [
        {"id": f"r{i}", "vector": np.ones(4, dtype=np.float32), "metadata": {"n": i}}
        for i in range(count)]
    if bad_at is not None:
        rows[bad_at]["metadata"] = {"bad key!": 1}
    return rows


def _collections_during(fn: object) -> int:
    """How many cyclic collections start while ``fn`` runs, with thresholds so low that
    a running collector would start many."""
    started: list[int] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    old = gc.get_threshold()
    gc.set_threshold(10, 1, 1)
    gc.callbacks.append(callback)
    try:
        fn()  # type: ignore[operator]
    finally:
        gc.callbacks.remove(callback)
        gc.set_threshold(*old)
    return len(started)


def test_a_large_call_runs_with_the_collector_paused(target: requests.Target) -> None:
    large, small = _rows(gc_pause.PAUSE_FROM), _rows(500)
    # a running collector starts one pass per ~10 allocations here, so a call allocating
    # ten times as much with it paused must see fewer passes (only the few outside the
    # pause, before and after it) than the small call that is not paused
    during_large = _collections_during(lambda: requests.build_records(target, large))
    during_small = _collections_during(lambda: requests.build_records(target, small))
    assert during_large < during_small
    assert gc.isenabled()


def test_the_collector_runs_again_after_a_refused_call(target: requests.Target) -> None:
    with pytest.raises(ValidationError):
        requests.build_records(target, _rows(gc_pause.PAUSE_FROM, bad_at=7))
    assert gc.isenabled()


def test_an_application_that_paused_the_collector_keeps_it_paused(
        target: requests.Target) -> None:
    gc.disable()
    try:
        requests.build_records(target, _rows(gc_pause.PAUSE_FROM))
        assert not gc.isenabled()
    finally:
        gc.enable()

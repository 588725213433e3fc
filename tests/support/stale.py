"""A handle kept across a delete of its index, through every call: what each answers
(the reference adapter's handles raise ``IndexNotFoundError``), for the backends'
handle tests to compare with ``memory://``."""

from __future__ import annotations

from collections.abc import Callable

import vectorport
from vectorport import VectorportError
from vectorport.core.store import ListableIndex, PatchableIndex


def stale_handle_outcomes(store: vectorport.Store, again: vectorport.Store) -> dict[str, str]:
    """What each call through a handle answers (by call; calls the handle does not offer
    left out) once its index was dropped and created again with other settings through
    ``again`` (the same store or another connection to it), and, under ``"records"``,
    what the new index then holds."""
    old = store.create_index("gen_idx", 2, "dotproduct")
    old.upsert([("a", [1.0, 0.0])], namespace="n")
    old.query([1.0, 0.0], namespace="n")  # whatever the adapter remembers, remembered
    again.delete_index("gen_idx")
    again.create_index("gen_idx", 2, "euclidean").upsert([("b", [0.0, 1.0])], namespace="n")
    calls: dict[str, Callable[[], object]] = {
        "upsert": lambda: old.upsert([("c", [1.0, 1.0])], namespace="n"),
        "query": lambda: old.query([1.0, 0.0], namespace="n"),
        "fetch": lambda: old.fetch(["b"], "n"),
        "count": lambda: old.count("n"),
        "delete": lambda: old.delete(["b"], namespace="n"),
        "list_namespaces": lambda: old.list_namespaces(),
        "delete_namespace": lambda: old.delete_namespace("n"),
    }
    if isinstance(old, ListableIndex):
        calls["list_ids"] = lambda: old.list_ids("n")
    if isinstance(old, PatchableIndex):
        calls["patch"] = lambda: old.patch("b", metadata={"x": 1}, namespace="n")
    outcomes = {}
    for name, call in calls.items():
        try:
            call()
            outcomes[name] = "ok"
        except VectorportError as exc:
            outcomes[name] = type(exc).__name__
    fresh = again.index("gen_idx")
    outcomes["records"] = repr(sorted((r.id, r.vector.tolist())
                                      for r in fresh.iter_records("n")))
    return outcomes


def oracle_outcomes() -> dict[str, str]:
    """:func:`stale_handle_outcomes` on ``memory://``: every call refused."""
    with vectorport.connect("memory://") as oracle:
        want = stale_handle_outcomes(oracle, oracle)
    assert {k: v for k, v in want.items() if k != "records"} == dict.fromkeys(
        set(want) - {"records"}, "IndexNotFoundError")
    return want


def assert_like_oracle(got: dict[str, str], want: dict[str, str]) -> None:
    """``got`` answers every call it made as the oracle did, and made all but the
    optional ones."""
    assert got == {k: want[k] for k in got}
    assert set(want) - set(got) <= {"list_ids", "patch"}

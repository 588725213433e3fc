"""A handle kept across a delete of its index, through every call: what each answers.

The reference adapter's handles raise ``IndexNotFoundError`` ("open it again") once their
index is deleted, even when an index of the same name exists again: a kept handle must
never read or write the index created since, whose dimension and metric may differ. The
suite's lifecycle test compares a backend's answers with ``memory://``'s through
:func:`stale_handle_outcomes`; backends' own tests use it too, with a second connection
as ``again`` where the engine allows one (the same index re-created by another process).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from vectorport.core.errors import VectorportError
from vectorport.core.store import Index, ListableIndex, PatchableIndex, Store
from vectorport.core.types import Metric

T = TypeVar("T")
Shape = tuple[int, Metric]
"""The dimension and metric an index is created with."""

FIRST: Shape = (2, "dotproduct")
SECOND: Shape = (2, "euclidean")
CALLS = ("upsert", "upsert_bulk", "query", "query_many", "fetch", "scan", "count", "delete",
         "list_namespaces", "delete_namespace")
"""The calls every handle offers, as :func:`stale_calls` names them."""
OPTIONAL_CALLS = frozenset({"list_ids", "patch"})
"""Calls only some handles offer (the navigable and patchable protocols)."""


def _unit(dimension: int, axis: int) -> list[float]:
    vector = [0.0] * dimension
    vector[axis % dimension] = 1.0
    return vector


def stale_calls(old: Index, dimension: int) -> dict[str, Callable[[], object]]:
    """The calls the stale-handle tests make through ``old`` (created with
    ``dimension``), by name: :data:`CALLS`, and those of :data:`OPTIONAL_CALLS` the
    handle offers."""
    calls: dict[str, Callable[[], object]] = {
        "upsert": lambda: old.upsert([("c", [1.0] * dimension)], namespace="n"),
        "query": lambda: old.query(_unit(dimension, 0), namespace="n"),
        "fetch": lambda: old.fetch(["b"], "n"),
        "count": lambda: old.count("n"),
        "delete": lambda: old.delete(["b"], namespace="n"),
        "list_namespaces": lambda: old.list_namespaces(),
        "delete_namespace": lambda: old.delete_namespace("n"),
        "query_many": lambda: old.query_many([_unit(dimension, 0)], namespace="n"),
        "upsert_bulk": lambda: old.upsert_bulk([("d", [1.0] * dimension)], namespace="n"),
        "scan": lambda: list(old.iter_records("n")),
    }
    if isinstance(old, ListableIndex):
        calls["list_ids"] = lambda: old.list_ids("n")
    if isinstance(old, PatchableIndex):
        calls["patch"] = lambda: old.patch("b", metadata={"x": 1}, namespace="n")
    return calls


def replaced_index(store: Store, again: Store, name: str = "gen_idx",
                   first: Shape = FIRST, second: Shape = SECOND) -> Index:
    """A handle of ``name``, created as ``first`` through ``store`` (record ``a`` in
    namespace ``n``, one query made: whatever the adapter remembers, remembered), kept
    while ``again`` (the same store or another connection to it) dropped the index and
    created it again as ``second``, holding record ``b``."""
    old = store.create_index(name, first[0], first[1])
    old.upsert([("a", _unit(first[0], 0))], namespace="n")
    old.query(_unit(first[0], 0), namespace="n")
    again.delete_index(name)
    again.create_index(name, second[0], second[1]).upsert(
        [("b", _unit(second[0], 1))], namespace="n")
    return old


def records_of(store: Store, name: str) -> str:
    """What index ``name`` holds in namespace ``n``: its ids and vectors, sorted."""
    return repr(sorted((r.id, r.vector.tolist())
                       for r in store.index(name).iter_records("n")))


def stale_handle_outcomes(store: Store, again: Store, name: str = "gen_idx",
                          first: Shape = FIRST, second: Shape = SECOND) -> dict[str, str]:
    """What each call through a handle answers (by call; calls the handle does not offer
    left out) once its index was replaced (:func:`replaced_index`), and, under
    ``"records"``, what the new index then holds."""
    old = replaced_index(store, again, name, first, second)
    outcomes = {name: outcome(call) for name, call in stale_calls(old, first[0]).items()}
    outcomes["records"] = records_of(again, name)
    return outcomes


def first_call_outcome(store: Store, again: Store, call: str) -> tuple[str, str, str]:
    """What ``call`` answers as the first call through a handle of a replaced index
    (:func:`replaced_index`, named ``first_idx``), what the new index then holds, and
    what a count through the handle answers afterwards."""
    old = replaced_index(store, again, "first_idx")
    first = outcome(stale_calls(old, FIRST[0])[call])
    return first, records_of(again, "first_idx"), outcome(lambda: old.count("n"))


def reopened_outcome(store: Store, again: Store) -> tuple[str, int, list[str]]:
    """A handle opened again through ``store`` after ``again`` replaced the index: its
    metric, its count, and the ids the new index holds once it has written one."""
    store.create_index("again_idx", FIRST[0], FIRST[1])
    again.delete_index("again_idx")
    again.create_index("again_idx", SECOND[0], SECOND[1]).upsert([("b", _unit(SECOND[0], 1))])
    fresh = store.index("again_idx")
    metric, count = fresh.metric, fresh.count()
    fresh.upsert([("c", [1.0] * SECOND[0])])
    return metric, count, sorted(again.index("again_idx").fetch(["b", "c"]))


def on_oracle(outcome: Callable[[Store, Store], T]) -> T:
    """``outcome`` on ``memory://`` (one store as both sides): what a backend owes."""
    import vectorport

    with vectorport.connect("memory://") as oracle:
        return outcome(oracle, oracle)


def outcome(call: Callable[[], object]) -> str:
    """``"ok"``, or the name of the vectorport error ``call`` raised."""
    try:
        call()
    except VectorportError as exc:
        return type(exc).__name__
    return "ok"


def oracle_outcomes(first: Shape = FIRST, second: Shape = SECOND) -> dict[str, str]:
    """:func:`stale_handle_outcomes` on ``memory://``: every call refused."""
    import vectorport

    with vectorport.connect("memory://") as oracle:
        want = stale_handle_outcomes(oracle, oracle, first=first, second=second)
    calls = set(want) - {"records"}
    if {k: want[k] for k in calls} != dict.fromkeys(calls, "IndexNotFoundError"):
        raise AssertionError(f"the reference adapter's stale handles answered {want}")
    return want


def assert_like_oracle(got: dict[str, str], want: dict[str, str]) -> None:
    """``got`` answers every call it made as the oracle did, and made all but the
    optional ones."""
    assert got == {k: want[k] for k in got}, (got, want)
    assert set(want) - set(got) <= OPTIONAL_CALLS, set(want) - set(got)

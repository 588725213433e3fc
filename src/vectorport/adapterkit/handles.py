"""Which index handles are stale: a handle whose index was deleted never reaches the
index created under its name since (the reference adapter's rule: ``IndexNotFoundError``,
"open it again").

Many engines' collection or table handles follow whatever collection now has the name,
so without this a kept ``Index`` goes on reading and writing the index created again
under its name, with the old dimension and metric. An adapter tells the handles apart by
the IndexSpec object each ``Index`` holds (the facade passes the same object to every
call):

- a spec object this adapter has seen deleted is stale, even if an equal index exists
  now (the reference adapter refuses it too);
- any other spec must equal the spec stored in the engine (read once per index, again
  when the adapter says the stored one may have changed), and is then remembered, so
  the usual call is an identity test and no I/O.

An index dropped and re-created by another process is noticed where the adapter asks
for the stored spec again (:meth:`Handles.check_stored`): each adapter's doc says when.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from vectorport.adapterkit.wire import spec_to_json
from vectorport.core.errors import BackendError, IndexNotFoundError, TransientBackendError
from vectorport.core.types import IndexSpec


def same_index(one: IndexSpec, other: IndexSpec) -> bool:
    """Whether two specs describe the same index as an engine stores it: a spec read
    back from JSON holds lists where the created one held tuples among backend options,
    so ``==`` alone would refuse a handle that had just created the index."""
    return one == other or spec_to_json(one) == spec_to_json(other)


def stale_error(name: str) -> IndexNotFoundError:
    error = IndexNotFoundError(name)
    error.args = (f"index {name!r} this handle was opened on was deleted; "
                  "the index of that name now is another one: open it again",)
    return error


_RETIRED_KEPT = 256
"""How many deleted specs are remembered (each an identity: the objects are kept)."""
_ACCEPTED_KEPT = 16


class Handles:
    """The stored spec of each index as last read, the spec objects accepted for it,
    and the spec objects of deleted indexes."""

    def __init__(self, read_spec: Callable[[str], IndexSpec],
                 same: Callable[[IndexSpec, IndexSpec], bool] = same_index) -> None:
        self._read_spec = read_spec  # the stored spec now (IndexNotFoundError if none)
        # whether a handle's spec is the stored one: an engine that keeps only part of
        # a spec (no other backends' options, say) compares that part
        self._same = same
        self._stored: dict[str, IndexSpec] = {}
        self._accepted: dict[str, list[IndexSpec]] = {}
        self._retired: dict[int, IndexSpec] = {}

    def check(self, index: IndexSpec) -> None:
        """Raise ``IndexNotFoundError`` when ``index`` is not the stored index of its name."""
        accepted = self._accepted.get(index.name)
        if accepted is not None and any(spec is index for spec in accepted):
            return
        if self._retired.get(id(index)) is index:
            raise stale_error(index.name)
        stored = self._stored.get(index.name)
        if stored is None:
            stored = self._stored[index.name] = self._read_spec(index.name)
        if not self._same(stored, index):
            raise stale_error(index.name)
        accepted = self._accepted.setdefault(index.name, [])
        if len(accepted) >= _ACCEPTED_KEPT:
            accepted.pop(0)
        accepted.append(index)

    def check_stored(self, index: IndexSpec) -> None:
        """:meth:`check` against the spec stored now (one read): before a delete, and
        after an engine call failed, in case another process replaced the index."""
        try:
            spec = self._read_spec(index.name)
        except IndexNotFoundError:
            self._stored.pop(index.name, None)
            self._accepted.pop(index.name, None)
            raise
        self.stored(index.name, spec)
        self.check(index)

    @contextmanager
    def replaced_on_failure(self, index: IndexSpec) -> Iterator[None]:
        """Let an engine failure through, unless it came from ``index`` having been
        replaced elsewhere (another dimension fails writes and searches): then
        :meth:`check_stored` raises ``IndexNotFoundError`` instead. Transient failures
        pass as they are (the read would likely fail the same way)."""
        try:
            yield
        except TransientBackendError:
            raise
        except BackendError:
            self.check_stored(index)
            raise

    def stored(self, name: str, spec: IndexSpec) -> None:
        """``spec`` was just read from the engine; a changed one drops the accepted
        handles."""
        known = self._stored.get(name)
        if known is not None and not self._same(known, spec):
            self._accepted.pop(name, None)
        self._stored[name] = spec

    def created(self, spec: IndexSpec) -> None:
        self._stored[spec.name] = spec
        self._accepted[spec.name] = [spec]

    def deleted(self, name: str) -> None:
        """Every spec object accepted for ``name`` is stale from now on."""
        self._stored.pop(name, None)
        for spec in self._accepted.pop(name, []):
            if len(self._retired) >= _RETIRED_KEPT:
                self._retired.pop(next(iter(self._retired)))
            self._retired[id(spec)] = spec


__all__ = ["Handles", "same_index", "stale_error"]

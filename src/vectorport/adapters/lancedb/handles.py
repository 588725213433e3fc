"""Which index handles are stale: a handle whose index was deleted never reaches the
index created under its name since (the reference adapter's rule, CONTRACT errors:
``IndexNotFoundError``).

A LanceDB table handle follows whatever table now has the name, so without this a
kept ``Index`` went on counting, fetching and deleting in the new index, and failed
with a ``BackendError`` where the dimensions differ. The adapter tells the handles
apart by the IndexSpec object each ``Index`` holds (the facade passes the same object
to every call):

- a spec object this adapter has seen deleted is stale, even if an equal index exists
  now (the reference adapter refuses it too);
- any other spec must equal the spec stored in the table (read once per table, again
  when the index is described or an engine call fails), and is then remembered, so
  the usual call is an identity test and no I/O.

An index dropped and re-created by another process is noticed when it differs from
what the handle holds: at once on deletes (which read the stored spec first, so a
delete never removes another index's records), and on the first failing search or
upsert or a fetched vector of another dimension; counts and listings see it once the
index is described again (docs/backends/lancedb.md).
"""

from __future__ import annotations

from collections.abc import Callable

from vectorport.adapters.lancedb.codec import spec_to_json
from vectorport.core.errors import IndexNotFoundError
from vectorport.core.types import IndexSpec

_RETIRED_KEPT = 256
"""How many deleted specs are remembered (each an identity: the objects are kept)."""
_ACCEPTED_KEPT = 16


def same_index(one: IndexSpec, other: IndexSpec) -> bool:
    """Whether two specs describe the same index as the table stores it: the spec
    comes back from the table's JSON, where a tuple among backend options reads back
    as a list (so ``==`` alone refused a handle that had just created the index)."""
    return one == other or spec_to_json(one) == spec_to_json(other)


def stale_error(name: str) -> IndexNotFoundError:
    error = IndexNotFoundError(name)
    error.args = (f"index {name!r} this handle was opened on was deleted; "
                  "the index of that name now is another one: open it again",)
    return error


class Handles:
    """The stored spec of each table as last read, the spec objects accepted for it,
    and the spec objects of deleted indexes."""

    def __init__(self, read_spec: Callable[[str], IndexSpec]) -> None:
        self._read_spec = read_spec  # the table's spec now (IndexNotFoundError if none)
        self._stored: dict[str, IndexSpec] = {}
        self._accepted: dict[str, list[IndexSpec]] = {}
        self._retired: dict[int, IndexSpec] = {}

    def check(self, index: IndexSpec) -> None:
        """Raise ``IndexNotFoundError`` when ``index`` is not the table's current index."""
        accepted = self._accepted.get(index.name)
        if accepted is not None and any(spec is index for spec in accepted):
            return
        if self._retired.get(id(index)) is index:
            raise stale_error(index.name)
        stored = self._stored.get(index.name)
        if stored is None:
            stored = self._stored[index.name] = self._read_spec(index.name)
        if not same_index(stored, index):
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

    def stored(self, name: str, spec: IndexSpec) -> None:
        """``spec`` was just read from the table; a changed one drops the accepted
        handles."""
        known = self._stored.get(name)
        if known is not None and not same_index(known, spec):
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


__all__ = ["Handles", "stale_error"]

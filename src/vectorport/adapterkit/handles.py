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
for the stored spec again (:meth:`Handles.check_stored`; :meth:`Handles.failed` after
an engine failure, which another dimension or metric causes), or reads an identity the
engine keeps per index, a creation token say (:meth:`Handles.identified`): each
adapter's doc says when.
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
        self._identities: dict[str, object] = {}

    def check(self, index: IndexSpec) -> None:
        """Raise ``IndexNotFoundError`` when ``index`` is not the stored index of its name."""
        accepted = self._accepted.get(index.name)
        if accepted is not None:
            for spec in accepted:  # a loop, not any(): this runs on every call
                if spec is index:
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

    def failed(self, index: IndexSpec, exc: BaseException) -> None:
        """After an engine call through ``index`` failed with ``exc``: a failure that
        may come from the index having been replaced elsewhere (another dimension or
        metric fails writes and searches) checks the handle against the stored spec
        (:meth:`check_stored`: ``IndexNotFoundError`` if stale); otherwise this returns
        and the caller raises ``exc``. Transient failures pass unchecked (the read
        would likely fail the same way)."""
        if isinstance(exc, BackendError) and not isinstance(exc, TransientBackendError):
            self.check_stored(index)

    @contextmanager
    def replaced_on_failure(self, index: IndexSpec) -> Iterator[None]:
        """:meth:`failed` for every engine failure inside the block."""
        try:
            yield
        except BackendError as exc:
            self.failed(index, exc)
            raise

    def identified(self, name: str, identity: object) -> bool:
        """Note what tells index ``name`` apart from an index created again under its
        name (a creation token, say), as just read from the engine: another identity
        than the one noted before means the index was deleted and created again
        elsewhere, so every handle of the old one is stale. Returns whether so."""
        replaced = name in self._identities and self._identities[name] != identity
        if replaced:
            self.deleted(name)
        self._identities[name] = identity
        return replaced

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
        self._identities.pop(name, None)
        for spec in self._accepted.pop(name, []):
            if len(self._retired) >= _RETIRED_KEPT:
                self._retired.pop(next(iter(self._retired)))
            self._retired[id(spec)] = spec


__all__ = ["Handles", "same_index", "stale_error"]
